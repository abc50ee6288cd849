// Step 10's lab: the plain order, the lesson's three methods and their variants, against
// NCCL's all-to-all of the same bytes in the same run. See LAB.md.
#include "lab_variants.cuh"

int main(int argc, char** argv) {
  return step10::run_multi(
      argc, argv, "step10-lab",
      "the transpose across GPUs: plain order, pipeline, peer writes, direct placement",
      "plain order: pack (step 08's transpose), NCCL all-to-all, place, one after the other.\n"
      "overlapped: the lesson's pipeline of chunks on three streams.\n"
      "peer writes: the lesson's part 3, its tiles walked down the columns, or one 16-byte\n"
      "vector per access (step 08's vector kernel).\n"
      "direct: the lesson's part 2 and its variants; link copy: the links' pace (a reference).",
      step10::lab_methods);
}
