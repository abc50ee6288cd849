// Step 08's lab - the shifted vector kernel (transpose_shift.cuh) with other settings than the
// lesson's: three blocks per SM instead of the two its ~100 registers per thread allow (the
// compiler then spills a few bytes), and for int8 the 128 x 128 tile of the aligned kernel,
// whose 32 lead rows are a quarter of the tile instead of an eighth.
//
//   make step08-lab && ./step08-lab --type i8 --rows 4095 --cols 4097 --only shifted
#pragma once

#include <cstdint>

#include "transpose.cuh"

namespace step08 {

/// The lesson's transpose_shift, line for line, with launch bounds of MinBlocks blocks per SM.
template <int S, int TR, int TC, int MinBlocks>
__global__ void __launch_bounds__(kThreads, MinBlocks)
    transpose_shift_bounded(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                            std::int64_t rows, std::int64_t cols, TileGrid grid, int lead,
                            int phase) {
  using Tile = ShiftTile<S, TR, TC>;
  __shared__ __align__(16) std::uint8_t tile[Tile::L::kBytes];
  std::int64_t ty, tx;
  grid.tile(blockIdx.x, &ty, &tx);
  const Corner top{ty * (TR - lead) - lead, tx * TC};
  typename Tile::Fetched f;
  Tile::fetch(threadIdx.x, in, rows, cols, top, f);
  Tile::from_next_lane(threadIdx.x, f);
  Tile::pack(threadIdx.x, f, cols, top, tile);
  __syncthreads();
  Tile::store(threadIdx.x, out, rows, cols, top, lead, phase, ty == grid.tiles_r - 1, tile);
}

/// Launches it as launch_shift does: the writes cut on sectors where output rows start off them.
template <int S, int TR, int TC, int MinBlocks>
cudaError_t launch_shift_bounded(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                                 cudaStream_t stream) {
  using Tile = ShiftTile<S, TR, TC>;
  const auto o = reinterpret_cast<std::uintptr_t>(out);
  if (!valid_problem(S, rows, cols, reinterpret_cast<std::uintptr_t>(in), o)) {
    return cudaErrorInvalidValue;
  }
  const int lead = rows_start_on(32, S, rows, o) ? 0 : Tile::kLead;
  const std::int64_t blocks = blocks_for(rows, cols, {TR - lead, TC});
  if (blocks < 0) return cudaErrorInvalidValue;
  transpose_shift_bounded<S, TR, TC, MinBlocks>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
          static_cast<const std::uint8_t*>(in), static_cast<std::uint8_t*>(out), rows, cols,
          make_grid(rows, cols, TR - lead, TC, S), lead, static_cast<int>(o / S % Tile::kSector));
  return cudaGetLastError();
}

}  // namespace step08
