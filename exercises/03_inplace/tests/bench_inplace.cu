// Times ex03::transpose_inplace next to the copy ceiling, with the steps' harness (same options,
// same verification, same table and CSV): build/bin/bench_ex03_exercise --rows 8192 --cols 8192
#include "ex03.cuh"
#include "harness.cuh"

int main(int argc, char** argv) {
  course::StepInfo info;
  info.binary = "bench_ex03_" EXERCISE_TREE;
  info.title = "exercise 3: in-place transpose of a square matrix (" EXERCISE_TREE ")";
  info.description =
      "Your ex03::transpose_inplace (exercises/03_inplace/inplace.cu), verified and\n"
      "timed like a step's kernels. Square matrices only.";
  return course::run_step(argc, argv, info, [](const course::Options&) {
    course::Variant v{"ex03::transpose_inplace", "32x8", "2 x 32x32",
                      [](const course::Problem& p, const void*, void* out, cudaStream_t s) {
                        if (p.rows != p.cols) return cudaErrorInvalidValue;  // square only
                        return ex03::transpose_inplace(static_cast<float*>(out), p.rows, s);
                      }};
    v.in_place = true;
    return std::vector<course::Variant>{v};
  });
}
