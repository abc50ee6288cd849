# The command-line contract of every binary, checked by running it (labelled cpu: no GPU needed).
# Included at the end of the top CMakeLists.txt, once every step, lab and tool exists.
#
# A usage error exits 2 with its one-line reason before any device is looked for, so these tests
# give the same answer with or without a GPU. The last test of each binary runs a small problem:
# with a GPU it must pass (exit 0, every kernel verified); without one it must exit 3 and say
# why in words a learner can act on (no driver, no GPU, a build for another architecture).

set(_expect ${CMAKE_SOURCE_DIR}/common/tools/expect_run.cmake)
# A folder that cannot exist, for --csv.
set(_no_dir ${CMAKE_BINARY_DIR}/no-such-folder)
# What a binary says when it cannot run its kernels here (see common/device_info.hpp).
set(_no_device_regex "(no usable CUDA device: [^\n]+|this build has kernels for compute capability [^\n]+|the NVIDIA driver is too old to compile this build's PTX[^\n]+)")

# course_cli_test(<name> <target> <exit codes a|b> <regex> [args...])
#   A lab's binary (transpose_lab_target) gets the label `lab-cpu`; while it is not built (make
#   labs) its tests report themselves skipped.
function(course_cli_test name target exit_codes regex)
  string(JOIN "|" _args ${ARGN})  # a CMake list would split the -D argument at its semicolons
  get_property(_labs GLOBAL PROPERTY COURSE_LAB_TARGETS)
  set(_lab OFF)
  if(target IN_LIST _labs)
    set(_lab ON)
  endif()
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${target}> "-DARGS=${_args}"
                   "-DEXIT=${exit_codes}" "-DREGEX=${regex}" -DSKIP_UNBUILT=${_lab} -P ${_expect})
  if(_lab)
    set_tests_properties(${name} PROPERTIES LABELS lab-cpu
                         SKIP_REGULAR_EXPRESSION "skipped: [^ ]+ is not built")
  else()
    set_tests_properties(${name} PROPERTIES LABELS cpu)
  endif()
endfunction()

# course_cli_tests(<binary> [KERNELS])
#   --help, a --csv that cannot be written, and a small run that passes or says why it cannot;
#   KERNELS (run_step binaries, which have a list of kernels): --only that matches nothing.
function(course_cli_tests bin)
  cmake_parse_arguments(ARG "KERNELS" "" "" ${ARGN})
  course_cli_test(${bin}.cli.HelpNeedsNoDevice ${bin} 0 "usage: \\./${bin}" --help)
  course_cli_test(${bin}.cli.RefusesACsvItCannotWrite ${bin} 2
                  "^${bin}: --csv: cannot write '${_no_dir}/x\\.csv'\n$" --csv ${_no_dir}/x.csv)
  if(ARG_KERNELS)
    course_cli_test(${bin}.cli.RefusesAnOnlyThatMatchesNoKernel ${bin} 2
                    "^${bin}: --only: no kernel of ${bin} matches 'zzz'\n$" --only zzz)
    # Every kernel verified ("yes" or "refused" for a shape a kernel does not take), or the reason.
    course_cli_test(${bin}.cli.RunsASmallProblemOrSaysWhyNot ${bin} "0|3"
                    "(^${bin}: ${_no_device_regex}\n$|verified\n.*  yes\n)"
                    --rows 256 --cols 256 --reps 2 --warmup 1)
  else()
    course_cli_test(${bin}.cli.RefusesOnlyHavingNoKernelList ${bin} 2
                    "^${bin}: --only: unknown option for ${bin}" --only zzz)
    course_cli_test(${bin}.cli.RunsASmallProblemOrSaysWhyNot ${bin} "0|3"
                    "(^${bin}: ${_no_device_regex}\n$|median ms)"
                    --rows 256 --cols 256 --reps 2 --warmup 1)
  endif()
endfunction()

# Every step and lab (registered by transpose_add_step / transpose_add_lab).
get_property(_binaries GLOBAL PROPERTY COURSE_STEP_BINARIES)
foreach(_bin IN LISTS _binaries)
  course_cli_tests(${_bin} KERNELS)
endforeach()

# The exercises' benchmarks are steps too (run_step over the reader's kernel).
foreach(_bin bench_ex01_solution bench_ex02_solution bench_ex03_solution)
  if(TARGET ${_bin})
    course_cli_tests(${_bin} KERNELS)
  endif()
endforeach()

# Tools with a table of their own (run_main): no kernel list to choose from.
if(TARGET step08_patterns)
  course_cli_tests(step08_patterns)
  # Its own shape limit, checked before any device like every argument.
  course_cli_test(step08_patterns.cli.RefusesMoreTilesThanAGrid step08_patterns 2
                  "^step08_patterns: --rows x --cols: 1000000 x 200000000 f32 needs more than 2\\^31-1 tiles\n$"
                  --type f32 --rows 1000000 --cols 200000000)
endif()

# Step 09's own checks of --mode and --batch against the shape, made when its kernel list is
# built: also before any device. A rectangle in place runs (its scratch named under the table).
if(TARGET step09)
  course_cli_test(step09.cli.InPlaceRunsARectangleOrSaysWhyNot step09 "0|3"
                  "(^step09: ${_no_device_regex}\n$|in-place rectangle.*  yes\n.*note: in-place rectangle: [0-9.]+ KB of scratch = [0-9.]+ x max\\(rows, cols\\) elements\n)"
                  --mode inplace --rows 100 --cols 200 --reps 2 --warmup 1)
  course_cli_test(step09.cli.InPlaceRefusesSidesPast2To31 step09 2
                  "^step09: --rows x --cols: an in-place rectangle needs sides below 2\\^31, got 3 x 3000000000\n$"
                  --mode inplace --rows 3 --cols 3000000000)
  course_cli_test(step09.cli.InPlaceBatchedRefusesARectangle step09 2
                  "^step09: --mode inplace-batched: an in-place batch needs square matrices, got 8 x 9"
                  --mode inplace-batched --rows 8 --cols 9 --batch 5)
  course_cli_test(step09.cli.InPlaceRefusesABatch step09 2
                  "^step09: --batch: --mode inplace transposes one matrix" --batch 5)
endif()

# Step 07's latency tool parses its own options; its CUDA errors say what they mean (CUDA_CHECK).
if(TARGET step07-latency)
  course_cli_test(step07-latency.cli.RefusesACsvItCannotWrite step07-latency 2
                  "^step07-latency: --csv: cannot write '${_no_dir}/x\\.csv'\n$" --csv ${_no_dir}/x.csv)
  course_cli_test(step07-latency.cli.RunsOrSaysWhyNot step07-latency "0|3"
                  "(^step07-latency: [^\n]*(${_no_device_regex}|no NVIDIA driver is installed[^\n]+)\n$|ns/load)"
                  --loads 1024 --reps 1)
endif()
