// Step 06: vectorized loads and stores (float2, float4) with several rows per thread, one table.
#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step06";
  step.title = "vectorized: float2/float4 loads and stores, several rows per thread";
  step.description =
      "Each thread moves 8 or 16 bytes per global access and loads several rows before it\n"
      "stores any: fewer instructions, more bytes in flight. The shared tile is swizzled per\n"
      "vector so both its vector stores and its column reads stay free of bank conflicts.";
  step.cublas_reference = true;
  return course::run_step(argc, argv, step,
                          [](const course::Options&) { return step06::variants(); });
}
