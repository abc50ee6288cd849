#!/usr/bin/env bash
# Lab 08, the staged kernel (staged.cuh) on a GPU in one go: build, test, time, count, sanitize.
#
#   usage: OUT=dir bash steps/08_general/lab/gpu_staged.sh      (from the repository root)
#
#   1. builds step08-lab, step08-lab_test and step08-staged_test in build-staged/ (Release, the
#      GPU's own architecture; BUILD_DIR picks another folder), -j16;
#   2. runs the staged kernel's quick GPU tests: its own small shapes and grids, and the lab's
#      cases of it (awkward shapes, aligned shapes with partial tiles, tall matrices);
#   3. times step08-lab for int8, float16 and bfloat16 at 12345 x 6789, 16385 x 8191 and
#      16384 x 16384 (aligned), three separate runs each (every kernel of the type, among them the
#      staged kernel, the shifted kernel and its three-blocks-per-SM twin, and the launcher), into
#      bench.csv;
#   4. Nsight Compute counters of the staged kernel and of the shifted kernel at three blocks per
#      SM (the same 24 warps per SM) on int8 12345 x 6789, and of the staged kernel on float16;
#   5. compute-sanitizer memcheck and racecheck over the staged kernel's small GPU tests;
#   6. the rest of its tests: the step's misaligned targets from and to any offset, the timed
#      shapes, past 2^31 elements, and its CPU tests;
#   7. prints the medians of step 3 (% of the copy ceiling of the same run).
# Each part has a time limit and one that fails does not stop the others; the whole stays under
# six minutes. Files in $OUT (default ./staged-out): build.log, tests.log, bench.csv, bench.log,
# ncu.csv, sanitize.log, summary.txt. Exit code 0 when every part passed, 1 otherwise.
set -u -o pipefail
cd "$(dirname "$0")/../../.."
export out=${OUT:-staged-out}
export build=${BUILD_DIR:-build-staged}
export bin=$build/bin
mkdir -p "$out"
start=$SECONDS
status=0

part() {  # part NAME SECONDS FUNCTION: runs it with a time limit, records how it ended
  local name=$1 limit=$2 t0=$SECONDS rc left=$((345 - (SECONDS - start)))
  [ "$limit" -le "$left" ] || limit=$left
  if [ "$limit" -lt 5 ]; then
    printf '%-10s skipped: no time left\n' "$name" >>"$out/parts.txt"
    status=1
    return
  fi
  timeout --kill-after=5 "$limit" bash -c "$3"
  rc=$?
  printf '%-10s rc=%-3s %4ss\n' "$name" "$rc" "$((SECONDS - t0))" >>"$out/parts.txt"
  [ "$rc" = 0 ] || status=1
}

build_all() {
  { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
    nvcc --version | tail -2
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
      cmake --build "$build" --target step08-lab step08-lab_test step08-staged_test -j16
  } >"$out/build.log" 2>&1
}

quick_tests() {
  local r=0
  "$bin/step08-staged_test" --gtest_filter='Step08StagedSmall.*' --gtest_brief=1 || r=1
  "$bin/step08-lab_test" --gtest_filter='*staged*' --gtest_brief=1 || r=1
  return $r
} >"$out/tests.log" 2>&1

bench() {  # three separate runs of every shape and type
  local r=0 run type shape
  for run in 1 2 3; do
    for type in i8 f16 bf16; do
      for shape in "12345 6789" "16385 8191" "16384 16384"; do
        set -- $shape
        "$bin/step08-lab" --type "$type" --rows "$1" --cols "$2" --csv "$out/bench.csv" ||
          { echo "bench: $type $1 x $2, run $run failed"; r=1; }
      done
    done
  done
  return $r
} >"$out/bench.log" 2>&1

# The first set is scripts/profile.sh's; the second adds launch and issue counters, and the first
# alone is tried again should ncu refuse a name of the second. ncu runs with --clock-control none
# (it never changes the clocks) and its default cache control (caches flushed before the kernel).
base=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum
base+=,lts__t_sectors_srcunit_tex_op_write.sum,smsp__inst_executed.sum
base+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
base+=,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
base+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
base+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
base+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
base+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
base+=,sm__warps_active.avg.pct_of_peak_sustained_active
more=launch__registers_per_thread,launch__shared_mem_per_block_static,launch__grid_size
more+=,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,gpu__time_duration.sum
more+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
more+=,smsp__issue_active.avg.pct_of_peak_sustained_active
export base more

counters() {  # counters TYPE ONLY: one launch of that kernel at 12345 x 6789, as CSV lines
  local type=$1 only=$2 rep=$out/ncu-$1 m
  for m in "$base,$more" "$base"; do
    ncu --clock-control none --metrics "$m" --kernel-name-base demangled \
      --kernel-name 'regex:^(?!.*(copy_|geam|gemm|cublas))' --launch-count 1 \
      --export "$rep" --force-overwrite "$bin/step08-lab" --type "$type" --rows 12345 \
      --cols 6789 --reps 1 --warmup 0 --no-verify --only "$only" >"$rep.log" 2>&1 &&
      [ -f "$rep.ncu-rep" ] && break
    echo "ncu,$type,$only,failed:"
    tail -5 "$rep.log"
  done
  rm -f "$rep.log"
  [ -f "$rep.ncu-rep" ] || return 1
  ncu --import "$rep.ncu-rep" --csv --page raw --print-units base | sed "s/^/$type,$only,/"
  rm -f "$rep.ncu-rep"
}

all_counters() {
  local r=0
  counters i8 staged || r=1
  counters i8 '3 blocks per SM' || r=1
  counters f16 staged || r=1
  return $r
} >"$out/ncu.csv" 2>&1

sanitize() {  # memcheck and racecheck at once, each over the small tests
  local r=0 tool
  for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 \
      "$bin/step08-staged_test" --gtest_filter='Step08StagedSmall.*' --gtest_brief=1 \
      >"$out/$tool.log" 2>&1 &
  done
  wait
  for tool in memcheck racecheck; do
    echo "== $tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool.log" | tail -1)"
    grep -q -E '(ERROR|RACECHECK) SUMMARY: 0 ' "$out/$tool.log" || r=1
  done
  for tool in memcheck racecheck; do
    echo "== $tool, whole log"
    cat "$out/$tool.log"
    rm -f "$out/$tool.log"
  done
  return $r
} >"$out/sanitize.log" 2>&1

big_tests() {
  "$bin/step08-staged_test" --gtest_filter='-Step08StagedSmall.*' --gtest_brief=1
} >>"$out/tests.log" 2>&1

export -f build_all quick_tests bench counters all_counters sanitize big_tests
: >"$out/parts.txt"
rm -f "$out/bench.csv"
part build 150 build_all
part tests 60 quick_tests
part bench 110 bench
part ncu 75 all_counters
part sanitize 60 sanitize
part tests-big 300 big_tests

# What a part cut short by its time limit left behind goes into the logs (at most 8 files).
for f in "$out"/memcheck.log "$out"/racecheck.log; do
  [ -f "$f" ] && { echo "== $(basename "$f"), cut short"; cat "$f"; } >>"$out/sanitize.log"
done
for f in "$out"/ncu-*.log; do
  [ -f "$f" ] && { echo "ncu log, cut short:"; tail -20 "$f"; } >>"$out/ncu.csv"
done
rm -f "$out"/memcheck.log "$out"/racecheck.log "$out"/ncu-*

# The summary: the median and spread of % of copy over the runs, per shape and kernel.
{
  cat "$out/parts.txt"
  grep -E "FAILED|PASSED|SKIPPED" "$out/tests.log" | sort | uniq -c | head -20
  grep -E "^== (memcheck|racecheck):" "$out/sanitize.log" 2>/dev/null
  python3 - "$out/bench.csv" <<'PY'
import csv, statistics, sys
from collections import defaultdict
try:
    rows = list(csv.DictReader(open(sys.argv[1], newline="")))
except OSError:
    sys.exit("summary: no bench.csv")
runs = defaultdict(list)
for r in rows:
    if r["verified"] != "refused":
        key = (r["type"], f'{r["rows"]}x{r["cols"]}', r["kernel"])
        runs[key].append((float(r["pct_copy"]), float(r["gbps"])))
keep = ("staged", "shifted", "auto", "sectors", "copy")
print(f"{'type':5} {'shape':11} {'kernel':48} {'%copy':>6} {'spread':>6} {'GB/s':>5} runs")
for (t, shape, k), v in sorted(runs.items()):
    if any(w in k for w in keep):
        pct = [p for p, _ in v]
        gbps = statistics.median(g for _, g in v)
        print(f"{t:5} {shape:11} {k[:48]:48} {statistics.median(pct):6.1f} "
              f"{max(pct) - min(pct):6.1f} {gbps:5.0f} {len(v)}")
if rows:
    print(rows[0]["device"], rows[0]["driver"], "CUDA", rows[0]["cuda"], rows[0]["date"])
PY
} | tee "$out/summary.txt"
rm -f "$out/parts.txt"
echo "gpu_staged: $((SECONDS - start)) s, status $status"
exit $status
