// Step 04's lab: three ways to write the swizzle, and step 03's pad, in one table.
#include "harness.cuh"
#include "lab_variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step04-lab";
  step.title = "swizzled tile, experiments: how the swizzle is written";
  step.description =
      "Step 03's padded tile, the lesson's c ^ r, and the general c ^ (r mod 32) written as\n"
      "r & 31 and as a signed r % 32: the same banks, different instructions per access.";
  return course::run_step(argc, argv, step,
                          [](const course::Options&) { return step04_lab::variants(); });
}
