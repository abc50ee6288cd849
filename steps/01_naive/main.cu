// Step 01: the naive transpose, both coalescing sides, four block shapes, one table.
#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step01";
  step.title = "naive transpose, one thread per element";
  step.description =
      "Each thread copies one element. One side of the copy is always strided: reading rows\n"
      "coalesced means writing columns, 4 useful bytes in every 32-byte sector.";
  return course::run_step(argc, argv, step, [](const course::Options&) { return step01::variants(); });
}
