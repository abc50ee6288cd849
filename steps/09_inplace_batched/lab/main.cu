// Step 09's lab: the in-place variants tried and not taught, beside the lesson's kernels.
//   ./step09-lab --rows 8191 --cols 8191
//   ./step09-lab --rows 16384 --cols 16384 --only "32x4 threads"
#include <iostream>
#include <memory>

#include "harness.cuh"
#include "lab_variants.cuh"

int main(int argc, char** argv) {
  std::shared_ptr<step09::RectPlan> plan;  // the lesson's plan, set when a rectangle runs
  course::Problem problem;
  bool listed = false;  // --list: nothing ran
  const int code = course::run_step(argc, argv, step09_lab::info(), [&](const course::Options& o) {
    problem = o.problem;
    listed = o.list;
    return step09_lab::from_options(o, &plan);
  });
  if (code == 0 && plan && plan->m != 0 && !listed) {
    std::cout << step09::scratch_note(*plan, problem) << "\n";
  }
  return code;
}
