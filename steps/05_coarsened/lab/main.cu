// Step 05's lab: the diagonal block order and the load-store pairs, next to the lesson's kernels.
#include "harness.cuh"
#include "lab_variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step05-lab";
  step.title = "coarsened tile, experiments: diagonal block order, load-store pairs";
  step.description =
      "The lesson's 32x8 and 32x4 kernels, then the same tile in the diagonal block order of\n"
      "older articles, and with each load stored to shared memory right after it is issued.";
  return course::run_step(argc, argv, step,
                          [](const course::Options&) { return step05_lab::variants(); });
}
