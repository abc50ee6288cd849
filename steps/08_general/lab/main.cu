// Step 08's lab: the lesson's launcher and paths, then the kernels tried and not kept (other
// vector tile shapes, realigned 16-byte vectors, a 32 x 32 scalar tile), one table per element
// type. LAB.md reads the tables.
//
//   make step08-lab && ./step08-lab --rows 4095 --cols 4097
#include "harness.cuh"
#include "lab_variants.cuh"

int main(int argc, char** argv) {
  course::StepInfo step;
  step.binary = "step08-lab";
  step.title = "general transpose, experiments: tile shapes, realigned vectors, a smaller tile";
  step.description =
      "The lesson's launcher ('auto') and its kernels, then what was tried and not kept:\n"
      "the vector kernel with other tile shapes, the vector kernel realigned onto rows that do\n"
      "not start on 16 bytes (4- and 8-byte elements), and the scalar kernel with a 32 x 32 tile.";
  step.types = course::all_elem_types();  // every type, float32 (the default) first
  return course::run_step(argc, argv, step, [](const course::Options& opt) {
    return step08_lab::variants(opt.problem.type, &opt.problem);
  });
}
