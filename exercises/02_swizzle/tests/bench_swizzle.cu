// Times ex02::transpose next to the copy ceiling, with the steps' harness (same options, same
// verification, same table and CSV): build/bin/bench_ex02_exercise
#include "ex02.cuh"
#include "harness.cuh"

int main(int argc, char** argv) {
  course::StepInfo info;
  info.binary = "bench_ex02_" EXERCISE_TREE;
  info.title = "exercise 2: tiled transpose with an XOR-swizzled tile (" EXERCISE_TREE ")";
  info.description =
      "Your ex02::transpose (exercises/02_swizzle/swizzled.cu), verified and timed\n"
      "like a step's kernels.";
  return course::run_step(argc, argv, info, [](const course::Options&) {
    return std::vector<course::Variant>{
        {"ex02::transpose", "32x32", "32x32 swizzled",
         [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
           return ex02::transpose(static_cast<const float*>(in), static_cast<float*>(out), p.rows,
                                  p.cols, s);
         }}};
  });
}
