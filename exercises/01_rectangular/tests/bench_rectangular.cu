// Times ex01::transpose next to the copy ceiling, with the steps' harness (same options, same
// verification, same table and CSV): build/bin/bench_ex01_exercise --rows 8192 --cols 2048
#include "ex01.cuh"
#include "harness.cuh"

int main(int argc, char** argv) {
  course::StepInfo info;
  info.binary = "bench_ex01_" EXERCISE_TREE;
  info.title = "exercise 1: tiled transpose of any shape (" EXERCISE_TREE ")";
  info.description =
      "Your ex01::transpose (exercises/01_rectangular/rectangular.cu), verified and\n"
      "timed like a step's kernels.";
  return course::run_step(argc, argv, info, [](const course::Options&) {
    return std::vector<course::Variant>{
        {"ex01::transpose", "32x32", "32x32",
         [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
           return ex01::transpose(static_cast<const float*>(in), static_cast<float*>(out), p.rows,
                                  p.cols, s);
         }}};
  });
}
