// Step 08: any shape, any element type. One table per element type: the launcher, each of its
// kernels on its own, the copy ceiling and (f32, f64) cuBLAS geam.
#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step08";
  step.title = "general transpose: any shape, any element type";
  step.description =
      "Three kernels for 1-, 2-, 4-, 8- and 16-byte elements, one lesson part each: the scalar\n"
      "kernel (one element per access, output rows cut on their 32-byte sectors; 4- and 8-byte\n"
      "elements, and 2-byte ones on rows off 16 bytes on an H100), 16-byte vectors with narrow\n"
      "elements packed in registers (rows on 16 bytes), and shifted vectors (bytes on any rows,\n"
      "and halves on an H200). 'auto' is the launcher: it names the kernel it picks for the shape.";
  step.types = course::all_elem_types();  // every type, float32 (the default) first
  step.cublas_reference = true;
  return course::run_step(argc, argv, step, [](const course::Options& opt) {
    return step08::variants(opt.problem.type, &opt.problem);
  });
}
