// Step 10's lab: the plain order, the lesson's pipeline and the direct peer writes, against
// NCCL's all-to-all of the same bytes in the same run. See LAB.md.
#include "lab_variants.cuh"

int main(int argc, char** argv) {
  return step10::run_multi(
      argc, argv, "step10-lab",
      "the transpose across GPUs: plain order, pipeline, peer writes, direct placement",
      "plain order: pack (step 08's transpose), NCCL all-to-all, place, one after the other.\n"
      "overlapped: the lesson's pipeline of chunks on three streams.\n"
      "peer writes: one kernel writes each transposed tile straight into the output of the GPU\n"
      "that owns it, through NCCL's windows (one machine only; refused elsewhere), one element\n"
      "or one 16-byte vector per access.\n"
      "direct: the lesson's part 2 and its variants; link copy: the links' pace (a reference).",
      step10::lab_methods);
}
