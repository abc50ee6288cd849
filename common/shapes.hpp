/// @file shapes.hpp
/// @brief The awkward shapes every step is tested on (host-only).
#pragma once

#include <cstdint>
#include <vector>

namespace course {

/// rows x cols of one test matrix.
struct Shape {
  std::int64_t rows;  ///< rows of the input matrix
  std::int64_t cols;  ///< columns of the input matrix
};

/// Shapes that break a transpose that is only right for easy sizes: 1x1, a single row or column,
/// primes, sizes one off a multiple of the tile (32) and of the vector width (4), tall and wide,
/// and square. Each test runs the whole list with fresh inputs; the largest is about a million
/// elements so the list also runs quickly under compute-sanitizer.
inline const std::vector<Shape>& awkward_shapes() {
  static const std::vector<Shape> shapes = {
      {1, 1},      {1, 2},     {2, 1},     {1, 37},     {37, 1},    {1, 4099},  {4099, 1},
      {2, 2},      {3, 5},     {5, 3},     {7, 13},     {31, 31},   {32, 32},   {33, 33},
      {63, 65},    {64, 64},   {65, 63},   {127, 129},  {96, 2048}, {2048, 96}, {100, 1000},
      {1000, 100}, {1000, 50}, {50, 1000}, {257, 511},  {4, 1031},  {1031, 4},  {123, 4567},
      {997, 1009}, {1024, 1024},
  };
  return shapes;
}

/// Square sizes for in-place kernels: below, at and one past tile multiples, odd and prime.
inline const std::vector<std::int64_t>& awkward_square_sizes() {
  static const std::vector<std::int64_t> sizes = {1,  2,  3,  7,   31,  32,  33,  63,  64,
                                                  65, 96, 97, 127, 128, 129, 257, 509, 1000, 1031};
  return sizes;
}

}  // namespace course
