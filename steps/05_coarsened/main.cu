// Step 05: the coarsened tile, 32x32 elements moved by 32 x BLOCK_ROWS threads.
#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step05";
  step.title = "coarsened tile: 32x32 swizzled tile, 32 x BLOCK_ROWS threads";
  step.description =
      "Step 04's tile moved by fewer threads: with 32x8 threads each thread copies 4 elements,\n"
      "with several loads in flight before the barrier. One table compares BLOCK_ROWS = 32, 16,\n"
      "8 and 4 (the diagonal block order and the other experiments: ./step05-lab).";
  return course::run_step(argc, argv, step, [](const course::Options&) { return step05::variants(); });
}
