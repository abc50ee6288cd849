cmake_minimum_required(VERSION 3.24)
# The review's findings as checks on 2 GPUs, each of which fails on a method that has the fault:
#   CHECK=no-window  the direct placement refuses in one line where NCCL maps no window
#                    (NCCL_WIN_ENABLE=0: a local registration; with NCCL_LOCAL_REGISTER=0: none)
#   CHECK=faults     the lab's hidden faults (direct.cuh's Fault) fail verification: copies that
#                    race their pack (after the pipeline left the right bytes in the send
#                    buffer), no entry barrier, no exit barrier
#   CHECK=in-step    the lab's in-step variant finishes and verifies where the GPUs' chunks differ
# Prints "skipped: ..." where a binary is not built or fewer than 2 GPUs are visible.
include(${CMAKE_CURRENT_LIST_DIR}/need_gpus.cmake)
step10_need_gpus(${STEP} 2 --only overlapped)
step10_need_gpus(${LAB} 2 --only overlapped)

# Runs ARGN (a hung run is a failure too), expects exit EXIT and stdout matching every MATCH.
function(expect)
  cmake_parse_arguments(E "" "EXIT" "MATCH;ENV;COMMAND" ${ARGN})
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${E_ENV} ${E_COMMAND} TIMEOUT 180
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(JOIN " " shown ${E_ENV} ${E_COMMAND})
  if(NOT "${rc}" STREQUAL "${E_EXIT}")
    message(FATAL_ERROR "${shown}: exit ${rc}, expected ${E_EXIT}\n${out}${err}")
  endif()
  foreach(m IN LISTS E_MATCH)
    if(NOT "${out}" MATCHES "${m}")
      message(FATAL_ERROR "${shown}: no line matches '${m}'\n${out}${err}")
    endif()
  endforeach()
  message(STATUS "${shown}: as expected")
endfunction()

set(_small --gpus 2 --rows 2048 --cols 2048 --reps 2 --warmup 1)
if(CHECK STREQUAL no-window)
  expect(ENV NCCL_WIN_ENABLE=0 COMMAND ${STEP} ${_small} --only direct EXIT 0
         MATCH "refused" "note: direct[^\n]*not mapped")
  expect(ENV NCCL_WIN_ENABLE=0 NCCL_LOCAL_REGISTER=0 COMMAND ${STEP} ${_small} --only direct EXIT 0
         MATCH "refused" "note: direct[^\n]*no window")
elseif(CHECK STREQUAL faults)
  expect(COMMAND ${LAB} ${_small} --only overlapped,fault-pack-wait EXIT 1
         MATCH "overlapped, 2 GPUs[^\n]*  yes" "copies not waiting for the pack[^\n]*FAILED")
  expect(COMMAND ${LAB} ${_small} --only fault-entry-barrier EXIT 1 MATCH "no entry barrier[^\n]*FAILED")
  expect(COMMAND ${LAB} ${_small} --only fault-exit-barrier EXIT 1 MATCH "no exit barrier[^\n]*FAILED")
elseif(CHECK STREQUAL in-step)
  # 129 rows, 2 chunks: GPU 0's second chunk has 1 row, GPU 1's none. 1 x 1: GPU 1 has no rows.
  foreach(_shape "129 1000" "1 1" "3 1000")
    separate_arguments(_rc UNIX_COMMAND "${_shape}")
    list(GET _rc 0 _r)
    list(GET _rc 1 _c)
    expect(COMMAND ${LAB} --gpus 2 --rows ${_r} --cols ${_c} --chunks 2 --reps 2 --warmup 1
                   --only direct-in-step EXIT 0 MATCH "in step[^\n]*  yes")
  endforeach()
else()
  message(FATAL_ERROR "CHECK=${CHECK}: no such check")
endif()
