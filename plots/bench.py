#!/usr/bin/env python3
"""Runs every step of the course over a size sweep and gathers one CSV for the plots.

    make bench                                  the default sweep (planned for ~6 min on an H100)
    make bench SIZES=1024,8192x2048             only these shapes (a bare N means N x N)
    python3 plots/bench.py --build build --dry-run    the plan and its time estimate, no run

Each step binary of <build>/bin (step01 ... step09; a missing one is skipped with a note) runs
once per problem and appends its rows (the copy ceiling, cuBLAS where the step measures it, and
every kernel) to a CSV in common/report.hpp's format with `--csv`. The sweep:

  steps 01-08   float32, every shape of the sweep
  step 08       also f64, f16, bf16, i8 and b128, at a few shapes (--type-sizes)
  step 09       --mode inplace on the square shapes, then --mode batched and inplace-batched on
                fixed batches of small matrices
  exercises     the reference solutions (bench_ex0N_solution) at the shapes their READMEs quote
  PyTorch       steps/08_general/peers_pytorch.py, when that file is there and torch imports

The rows land in --out (default plots/data/bench.csv). A problem measured again replaces its old
rows there; every other row is kept, so a partial sweep (SIZES=...) updates what it measured.
A run that fails is reported and the sweep goes on; the exit code is 1 if any run failed.
Python standard library only.
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SQUARES = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
RECTANGLES = [(8192, 2048), (2048, 8192), (16384, 1024), (1024, 16384), (4095, 4097),
              (12345, 6789)]
TYPES = ["f32", "f64", "f16", "bf16", "i8", "b128"]
TYPE_SIZES = [(1024, 1024), (4095, 4097), (8192, 2048), (16384, 16384)]
# Shapes the sweep does not cover otherwise: step 08 past 2^31 elements (a target) and its
# aligned neighbour (rows of 46336 floats start on sectors), step 09 in place on odd sizes (8191
# is a target; 16383 shows what misaligned rows cost a larger matrix).
EXTRA_SHAPES = {"step08": [(46336, 46336), (46341, 46341)],
                "step09": [(8191, 8191), (16383, 16383)]}
# The exercises' reference solutions, for the speed their READMEs quote.
EXERCISES = {"bench_ex01_solution": [(8192, 8192), (8192, 2048), (2048, 8192)],
             "bench_ex02_solution": [(8192, 8192)], "bench_ex03_solution": [(8192, 8192)]}
# Step 09's batches: (mode, rows, cols, batch).
BATCHES = [("batched", 64, 64, 16384), ("batched", 128, 128, 4096), ("batched", 2048, 128, 64),
           ("batched", 32, 48, 1000), ("inplace-batched", 256, 256, 1024)]
TYPE_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i8": 1, "b128": 16}
PYTORCH = ROOT / "steps" / "08_general" / "peers_pytorch.py"

# Fewer timed repetitions where one matrix passes this size: the median of 20 runs of several
# milliseconds each is already steady, and the sweep's time goes elsewhere.
BIG_BYTES = 1 << 30
BIG_REPS = 20


class Run:
    """One process of the sweep: a step binary on one problem (or the PyTorch script)."""

    def __init__(self, step, argv, label, nbytes):
        self.step, self.argv, self.label, self.nbytes = step, argv, label, nbytes

    def estimate_s(self, reps):
        """A rough guess of the run's wall time on an H100 host, for the plan: process and CUDA
        start, filling the input and the CPU reference (~1.2 s per GB on 16 cores), then per
        kernel a verification (device to host copy and compare, ~0.3 s per GB) and the timed
        repetitions (2 x bytes each, at ~1500 GB/s on average over the steps)."""
        if self.step == "pytorch":
            return 60.0
        gb = self.nbytes / 1e9
        kernels = 6 + 2  # a step's variants (a guess) and the two copies
        return 0.8 + 1.2 * gb + kernels * (0.3 * gb + (reps + 5) * 2 * gb / 1500)


def parse_shapes(text):
    """"256,1024,4096x1024" -> [(256, 256), (1024, 1024), (4096, 1024)]."""
    shapes = []
    for item in text.split(","):
        item = item.strip().lower()
        if not item:
            continue
        parts = item.split("x")
        if len(parts) > 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise argparse.ArgumentTypeError(f"'{item}' is not N or ROWSxCOLS")
        shapes.append((int(parts[0]), int(parts[-1])))
    if not shapes:
        raise argparse.ArgumentTypeError("no shape given")
    return shapes


def plan(args, binaries):
    """The list of runs, in the order they execute: step by step, small shapes first."""
    shapes = args.sizes or [(n, n) for n in SQUARES] + RECTANGLES
    type_shapes = args.sizes or TYPE_SIZES
    runs = []

    def add(step, shape, type_="f32", batch=1, mode=None):
        rows, cols = shape
        argv = ["--rows", str(rows), "--cols", str(cols)]
        label = f"{step} {rows}x{cols} {type_}"
        if type_ != "f32":
            argv += ["--type", type_]
        if mode:
            argv += ["--mode", mode]
            label += f" ({mode})"
        if batch != 1:
            argv += ["--batch", str(batch)]
            label += f" batch {batch}"
        runs.append(Run(step, argv, label, rows * cols * batch * TYPE_BYTES[type_]))

    by_size = lambda s: (s[0] * s[1], s)
    for step in sorted(binaries):
        if step in EXERCISES:
            for shape in (args.sizes or EXERCISES[step]):
                add(step, shape)
            continue
        extra = [] if args.sizes else EXTRA_SHAPES.get(step, [])
        if step == "step09":
            for shape in sorted({s for s in shapes + extra if s[0] == s[1]}, key=by_size):
                add(step, shape, mode="inplace")
            for mode, rows, cols, batch in BATCHES:
                add(step, (rows, cols), batch=batch, mode=mode)
            if not args.sizes:
                add(step, (16384, 16384), "f64", mode="inplace")  # the lesson's f64 table
            continue
        for shape in sorted(set(shapes + extra), key=by_size):
            add(step, shape)
        if step == "step08":
            for type_ in args.types:
                if type_ == "f32":
                    continue  # measured above
                for shape in sorted(set(type_shapes), key=by_size):
                    add(step, shape, type_)
    if args.pytorch and PYTORCH.exists():
        probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
        if probe.returncode == 0:
            runs.append(Run("pytorch", [], f"pytorch peers ({PYTORCH.relative_to(ROOT)})", 0))
        else:
            print(f"note: {PYTORCH.relative_to(ROOT)} skipped: torch does not import here")
    return runs


def reps_for(run, args):
    if args.reps:
        return args.reps
    return BIG_REPS if run.nbytes >= BIG_BYTES else 50  # 50: the binaries' own default


def command(run, binaries, csv_path, args):
    if run.step == "pytorch":
        return [sys.executable, str(PYTORCH), "--csv", str(csv_path)]
    cmd = [str(binaries[run.step])] + run.argv + ["--csv", str(csv_path)]
    if args.reps or run.nbytes >= BIG_BYTES:
        cmd += ["--reps", str(reps_for(run, args))]
    if args.warmup is not None:
        cmd += ["--warmup", str(args.warmup)]
    return cmd


def fmt_duration(seconds):
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


# -- merging the CSV ---------------------------------------------------------------------------

RUN_KEY = ("step", "type", "rows", "cols", "batch")  # one run of one binary on one problem
TYPE_ORDER = {t: i for i, t in enumerate(TYPES)}


def read_rows(path):
    """(header, rows) of a CSV file; (None, []) when it is missing or empty."""
    if not path.exists() or path.stat().st_size == 0:
        return None, []
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        return header, [r for r in reader if r and r != header]


def merge(old_header, old_rows, header, new_rows):
    """The old rows, less those of every problem measured again, plus the new rows, sorted by
    step, element type, batch and size (the order of a binary's own rows kept)."""
    col = {name: i for i, name in enumerate(header)}
    key = lambda r: tuple(r[col[k]] for k in RUN_KEY)
    if old_header is not None and old_header != header:
        print("note: the old CSV has other columns; its rows are dropped", file=sys.stderr)
        old_rows = []
    remeasured = {key(r) for r in new_rows}
    rows = [r for r in old_rows if key(r) not in remeasured] + new_rows

    def order(r):
        step = r[col["step"]]
        rows_, cols = int(r[col["rows"]]), int(r[col["cols"]])
        return (not step.startswith("step"), step, TYPE_ORDER.get(r[col["type"]], 99),
                int(r[col["batch"]]), rows_ * cols, rows_)
    return sorted(rows, key=order)


# ----------------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=Path, default=Path("build"),
                        help="the build folder whose bin/ holds the step binaries (default build)")
    parser.add_argument("--sizes", type=parse_shapes,
                        help="shapes to run, e.g. 256,1024,4096x1024 (a bare N is N x N); "
                             "default: squares 256..32768 and six rectangles")
    parser.add_argument("--steps", help="only these steps, e.g. 05,08 (default: every one built)")
    parser.add_argument("--types", default=",".join(TYPES),
                        help=f"step 08's element types (default {','.join(TYPES)})")
    parser.add_argument("--out", type=Path, default=ROOT / "plots" / "data" / "bench.csv",
                        help="the CSV to update (default plots/data/bench.csv)")
    parser.add_argument("--log", type=Path,
                        help="the step binaries' tables and messages (default BUILD/bench.log)")
    parser.add_argument("--reps", type=int, help="timed repetitions per kernel (default 50, "
                        f"{BIG_REPS} for matrices over 1 GiB)")
    parser.add_argument("--warmup", type=int, help="untimed runs per kernel (binary's default)")
    parser.add_argument("--replace", action="store_true",
                        help="start --out afresh instead of updating it")
    parser.add_argument("--no-pytorch", dest="pytorch", action="store_false",
                        help="skip the PyTorch peers")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds before one run is stopped and counted failed (default 900)")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    args = parser.parse_args(argv)
    args.types = [t.strip() for t in args.types.split(",") if t.strip()]
    unknown = [t for t in args.types if t not in TYPE_BYTES]
    if unknown:
        parser.error(f"--types: unknown type {', '.join(unknown)} (known: {', '.join(TYPES)})")

    wanted = None
    if args.steps:
        wanted = {f"step{int(s):02d}" if s.strip().isdigit() else s.strip()
                  for s in args.steps.split(",")}
    binaries = {}
    for nn in range(1, 10):
        step = f"step{nn:02d}"
        if wanted is not None and step not in wanted:
            continue
        path = args.build / "bin" / step
        if path.exists() and os.access(path, os.X_OK):
            binaries[step] = path.absolute()
        else:
            print(f"note: {step} skipped: {path} is not built")
    for step in EXERCISES:
        path = args.build / "bin" / step
        if (wanted is None or "exercises" in wanted) and os.access(path, os.X_OK):
            binaries[step] = path.absolute()
    if wanted is not None and "pytorch" not in wanted:
        args.pytorch = False

    runs = plan(args, binaries)
    if not runs:
        print("bench: nothing to run: build the steps first (make all)", file=sys.stderr)
        return 1
    total = sum(r.estimate_s(reps_for(r, args)) for r in runs)
    print(f"bench: {len(runs)} runs, roughly {fmt_duration(total)} (a guess; "
          f"each line below says what it took)")
    if args.dry_run:
        for i, run in enumerate(runs, 1):
            print(f"[{i}/{len(runs)}] {run.label}  (~{run.estimate_s(reps_for(run, args)):.1f} s)")
        return 0

    log_path = args.log or args.build / "bench.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    header, new_rows, failures = None, [], []
    start = time.monotonic()
    with open(log_path, "w") as log, tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        for i, run in enumerate(runs, 1):
            csv_path = Path(tmp) / f"run{i}.csv"
            cmd = command(run, binaries, csv_path, args)
            print(f"[{i}/{len(runs)}] {run.label} ...", end="", flush=True)
            log.write(f"$ {' '.join(cmd)}\n")
            log.flush()
            t0 = time.monotonic()
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                                      cwd=ROOT)
                code, out, err = done.returncode, done.stdout, done.stderr
            except subprocess.TimeoutExpired as e:
                code, out, err = None, e.stdout or "", e.stderr or ""
                out = out.decode() if isinstance(out, bytes) else out
                err = (err.decode() if isinstance(err, bytes) else err) + \
                    f"stopped after {args.timeout:.0f} s\n"
            seconds = time.monotonic() - t0
            log.write(out + err + f"# exit {code}, {seconds:.1f} s\n\n")
            log.flush()

            run_header, rows = read_rows(csv_path)
            if run_header is not None:
                if header is None:
                    header = run_header
                if run_header == header:
                    new_rows += rows
            # Exit 2 with "no kernel of ... supports" means every kernel refused the shape: the
            # rows say "refused", which is what the lessons show; not a failure of the sweep.
            refused = code == 2 and "no kernel of" in err
            if code == 0 or refused:
                note = " (every kernel refused this shape)" if refused else ""
                print(f" {seconds:.1f} s{note}", flush=True)
                continue
            last = next((line for line in reversed(err.splitlines()) if line.strip()), "")
            why = "timed out" if code is None else f"exit {code}"
            print(f" FAILED ({why}, {seconds:.1f} s): {last}", flush=True)
            failures.append(f"{run.label}: {why}: {last}")

    print(f"bench: {len(runs)} runs in {fmt_duration(time.monotonic() - start)}; "
          f"log in {log_path}")
    if header is None:
        print("bench: no run wrote a CSV row; nothing to save", file=sys.stderr)
        return 1
    old_header, old_rows = (None, []) if args.replace else read_rows(args.out)
    rows = merge(old_header, old_rows, header, new_rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = args.out.with_name(args.out.name + ".tmp")
    with open(tmp_out, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    os.replace(tmp_out, args.out)
    print(f"bench: {len(new_rows)} new rows, {len(rows)} in {args.out}; "
          "now `make plots` redraws the figures and tables")
    if failures:
        print(f"bench: {len(failures)} run(s) failed:", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
