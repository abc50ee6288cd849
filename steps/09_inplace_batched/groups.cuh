// Step 09, part 2 - small matrices in groups (BATCHED.md). What changed since batched.cuh: a
// 32 x 48 matrix is 6 KB, less than one 64 x 64 tile, so one block per tile would leave most
// threads idle and move too few bytes per block. Here a block takes G whole matrices (about
// 16 KB of data): they lie back to back, so the block reads one contiguous chunk and writes one
// contiguous chunk, every access coalesced whatever the shape, and all the transposing happens
// in shared memory.
// The block reads its whole chunk before the barrier and writes only that chunk after it, so
// the same kernel also works in place (in == out).
//
//   make step09 && ./step09 --mode batched --rows 32 --cols 48 --batch 1000
//   ./step09 --mode inplace-batched --rows 32 --cols 32 --batch 65536
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace step09 {

/// Where a linear element index of a chunk of matrices (each rows x cols, back to back) falls:
/// matrix, row and column. advance() moves it @p stride elements on with additions and carries,
/// because a division by a run-time value costs about twenty instructions per element, several
/// times what the copy itself needs.
struct ChunkPos {
  int matrix, row, col;
  int step_matrix, step_row, step_col;
  int rows, cols;

  __host__ __device__ ChunkPos(int index, int stride, int rows_, int cols_)
      : matrix(index / (rows_ * cols_)),
        row(index % (rows_ * cols_) / cols_),
        col(index % cols_),
        step_matrix(stride / (rows_ * cols_)),
        step_row(stride % (rows_ * cols_) / cols_),
        step_col(stride % cols_),
        rows(rows_),
        cols(cols_) {}

  __host__ __device__ void advance() {
    col += step_col;
    row += step_row;
    matrix += step_matrix;
    if (col >= cols) {  // step_col < cols, so one carry is enough
      col -= cols;
      ++row;
    }
    if (row >= rows) {  // step_row + 1 <= rows, likewise
      row -= rows;
      ++matrix;
    }
  }
};

/// How many matrices a block takes, and the shared memory that needs.
struct GroupPlan {
  int group = 0;               ///< matrices per block; 0: one matrix does not fit
  std::size_t smem_bytes = 0;  ///< dynamic shared memory per block
};

/// Data a block should move (each way): enough bytes in flight per SM to cover DRAM latency.
constexpr std::int64_t kGroupTargetBytes = 16 * 1024;
/// Dynamic shared memory a block may use without opting in (cudaFuncSetAttribute).
constexpr std::int64_t kGroupMaxSmemBytes = 48 * 1024;

/// Rows are stored in shared memory with an odd pitch (cols, or cols + 1 when cols is even):
/// reading down a column then visits 32 different banks (for 8-byte types, 16 per half-warp).
__host__ __device__ inline int group_pitch(int cols) { return cols | 1; }

/// Matrices per block: about kGroupTargetBytes of data, at most kGroupMaxSmemBytes of shared
/// memory, no more than the batch. group = 0 when one padded matrix alone does not fit.
inline GroupPlan plan_groups(std::int64_t rows, std::int64_t cols, std::size_t elem_bytes,
                             std::int64_t batch) {
  GroupPlan plan;
  if (rows < 1 || cols < 1 || batch < 1 || rows > kGroupMaxSmemBytes ||
      cols > kGroupMaxSmemBytes) {
    return plan;
  }
  const std::int64_t size = static_cast<std::int64_t>(elem_bytes);
  const std::int64_t padded = rows * group_pitch(static_cast<int>(cols)) * size;
  if (padded > kGroupMaxSmemBytes) return plan;
  std::int64_t group = kGroupTargetBytes / (rows * cols * size);
  if (group < 1) group = 1;
  if (group > kGroupMaxSmemBytes / padded) group = kGroupMaxSmemBytes / padded;
  if (group > batch) group = batch;
  plan.group = static_cast<int>(group);
  plan.smem_bytes = static_cast<std::size_t>(group * padded);
  return plan;
}

/// Transposes @p group whole matrices per block (fewer in the last block). Threads: THREADS;
/// launch bounds for a full SM of threads (32 registers).
/// Dynamic shared memory: plan_groups().smem_bytes.
/// No __restrict__: in place, @p in and @p out are the same buffer.
template <typename T, int THREADS>
__global__ void __launch_bounds__(THREADS, 2048 / THREADS)
    transpose_whole_matrices(const T* in, T* out, int rows, int cols, std::int64_t batch,
                             int group) {
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  T* const s = reinterpret_cast<T*>(smem_bytes);
  const int pitch = group_pitch(cols);
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * group;
  const int count = static_cast<int>(batch - first < group ? batch - first : group);
  const int n = count * rows * cols;  // elements of this block's chunk: at most 48 KB of them
  const std::int64_t offset = first * rows * cols;
  const T* const src = in + offset;
  T* const dst = out + offset;

  // 1. Read the chunk in memory order (coalesced, contiguous), straight into shared memory with
  //    cp.async so that all the thread's copies are in flight at once. Input element
  //    (matrix, row, col) goes to shared row matrix * rows + row.
  ChunkPos p(threadIdx.x, THREADS, rows, cols);
  for (int i = threadIdx.x; i < n; i += THREADS) {
    __pipeline_memcpy_async(&s[(p.matrix * rows + p.row) * pitch + p.col], &src[i], sizeof(T));
    p.advance();
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();  // the whole chunk is in shared memory: the output may overwrite the input

  // 2. Write the chunk in memory order too. Output element (matrix, row, col) of a cols x rows
  //    matrix is input element (matrix, col, row): consecutive threads read down an input
  //    column of shared memory, at the odd pitch.
  ChunkPos q(threadIdx.x, THREADS, cols, rows);
#pragma unroll 4
  for (int o = threadIdx.x; o < n; o += THREADS) {
    dst[o] = s[(q.matrix * rows + q.col) * pitch + q.row];
    q.advance();
  }
}

/// Transposes @p batch matrices of @p rows x @p cols, G whole matrices per block; in place when
/// @p in == @p out. Returns cudaErrorInvalidValue without launching when one matrix does not
/// fit in 48 KB of shared memory (the tiled kernels take those) or the grid would be too large.
template <typename T, int THREADS = 256>
cudaError_t transpose_grouped(const T* in, T* out, std::int64_t rows, std::int64_t cols,
                              std::int64_t batch, cudaStream_t stream = nullptr) {
  const GroupPlan plan = plan_groups(rows, cols, sizeof(T), batch);
  if (plan.group == 0) return cudaErrorInvalidValue;
  const std::int64_t blocks = (batch + plan.group - 1) / plan.group;
  if (blocks > 0x7FFFFFFF) return cudaErrorInvalidValue;
  transpose_whole_matrices<T, THREADS>
      <<<static_cast<unsigned>(blocks), THREADS, plan.smem_bytes, stream>>>(
          in, out, static_cast<int>(rows), static_cast<int>(cols), batch, plan.group);
  return cudaGetLastError();
}

}  // namespace step09
