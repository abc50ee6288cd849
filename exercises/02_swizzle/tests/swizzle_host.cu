// The course's bridge from the CPU tests to the reader's swizzle: it compiles swizzle.cuh (the
// reader's file) for the host, so the bank-model tests check the very function the kernel uses.
// It lives apart from the tests so that the reader's header is never compiled into them.
#include "ex02.cuh"
#include "swizzle.cuh"

int ex02::swizzle_on_host(int row, int col) { return ex02::swizzle(row, col); }
