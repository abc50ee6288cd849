cmake_minimum_required(VERSION 3.24)
# Runs EXE on GPUS GPUs (default 2) over awkward shapes and element types, and checks that every
# run exits 0 with every kernel verified (each GPU checks its own block bit for bit).
#   LAUNCH=alone:   EXE --gpus GPUS ...            (the program starts the other processes)
#   LAUNCH=mpirun:  MPIEXEC -np GPUS --bind-to none EXE ...
# Prints "skipped: ..." (CTest's SKIP_REGULAR_EXPRESSION) where EXE is not built or fewer than
# GPUS GPUs are visible.
if(NOT GPUS)
  set(GPUS 2)
endif()
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)  # containers run as root; Open MPI refuses without these
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)

include(${CMAKE_CURRENT_LIST_DIR}/need_gpus.cmake)
step10_need_gpus(${EXE} ${GPUS})

# rows x cols, element type, more options: primes, 1 x N and N x 1, rows not divisible by G,
# fewer rows than GPUs, chunks that leave some GPU's last chunks empty.
set(_runs
  "1 1 f32" "1 37 f32" "37 1 f32" "3 5 f32" "7 13 f32" "33 33 f32" "65 63 f32" "127 129 f32"
  "1000 50 f32" "1 4099 f32" "4099 1 f32" "997 1009 f32 --chunks 8" "123 4567 f32 --chunks 64"
  "997 1009 i8" "1031 4 f64" "257 511 f16 --chunks 2" "127 129 bf16" "65 63 b128")
foreach(_run IN LISTS _runs)
  separate_arguments(_args UNIX_COMMAND "${_run}")
  list(POP_FRONT _args _rows _cols _type)
  set(_cmd ${EXE} --rows ${_rows} --cols ${_cols} --type ${_type} --reps 2 --warmup 1 ${_args})
  if(LAUNCH STREQUAL mpirun)
    set(_cmd ${MPIEXEC} -np ${GPUS} --bind-to none ${_cmd})
  else()
    list(INSERT _cmd 1 --gpus ${GPUS})
  endif()
  execute_process(COMMAND ${_cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT "${out}" MATCHES "  yes\n" OR "${out}" MATCHES "FAILED")
    string(JOIN " " _shown ${_cmd})
    message(FATAL_ERROR "${_shown}: exit ${rc}\n${out}${err}")
  endif()
  message(STATUS "${_rows} x ${_cols} ${_type} ${_args}: verified")
endforeach()
