// Step 07: 64 x 64 tiles, float4 in and out, several float4s per thread, down the columns.
#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step07";
  step.title = "64x64 tiles: float4 in and out, several float4s per thread, down the columns";
  step.description =
      "Each block moves a 64 x 64 tile (16 KB); each thread loads 2, 4 or 8 float4s before it\n"
      "stores any, so every SM keeps the bytes in flight that Little's law asks for, and the\n"
      "blocks walk the tiles down the columns. Compare the three thread counts with cuBLAS.";
  step.cublas_reference = true;
  return course::run_step(argc, argv, step,
                          [](const course::Options&) { return step07::variants(); });
}
