cmake_minimum_required(VERSION 3.24)  # IN_LIST
# Runs EXE with the |-separated ARGS and checks its exit code (EXIT, or one of the |-separated
# codes given) and that its output, stdout then stderr, matches REGEX. Used by the command-line
# tests of the binaries (cmake/cli_tests.cmake) and of the tools.
#   cmake -DEXE=... -DARGS="--tile|48" -DEXIT=2 -DREGEX="..." -P expect_run.cmake
#   -DSKIP_UNBUILT=ON: a lab's binary that is not built yet (make labs) is not run; the message
#   matches the test's SKIP_REGULAR_EXPRESSION, so CTest reports it skipped.
if(SKIP_UNBUILT AND NOT EXISTS "${EXE}")
  get_filename_component(_name "${EXE}" NAME)
  message(FATAL_ERROR "skipped: ${_name} is not built (make labs builds the labs)")
endif()
string(REPLACE "|" ";" ARGS "${ARGS}")
string(REPLACE "|" ";" _codes "${EXIT}")
execute_process(COMMAND ${EXE} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${rc}" IN_LIST _codes)
  message(FATAL_ERROR "${EXE} ${ARGS}: exit ${rc}, expected ${EXIT}\n${out}${err}")
endif()
if(NOT "${out}${err}" MATCHES "${REGEX}")
  message(FATAL_ERROR "${EXE} ${ARGS}: output does not match '${REGEX}':\n${out}${err}")
endif()
