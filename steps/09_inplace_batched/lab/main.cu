// Step 09's lab: the in-place variants tried and not taught, beside the lesson's kernels.
//   ./step09-lab --rows 8191 --cols 8191
//   ./step09-lab --rows 16384 --cols 16384 --only "32x4 threads"
#include "harness.cuh"
#include "lab_variants.cuh"

int main(int argc, char** argv) {
  return course::run_step(argc, argv, step09_lab::info(), step09_lab::from_options);
}
