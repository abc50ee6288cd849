#!/usr/bin/env bash
# Runs every GPU test under compute-sanitizer: memcheck, racecheck, synccheck and initcheck.
# The tests use the awkward-shape list (at most about a million elements), so this stays quick.
#   usage: scripts/sanitize.sh [build-dir]      (make sanitize)
# Exits non-zero when any tool reports an error; prints one summary line per tool and binary.
set -u
build=${1:-build}
tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
if ! command -v compute-sanitizer >/dev/null 2>&1; then
  echo "sanitize: compute-sanitizer not found (it ships with the CUDA toolkit)" >&2
  exit 3
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "sanitize: a CUDA device is needed to run the sanitizers" >&2
  exit 3
fi
mkdir -p "$build/sanitize"
status=0
for exe in "$build"/bin/*_test "$build"/bin/test_ex*_solution; do
  [ -x "$exe" ] || continue
  name=$(basename "$exe")
  # Only binaries with GPU tests; CPU-only suites have nothing to sanitize.
  [ "$name" = common_test ] && continue
  for tool in $tools; do
    log="$build/sanitize/$name.$tool.log"
    compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 \
      "$exe" --gtest_filter='-*Cpu*:*Large*' --gtest_brief=1 >"$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
    if [ $rc -eq 0 ]; then
      printf '%-28s %-10s ok    %s\n' "$name" "$tool" "$summary"
    else
      printf '%-28s %-10s FAIL  %s (exit %d, see %s)\n' "$name" "$tool" "$summary" "$rc" "$log"
      status=1
    fi
  done
done
exit $status
