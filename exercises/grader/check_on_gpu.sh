#!/usr/bin/env bash
# The grader's self-test on a machine with an NVIDIA GPU, as root, after saying whether bubblewrap
# is here and isolates (exercises/INSTRUCTORS.md, "Checking the grader").
#
#   bash exercises/grader/check_on_gpu.sh [1|2|3|all] [JOBS]
#
# Part 1: the answers and the skeletons; 2: the technique, forged records, hidden tests; 3: the
# sanitizer and the timed runs. The parts share one staged build unless WORK gives each its own.
# The log: build-grade/gpu-check/part-N.log; the exit status is the self-test's.
set -uo pipefail
cd "$(dirname "$0")/../.."

part=${1:-all}
jobs=${2:-$(nproc)}
part1=solutions,skeletons
part2=ex02_host_only_swizzle,ex02_naive_beside_swizzled,ex02_dynamic_no_extern,ex02_fake_fatbin
part2=$part2,forged_report,forged_nodev,orphan_holds_pipe,hidden_tests,hidden_leak_forge
part3=ex01_oob_write,ex01_oob_read,ex02_missing_syncthreads,ex03_infinite_loop
part3=$part3,ex01_host_transpose,ex03_driver_alloc,sanitizer_symlink,sanitizer_aware
case $part in
  1) cases=$part1 ;;
  2) cases=$part2 ;;
  3) cases=$part3 ;;
  all) cases="" ;;
  *) echo "usage: check_on_gpu.sh [1|2|3|all] [JOBS]" >&2; exit 2 ;;
esac
export PATH="$PATH:/usr/local/cuda/bin"
work=${WORK:-build-grade/selftest-gpu}
mkdir -p build-grade/gpu-check

{
  echo "== bubblewrap"
  if command -v bwrap >/dev/null; then
    echo "installed: $(command -v bwrap) ($(bwrap --version 2>&1))"
  else
    deb=$(ls build-deps/bubblewrap_*.deb 2>/dev/null | head -n 1)
    if [ -n "$deb" ] && command -v dpkg >/dev/null; then
      dpkg -x "$deb" / && echo "not installed: unpacked $deb ($(bwrap --version 2>&1))"
    else
      echo "not installed, and no build-deps/bubblewrap_*.deb to unpack"
    fi
  fi
  sandbox=()
  if bwrap --ro-bind / / --unshare-pid --unshare-ipc --unshare-net --unshare-uts --proc /proc \
       --dev /dev true 2>&1; then
    echo "bwrap isolates here: the grader runs every submission in its sandbox"
  else
    sandbox=(--no-sandbox)
    echo "bwrap does not run here: the self-test grades with --no-sandbox (cases that need" \
         "isolation are skipped)"
  fi
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  command -v compute-sanitizer >/dev/null && compute-sanitizer --version | tail -n 1
  echo "cores: $(nproc), jobs: $jobs"
  echo "== grader self-test, GPU cases (part $part)"
  start=$(date +%s)
  python3 exercises/grader/selftest.py --gpu --work "$work" --jobs "$jobs" \
    --build-arch 90 ${cases:+--cases "$cases"} "${sandbox[@]}"
  status=$?
  echo "== part $part took $(( $(date +%s) - start )) s, exit status $status"
  exit $status
} 2>&1 | tee "build-grade/gpu-check/part-$part.log"
exit "${PIPESTATUS[0]}"
