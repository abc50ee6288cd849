/// @file errors.hpp
/// @brief The course's exit codes and the two kinds of error every binary reports (host-only).
#pragma once

#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

namespace course {

/// Exit codes shared by every binary of the course (documented in the README).
enum ExitCode : int {
  kExitOk = 0,           ///< success
  kExitVerifyFailed = 1, ///< a kernel produced a wrong result
  kExitBadArgument = 2,  ///< a bad command-line argument or a size that does not fit
  kExitCudaError = 3,    ///< no usable CUDA device, or a CUDA call failed
};

/// A failed CUDA call: the message names the call, the file, the line and the error.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad argument (bad option, unsupported shape, not enough memory): one line that says why.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs @p body (a binary's work, returning its exit code) and turns the course's errors into
/// their exit code and one line on stderr that starts with @p name.
template <typename Body>
int exit_code_of(const std::string& name, Body body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return kExitBadArgument;
  } catch (const CudaError& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return kExitCudaError;
  } catch (const std::bad_alloc&) {
    std::cerr << name << ": not enough host memory for this size\n";
    return kExitBadArgument;
  }
}

}  // namespace course
