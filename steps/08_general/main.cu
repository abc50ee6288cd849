// Step 08: any shape, any element type, at the copy ceiling. One table per element type: the
// launcher, each of its paths on its own, the copy ceiling and (f32, f64) cuBLAS geam.
#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  using course::ElemType;
  course::StepInfo step;
  step.binary = "step08";
  step.title = "general transpose: any shape, any element type";
  step.description =
      "One kernel template for 1-, 2-, 4-, 8- and 16-byte elements: every global access is a\n"
      "16-byte vector; narrow elements are packed into 32-bit words by byte permutes in\n"
      "registers. When rows do not start on 16 bytes, a scalar kernel moves one element per\n"
      "access and cuts each output row on its 32-byte sectors. 'auto' is the launcher: it\n"
      "names the path it picks for the shape.";
  step.types = {ElemType::f32, ElemType::f64, ElemType::f16, ElemType::bf16, ElemType::i8,
                ElemType::b128};
  step.cublas_reference = true;
  return course::run_step(argc, argv, step, [](const course::Options& opt) {
    return step08::variants(opt.problem.type, &opt.problem);
  });
}
