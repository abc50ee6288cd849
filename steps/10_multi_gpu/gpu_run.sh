#!/usr/bin/env bash
# Step 10 on one machine with 2 GPUs (GPUS=4: 4), in one command of about 8 minutes: build,
# tests, the runs on awkward shapes (alone and under mpirun) and past 2^31 elements, memcheck
# with one GPU, then the benchmark (3 separate runs of every point, the first verified) and the
# PyTorch peer.
#
#   NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
#     OUT=/some/folder bash steps/10_multi_gpu/gpu_run.sh
#
# Writes to OUT (default BUILD/out):
#   step10.csv         every measured row, in bench.csv's columns: step10 and step10-lab on
#                      GPUS GPUs, step10 --gpus 1 and step08 on one shape (G = 1), pytorch-nccl
#   step10-chunks.csv  step10 on 32768 x 32768 with 4 to 64 chunks per GPU (the lab's study)
#   step10.log         what every command printed, then the summary (also printed last)
# A part that fails is reported and the others still run; the exit code is 1 if any failed.
# BUDGET (seconds, default 500) keeps the whole within 9 minutes: benchmark runs that would pass
# it are skipped, and the summary says which. BUILD (default build-step10): the build folder.
set -u
cd "$(dirname "$0")/../.." || exit 3
export NCCL_NVLS_ENABLE=0  # never NVLink SHARP (the program sets it too)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}  # NCCL's warnings into the log
BUILD=${BUILD:-build-step10}
OUT=${OUT:-$BUILD/out}
BUDGET=${BUDGET:-500}
GPUS=${GPUS:-2}
mkdir -p "$OUT"
LOG=$OUT/step10.log
CSV=$OUT/step10.csv
CHUNKS_CSV=$OUT/step10-chunks.csv
: >"$LOG"
rm -f "$CSV" "$CHUNKS_CSV"
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }
left() { echo $((BUDGET - $(elapsed))); }
say() { echo "[$(elapsed) s] $*" | tee -a "$LOG"; }
STATUS=()  # "name|ok or FAIL (exit N)|seconds"
failed=0

# part NAME LIMIT COMMAND...: runs COMMAND with a time limit, its output into the log.
part() {
  local name=$1 limit=$2 t rc
  shift 2
  say "== $name: $*"
  t=$(date +%s)
  timeout -k 10 "$limit" "$@" >>"$LOG" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    STATUS+=("$name|ok|$(($(date +%s) - t))")
  else
    STATUS+=("$name|FAIL (exit $rc$([ $rc -eq 124 ] && echo ', time limit'))|$(($(date +%s) - t))")
    failed=1
  fi
  say "   $name: exit $rc after $(($(date +%s) - t)) s"
  return $rc
}

BIN=$BUILD/bin
MPIRUN=(mpirun -np "$GPUS" --bind-to none)

# -- what the machine is ------------------------------------------------------------------------
{
  nvidia-smi -L
  nvidia-smi topo -m
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv
  mpirun --version | head -1
  python3 -c "import torch; print('torch', torch.__version__, 'NCCL', torch.cuda.nccl.version())"
  nproc
} >>"$LOG" 2>&1

# -- build ----------------------------------------------------------------------------------------
part configure 120 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90
part build 300 cmake --build "$BUILD" -j16 --target step10 step10_test step10-lab \
  step10-lab_test step08

# -- correctness ----------------------------------------------------------------------------------
# memcheck with one GPU, in the background while the tests run, each run its own job: the
# simulated G-GPU passes, the pipeline on one GPU, the peer kernel, and the binaries themselves
# with G = 1 (NCCL included).
MEMCHECK_RUNS=(
  "$BIN/step10_test --gtest_filter=Step10Simulated.ManyChunks*:Step10OneGpu.*"
  "$BIN/step10-lab_test --gtest_filter=Step10LabPeer.EveryElementType"
  "$BIN/step10 --rows 1000 --cols 999 --reps 1 --warmup 0"
  "$BIN/step10-lab --type i8 --rows 333 --cols 1001 --reps 1 --warmup 0"
)
memcheck_pids=()
for i in "${!MEMCHECK_RUNS[@]}"; do
  # --report-api-errors no: NCCL's start asks the driver for kernels of every architecture and
  # gets error 209 for those not built for this GPU, which memcheck would report as errors; the
  # memory checks of every kernel stay on.
  # shellcheck disable=SC2086
  CUDA_VISIBLE_DEVICES=0 timeout -k 10 170 compute-sanitizer --tool memcheck --error-exitcode 99 \
    --report-api-errors no \
    --print-limit 20 ${MEMCHECK_RUNS[$i]} >"$OUT/memcheck.$i.tmp" 2>&1 &
  memcheck_pids+=($!)
done
t_memcheck=$(date +%s)

part tests 300 ctest --test-dir "$BUILD" -R '^step10' -j3 --output-on-failure --timeout 280
if [ "$GPUS" != 2 ]; then
  for launch in alone mpirun; do
    part "awkward shapes on $GPUS GPUs ($launch)" 200 cmake -DEXE="$BIN/step10-lab" \
      -DLAUNCH=$launch -DMPIEXEC="$(command -v mpirun)" -DGPUS="$GPUS" \
      -P steps/10_multi_gpu/run_gpus.cmake
  done
fi
part 'past 2^31 (mpirun, lab)' 150 "${MPIRUN[@]}" "$BIN/step10-lab" --rows 46341 --cols 46341 \
  --reps 3 --warmup 1
part 'past 2^31 (i8, odd)' 100 "$BIN/step10" --gpus "$GPUS" --type i8 --rows 65537 --cols 32771 \
  --reps 3 --warmup 1

for i in "${!MEMCHECK_RUNS[@]}"; do
  wait "${memcheck_pids[$i]}"
  rc=$?
  { echo "== compute-sanitizer --tool memcheck ${MEMCHECK_RUNS[$i]}: exit $rc"
    cat "$OUT/memcheck.$i.tmp"; } >>"$LOG"
  rm -f "$OUT/memcheck.$i.tmp"
  name="memcheck (1 GPU): ${MEMCHECK_RUNS[$i]#"$BIN"/}"
  if [ $rc -eq 0 ]; then STATUS+=("$name|ok|$(($(date +%s) - t_memcheck))"); else
    STATUS+=("$name|FAIL (exit $rc)|$(($(date +%s) - t_memcheck))"); failed=1; fi
  say "   ${name}: exit $rc"
done

# -- benchmark ------------------------------------------------------------------------------------
# Every point runs 3 times as separate processes, round by round (every point's first run, then
# every point's second...), the first run verified. "estimate|command" per point.
BIG="--reps 20 --warmup 3"
POINTS=(
  "6|$BIN/step10 --gpus $GPUS --rows 32768 --cols 32768 $BIG"
  "6|$BIN/step10-lab --gpus $GPUS --rows 32768 --cols 32768 $BIG"
  "6|$BIN/step10 --gpus $GPUS --rows 65536 --cols 16384 $BIG"
  "6|$BIN/step10-lab --gpus $GPUS --rows 65536 --cols 16384 $BIG"
  "6|$BIN/step10 --gpus $GPUS --type i8 --rows 65536 --cols 65536 $BIG"
  "6|$BIN/step10-lab --gpus $GPUS --type i8 --rows 65536 --cols 65536 $BIG"
  "6|$BIN/step10 --gpus $GPUS --type f64 --rows 32768 --cols 16384 $BIG"
  "6|$BIN/step10-lab --gpus $GPUS --type f64 --rows 32768 --cols 16384 $BIG"
  "5|$BIN/step10 --gpus 1 --rows 32768 --cols 32768 $BIG"
  "4|$BIN/step08 --rows 32768 --cols 32768 --only auto $BIG"
  "35|python3 steps/10_multi_gpu/peers_pytorch.py --gpus $GPUS"
  "3|$BIN/step10 --gpus $GPUS --rows 8192 --cols 8192"
  "3|$BIN/step10-lab --gpus $GPUS --rows 8192 --cols 8192"
  "4|$BIN/step10-lab --gpus $GPUS --rows 16384 --cols 16384"
  "6|$BIN/step10-lab --gpus $GPUS --rows 16384 --cols 65536 $BIG"
  "10|$BIN/step10-lab --gpus $GPUS --rows 46341 --cols 46341 $BIG"
)
skipped=()
for round in 1 2 3; do
  for point in "${POINTS[@]}"; do
    estimate=${point%%|*}
    cmd=${point#*|}
    [ $round -gt 1 ] && estimate=$((estimate * 3 / 4))
    if [ "$(left)" -lt $((estimate + 20)) ]; then
      skipped+=("run $round: $cmd")
      continue
    fi
    extra=""
    [ $round -gt 1 ] && [ "${cmd#python3}" = "$cmd" ] && extra="--no-verify"
    # shellcheck disable=SC2086
    part "bench run $round: ${cmd#"$BIN"/}" 150 $cmd $extra --csv "$CSV"
  done
done
# The lab's chunk study, with what time is left: 3 runs of each chunk count, on its own CSV.
for round in 1 2 3; do
  for k in 4 8 32 64; do
    cmd="$BIN/step10 --gpus $GPUS --rows 32768 --cols 32768 --chunks $k $BIG --no-verify"
    if [ "$(left)" -lt 25 ]; then
      skipped+=("chunks run $round: --chunks $k")
      continue
    fi
    # shellcheck disable=SC2086
    part "chunks $k, run $round" 60 $cmd --csv "$CHUNKS_CSV"
  done
done

# -- summary --------------------------------------------------------------------------------------
{
  echo
  echo "================ summary ($(elapsed) s) ================"
  printf '%-60s %-24s %s\n' part status seconds
  bench_ok=0
  for s in "${STATUS[@]}"; do
    IFS='|' read -r name st sec <<<"$s"
    # benchmark runs: only those that failed, then a count
    if [ "${name#bench run}" != "$name" ] || [ "${name#chunks }" != "$name" ]; then
      [ "$st" = ok ] && { bench_ok=$((bench_ok + 1)); continue; }
    fi
    printf '%-60s %-24s %s\n' "${name:0:60}" "$st" "$sec"
  done
  echo "benchmark runs that passed: $bench_ok"
  for s in "${skipped[@]}"; do echo "skipped (time): $s"; done
  python3 - "$CSV" "$CHUNKS_CSV" "$GPUS" <<'EOF'
import csv, statistics, sys
def read(path):
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError:
        rows = []
    by = {}
    for r in rows:
        key = (r["step"], r["kernel"], r["tile"], r["type"], int(r["rows"]), int(r["cols"]))
        by.setdefault(key, []).append(r)
    return by
by, chunk_study = read(sys.argv[1]), read(sys.argv[2])
ON = ", %s GPUs" % sys.argv[3]
def med(step, kernel, t, R, C, tile=None):
    runs = [r for k, v in by.items() if k[0] == step and k[1].startswith(kernel) and k[3] == t
            and k[4] == R and k[5] == C and (tile is None or k[2] == tile) for r in v]
    ms = [float(r["median_ms"]) for r in runs if r["verified"] not in ("refused",)]
    bad = any(r["verified"] == "FAILED" for r in runs)
    return (statistics.median(ms), len(ms), bad) if ms else (None, 0, bad)
shapes = sorted({(k[3], k[4], k[5]) for k in by if k[0] in ("step10", "step10-lab")},
                key=lambda s: (s[0], s[1] * s[2]))
print()
print("%s GPUs: medians over runs (runs); %% of NCCL's all-to-all of the same run" % sys.argv[3])
print("%-5s %-12s %9s %8s %8s %8s %8s %8s %9s" % ("type", "shape", "a2a ms", "plain", "overl",
      "peer", "lesson", "torch", "x torch"))
for t, R, C in shapes:
    def pct(step, kernel):
        a, _, _ = med(step, "copy: NCCL all-to-all" + ON, t, R, C)
        m, n, bad = med(step, kernel, t, R, C)
        if a is None or m is None:
            return "-", m
        return ("%.1f%s(%d)" % (100 * a / m, "!" if bad else "", n)), m
    a, n, _ = med("step10-lab", "copy: NCCL all-to-all" + ON, t, R, C)
    if a is None:
        a, n, _ = med("step10", "copy: NCCL all-to-all" + ON, t, R, C)
    plain, _ = pct("step10-lab", "plain order" + ON)
    over, _ = pct("step10-lab", "overlapped" + ON)
    peer, _ = pct("step10-lab", "peer writes" + ON)
    lesson, lesson_ms = pct("step10", "overlapped" + ON)
    ta, _, _ = med("pytorch-nccl", "copy: all_to_all_single" + ON, t, R, C)
    tm, tn, tbad = med("pytorch-nccl", "split, all_to_all_single", t, R, C)
    torch_pct = "%.1f%s(%d)" % (100 * ta / tm, "!" if tbad else "", tn) if tm else "-"
    ours = lesson_ms or med("step10-lab", "overlapped" + ON, t, R, C)[0]
    speed = "%.2fx" % (tm / ours) if tm and ours else "-"
    print("%-5s %-12s %9s %8s %8s %8s %8s %8s %9s" % (t, "%dx%d" % (R, C),
          "%.3f(%d)" % (a, n) if a else "-", plain, over, peer, lesson, torch_pct, speed))
g1, n1, _ = med("step10", "overlapped, 1 GPU", "f32", 32768, 32768)
s8, n8, _ = med("step08", "auto", "f32", 32768, 32768)
if g1 and s8:
    print("G = 1, 32768x32768 f32: step10 %.4f ms (%d runs), step08 %.4f ms (%d runs): "
          "step10 takes %.1f%% of step 08's time" % (g1, n1, s8, n8, 100 * g1 / s8))
chunk_rows = {}
for source in (by, chunk_study):
    for k, v in source.items():
        if k[0] == "step10" and k[1] == "overlapped" + ON and k[3:] == ("f32", 32768, 32768):
            ms = statistics.median(float(r["median_ms"]) for r in v)
            a = statistics.median(float(r["median_ms"]) for kk, vv in source.items()
                                  if kk[0] == "step10" and kk[1].startswith("copy:")
                                  and kk[3:] == k[3:] for r in vv)
            chunk_rows[int(k[2])] = "32768x32768 f32, %d chunks per GPU: %.4f ms, %.1f%% of " \
                "the all-to-all (%d runs)" % (int(k[2]), ms, 100 * a / ms, len(v))
for k in sorted(chunk_rows):
    print(chunk_rows[k])
print("'!': a run FAILED verification. Columns: plain order, overlapped and peer writes of "
      "step10-lab; lesson: step10's overlapped; torch: PyTorch's way against its own "
      "all_to_all_single; x torch: PyTorch's time over step10's")
EOF
} 2>&1 | tee -a "$LOG"
exit $failed
