# The grader's targets in its staged build (see project_hook.cmake):
#   grader_worker_exNN    worker.cu + the submission's objects of exercise NN (exNN_exercise):
#                         runs a plan through the learner's functions, reports data only;
#   grader_probe          worker.cu + the course's own kernels (probe_kernels.cu), out of place;
#   grader_probe_inplace  the same, in place: the yardsticks of the timed runs.
# They link only the host-side course code they need (no GoogleTest, no cuBLAS).
set(_grader ${CMAKE_CURRENT_LIST_DIR})
set(_judge ${_grader}/../judge)
set(_course ${CMAKE_SOURCE_DIR})

# The grader's host code, as objects that come FIRST in every worker's link: a weak (inline,
# template) definition in the submission's objects then never displaces the grader's own, since
# the linker keeps the first one it meets (a strong duplicate does not link).
add_library(grader_host OBJECT ${_course}/common/host_data.cpp ${_course}/common/problem.cpp
                               ${_course}/common/bank_model.cpp)
add_library(grader_host_usage INTERFACE)
# The host side of every grader target at -O1, as the course's tests (common/CMakeLists.txt):
# it only plans, checks and reports, and -O1 compiles in about two thirds of the time. The
# kernels' machine code does not depend on it (nvcc's -O is the host compiler's level).
target_compile_options(grader_host_usage INTERFACE
                       $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-O1> $<$<COMPILE_LANGUAGE:CXX>:-O1>)
target_include_directories(grader_host_usage INTERFACE ${_course}/common
                                                       ${_course}/exercises/testing ${_judge})
target_link_libraries(grader_host_usage INTERFACE Threads::Threads CUDA::cudart)
target_link_libraries(grader_host PRIVATE grader_host_usage)

# Every launch entry point of the CUDA runtime goes through launch_watch.cu first, so the
# worker sees which kernels the launcher launched and with how much shared memory.
set(_watched __cudaLaunchKernel __cudaLaunchKernel_ptsz cudaLaunchKernel
             cudaLaunchCooperativeKernel cudaLaunchKernelExC)
list(TRANSFORM _watched PREPEND "LINKER:--wrap=")
add_library(grader_watch OBJECT ${_grader}/launch_watch.cu)
target_link_libraries(grader_watch PRIVATE grader_host_usage)

# worker.cu includes only the course's exNN.cuh, so its object (grader_worker_main_exNN) is built
# once, with the probes, before any submission; each worker then compiles only the submission's
# files (and, for exercise 2, swizzle_device.cu, which includes the submission's swizzle.cuh).
foreach(_ex 01_rectangular 02_swizzle 03_inplace)
  string(SUBSTRING ${_ex} 0 2 _nn)
  string(SUBSTRING ${_ex} 1 1 _n)
  set(_main grader_worker_main_ex${_nn})
  add_library(${_main} OBJECT ${_grader}/worker.cu)
  target_compile_definitions(${_main} PRIVATE GRADER_EXERCISE=${_n})
  target_include_directories(${_main} PRIVATE ${_course}/exercises/${_ex})
  target_link_libraries(${_main} PRIVATE grader_host_usage)
  # The submission's sources as the compiler saw them (host and device passes), for the static
  # checks: nvcc keeps its preprocessed files here.
  set(_keep ${CMAKE_BINARY_DIR}/exercises/keep/ex${_nn}_exercise)
  file(MAKE_DIRECTORY ${_keep})
  target_compile_options(ex${_nn}_exercise PRIVATE
                         "$<$<COMPILE_LANGUAGE:CUDA>:--keep;--keep-dir;${_keep}>")
  set(_worker grader_worker_ex${_nn})
  set(_sources $<TARGET_OBJECTS:grader_host> $<TARGET_OBJECTS:grader_watch>
               $<TARGET_OBJECTS:${_main}> $<TARGET_OBJECTS:ex${_nn}_exercise>)
  if(_nn STREQUAL "02")
    list(APPEND _sources ${_grader}/swizzle_device.cu)
  endif()
  add_executable(${_worker} ${_sources})
  # The submission's folder of the stage: its swizzle.cuh for swizzle_device.cu, exNN.cuh.
  target_include_directories(${_worker} PRIVATE ${_course}/exercises/${_ex})
  target_link_libraries(${_worker} PRIVATE grader_host_usage)
  target_link_options(${_worker} PRIVATE ${_watched})
endforeach()

foreach(_inplace 0 1)
  set(_probe grader_probe)
  if(_inplace)
    set(_probe grader_probe_inplace)
  endif()
  add_executable(${_probe} $<TARGET_OBJECTS:grader_host> ${_grader}/worker.cu
                           ${_grader}/probe_kernels.cu)
  target_compile_definitions(${_probe} PRIVATE GRADER_PROBE GRADER_PROBE_INPLACE=${_inplace})
  target_include_directories(${_probe} PRIVATE ${_grader})
  target_link_libraries(${_probe} PRIVATE grader_host_usage)
endforeach()
