#!/usr/bin/env bash
# One GPU run for the peers of steps 06-09: build, the GPU tests of the harness's peers, the
# benches of steps 06-09 with their cuBLAS and cuBLASLt rows and PyTorch's (eager and
# torch.compile), and the profiles the pages' corrections need. Each part has its own time limit
# (seconds) and writes into OUT as it goes, so a part that runs long keeps what it measured.
#
#   OUT=dir PARTS="build test bench peers profile" scripts/gpu_peers.sh
#
# What comes back, in OUT: bench.csv (the steps' runs) and peers.csv (PyTorch's), to merge with
# `python3 plots/bench.py --merge OUT/bench.csv OUT/peers.csv`; profile.csv (plots/data's with
# the new problems' rows in place: copy it over); a log per part. 8 files at most.
set -u
OUT=${OUT:-gpu-out}
PARTS=${PARTS:-build test bench peers profile}
JOBS=${JOBS:-$(nproc)}
RUNS=${RUNS:-3}
# The whole run stops before BUDGET seconds: each part gets its own limit or what is left.
BUDGET=${BUDGET:-585}
mkdir -p "$OUT"
has() { [[ " $PARTS " == *" $1 "* ]]; }
part() {  # part NAME LIMIT COMMAND...: its output in OUT/NAME.log, its status on the terminal
  local name=$1 limit=$2; shift 2
  local left=$((BUDGET - SECONDS))
  ((limit > left)) && limit=$left
  if ((limit < 10)); then echo "$name: skipped, no time left"; return; fi
  local t0=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  echo "$name: exit $? after $((SECONDS - t0)) s (limit $limit s)"
  tail -n 3 "$OUT/$name.log"
}

if has build; then
  generator=$(command -v ninja >/dev/null && echo "-G Ninja")
  part build 240 bash -c "cmake -S . -B build $generator -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null && cmake --build build -j $JOBS --target step06 \
    step07 step08 step09 common_test"
fi
if has test; then
  # The peers' GoogleTest tests, the steps' small runs (ctest), and step 08's and 09's peer rows
  # in every type on a misaligned shape and a batch (exit 1 if any row fails verification).
  part test 90 bash -o pipefail -c "./build/bin/common_test --gtest_filter='Peers*' && \
    (cd build && ctest -R 'step0[6-9][.]cli' --output-on-failure | tail -n 3) && \
    for t in f32 f64 f16 bf16 i8; do ./build/bin/step08 --type \$t --rows 1000 --cols 777 \
    --reps 3 | grep -E 'cuBLAS|note' || exit 1; done && ./build/bin/step09 --mode batched \
    --rows 32 --cols 48 --batch 300 --reps 3 | grep cuBLAS"
fi
# The steps' own runs (their kernels, the copy, cuBLAS geam and cuBLASLt): steps 06 and 07 at
# the headline squares, 08 and 09 at the peers' shapes and batches (every type cuBLASLt takes).
if has bench; then
  part bench 300 bash -c "python3 plots/bench.py --build build --steps 06,07 --runs $RUNS \
    --sizes 8192,32768 --out '$OUT/bench.csv' --log build/bench-runs.log && \
    python3 plots/bench.py --build build --steps 08,09 --runs $RUNS --out '$OUT/bench.csv' \
    --types f32,f64,f16,bf16,i8 \
    --sizes 8192,32768,16384,4095x4097,12345x6789,16385x8191,64x64,32x48 \
    --log build/bench-runs2.log"
fi
# PyTorch, eager and torch.compile, on every step's [[peers]] problems: RUNS runs of one process
# each (the first verifies; the compiles of the later ones come from Inductor's cache), every
# row kept in peers.csv.
if has peers; then
  part peers 240 bash -c "for run in \$(seq $RUNS); do python3 plots/peers.py --reps 20 \
    --csv '$OUT/peers.csv' \$( ((run > 1)) && echo --no-verify); done"
fi
# The corrections' counters: the int8 vector kernel (NARROW.md; 16384^2 is also the double
# group's shape, so --types i8 keeps its group alone), the batched kernels out of the L2
# (BATCHED.md) and 46341^2's read-modify-write (README of step 08). Each runs even if one before
# it failed; the part fails if any did.
if has profile; then
  cp plots/data/profile.csv "$OUT/profile.csv"
  part profile 200 bash -c "rc=0; python3 scripts/profile.py 08 --shapes 16384x16384 \
    --types i8 --ids vec-128x128 --exe build/bin/step08 --out '$OUT/profile.csv' || rc=1; \
    python3 scripts/profile.py 09 --shapes 32x48 --exe build/bin/step09 \
    --out '$OUT/profile.csv' || rc=1; python3 scripts/profile.py 08 --shapes 46341x46341 \
    --exe build/bin/step08 --out '$OUT/profile.csv' || rc=1; exit \$rc"
fi
echo "gpu_peers: done in $SECONDS s; files in $OUT"
