// Step 02: the tiled transpose, staged through a 32x32 shared-memory tile.
#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step02";
  step.title = "tiled transpose: 32x32 shared-memory tile, 32x32 threads";
  step.description =
      "A block reads a 32x32 tile with coalesced rows into shared memory, then writes the tile's\n"
      "columns as coalesced output rows. Both global sides are coalesced; reading a column of the\n"
      "tile hits one shared-memory bank 32 times (a 32-way bank conflict).";
  return course::run_step(argc, argv, step, [](const course::Options&) { return step02::variants(); });
}
