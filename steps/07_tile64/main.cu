// Step 07: 64 x 64 tiles, float4 loads and stores, several float4s per thread, one table.
#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step07";
  step.title = "64x64 tiles: float4 in and out, several float4s per thread";
  step.description =
      "Each block moves a 64 x 64 tile (16 KB); each thread loads several float4s before it\n"
      "stores any, so every SM keeps well over the bytes in flight that Little's law asks for.\n"
      "Compare the threads per tile, the shared layout, the tile order and the cache hint.";
  step.cublas_reference = true;
  return course::run_step(argc, argv, step,
                          [](const course::Options&) { return step07::variants(); });
}
