// Step 06's lab: transposes with no shared memory, next to the lesson's float4 kernel.
#include "harness.cuh"
#include "lab_variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step06-lab";
  step.title = "no shared memory: 4 column loads, one float4 store per thread";
  step.description =
      "Each thread reads 4 rows of one column and writes them as one float4 of an output row.\n"
      "With 1 lane per column a warp half-writes 32 sectors; with 2 lanes a pair writes 32 bytes.";
  return course::run_step(argc, argv, step,
                          [](const course::Options&) { return step06_lab::variants(); });
}
