# Helpers shared by every folder of the course.

# transpose_add_tests(<target>)
#   Registers every GoogleTest test of <target> with CTest, one process per test, labelled by
#   name: a test whose full name contains "Cpu" is labelled `cpu` (runs anywhere), one that
#   contains "Large" is labelled `gpu;large` (needs many gigabytes of device memory), every other
#   one is labelled `gpu`. GPU tests skip themselves, with the reason, where there is no device.
function(transpose_add_tests target)
  gtest_discover_tests(${target} TEST_PREFIX "${target}." TEST_FILTER "*Cpu*"
    PROPERTIES LABELS cpu DISCOVERY_TIMEOUT 60)
  gtest_discover_tests(${target} TEST_PREFIX "${target}." TEST_FILTER "-*Cpu*:*Large*"
    PROPERTIES LABELS gpu DISCOVERY_TIMEOUT 60)
  gtest_discover_tests(${target} TEST_PREFIX "${target}." TEST_FILTER "*Large*-*Cpu*"
    PROPERTIES LABELS "gpu;large" DISCOVERY_TIMEOUT 60)
endfunction()

# transpose_add_step()
#   Called from steps/NN_name/CMakeLists.txt. Builds the lesson's binary `stepNN` from main.cu and
#   its test `stepNN_test` from test.cu, both against the shared harness in common/; the binary's
#   command line is tested too (cmake/cli_tests.cmake).
#   Extra source files of the step may follow: transpose_add_step(extra.cu ...).
function(transpose_add_step)
  get_filename_component(_folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  string(SUBSTRING ${_folder} 0 2 _nn)
  set(_name step${_nn})
  add_executable(${_name} main.cu ${ARGN})
  target_link_libraries(${_name} PRIVATE transpose_common)
  target_include_directories(${_name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})

  add_executable(${_name}_test test.cu ${ARGN})
  target_link_libraries(${_name}_test PRIVATE transpose_testing)
  target_include_directories(${_name}_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  transpose_add_tests(${_name}_test)
  set_property(GLOBAL APPEND PROPERTY COURSE_STEP_BINARIES ${_name})  # cmake/cli_tests.cmake

  # The step's lab, where it has one (steps/NN_name/lab/CMakeLists.txt calls transpose_add_lab).
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/lab/CMakeLists.txt)
    add_subdirectory(lab)
  endif()
endfunction()

# transpose_add_lab()
#   Called from steps/NN_name/lab/CMakeLists.txt. Builds the lab's binary `stepNN-lab` from the
#   lab's main.cu and its test `stepNN-lab_test` from the lab's test.cu, like a step: the same
#   harness, the same command line, the same CSV rows (step column `stepNN-lab`). The lab sees
#   its step's folder too, so a lab kernel can reuse the lesson's headers.
#   Extra source files of the lab may follow: transpose_add_lab(extra.cu ...).
function(transpose_add_lab)
  get_filename_component(_step_dir ${CMAKE_CURRENT_SOURCE_DIR} DIRECTORY)
  get_filename_component(_folder ${_step_dir} NAME)
  string(SUBSTRING ${_folder} 0 2 _nn)
  set(_name step${_nn}-lab)
  add_executable(${_name} main.cu ${ARGN})
  target_link_libraries(${_name} PRIVATE transpose_common)
  target_include_directories(${_name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${_step_dir})

  add_executable(${_name}_test test.cu ${ARGN})
  target_link_libraries(${_name}_test PRIVATE transpose_testing)
  target_include_directories(${_name}_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${_step_dir})
  transpose_add_tests(${_name}_test)
  set_property(GLOBAL APPEND PROPERTY COURSE_STEP_BINARIES ${_name})  # cmake/cli_tests.cmake
endfunction()
