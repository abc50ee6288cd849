# step10_need_gpus(EXE GPUS ARGS...): what step 10's scripts of GPU runs (run_gpus.cmake,
# checks.cmake) do first. Runs EXE on GPUS GPUs on a 1 x 1 matrix (with ARGS) and, where it
# cannot run there, ends the script with "skipped: ..." (CTest's SKIP_REGULAR_EXPRESSION): "no
# CUDA device, GPU test not run" without one, "GPUS GPUs are needed" with fewer, "EXE is not
# built" where it is not.
function(step10_need_gpus exe gpus)
  if(NOT EXISTS "${exe}")
    get_filename_component(name "${exe}" NAME)
    message(FATAL_ERROR "skipped: ${name} is not built (make labs builds the labs)")
  endif()
  execute_process(COMMAND ${exe} --gpus ${gpus} --rows 1 --cols 1 --reps 1 --warmup 0 ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 3 AND "${err}" MATCHES "no usable CUDA device: ([^\n]*)")
    message(FATAL_ERROR "skipped: no CUDA device, GPU test not run: ${CMAKE_MATCH_1}")
  elseif(rc EQUAL 3 OR "${err}" MATCHES "--gpus ${gpus}: only [0-9]+ GPU")
    string(STRIP "${err}" err)
    message(FATAL_ERROR "skipped: ${gpus} GPUs are needed: ${err}")
  endif()
endfunction()
