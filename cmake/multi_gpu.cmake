# NCCL and MPI, for step 10 (the transpose across GPUs), as the options TRANSPOSE_NCCL and
# TRANSPOSE_MPI of the top CMakeLists.txt say. NCCL is looked for in NCCL_HOME, the CUDA
# toolkit (which often ships it), the system, and where `make deps` puts PyPI's
# nvidia-nccl-cu13 (TRANSPOSE_PIP_DIR, or any Python package nvidia.nccl that python3 imports).
# Sets:
#   TRANSPOSE_HAVE_NCCL, TRANSPOSE_HAVE_MPI   ON or OFF
#   transpose_nccl                           an imported target (headers and library)
#   TRANSPOSE_STEP10_LEFT_OUT                what was left out and how to get it, one line
#                                            (empty when nothing was)
#   TRANSPOSE_STEP10_WINDOWS_LEFT_OUT        the same for the direct placement and the lab, which
#                                            need NCCL 2.28 (empty when built)
option(TRANSPOSE_NCCL "Build step 10 (needs NCCL)" ON)
option(TRANSPOSE_MPI "Let step 10 start under mpirun (needs MPI)" ON)
set(TRANSPOSE_PIP_DIR "$ENV{HOME}/.local/share/transpose-course/python" CACHE PATH
    "Where make deps installs Python packages that the system lacks (NCCL from PyPI)")

set(TRANSPOSE_HAVE_NCCL OFF)
set(TRANSPOSE_HAVE_MPI OFF)
set(TRANSPOSE_STEP10_LEFT_OUT "")
set(TRANSPOSE_STEP10_WINDOWS_LEFT_OUT "")

if(TRANSPOSE_NCCL)
  # PyPI's nvidia-nccl-cu13 installs nvidia/nccl/{include,lib} (lib holds libnccl.so.2 only).
  set(_pip_nccl ${TRANSPOSE_PIP_DIR}/nvidia/nccl)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c "import nvidia.nccl as n; print(list(n.__path__)[0])"
      OUTPUT_VARIABLE _py_nccl OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_py_nccl)
      list(APPEND _pip_nccl ${_py_nccl})
    endif()
  endif()
  # The header and the library from the same place: the first of these that has both, else
  # wherever the compiler's default paths find them.
  set(_roots $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_ROOT} ${_pip_nccl})
  foreach(_dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
    get_filename_component(_up ${_dir} DIRECTORY)
    list(APPEND _roots ${_up})
  endforeach()
  foreach(_root IN LISTS _roots)
    if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
      unset(NCCL_INCLUDE_DIR CACHE)
      unset(NCCL_LIBRARY CACHE)
      find_path(NCCL_INCLUDE_DIR nccl.h PATHS ${_root}/include NO_DEFAULT_PATH)
      find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 PATHS ${_root}/lib64 ${_root}/lib
                   NO_DEFAULT_PATH)
    endif()
  endforeach()
  if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
    unset(NCCL_INCLUDE_DIR CACHE)
    unset(NCCL_LIBRARY CACHE)
    find_path(NCCL_INCLUDE_DIR nccl.h)
    find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2)
  endif()
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    file(STRINGS ${NCCL_INCLUDE_DIR}/nccl.h _nccl_version REGEX "#define NCCL_(MAJOR|MINOR|PATCH) ")
    string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*"
           "\\1.\\2.\\3" NCCL_VERSION "${_nccl_version}")
    if(NCCL_VERSION VERSION_LESS 2.13)  # ncclGetLastError
      set(TRANSPOSE_STEP10_LEFT_OUT
          "step 10 left out: NCCL ${NCCL_VERSION} (${NCCL_LIBRARY}) is older than 2.13; `make deps` installs a newer one")
    else()
      set(TRANSPOSE_HAVE_NCCL ON)
      add_library(transpose_nccl UNKNOWN IMPORTED)
      set_target_properties(transpose_nccl PROPERTIES IMPORTED_LOCATION ${NCCL_LIBRARY}
                            INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
      message(STATUS "NCCL ${NCCL_VERSION}: ${NCCL_LIBRARY}")
      # Windows (ncclCommWindowRegister) and NCCL's device API came with 2.28: older ones build
      # step 10's pipeline, without the direct placement and the lab.
      if(NCCL_VERSION VERSION_LESS 2.28)
        set(TRANSPOSE_STEP10_WINDOWS_LEFT_OUT
            "step 10's direct placement and its lab left out: NCCL ${NCCL_VERSION} (${NCCL_LIBRARY}) is older than 2.28; point NCCL_HOME at a newer one (pip install nvidia-nccl-cu13) and configure again")
      endif()
    endif()
  else()
    set(TRANSPOSE_STEP10_LEFT_OUT
        "step 10 (the transpose across GPUs) left out: NCCL not found (nccl.h, libnccl); `make deps` installs it")
  endif()
else()
  set(TRANSPOSE_STEP10_LEFT_OUT "step 10 left out: configured with -DTRANSPOSE_NCCL=OFF (-DTRANSPOSE_NCCL=ON builds it where NCCL is found)")
endif()

if(TRANSPOSE_HAVE_NCCL AND TRANSPOSE_MPI)
  # MPI where its C++ compiler wrapper is on PATH; FindMPI is not asked otherwise (its pkg-config
  # fallback prints "Package 'mpi-cxx' ... not found" even when QUIET).
  find_program(TRANSPOSE_MPICXX NAMES mpicxx mpic++ mpiCC NO_CMAKE_SYSTEM_PATH)
  if(TRANSPOSE_MPICXX)
    find_package(MPI COMPONENTS CXX QUIET)
  endif()
  if(MPI_CXX_FOUND)
    set(TRANSPOSE_HAVE_MPI ON)
    message(STATUS "MPI ${MPI_CXX_VERSION}: step 10 also runs under mpirun")
  else()
    set(TRANSPOSE_STEP10_LEFT_OUT
        "step 10 built without MPI: ./step10 runs on the GPUs of this machine, not under mpirun; `make deps` installs Open MPI")
  endif()
endif()

foreach(_left IN ITEMS "${TRANSPOSE_STEP10_LEFT_OUT}" "${TRANSPOSE_STEP10_WINDOWS_LEFT_OUT}")
  if(_left)
    message(NOTICE "${_left}")
  endif()
endforeach()

