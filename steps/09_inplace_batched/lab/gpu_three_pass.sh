#!/usr/bin/env bash
# Step 09 lab: the three-pass rectangle (three_pass.cuh, THREE_PASS.md) checked and measured on
# one GPU in one command, in about five minutes:
#   1. build step09-lab and its tests (Release, sm_90, all cores);
#   2. its tests (CPU, GPU, past 2^31 elements), beside compute-sanitizer's memcheck, racecheck,
#      synccheck and initcheck on the small shapes (correctness only, so they may share the GPU);
#   3. the lab at the target shapes, float32 and float64, 3 separate runs each, alone on the GPU:
#      the lesson's passes and the three-pass kernel in the same process, on the same ceiling;
#   4. Nsight Compute, time and counters of each pass, at 8191 x 4097 and 8192 x 4096 float32;
#   5. a summary table, printed last.
# Files under $OUT (default build/three_pass): build.log tests.log sanitize.log bench.csv
# bench.log ncu.csv summary.txt. One part failing does not stop the others; each part has a time
# limit, and parts are skipped once the whole run nears six minutes. Exit code: 0 when every part
# passed.
#   bash steps/09_inplace_batched/lab/gpu_three_pass.sh
set -u
cd "$(dirname "$0")/../../.."
OUT=${OUT:-${BUILD:-build}/three_pass}
BUILD=${BUILD:-build}
DEADLINE=${DEADLINE:-345}  # seconds: no part starts that could end after this
mkdir -p "$OUT"
rm -f "$OUT"/{build.log,tests.log,sanitize.log,bench.csv,bench.log,ncu.csv,summary.txt}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
parts=()  # "name status" lines for the summary
note() { parts+=("$(printf '%-10s %s' "$1" "$2")"); }
late() { [ $((SECONDS + $1)) -ge "$DEADLINE" ]; }  # $1: how long the next part may take

# 1. Build (ninja -k 0: the lab's binary even if its tests cannot build, and the other way).
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  >"$OUT/build.log" 2>&1
timeout 300 cmake --build "$BUILD" --target step09-lab step09-lab_test -j16 -- -k 0 \
  >>"$OUT/build.log" 2>&1
lab=$BUILD/bin/step09-lab
tests=$BUILD/bin/step09-lab_test
failed=0
for exe in "$lab" "$tests"; do
  if [ -x "$exe" ]; then note build "ok $(basename "$exe") (${SECONDS} s)"; else
    note build "FAILED $(basename "$exe") (see build.log)"; failed=1; fi
done
tool() {  # a CUDA tool on PATH or in the toolkit
  command -v "$1" 2>/dev/null || ls /usr/local/cuda/bin/"$1" 2>/dev/null || echo "$1"
}
sanitizer=$(tool compute-sanitizer)
ncu=$(tool ncu)

# 2. Tests and sanitizers, side by side.
small='ThreePass/Step09LabThreePass.TransposesSmallShapesOfEveryRoute/*'
sanitize() {  # tool, gtest filter
  timeout 150 "$sanitizer" --tool "$1" --error-exitcode 99 --print-limit 20 \
    "$tests" --gtest_filter="$2" --gtest_brief=1 >"$tmp/$1.log" 2>&1
  echo $? >"$tmp/$1.rc"
}
t0=$SECONDS
[ -x "$tests" ] || tests=false  # every test part then fails, and says so
timeout 200 "$tests" --gtest_filter='*ThreePass*' >"$OUT/tests.log" 2>&1 &
test_pid=$!
suite=ThreePass/Step09LabThreePass
sanitize memcheck "$small:$suite.TransposesAwkwardShapes/*:$suite.TransposesMatricesOff*/*" &
sanitize racecheck "$small" &
sanitize synccheck "$small" &
sanitize initcheck "$small" &
wait "$test_pid"
rc=$?
wait
line=$(grep -E "^\[  (PASSED|FAILED)  \]" "$OUT/tests.log" | tr '\n' ' ')
if [ "$rc" = 0 ]; then note tests "ok: $line($((SECONDS - t0)) s)"; else
  note tests "FAILED (exit $rc): $line"; failed=1; fi
for check in memcheck racecheck synccheck initcheck; do
  { echo "=== $check"; cat "$tmp/$check.log"; } >>"$OUT/sanitize.log"
  rc=$(cat "$tmp/$check.rc" 2>/dev/null || echo "?")
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$tmp/$check.log" | tail -1)
  if [ "$rc" = 0 ]; then note "$check" "ok: $summary"; else
    note "$check" "FAILED (exit $rc): $summary"; failed=1; fi
done

# 3. The lab at the target shapes: 3 separate runs, run by run so that a late stop keeps whole
#    runs. The largest shape is verified in its first run only (the host reference takes seconds).
runs=0
for run in 1 2 3; do
  for shape in 8192x4096 8191x4097 10000x1000 46341x23170; do
    for type in f32 f64; do
      big=0
      [ "$shape" = 46341x23170 ] && big=1
      late $((big ? 40 : 10)) && continue
      verify=()
      [ "$big" = 1 ] && [ "$run" != 1 ] && verify=(--no-verify)
      echo "=== run $run $shape $type" >>"$OUT/bench.log"
      if timeout 60 "$lab" --rows "${shape%x*}" --cols "${shape#*x}" --type "$type" \
           --reps 20 --warmup 3 ${verify[@]+"${verify[@]}"} --csv "$OUT/bench.csv" \
           >>"$OUT/bench.log" 2>&1; then
        runs=$((runs + 1))
      else
        echo "(exit $?)" >>"$OUT/bench.log"; failed=1
      fi
    done
  done
done
note bench "$runs of 24 runs ok"

# 4. Nsight Compute: each launch of one transpose (the first, before the timed ones).
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
for spec in 8191x4097:3 8192x4096:2; do
  late 20 && { note ncu "skipped $spec (time)"; continue; }
  shape=${spec%:*}
  if timeout 90 "$ncu" --clock-control none --kernel-name-base demangled \
       -k 'regex:block_tile_pairs|permute_pieces|shuffle_rows_gcd1|reflect_columns_gcd1' \
       --launch-count "${spec#*:}" --metrics "$metrics" --csv --print-units base \
       --log-file "$tmp/ncu.csv" "$lab" --rows "${shape%x*}" --cols "${shape#*x}" \
       --only "three passes" --no-verify --warmup 0 --reps 1 >>"$OUT/bench.log" 2>&1; then
    { echo "# $shape f32"; grep '^"' "$tmp/ncu.csv"; } >>"$OUT/ncu.csv"
    note ncu "ok $shape"
  else
    note ncu "FAILED $shape (see bench.log)"; failed=1
    cat "$tmp/ncu.csv" >>"$OUT/bench.log" 2>/dev/null
  fi
done

# 5. The summary: medians over the runs, % of the copy ceiling of each row's own run.
python3 - "$OUT" >"$OUT/summary.txt" 2>&1 <<'PY'
import csv, os, statistics, sys
from collections import defaultdict
out = sys.argv[1]
rows = defaultdict(list)
device = ""
if os.path.exists(os.path.join(out, "bench.csv")):
    for r in csv.DictReader(open(os.path.join(out, "bench.csv"))):
        device = r["device"]
        rows[(r["rows"] + "x" + r["cols"], r["type"], r["kernel"])].append(r)
print(f"% of the copy ceiling, median of the runs (spread = max - min), on {device or '?'}")
print(f"{'shape':<12} {'type':<4} {'kernel':<40} {'runs':>4} {'%copy':>6} {'spread':>6} "
      f"{'ms':>8} {'copy ms':>8} {'x lesson':>8} verified")
med = lambda key: statistics.median(float(r["median_ms"]) for r in rows[key])
for key in sorted(rows, key=lambda k: (k[0], k[1], k[2])):
    shape, type_, kernel = key
    if kernel.startswith(("cuBLAS", "copy: ")):
        continue
    pct = [float(r["pct_copy"]) for r in rows[key]]
    copies = [med(k) for k in rows if k[:2] == key[:2] and k[2].startswith("copy: ")]
    lesson = (shape, type_, "rectangle, reflections in shared memory")
    speedup = f"{med(lesson) / med(key):.2f}" if lesson in rows else "-"
    ver = ",".join(sorted({r["verified"] for r in rows[key]}))
    print(f"{shape:<12} {type_:<4} {kernel[:40]:<40} {len(pct):>4} {statistics.median(pct):>6.1f} "
          f"{max(pct) - min(pct):>6.1f} {med(key):>8.4g} {min(copies, default=float('nan')):>8.4g} "
          f"{speedup:>8} {ver}")
ncu = os.path.join(out, "ncu.csv")
if os.path.exists(ncu):
    want = {"gpu__time_duration.sum": ("us", 1e-3), "dram__bytes_read.sum": ("rd MB", 1e-6),
            "dram__bytes_write.sum": ("wr MB", 1e-6),
            "dram__throughput.avg.pct_of_peak_sustained_elapsed": ("dram%", 1),
            "smsp__inst_executed.sum": ("inst M", 1e-6),
            "sm__warps_active.avg.pct_of_peak_sustained_active": ("occ%", 1),
            "launch__registers_per_thread": ("regs", 1),
            "lts__t_sectors_srcunit_tex_op_read.sum": ("L2rd M", 1e-6),
            "lts__t_sectors_srcunit_tex_op_write.sum": ("L2wr M", 1e-6),
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": ("conf M", 1e-6)}
    print("\nNsight Compute, one transpose, launch by launch (cold caches)")
    print(f"{'shape':<10} {'kernel':<24}" + "".join(f"{v[0]:>9}" for v in want.values()))
    shape, launches = "", {}
    def flush():
        for (kid, name), vals in launches.items():
            print(f"{shape:<10} {name[:24]:<24}" +
                  "".join(f"{vals.get(m, float('nan')) * f:>9.4g}" for m, (_, f) in want.items()))
    for line in open(ncu):
        if line.startswith("#"):
            flush(); shape, launches = line.split()[1], {}
            continue
        rec = next(csv.reader([line]))
        if rec[0] == "ID":
            header = rec; continue
        r = dict(zip(header, rec))
        name = r["Kernel Name"].split("<")[0].split("::")[-1]
        try:
            launches.setdefault((r["ID"], name), {})[r["Metric Name"]] = float(
                r["Metric Value"].replace(",", ""))
        except ValueError:
            pass
    flush()
PY
{ echo; printf '%s\n' "${parts[@]}"; echo "total ${SECONDS} s"; } >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
exit "$failed"
