# `ctest` run from the repository root runs the tests of the build folder that `make` uses
# (build/), so that a page's `ctest -R CpuStep10` works from where the pages run every command.
# `make test` (or `make all`) builds the tests first; `cd build && ctest` is the same thing.
if(EXISTS build/CTestTestfile.cmake)  # relative to where ctest runs: the repository root
  subdirs(build)
else()
  message(WARNING "no build/ folder yet: run `make test` first (it builds the tests)")
endif()
