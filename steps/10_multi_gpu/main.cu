// Step 10: the transpose across GPUs. One process per GPU (this program starts them, or
// mpirun does); the table compares the pipeline, the direct placement and the peer writes with
// NCCL's all-to-all of the same bytes, timed in the same run.
#include "methods.cuh"

int main(int argc, char** argv) {
  return step10::run_multi(
      argc, argv, "step10",
      "the transpose across GPUs: step 08's tiles, NCCL's all-to-all, overlapped",
      "The matrix is split by rows over G GPUs, one process each, and so is its transpose:\n"
      "every GPU keeps 1/G of its rows' data and sends 1/G to each other GPU. Chunk by chunk,\n"
      "step 08's kernel transposes its rows into a send buffer, NCCL exchanges the pieces,\n"
      "and a 2D copy puts each received piece in place; the three run on three streams, which\n"
      "hides part of the passes. On one machine the direct placement (part 2) has the copy\n"
      "engines write each piece straight into its owner's output instead, and the peer\n"
      "writes (part 3) have one kernel write every element there. NCCL's all-to-all of the\n"
      "same bytes, plain and on symmetric windows, is timed in the same run (reference rows,\n"
      "not bounds). Each GPU checks its own block. ./step10 uses every GPU of this machine;\n"
      "mpirun -np G ./step10 starts one process per GPU on any machines. In the table, GB/s\n"
      "is per GPU and % a2a takes the place of % copy: % of the plain all-to-all.\n"
      "--only takes ids separated by commas.",
      step10::methods);
}
