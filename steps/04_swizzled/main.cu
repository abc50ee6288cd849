// Step 04: the swizzled tile, an XOR of the column by the row instead of padding.
#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step04";
  step.title = "swizzled tile: 32x32 tile, column XOR row, 32x32 threads";
  step.description =
      "No padding: element (r, c) of the shared tile is stored in column c ^ r. The XOR permutes\n"
      "each row and puts the 32 elements of a column in 32 different banks, so the transposed\n"
      "read is conflict-free while every tile row stays 128-byte aligned.";
  return course::run_step(argc, argv, step, [](const course::Options&) { return step04::variants(); });
}
