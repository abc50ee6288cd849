// Step 03: the padded tile, 32x33 words in shared memory.
#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step03";
  step.title = "padded tile: 32x32 tile stored as 32x33, 32x32 threads";
  step.description =
      "Step 02 with one column of padding in the shared tile: a tile row is 33 words, so a tile\n"
      "column spreads over all 32 banks and the transposed read is conflict-free, for 3% more\n"
      "shared memory.";
  return course::run_step(argc, argv, step, [](const course::Options&) { return step03::variants(); });
}
