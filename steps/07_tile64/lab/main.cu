// Step 07's lab: every variant of the 64 x 64 kernel that was tried and not taught, and two
// one-float-per-access controls, in one table with the copy ceiling and cuBLAS (see LAB.md).
#include "harness.cuh"
#include "lab_variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step07-lab";
  step.title = "step 07's lab: tile orders, shared layouts, cache hints, one float per access";
  step.description =
      "The 64 x 64 float4 kernel of step 07 with one thing changed per row: the order of the\n"
      "tiles (plain, bands, squares, down the columns), the shared layout (padded, quads, the\n"
      "swizzle's arithmetic), streaming hints; and tiles moved one float per access, among\n"
      "them a clone of what cuBLAS launches. LAB.md is the notebook.";
  step.cublas_reference = true;
  return course::run_step(argc, argv, step,
                          [](const course::Options&) { return step07lab::variants(); });
}
