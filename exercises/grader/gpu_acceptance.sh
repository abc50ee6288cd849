#!/usr/bin/env bash
# The grader's acceptance on a GPU machine, as root (exercises/INSTRUCTORS.md, "Checking the
# grader"). Parts, in this order (default all):
#   alone     check_on_gpu.sh all: every GPU case of the self-test
#   other     the same while gpu_load holds 4 GiB and computes on ANOTHER GPU (2 GPUs or more)
#   same      check_on_gpu.sh 1 while gpu_load runs on the SAME GPU
#   class1    a generated class of 30 (selftest_class.py) on the first GPU (exercise 3, no sanitizers)
#   classall  the same class on every GPU (one lane per GPU)
#   limits    a grading's cgroup against a fork hog and 75 GiB in five processes (limits.py)
#
#   bash exercises/grader/gpu_acceptance.sh [all|alone|other|same|class1|classall|limits ...]
#
# alone, other and same take one part of check_on_gpu.sh after a colon (alone:1, other:3). Writes
# into $OUT (default build-grade/acceptance) summary.txt, each check part's log, class.csv and each
# class run's gradebook. A part that would pass BUDGET_S (default 540 s) since the start is
# skipped. The GPUs are those CUDA_VISIBLE_DEVICES names (make gpu-check gives each part its
# own), else every GPU; WORK (default build-grade) holds the builds, so that two runs can go side
# by side. Exit status 0 when every part that ran passed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
export PATH="$PATH:/usr/local/cuda/bin"
out=${OUT:-build-grade/acceptance}
work=${WORK:-build-grade}  # builds, stages and the class's folders: one per concurrent run
mkdir -p "$out" "$work"
budget=${BUDGET_S:-540}
start=$(date +%s)
parts=("$@")
[ ${#parts[@]} -eq 0 ] || [ "${parts[0]}" = all ] && parts=(alone other same class1 classall limits)
summary="$out/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
failed=0
# A rough time per part on a 16-core machine, to skip what would not fit.
declare -A need=([alone]=480 [other]=480 [same]=120 [class1]=420 [classall]=330 [limits]=60)

mapfile -t uuids < <(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null)
# The GPUs this run was given, by UUID or index (make gpu-check gives a part UUIDs); else all.
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  given=()
  for g in ${CUDA_VISIBLE_DEVICES//,/ }; do
    for i in "${!uuids[@]}"; do [ "$g" = "${uuids[$i]}" ] || [ "$g" = "$i" ] && given+=("${uuids[$i]}"); done
  done
  uuids=("${given[@]}")
  [ ${#uuids[@]} -gt 0 ] || { echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES names no GPU here" >&2; exit 3; }
fi
say "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1), ${#uuids[@]} GPUs, $(nproc) cores"
nvcc -O2 -arch=sm_90 -o "$work/gpu_load" exercises/grader/gpu_load.cu || { say "gpu_load did not build"; exit 3; }
grade_args=()
if ! command -v bwrap >/dev/null || ! bwrap --ro-bind / / --unshare-pid --proc /proc --dev /dev true 2>/dev/null; then
  grade_args+=(--grade-arg=--no-sandbox)
  say "bubblewrap does not run here: the class is graded with --no-sandbox (check_on_gpu.sh says the same of its cases)"
fi

load_pid=""
load() {  # load GPU_UUID: gpu_load on that GPU until stopped
  CUDA_VISIBLE_DEVICES=$1 "$work/gpu_load" 4 3000 > "$work/gpu_load.log" 2>&1 &
  load_pid=$!
  for _ in $(seq 50); do grep -q "busy for" "$work/gpu_load.log" && break; sleep 0.2; done
  say "   load: $(head -n 1 "$work/gpu_load.log") (on $1)"
}
unload() { [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null; wait "$load_pid" 2>/dev/null; load_pid=""; }
trap unload EXIT

check() {  # check NAME PART: check_on_gpu.sh PART, its log kept as NAME.log
  local t0 rc
  t0=$(date +%s)
  WORK="$work/selftest-gpu" bash exercises/grader/check_on_gpu.sh "$2" > "$work/$1.full.log" 2>&1
  rc=$?
  # The log's head (bubblewrap, machine) and its verdict table, kept small.
  { head -n 12 "$work/$1.full.log"; echo "..."; sed -n '/^Verdicts/,$p' "$work/$1.full.log"; } \
    | cut -c1-200 | tail -n 120 > "$out/$1.log"
  say "$1: check_on_gpu.sh $2 exit $rc in $(( $(date +%s) - t0 )) s; $(tail -n 1 "$work/$1.full.log")"
  [ $rc -eq 0 ] || failed=1
}

busy_note() {  # what the answers' report says about the busy GPU
  local f="$work/selftest-gpu/results/solutions/results.json"
  [ -f "$f" ] && python3 - "$f" <<'EOF' | tee -a "$summary"
import json, sys
d = json.load(open(sys.argv[1]))
busy = [t for t in d["tests"] if "the GPU was busy" in t["output"]]
print("   the answers: %g / %g; %d entries 'not graded: the GPU was busy'%s" % (
    d["score"], d["extra_data"]["max_score"], len(busy),
    (": " + busy[0]["output"].splitlines()[0][:160]) if busy else ""))
EOF
}

class_run() {  # class_run NAME GPUS
  local t0 secs root="$work/gpu-class" rc
  t0=$(date +%s)
  mkdir -p "$root"
  [ -d "$root/submissions" ] || python3 exercises/grader/selftest_class.py --make-only "$root/submissions" > /dev/null
  rm -rf "$root/out-$1/students"
  # Lane gpu0 reuses the self-test's staged build when there is one.
  if [ -d "$work/selftest-gpu/stage" ] && [ ! -e "$root/lanes/gpu0/stage" ]; then
    mkdir -p "$root/lanes/gpu0" && ln -s "$(realpath "$work/selftest-gpu/stage")" "$root/lanes/gpu0/stage"
  fi
  python3 exercises/grader/grade_class.py --submissions "$root/submissions" --out "$root/out-$1" \
    --stage-root "$root/lanes" --gpus "$2" --timeout 300 --build-arch 90 \
    --grade-arg=--exercises=03_inplace --grade-arg=--no-sanitizer "${grade_args[@]}" \
    > "$out/$1.log" 2>&1  # in OUT, so that a run stopped at its limit shows how far it got
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  cp "$root/out-$1/gradebook.csv" "$out/gradebook-$1.csv" 2>/dev/null
  if ! python3 - "$root/out-$1" "$1" "$secs" "$rc" "$out/class.csv" > "$work/$1.check" <<'EOF'; then failed=1; fi
import csv, json, os, sys
from pathlib import Path
out, name, secs, rc, table = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
rows = list(csv.DictReader(open(out / "gradebook.csv"))) if (out / "gradebook.csv").is_file() else []
summ = json.loads((out / "summary.json").read_text()) if (out / "summary.json").is_file() else {}
agree, answers, busy, lost = 0, [], [], []
for r in rows:
    f = out / "students" / r["student"] / "results.json"
    if not f.is_file():
        continue
    d = json.loads(f.read_text())
    ex3 = sum(t["score"] for t in d["tests"] if t["extra_data"]["exercise"] == "03_inplace")
    agree += abs(float(r["total"]) - d["score"]) < 1e-6 and abs(float(r["03_inplace"]) - ex3) < 1e-6
    busy += [r["student"]] if "GPU busy" in r["flags"] else []
    mine = out.parent / "submissions" / r["student"] / "03_inplace" / "inplace.cu"
    if mine.is_file() and mine.read_bytes() == Path("solutions/03_inplace/inplace.cu").read_bytes():
        answers.append((r["student"], ex3))  # exercise 3 is the answer in these
        lost += ["   %s lost %g on %s: %s" % (r["student"], t["max_score"] - t["score"], t["name"],
                                             " | ".join(t["output"].splitlines())[:1200])
                 for t in d["tests"] if t["extra_data"]["exercise"] == "03_inplace" and
                 t["score"] < t["max_score"] and t["extra_data"]["outcome"] != "not_graded"]
full = [a for a in answers if a[1] == 27]  # 30 less the sanitizers' 3 (turned off)
seconds = [json.loads((out / "students" / r["student"] / "meta.json").read_text()).get("seconds", 0)
           for r in rows if (out / "students" / r["student"] / "meta.json").is_file()]
graded = sorted(s for s in seconds if s)
median = graded[len(graded) // 2] if graded else 0
ok = rc == "0" and len(rows) >= 30 and agree == len(rows) and len(full) == len(answers) and not busy
again = summ.get("regraded", {})
print("%s: %d submissions in %d s on %s: %.1f s each (a grading's median %.1f s); gradebook agrees "
      "with %d/%d reports; exercise 3 at 27/27 for %d/%d answers; GPU busy: %s; regraded for a "
      "disturbed timing: %s, still not graded: %s; %s" % (
          name, len(rows), secs, ", ".join(summ.get("lanes", [])), secs / max(1, len(rows)),
          median, agree, len(rows), len(full), len(answers), busy or "none",
          " + ".join(map(str, again.get("passes", []))) or "none",
          ", ".join(again.get("still_not_graded", [])) or "none",
          "OK" if ok else "NOT OK (exit %s)" % rc))
lost and print("\n".join(lost))  # what an answer lost points on: the entry and its report
new = not os.path.exists(table)
with open(table, "a") as f:
    if new:
        f.write("run,submissions,seconds,seconds_each,median_grading_s,lanes,agree,answers_full,ok\n")
    f.write("%s,%d,%d,%.1f,%.1f,%s,%d,%d/%d,%s\n" % (name, len(rows), secs, secs / max(1, len(rows)),
            median, len(summ.get("lanes", [])), agree, len(full), len(answers), ok))
sys.exit(0 if ok else 1)
EOF
  tee -a "$summary" < "$work/$1.check"
}

for spec in "${parts[@]}"; do
  part=${spec%%:*}
  sub=${spec#*:}
  [ "$sub" = "$spec" ] && sub=""
  spent=$(( $(date +%s) - start ))
  estimate=${need[$part]:-60}
  [ -n "$sub" ] && [ "$sub" != all ] && estimate=$(( estimate / 3 ))
  if [ $(( spent + estimate )) -gt "$budget" ]; then
    say "$spec: skipped, it would pass the ${budget} s budget (${spent} s spent): run it alone"
    continue
  fi
  case $part in
    alone) check "alone${sub:+-$sub}" "${sub:-all}" ;;
    other)
      if [ ${#uuids[@]} -lt 2 ]; then say "other: skipped, one GPU only"; continue; fi
      load "${uuids[1]}"; check "other${sub:+-$sub}" "${sub:-all}"; unload ;;
    same) load "${uuids[0]}"; check same "${sub:-1}"; busy_note; unload ;;
    class1) class_run class1 "${uuids[0]}" ;;
    classall)
      if [ ${#uuids[@]} -lt 2 ]; then say "classall: skipped, one GPU only (class1 is the same)"; continue; fi
      class_run classall "$(IFS=,; echo "${uuids[*]}")" ;;
    limits) python3 exercises/grader/limits.py --measure 2>&1 | tee -a "$summary"
      [ "${PIPESTATUS[0]}" -eq 0 ] || failed=1 ;;
    *) say "unknown part $part (alone, other, same, class1, classall, limits, all)"; failed=1 ;;
  esac
done
say "== total $(( $(date +%s) - start )) s; $([ $failed -eq 0 ] && echo 'every part that ran passed' || echo 'SOME PART FAILED')"
exit $failed
