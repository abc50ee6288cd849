// Step 09: in-place and batched transposes, one --mode at a time.
//   ./step09 --mode inplace --rows 16384 --cols 16384
//   ./step09 --mode batched --rows 64 --cols 64 --batch 16384
//   ./step09 --mode inplace-batched --rows 256 --cols 256 --batch 1024
#include "harness.cuh"
#include "variants.cuh"

int main(int argc, char** argv) {
  return course::run_step(argc, argv, step09::info(), step09::from_options);
}
