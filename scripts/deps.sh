#!/usr/bin/env bash
# Installs what the course uses besides the CUDA toolkit, where it is missing (`make deps`):
#   to build and test: cmake, ninja, a C++ compiler, GoogleTest             (apt-get)
#   optional:          matplotlib for `make plots`                         (apt-get, else pip)
#                      Doxygen for `make docs`                             (apt-get)
#                      Chromium, for the docs' check in a browser          (apt-get)
#                      bubblewrap (the grader's sandbox), Open MPI and NCCL (step 10): below
#   GPU tools:         compute-sanitizer (`make sanitize`), Nsight Compute (`make profile`):
#                      part of the CUDA toolkit, but some installs lack them; installed from
#                      NVIDIA's apt repository when it is set up, otherwise this says where to
#                      get them.
#
#   usage: scripts/deps.sh [--no-gpu-tools]     (--no-gpu-tools: skip the GPU tools, as CI does)
#
# Debian and Ubuntu (apt-get); as root, or through sudo. matplotlib comes from apt-get for the
# system's python3 and from pip for any other (a virtual environment, pyenv, conda).
set -euo pipefail

gpu_tools=1
[ "${1:-}" = "--no-gpu-tools" ] && gpu_tools=0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null && sudo="sudo"
fi
cuda_bin=${CUDA_HOME:-/usr/local/cuda}/bin
have() { command -v "$1" >/dev/null 2>&1 || [ -x "$cuda_bin/$1" ]; }

if ! have nvcc; then
  echo "deps: nvcc not found: install the CUDA toolkit first (https://developer.nvidia.com/cuda-downloads)" >&2
fi
# The toolkit's version, "13-0": NVIDIA's packages are named for it (cuda-<tool>-13-0).
cuda_version=$({ nvcc --version || "$cuda_bin/nvcc" --version; } 2>/dev/null |
               sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1-\2/p' || true)

packages=()
have cmake || packages+=(cmake)
have ninja || packages+=(ninja-build)
have c++ || packages+=(g++)
[ -e /usr/include/gtest/gtest.h ] || [ -e /usr/src/googletest/CMakeLists.txt ] ||
  packages+=(libgtest-dev)
have doxygen || packages+=(doxygen)
# The docs check renders the site in headless Chromium (docs/check_browser.py); Ubuntu names
# the package chromium-browser.
if ! have chromium && ! have chromium-browser; then
  if grep -qs '^ID=ubuntu' /etc/os-release; then packages+=(chromium-browser)
  else packages+=(chromium); fi
fi
pip_matplotlib=0
if ! python3 -c "import matplotlib" 2>/dev/null; then
  if [ "$(python3 -c 'import sys; print(sys.prefix)' 2>/dev/null)" = /usr ]; then
    packages+=(python3-matplotlib)  # Debian's python3 refuses pip installs (PEP 668)
  else
    pip_matplotlib=1
  fi
fi

# --- The exercise grader (exercises/INSTRUCTORS.md): bubblewrap isolates every run of a student's
# code, and the grader refuses to grade as root without it (setpriv comes with util-linux).
have bwrap || packages+=(bubblewrap)
# ---

# The GPU tools, from NVIDIA's repository when apt-get knows it.
missing_gpu_tools=()
if [ $gpu_tools -eq 1 ]; then
  for tool in compute-sanitizer:cuda-sanitizer ncu:cuda-nsight-compute; do
    have "${tool%%:*}" && continue
    package=${tool#*:}-$cuda_version
    if [ -n "$cuda_version" ] && command -v apt-cache >/dev/null &&
       apt-cache show "$package" >/dev/null 2>&1; then
      packages+=("$package")
    else
      missing_gpu_tools+=("${tool%%:*}")
    fi
  done
fi

# Step 10 (the transpose across GPUs): Open MPI (mpirun, for `mpirun -np G ./step10`) from
# apt-get; NCCL often ships with the CUDA toolkit, and where no nccl.h is found, PyPI's
# nvidia-nccl-cu<major> goes into the folder cmake/multi_gpu.cmake searches (pip --target: no
# system package touched).
step10_pip_dir="${HOME}/.local/share/transpose-course/python"
step10_nccl=0
for dir in "${NCCL_HOME:-}" "${CUDA_HOME:-/usr/local/cuda}" /usr /usr/local "$step10_pip_dir/nvidia/nccl"; do
  [ -n "$dir" ] && [ -e "$dir/include/nccl.h" ] && step10_nccl=1
done
{ command -v mpirun && command -v mpicxx; } >/dev/null 2>&1 || packages+=(openmpi-bin libopenmpi-dev)
[ $step10_nccl -eq 1 ] || python3 -m pip --version >/dev/null 2>&1 || packages+=(python3-pip)

if [ ${#packages[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "deps: no apt-get here: install ${packages[*]} with your system's package manager" >&2
    exit 1
  fi
  if [ "$(id -u)" -ne 0 ] && [ -z "$sudo" ]; then
    echo "deps: run as root (or install sudo) to install: ${packages[*]}" >&2
    exit 1
  fi
  echo "deps: installing ${packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
if [ $pip_matplotlib -eq 1 ]; then
  echo "deps: installing matplotlib with pip (for $(command -v python3))"
  python3 -m pip install --quiet matplotlib
fi

for tool in "${missing_gpu_tools[@]}"; do
  case $tool in
    compute-sanitizer)
      echo "deps: compute-sanitizer (make sanitize) is missing: it ships with the CUDA toolkit;" \
           "install the package cuda-sanitizer-${cuda_version:-X-Y} from NVIDIA's repository" \
           "(https://developer.nvidia.com/cuda-downloads, 'deb (network)'), or run the toolkit's" \
           "runfile again with it selected" ;;
    ncu)
      echo "deps: Nsight Compute (ncu, make profile) is missing: install the package" \
           "cuda-nsight-compute-${cuda_version:-X-Y} from NVIDIA's repository, or the standalone" \
           "installer from https://developer.nvidia.com/nsight-compute (then NCU=/path/to/ncu" \
           "make profile STEP=NN if it is not on PATH)" ;;
  esac
done
if [ $step10_nccl -eq 0 ]; then
  cuda_major=${cuda_version%%-*}
  echo "deps: installing NCCL from PyPI (nvidia-nccl-cu${cuda_major:-13}) into $step10_pip_dir"
  python3 -m pip install --quiet --target "$step10_pip_dir" "nvidia-nccl-cu${cuda_major:-13}"
fi

echo "deps: done"
