#!/usr/bin/env bash
# Step 10 on one machine with 2 or 4 GPUs, in one command of under 10 minutes: build, the tests,
# then the benchmark (3 separate runs of every point, round by round, the first verified) on 2
# GPUs and, where 4 are visible, on 4, with PyTorch's three programs in the same runs; last, the
# awkward shapes on 4 GPUs and over NCCL's socket transport (the network path on one machine).
#
#   NCCL_NVLS_ENABLE=0 OUT=/some/folder bash steps/10_multi_gpu/gpu_run.sh
#
# Writes to OUT (default BUILD/out): step10.csv (every measured row, in bench.csv's columns, for
# `python3 plots/bench.py --merge`), step10.log (what every command printed, then the summary).
# While the 2-GPU points run on GPUs 0 and 1, the step's tests run on GPUs 2 and 3 (with 4 GPUs;
# else before the benchmark), and so does SIDE, a command of your own, if given. A part that fails
# is reported and the others still run; the exit code is 1 if any failed. BUDGET (seconds,
# default 540) bounds the whole: benchmark runs that would pass it are skipped, and the summary
# says which. BUILD (default build-step10): the build folder.
set -u
cd "$(dirname "$0")/../.." || exit 3
export NCCL_NVLS_ENABLE=0  # never NVLink SHARP (the program sets it too)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # containers run as root
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
BUILD=${BUILD:-build-step10}
OUT=${OUT:-$BUILD/out}
BUDGET=${BUDGET:-540}
SIDE=${SIDE:-}
mkdir -p "$OUT"
LOG=$OUT/step10.log
CSV=$OUT/step10.csv
: >"$LOG"
rm -f "$CSV"
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }
left() { echo $((BUDGET - $(elapsed))); }
say() { echo "[$(elapsed) s] $*" | tee -a "$LOG"; }
STATUS=()  # "name|ok or FAIL (exit N)|seconds"
failed=0
skipped=()

# part NAME LIMIT COMMAND...: runs COMMAND with a time limit, its output into the log.
part() {
  local name=$1 limit=$2 t rc
  shift 2
  say "== $name: $*"
  t=$(date +%s)
  timeout -k 10 "$limit" "$@" >>"$LOG" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then STATUS+=("$name|ok|$(($(date +%s) - t))"); else
    STATUS+=("$name|FAIL (exit $rc$([ $rc -eq 124 ] && echo ', time limit'))|$(($(date +%s) - t))")
    failed=1
  fi
  return $rc
}

BIN=$BUILD/bin
GPUS_HERE=$(nvidia-smi -L 2>/dev/null | wc -l)
{ nvidia-smi -L; nvidia-smi topo -m; mpirun --version 2>&1 | head -1
  python3 -c "import torch; print('torch', torch.__version__, 'NCCL', torch.cuda.nccl.version())"
} >>"$LOG" 2>&1

part configure 120 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90
part build 300 cmake --build "$BUILD" -j "$(nproc)" --target step10 step10_test step10-lab \
  step10-lab_test step08 || { tail -40 "$LOG"; exit 1; }

# bench NAME... : every point 3 times, round by round; "estimate|command" per point.
bench() {
  local round point estimate cmd extra
  for round in 1 2 3; do
    for point in "$@"; do
      estimate=${point%%|*}
      cmd=${point#*|}
      case $cmd in *--once*) [ $round -gt 1 ] && continue; cmd=${cmd/ --once/} ;; esac
      if [ "$(left)" -lt $((estimate + 15)) ]; then skipped+=("run $round: $cmd"); continue; fi
      extra=""
      case $cmd in python3*) ;; *) [ $round -gt 1 ] && extra="--no-verify" ;; esac
      # shellcheck disable=SC2086
      part "bench run $round: ${cmd#"$BIN"/}" 150 $cmd $extra --csv "$CSV"
    done
  done
}
R="--reps 20 --warmup 3"
PEERS="python3 steps/10_multi_gpu/peers_pytorch.py --reps 20 --warmup 3"

# -- 2 GPUs, the tests beside them ----------------------------------------------------------------
TESTS=(ctest --test-dir "$BUILD" -R '^step10' -j 3 --output-on-failure --timeout 280)
if [ "$GPUS_HERE" -ge 4 ]; then
  export CUDA_VISIBLE_DEVICES=0,1
  ( export CUDA_VISIBLE_DEVICES=2,3; timeout 300 "${TESTS[@]}" >"$OUT/tests.tmp" 2>&1
    echo "exit $?" >>"$OUT/tests.tmp"
    [ -n "$SIDE" ] && bash -c "$SIDE" >"$OUT/side.tmp" 2>&1 ) &
  side_pid=$!
else
  part tests 300 "${TESTS[@]}"
fi
bench "8|$BIN/step10 --gpus 2 --rows 32768 --cols 32768 $R" \
      "8|$BIN/step10 --gpus 2 --rows 65536 --cols 16384 $R" \
      "8|$BIN/step10 --gpus 2 --type i8 --rows 65536 --cols 65536 $R" \
      "8|$BIN/step10 --gpus 2 --type f64 --rows 32768 --cols 16384 $R" \
      "4|$BIN/step10 --gpus 2 --rows 8192 --cols 8192 $R" \
      "20|$BIN/step10 --gpus 2 --rows 46341 --cols 46341 $R --once" \
      "25|$BIN/step10-lab --gpus 2 --rows 32768 --cols 32768 $R --once" \
      "60|$PEERS --gpus 2 --shapes 32768x32768 --types f32 --runs 3 --once" \
      "40|$PEERS --gpus 2 --shapes 65536x65536 --types i8 --once" \
      "40|$PEERS --gpus 2 --shapes 32768x16384 --types f64 --once" \
      "6|$BIN/step10 --gpus 1 --rows 32768 --cols 32768 $R --once" \
      "5|$BIN/step08 --rows 32768 --cols 32768 --only auto $R --once"
if [ "$GPUS_HERE" -ge 4 ]; then
  wait "$side_pid"
  cat "$OUT/tests.tmp" >>"$LOG"
  if grep -q "^exit 0$" "$OUT/tests.tmp"; then STATUS+=("tests (GPUs 2 and 3)|ok|-"); else
    STATUS+=("tests (GPUs 2 and 3)|FAIL|-"); failed=1; fi
  [ -f "$OUT/side.tmp" ] && mv "$OUT/side.tmp" "$OUT/side.log"
  rm -f "$OUT/tests.tmp"
  unset CUDA_VISIBLE_DEVICES
  # -- 4 GPUs -------------------------------------------------------------------------------------
  bench "7|$BIN/step10 --gpus 4 --rows 32768 --cols 32768 $R" \
        "7|$BIN/step10 --gpus 4 --rows 65536 --cols 16384 $R" \
        "7|$BIN/step10 --gpus 4 --type i8 --rows 65536 --cols 65536 $R" \
        "7|$BIN/step10 --gpus 4 --type f64 --rows 32768 --cols 16384 $R" \
        "20|$BIN/step10-lab --gpus 4 --rows 32768 --cols 32768 $R --once" \
        "50|$PEERS --gpus 4 --shapes 32768x32768 --types f32 --runs 3 --once"
  for launch in alone mpirun; do
    part "awkward shapes on 4 GPUs ($launch)" 150 cmake -DEXE="$BIN/step10" -DLAUNCH=$launch \
      -DMPIEXEC="$(command -v mpirun)" -DGPUS=4 -P steps/10_multi_gpu/run_gpus.cmake
  done
fi
# The network path on one machine: NCCL's socket transport, no NVLink, no shared memory. The
# direct placement refuses (the GPUs are no longer one load-and-store team); the pipeline runs.
NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 part "awkward shapes, socket transport" 150 \
  cmake -DEXE="$BIN/step10" -DLAUNCH=alone -P steps/10_multi_gpu/run_gpus.cmake
NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 part "8192^2 over sockets" 60 \
  "$BIN/step10" --gpus 2 --rows 8192 --cols 8192 --reps 5 --warmup 1
part 'past 2^31 (i8, odd)' 100 "$BIN/step10" --gpus 2 --type i8 --rows 65537 --cols 32771 \
  --reps 3 --warmup 1

{
  echo
  echo "================ summary ($(elapsed) s) ================"
  bench_ok=0
  for s in "${STATUS[@]}"; do
    IFS='|' read -r name st sec <<<"$s"
    if [ "${name#bench run}" != "$name" ] && [ "$st" = ok ]; then bench_ok=$((bench_ok + 1)); continue; fi
    printf '%-70s %-24s %s\n' "${name:0:70}" "$st" "$sec"
  done
  echo "benchmark runs that passed: $bench_ok"
  for s in "${skipped[@]}"; do echo "skipped (time): $s"; done
  python3 steps/10_multi_gpu/summary.py "$CSV"
} 2>&1 | tee -a "$LOG"
exit $failed
