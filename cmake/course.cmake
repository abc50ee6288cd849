# Helpers shared by every folder of the course.

# transpose_add_tests(<target> [LAB])
#   Registers every GoogleTest test of <target> with CTest, one process per test, labelled by
#   name: a test whose full name contains "Cpu" is labelled `cpu` (runs anywhere), one that
#   contains "Large" is labelled `gpu-large` (needs many gigabytes of device memory), every other
#   one is labelled `gpu`. GPU tests skip themselves, with the reason, where there is no device.
#   LAB: a lab's test binary (see transpose_lab_target): the labels are `lab-cpu`, `lab-gpu` and
#   `lab-gpu-large`. One label per test (a list does not survive gtest_discover_tests), and
#   ctest's -L and -LE take regular expressions: -L gpu picks every GPU test, -LE lab the
#   course without its labs, -LE large the tests that fit any GPU.
function(transpose_add_tests target)
  cmake_parse_arguments(ARG "LAB" "" "" ${ARGN})
  set(_lab "")
  if(ARG_LAB)
    set(_lab "lab-")
  endif()
  gtest_discover_tests(${target} TEST_PREFIX "${target}." TEST_FILTER "*Cpu*"
    PROPERTIES LABELS ${_lab}cpu DISCOVERY_TIMEOUT 60)
  gtest_discover_tests(${target} TEST_PREFIX "${target}." TEST_FILTER "-*Cpu*:*Large*"
    PROPERTIES LABELS ${_lab}gpu DISCOVERY_TIMEOUT 60)
  gtest_discover_tests(${target} TEST_PREFIX "${target}." TEST_FILTER "*Large*-*Cpu*"
    PROPERTIES LABELS ${_lab}gpu-large DISCOVERY_TIMEOUT 60)
  if(ARG_LAB)
    # Until the binary is built (make labs), CTest knows its tests only as one placeholder,
    # <target>_NOT_BUILT, which would fail: list it as disabled, labelled `lab`, instead.
    set(_script ${CMAKE_CURRENT_BINARY_DIR}/${target}_not_built.cmake)
    file(GENERATE OUTPUT ${_script} CONTENT
         "if(NOT EXISTS \"$<TARGET_FILE:${target}>\")\n  set_tests_properties(${target}_NOT_BUILT PROPERTIES DISABLED TRUE LABELS lab)\nendif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_script})
  endif()
endfunction()

# transpose_lab_target(<target>)
#   A lab's binaries (its variants, its tests, its tools) are not part of `make all` and `make
#   test`: a learner following the lessons does not need them, and they are about a third of the
#   course's compile time. `make labs` builds them (the CMake target `labs`), `make test-labs`
#   runs their tests; CI runs both.
function(transpose_lab_target target)
  set_target_properties(${target} PROPERTIES EXCLUDE_FROM_ALL TRUE)
  if(NOT TARGET labs)
    add_custom_target(labs)
  endif()
  add_dependencies(labs ${target})
  set_property(GLOBAL APPEND PROPERTY COURSE_LAB_TARGETS ${target})  # cmake/cli_tests.cmake
endfunction()

# _transpose_binary_and_test(<name> <include dirs> [sources...])
#   The binary <name> from main.cu and its test <name>_test from test.cu (each with the extra
#   sources), against the shared harness in common/, seeing <include dirs>; the binary's command
#   line is tested too (cmake/cli_tests.cmake).
function(_transpose_binary_and_test name dirs)
  add_executable(${name} main.cu ${ARGN})
  target_link_libraries(${name} PRIVATE transpose_common)
  add_executable(${name}_test test.cu ${ARGN})
  target_link_libraries(${name}_test PRIVATE transpose_testing)
  foreach(_target ${name} ${name}_test)
    target_include_directories(${_target} PRIVATE ${dirs})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY COURSE_STEP_BINARIES ${name})  # cmake/cli_tests.cmake
endfunction()

# transpose_add_step([extra sources...])
#   Called from steps/NN_name/CMakeLists.txt: the lesson's binary `stepNN` and its test
#   `stepNN_test`; then the step's lab, where it has one (lab/CMakeLists.txt).
function(transpose_add_step)
  get_filename_component(_folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  string(SUBSTRING ${_folder} 0 2 _nn)
  _transpose_binary_and_test(step${_nn} ${CMAKE_CURRENT_SOURCE_DIR} ${ARGN})
  transpose_add_tests(step${_nn}_test)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/lab/CMakeLists.txt)
    add_subdirectory(lab)
  endif()
endfunction()

# transpose_add_lab([extra sources...])
#   Called from steps/NN_name/lab/CMakeLists.txt: the lab's binary `stepNN-lab` and its test
#   `stepNN-lab_test`, like a step's: the same harness, the same command line, the same CSV rows
#   (step column `stepNN-lab`). The lab sees its step's folder too, so a lab kernel can reuse
#   the lesson's headers. Both are lab targets (transpose_lab_target): built by `make labs`.
function(transpose_add_lab)
  get_filename_component(_step_dir ${CMAKE_CURRENT_SOURCE_DIR} DIRECTORY)
  get_filename_component(_folder ${_step_dir} NAME)
  string(SUBSTRING ${_folder} 0 2 _nn)
  set(_name step${_nn}-lab)
  _transpose_binary_and_test(${_name} "${CMAKE_CURRENT_SOURCE_DIR};${_step_dir}" ${ARGN})
  transpose_lab_target(${_name})
  transpose_lab_target(${_name}_test)
  transpose_add_tests(${_name}_test LAB)
endfunction()
