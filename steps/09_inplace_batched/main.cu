// Step 09: in-place and batched transposes, one --mode at a time.
//   ./step09 --mode inplace --rows 16384 --cols 16384
//   ./step09 --mode batched --rows 64 --cols 64 --batch 16384
//   ./step09 --mode inplace-batched --rows 256 --cols 256 --batch 1024
//   ./step09 --mode inplace --rows 8191 --cols 4097      (a rectangle in place)
#include <iostream>
#include <memory>

#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  std::shared_ptr<step09::RectPlan> plan;  // set when --mode inplace gets a rectangle
  course::Problem problem;
  bool listed = false;  // --list: nothing ran
  const int code = course::run_step(argc, argv, step09::info(), [&](const course::Options& opt) {
    problem = opt.problem;
    listed = opt.list;
    return step09::from_options(opt, &plan);
  });
  if (code == 0 && plan && !listed) std::cout << step09::scratch_note(*plan, problem) << "\n";
  return code;
}
