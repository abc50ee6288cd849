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
      "Two kernel templates for 1-, 2-, 4-, 8- and 16-byte elements. The vector kernel makes\n"
      "every global access a 16-byte vector; narrow elements are packed into 32-bit words by\n"
      "byte permutes in registers. The scalar kernel moves one element per access and cuts\n"
      "each output row on its 32-byte sectors; it takes 4- and 8-byte elements, and every\n"
      "shape whose rows do not start on 16 bytes. 'auto' is the launcher: it names the path\n"
      "it picks for the shape.";
  step.types = {ElemType::f32, ElemType::f64, ElemType::f16, ElemType::bf16, ElemType::i8,
                ElemType::b128};
  step.cublas_reference = true;
  return course::run_step(argc, argv, step, [](const course::Options& opt) {
    return step08::variants(opt.problem.type, &opt.problem);
  });
}
