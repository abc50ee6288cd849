#!/usr/bin/env bash
# Runs every GPU test under compute-sanitizer: memcheck, racecheck, synccheck and initcheck.
# The tests use the awkward-shape list (at most about a million elements), so this stays quick.
#   usage: scripts/sanitize.sh [build-dir]      (make sanitize)
#          scripts/sanitize.sh --check-tools    only say whether compute-sanitizer and a GPU are
#                                               here (make sanitize asks before it builds)
# Each tool x test binary is one job, JOBS of them at a time (default: one per core; the
# sanitizers spend most of their time on the CPU), each logging to its own file
# build-dir/sanitize/<binary>.<tool>.log. Prints one summary line per tool and binary, in a fixed
# order once all are done, and exits non-zero when any tool reports an error.
# Environment: SANITIZE_TOOLS (default: the four above), JOBS, SANITIZE_LOGS (the logs' folder,
# default build-dir/sanitize: make gpu-check gives each tool its own, to run them side by side).
set -u
check_only=0
[ "${1:-}" = "--check-tools" ] && check_only=1 && shift
build=${1:-build}
tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
if ! command -v compute-sanitizer >/dev/null 2>&1; then
  echo "sanitize: compute-sanitizer not found (it ships with the CUDA toolkit; make deps says" \
       "where to get it)" >&2
  exit 3
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "sanitize: a CUDA device is needed to run the sanitizers" >&2
  exit 3
fi
[ $check_only -eq 1 ] && exit 0
logs=${SANITIZE_LOGS:-$build/sanitize}
mkdir -p "$logs"
rm -f "$logs"/*.rc  # no verdict of an earlier run survives

# The jobs, one "binary tool" pair per line. Only binaries with GPU tests: CPU-only suites have
# nothing to sanitize.
pairs=()
for exe in "$build"/bin/*_test "$build"/bin/test_ex*_solution; do
  [ -x "$exe" ] || continue
  [ "$(basename "$exe")" = common_test ] && continue
  for tool in $tools; do pairs+=("$exe $tool"); done
done

# One job: the sanitizer's output to its log, its exit code to <log>.rc.
run_one() {
  local exe=$1 tool=$2 log="$logs/$(basename "$1").$2.log"
  compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 \
    "$exe" --gtest_filter='-*Cpu*:*Large*' --gtest_brief=1 >"$log" 2>&1
  echo $? >"$log.rc"
}
export -f run_one
export logs
echo "sanitize: ${#pairs[@]} runs (${tools// /, } over each GPU test binary), $jobs at a time"
printf '%s\n' "${pairs[@]}" | xargs -P "$jobs" -L 1 bash -c 'run_one "$0" "$1"'

status=0
for pair in "${pairs[@]}"; do
  read -r exe tool <<<"$pair"
  name=$(basename "$exe")
  log="$logs/$name.$tool.log"
  rc=$(cat "$log.rc" 2>/dev/null || echo "?")
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
  if [ "$rc" = 0 ]; then
    printf '%-28s %-10s ok    %s\n' "$name" "$tool" "$summary"
  else
    printf '%-28s %-10s FAIL  %s (exit %s, see %s)\n' "$name" "$tool" "$summary" "$rc" "$log"
    status=1
  fi
done
exit $status
