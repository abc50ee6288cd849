#!/usr/bin/env python3
"""Runs every step of the course over a size sweep, several times, into one CSV for the plots.

    make bench                                  the default sweep, 3 runs of every problem
    make bench SIZES=1024,8192x2048             only these shapes (a bare N means N x N)
    python3 plots/bench.py --dry-run            the plan, its parts and its time estimate, no run
    python3 plots/bench.py --part 1/2           the first half of the sweep (by estimated time)

Each problem (a binary on one shape, type and batch) runs --runs times (default 3) as separate
processes; each process already reports the median of many timed repetitions, and the plots take
the median over the runs and keep their spread. The first run of a problem verifies every kernel
bit for bit against the CPU; the others pass --no-verify, which skips the CPU reference and the
comparisons (the inputs are still filled and copied to the device). The runs go round the plan:
every problem's first run, then every problem's second, so the runs of one problem are minutes
apart, not back to back.

The sweep, float32 unless said:
  steps 01-08   squares 1024..32768 (the README's table and figures, every lesson's size figure)
  steps 05-08   also six rectangles (the tables of steps 07 and 08 and of exercise 01)
  step 08       also every type (f32, f64, f16, bf16, i8, b128) at 4095x4097, 32768x8192 and
                16384x16384
  step 09       --mode inplace on the squares, 8191 and 16383, and f64 at 16384; then
                --mode batched and inplace-batched on fixed batches of small matrices
  sweep.txt     steps/NN_name/sweep.txt: more problems for stepNN, one per line as the binary's
                arguments (`--rows 46341 --cols 46341`), `#` starts a comment
  labs          steps/NN_name/lab/sweep.txt: the problems of build/bin/stepNN-lab, same format
  exercises     the reference solutions (bench_ex0N_solution) at the shapes their READMEs quote
  PyTorch       steps/08_general/peers_pytorch.py (its own shapes and types), when torch imports

Rows land in --out (default plots/data/bench.csv), all runs kept: the rows of one kernel on one
problem are its runs. A problem measured again replaces all its old rows; every other row is
kept, so a partial sweep (--sizes, --steps, --part) updates what it measured. The CSV is written
after every run, so a sweep stopped half way keeps what it finished. A run that fails is
reported and the sweep goes on; the exit code is 1 if any run failed, 3 if there is no CUDA
device (checked once, before anything runs). Python standard library only.
"""

import argparse
import csv
import ctypes
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SQUARES = [1024, 2048, 4096, 8192, 16384, 32768]
RECTANGLES = [(8192, 2048), (2048, 8192), (16384, 1024), (1024, 16384), (4095, 4097),
              (12345, 6789)]
TYPES = ["f32", "f64", "f16", "bf16", "i8", "b128"]
# Rectangles for the steps whose lessons (and exercise 01) compare on them; steps 01-04 take only
# the squares.
RECTANGLE_STEPS = ("step05", "step06", "step07", "step08")
# Step 08's shapes for every element type: its lesson's tables and the types figure. The
# rectangle is 32768 x 8192 rather than float32's 8192 x 2048: an int8 8192 x 2048 matrix and its
# transpose (34 MB) stay in the 50 MB L2 of an H100 between repetitions; at 32768 x 8192 int8
# moves what the default 8192 x 8192 float32 problem moves (537 MB), ten times the L2.
TYPE_SIZES = [(4095, 4097), (32768, 8192), (16384, 16384)]
# Step 09 in place on odd sizes too (8191: misaligned rows; 16383: the same on a larger matrix),
# and in float64 at 16384 (the lesson's f64 table).
INPLACE_EXTRA = [((8191, 8191), "f32"), ((16383, 16383), "f32"), ((16384, 16384), "f64")]
# Step 09's batches: (mode, rows, cols, batch).
BATCHES = [("batched", 64, 64, 16384), ("batched", 128, 128, 4096), ("batched", 2048, 128, 64),
           ("batched", 32, 48, 1000), ("inplace-batched", 256, 256, 1024)]
# The exercises' reference solutions, for the speed their READMEs quote.
EXERCISES = {"bench_ex01_solution": [(8192, 8192), (8192, 2048), (2048, 8192)],
             "bench_ex02_solution": [(8192, 8192)], "bench_ex03_solution": [(8192, 8192)]}
TYPE_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i8": 1, "b128": 16}
PYTORCH = ROOT / "steps" / "08_general" / "peers_pytorch.py"

# Fewer timed repetitions where one matrix passes this size: the median of 20 runs of several
# milliseconds each is already steady, and the sweep's time goes elsewhere.
BIG_BYTES = 1 << 30
BIG_REPS = 20
DEFAULT_REPS, DEFAULT_WARMUP = 50, 5  # the binaries' own defaults

# The time model of --dry-run, for an H100 host with 16 cores (common/harness.cu does, per run:
# start, fill the input with bit patterns, copy it to the device, and with verification a CPU
# transpose; then per kernel, with verification, copy the output back and compare; then the
# timed repetitions). Each line of the sweep prints what it really took; the totals at the end
# say how far the guess was off.
START_S = 0.6               # process, CUDA context, cuBLAS handle
FILL_S_PER_GB = 0.3         # bit patterns (16 threads) and the pageable host-to-device copy
REFERENCE_S_PER_GB = 0.6    # the CPU transpose (first touch of its buffer included)
CHECK_S_PER_GB = 0.25       # per kernel: device-to-host copy and the compare
TIMED_GBPS = 1500           # the kernels' average bandwidth over the timed repetitions
PYTORCH_S = 60.0            # one run of peers_pytorch.py (import, 16 problems)
DEFAULT_KERNELS = 8         # a binary never measured yet: 6 kernels and the 2 copies
PART_LIMIT_S = 5 * 60       # what --dry-run aims a part at: well under a 10-minute command


class Problem:
    """One problem of the sweep: a binary (step01, step07-lab, bench_ex01_solution, pytorch)
    with its arguments. It runs --runs times."""

    def __init__(self, binary, argv, shape=(8192, 8192), type_="f32", batch=1, source=None):
        self.binary, self.argv, self.source = binary, list(argv), source
        self.rows, self.cols = shape
        self.type, self.batch = type_, batch
        self.nbytes = self.rows * self.cols * batch * TYPE_BYTES.get(type_, 4)
        self.kernels = DEFAULT_KERNELS
        mode = option_value(self.argv, "--mode")
        self.label = binary if binary == "pytorch" else \
            f"{binary} {self.rows}x{self.cols} {type_}" + (f" ({mode})" if mode else "") + \
            (f" batch {batch}" if batch != 1 else "")

    @property
    def key(self):
        """What identifies its rows in the CSV (see merge())."""
        return (self.binary, self.type, str(self.rows), str(self.cols), str(self.batch))

    def reps(self, args):
        if args.reps:
            return args.reps
        if option_value(self.argv, "--reps"):
            return int(option_value(self.argv, "--reps"))
        return BIG_REPS if self.nbytes >= BIG_BYTES else DEFAULT_REPS

    def estimate_s(self, args, verify, kernels=None):
        """A guess of one run's wall time on an H100 host (see the time model above), with the
        kernel count last measured (or `kernels`)."""
        if self.binary == "pytorch":
            return PYTORCH_S
        gb = self.nbytes / 1e9
        kernels = kernels or self.kernels
        warmup = args.warmup if args.warmup is not None else DEFAULT_WARMUP
        seconds = START_S + FILL_S_PER_GB * gb
        seconds += kernels * (self.reps(args) + warmup) * 2 * gb / TIMED_GBPS
        if verify:
            seconds += REFERENCE_S_PER_GB * gb + kernels * CHECK_S_PER_GB * gb
        return seconds

    def estimate_all_s(self, args, kernels=None):
        """All its runs: the first verified, the others not (unless --verify-every-run)."""
        runs = runs_of(self, args)
        later = self.estimate_s(args, args.verify_every_run, kernels)
        return self.estimate_s(args, True, kernels) + (runs - 1) * later


def runs_of(problem, args):
    return args.pytorch_runs if problem.binary == "pytorch" else args.runs


def option_value(argv, name):
    """The value of `--name V` or `--name=V` in argv, None when absent."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


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


def parse_part(text):
    """"2/3" -> (2, 3)."""
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not K/N (e.g. 1/2)")
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"'{text}': K must be between 1 and N")
    return k, n


# -- sweep.txt files ---------------------------------------------------------------------------

class SweepError(Exception):
    """A line of a sweep.txt that bench.py cannot use."""


# Options bench.py sets itself on every run.
RESERVED = ("--csv", "--no-verify", "--help")


def read_sweep_file(path, binary):
    """The problems of a sweep.txt: one per line, the binary's arguments, `#` comments."""
    problems = []
    shown = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        try:
            argv = shlex.split(line, comments=True)
        except ValueError as e:
            raise SweepError(f"{shown}:{number}: {e}")
        if not argv:
            continue
        for arg in argv:
            if arg.split("=", 1)[0] in RESERVED:
                raise SweepError(f"{shown}:{number}: {arg.split('=', 1)[0]} is set by bench.py")
        try:
            rows = int(option_value(argv, "--rows") or 8192)
            cols = int(option_value(argv, "--cols") or 8192)
            batch = int(option_value(argv, "--batch") or 1)
        except ValueError:
            raise SweepError(f"{shown}:{number}: --rows, --cols and --batch take whole numbers")
        type_ = option_value(argv, "--type") or "f32"
        if type_ not in TYPE_BYTES:
            raise SweepError(f"{shown}:{number}: unknown --type {type_}")
        problems.append(Problem(binary, argv, (rows, cols), type_, batch,
                                source=f"{shown}:{number}"))
    return problems


def step_folders():
    """{"05": Path("steps/05_coarsened"), ...}."""
    return {d.name[:2]: d for d in sorted((ROOT / "steps").glob("[0-9][0-9]_*")) if d.is_dir()}


# -- the plan ----------------------------------------------------------------------------------

def default_problems(binary, args):
    """The default sweep of one step binary, small problems first."""
    shapes = args.sizes or [(n, n) for n in SQUARES] + \
        (RECTANGLES if binary in RECTANGLE_STEPS else [])
    by_size = lambda s: (s[0] * s[1], s)
    out = []

    def add(shape, type_="f32", batch=1, mode=None):
        argv = ["--rows", str(shape[0]), "--cols", str(shape[1])]
        if type_ != "f32":
            argv += ["--type", type_]
        if mode:
            argv += ["--mode", mode]
        if batch != 1:
            argv += ["--batch", str(batch)]
        out.append(Problem(binary, argv, shape, type_, batch))

    if binary in EXERCISES:
        for shape in args.sizes or EXERCISES[binary]:
            add(shape)
        return out
    if binary == "step09":
        inplace = [(s, "f32") for s in shapes if s[0] == s[1]]
        if not args.sizes:
            inplace += INPLACE_EXTRA
        for shape, type_ in sorted(set(inplace), key=lambda st: (st[1] != "f32",
                                                                 by_size(st[0]))):
            add(shape, type_, mode="inplace")
        if not args.sizes:
            for mode, rows, cols, batch in BATCHES:
                add((rows, cols), batch=batch, mode=mode)
        return out
    for shape in sorted(set(shapes), key=by_size):
        add(shape)
    if binary == "step08":  # every type at TYPE_SIZES (float32's repeats run once, see plan)
        for type_ in args.types:
            for shape in sorted(set(args.sizes or TYPE_SIZES), key=by_size):
                add(shape, type_)
    return out


def plan(args, binaries, wanted):
    """Every problem, in the order the runs go: each step, its sweep.txt, its lab; then the
    exercises and PyTorch."""
    problems = []
    folders = step_folders()

    def keep(p):  # --sizes limits sweep.txt lines too
        return not args.sizes or (p.rows, p.cols) in args.sizes

    for nn in sorted(set(folders) | {b[4:6] for b in binaries if b.startswith("step")}):
        step, lab = f"step{nn}", f"step{nn}-lab"
        folder = folders.get(nn)
        if step in binaries:
            problems += default_problems(step, args)
            if folder and (folder / "sweep.txt").exists():
                problems += [p for p in read_sweep_file(folder / "sweep.txt", step) if keep(p)]
        if folder and (folder / "lab" / "sweep.txt").exists():
            if lab in binaries:
                problems += [p for p in read_sweep_file(folder / "lab" / "sweep.txt", lab)
                             if keep(p)]
            elif wanted is None or lab in wanted or "labs" in wanted:
                print(f"note: {lab} skipped: {args.build / 'bin' / lab} is not built")
    for binary in EXERCISES:
        if binary in binaries:
            problems += default_problems(binary, args)
    if args.pytorch and PYTORCH.exists():
        probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
        if probe.returncode == 0:
            problems.append(Problem("pytorch", [], source=PYTORCH.relative_to(ROOT).as_posix()))
        else:
            print(f"note: {PYTORCH.relative_to(ROOT)} skipped: torch does not import here")
    # The same binary and arguments twice (a sweep.txt line repeating the default, its options in
    # any order) runs once.
    seen, unique = set(), []
    for p in problems:
        if (p.binary, same_options(p.argv)) not in seen:
            seen.add((p.binary, same_options(p.argv)))
            unique.append(p)
    return unique


def same_options(argv):
    """argv as a value that ignores the order of its `--option value` pairs."""
    names, values = argv[0::2], argv[1::2]
    if len(argv) % 2 or not all(n.startswith("--") for n in names):
        return tuple(argv)
    return tuple(sorted(zip(names, values)))


def count_kernels(problems, header, rows):
    """Sets each problem's kernel count (copies and cuBLAS included) from the CSV's last
    measurement of that problem, else of that binary and type, for the time estimate."""
    if header is None:
        return
    col = {name: i for i, name in enumerate(header)}
    exact, per_type, peers = {}, {}, set()
    for r in rows:
        key = tuple(r[col[k]] for k in RUN_KEY)
        exact.setdefault(key, set()).add(r[col["kernel"]])
        per_type.setdefault(key[:2], set()).add(r[col["kernel"]])
        if key[0] == "pytorch":
            peers.add((r[col["kernel"]],) + key[1:])
    for p in problems:
        found = exact.get(p.key) or per_type.get(p.key[:2])
        if p.binary == "pytorch":  # one run: every shape and type of the script
            found = peers
        if found:
            p.kernels = len(found)


def split_parts(problems, args, n):
    """n contiguous slices of the plan of about equal estimated time. The cut ignores the kernel
    counts read from the CSV, which change as soon as part 1 has written its rows: every
    invocation of one sweep must cut the plan at the same places. PyTorch, always last in the
    plan, costs nothing here, so the cut is the same with --no-pytorch as without it."""
    costs = [0.0 if p.binary == "pytorch" else p.estimate_all_s(args, kernels=DEFAULT_KERNELS)
             for p in problems]
    total = sum(costs) or 1
    parts, start, done = [], 0, 0.0
    for k in range(1, n + 1):
        end = start
        while end < len(problems) and (k == n or done + costs[end] / 2 < total * k / n):
            done += costs[end]
            end += 1
        parts.append(problems[start:end])
        start = end
    return parts


def fmt_duration(seconds):
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def command(problem, binaries, csv_path, args, verify):
    if problem.binary == "pytorch":
        return [sys.executable, str(PYTORCH), "--csv", str(csv_path)]
    cmd = [str(binaries[problem.binary])] + problem.argv + ["--csv", str(csv_path)]
    if args.reps or (problem.nbytes >= BIG_BYTES and not option_value(problem.argv, "--reps")):
        cmd += ["--reps", str(problem.reps(args))]
    if args.warmup is not None:
        cmd += ["--warmup", str(args.warmup)]
    if not verify:
        cmd.append("--no-verify")
    return cmd


# -- the device --------------------------------------------------------------------------------

def cuda_device(why):
    """True when the CUDA driver sees a device; else False with the reason in why[0]."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        why.append("no CUDA driver: libcuda.so.1 does not load")
        return False
    count = ctypes.c_int(0)
    status = cuda.cuInit(0)
    if status == 0:
        status = cuda.cuDeviceGetCount(ctypes.byref(count))
    if status == 0 and count.value > 0:
        return True
    name = ctypes.c_char_p()
    if status and cuda.cuGetErrorName(status, ctypes.byref(name)) == 0 and name.value:
        why.append(f"the CUDA driver says {name.value.decode()}")
    else:
        why.append("the CUDA driver sees no device")
    return False


# -- merging the CSV ---------------------------------------------------------------------------

RUN_KEY = ("step", "type", "rows", "cols", "batch")  # one problem of one binary
TYPE_ORDER = {t: i for i, t in enumerate(TYPES)}


def read_rows(path):
    """(header, rows) of a CSV file; (None, []) when it is missing or empty."""
    if not path.exists() or path.stat().st_size == 0:
        return None, []
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        return header, [r for r in reader if r and r != header]


def merge(old_header, old_rows, header, new_rows, prune=None):
    """The old rows, less all the rows (every run) of each problem measured again, plus the new
    rows, sorted by step, element type, batch and size (the order of the runs, and of a binary's
    own rows within a run, kept). prune=(binaries, keys) also drops the old rows of those
    binaries whose problem is not among keys (problems the sweep no longer has)."""
    col = {name: i for i, name in enumerate(header)}
    key = lambda r: tuple(r[col[k]] for k in RUN_KEY)
    if old_header is not None and old_header != header:
        print("note: the old CSV has other columns; its rows are dropped", file=sys.stderr)
        old_rows = []
    remeasured = {key(r) for r in new_rows}
    rows = [r for r in old_rows if key(r) not in remeasured] + new_rows
    if prune:
        binaries, keys = prune
        rows = [r for r in rows if r[col["step"]] not in binaries or key(r) in keys]

    def order(r):
        step = r[col["step"]]
        rows_, cols = int(r[col["rows"]]), int(r[col["cols"]])
        return (not step.startswith("step"), step, TYPE_ORDER.get(r[col["type"]], 99),
                int(r[col["batch"]]), rows_ * cols, rows_)
    return sorted(rows, key=order)


def write_csv(path, header, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    os.replace(tmp, path)


# ----------------------------------------------------------------------------------------------

def find_binaries(args, wanted):
    """{binary name: path} of everything built that the sweep may run."""
    names = [f"step{nn}" for nn in sorted(step_folders())]
    names += [f"{n}-lab" for n in names] + list(EXERCISES)
    binaries = {}
    for name in names:
        if wanted is not None and not selected(name, wanted):
            continue
        path = args.build / "bin" / name
        if path.exists() and os.access(path, os.X_OK):
            binaries[name] = path.absolute()
        elif name.startswith("step") and not name.endswith("-lab"):
            print(f"note: {name} skipped: {path} is not built")
    return binaries


def selected(name, wanted):
    return (name in wanted or (name.endswith("-lab") and "labs" in wanted)
            or (name in EXERCISES and "exercises" in wanted))


def parse_steps(text):
    """"05,07-lab,exercises" -> {"step05", "step07-lab", "exercises"}."""
    wanted = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        base, lab = (item[:-4], "-lab") if item.endswith("-lab") else (item, "")
        if base.isdigit():
            wanted.add(f"step{int(base):02d}{lab}")
        elif base.startswith("step") and base[4:].isdigit():
            wanted.add(f"step{int(base[4:]):02d}{lab}")
        elif item in ("labs", "exercises", "pytorch"):
            wanted.add(item)
        else:
            raise argparse.ArgumentTypeError(
                f"'{item}' is not a step (05, step05, 05-lab) or labs, exercises, pytorch")
    return wanted


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=Path, default=Path("build"),
                        help="the build folder whose bin/ holds the binaries (default build)")
    parser.add_argument("--runs", type=int, default=3,
                        help="separate runs of every problem (default 3; the first verifies)")
    parser.add_argument("--pytorch-runs", type=int,
                        help="runs of the PyTorch peers (default: --runs)")
    parser.add_argument("--verify-every-run", action="store_true",
                        help="verify in every run, not only the first (slower)")
    parser.add_argument("--part", type=parse_part,
                        help="K/N: only the K-th of N slices of the plan, cut at about equal "
                             "estimated time (--dry-run shows the slices)")
    parser.add_argument("--sizes", type=parse_shapes,
                        help="shapes to run, e.g. 1024,4096x1024 (a bare N is N x N); default: "
                             "squares 1024..32768 and six rectangles")
    parser.add_argument("--steps", type=parse_steps,
                        help="only these, e.g. 05,07-lab,labs,exercises,pytorch "
                             "(default: everything built)")
    parser.add_argument("--types", default=",".join(TYPES),
                        help=f"step 08's element types (default {','.join(TYPES)})")
    parser.add_argument("--out", type=Path, default=ROOT / "plots" / "data" / "bench.csv",
                        help="the CSV to update (default plots/data/bench.csv)")
    parser.add_argument("--log", type=Path,
                        help="the binaries' tables and messages (default BUILD/bench.log)")
    parser.add_argument("--reps", type=int, help=f"timed repetitions per kernel (default "
                        f"{DEFAULT_REPS}, {BIG_REPS} for matrices over 1 GiB)")
    parser.add_argument("--warmup", type=int, help="untimed runs per kernel (binary's default)")
    parser.add_argument("--replace", action="store_true",
                        help="start --out afresh instead of updating it")
    parser.add_argument("--prune", action="store_true",
                        help="also drop the rows of the binaries swept whose problem the whole "
                             "plan no longer has (old shapes); safe with --part, in any order")
    parser.add_argument("--no-pytorch", dest="pytorch", action="store_false",
                        help="skip the PyTorch peers")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds before one run is stopped and counted failed (default 900)")
    parser.add_argument("--check-device", action="store_true",
                        help="only say whether a CUDA device is there (exit 0, or 3 and why)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan, its parts and the time estimate, and stop")
    args = parser.parse_args(argv)
    args.types = [t.strip() for t in args.types.split(",") if t.strip()]
    unknown = [t for t in args.types if t not in TYPE_BYTES]
    if unknown:
        parser.error(f"--types: unknown type {', '.join(unknown)} (known: {', '.join(TYPES)})")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.pytorch_runs is None:
        args.pytorch_runs = args.runs
    if args.prune and args.sizes:
        parser.error("--prune with --sizes would drop every other shape of the binaries swept")
    wanted = args.steps
    if wanted is not None and "pytorch" not in wanted:
        args.pytorch = False

    if not args.dry_run:  # once, before anything runs
        why = []
        if not cuda_device(why):
            print(f"bench: a CUDA device is needed to run the benchmark ({why[0]}); "
                  "`make plots` redraws from the committed data without one", file=sys.stderr)
            return 3
        if args.check_device:
            return 0

    binaries = find_binaries(args, wanted)
    try:
        problems = plan(args, binaries, wanted)
    except SweepError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    if not problems:
        print("bench: nothing to run: build the steps first (make all)", file=sys.stderr)
        return 1
    old_header, old_rows = read_rows(args.out)
    count_kernels(problems, old_header, old_rows)

    all_problems = problems
    # What --prune keeps: every problem of the whole plan, whatever the part (PyTorch's rows are
    # the script's own shapes, unknown here: never pruned).
    prune = None
    if args.prune:
        swept = [p for p in all_problems if p.binary != "pytorch"]
        prune = ({p.binary for p in swept}, {p.key for p in swept})
    if args.part:
        k, n = args.part
        problems = split_parts(all_problems, args, n)[k - 1]
        if not problems:
            print(f"bench: part {k}/{n} is empty (the plan has {len(all_problems)} problems)")
            return 0
    total = sum(p.estimate_all_s(args) for p in problems)
    nruns = sum(runs_of(p, args) for p in problems)
    where = f" (part {args.part[0]}/{args.part[1]})" if args.part else ""
    print(f"bench{where}: {len(problems)} problems x {args.runs} runs = {nruns} runs, roughly "
          f"{fmt_duration(total)} on an H100 host (a guess: the first run of a problem verifies, "
          "the others do not; each line below says what it took)")
    if args.dry_run:
        print_plan(problems, all_problems, args)
        return 0

    log_path = args.log or args.build / "bench.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    header, new_rows, failures = None, [], []
    if args.replace:
        old_header, old_rows = None, []
    schedule = [(r, p) for r in range(1, args.runs + 1) for p in problems if r <= runs_of(p, args)]
    schedule += [(r, p) for r in range(args.runs + 1, args.pytorch_runs + 1)
                 for p in problems if p.binary == "pytorch"]
    start, guessed = time.monotonic(), 0.0
    with open(log_path, "w") as log, tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        for i, (run, p) in enumerate(schedule, 1):
            verify = run == 1 or args.verify_every_run
            csv_path = Path(tmp) / f"run{i}.csv"
            cmd = command(p, binaries, csv_path, args, verify)
            print(f"[{i}/{len(schedule)}] {p.label} run {run}{'' if verify else ', unverified'}"
                  " ...", end="", flush=True)
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
            guess = p.estimate_s(args, verify)
            guessed += guess
            log.write(out + err + f"# exit {code}, {seconds:.1f} s (estimated {guess:.1f} s)\n\n")
            log.flush()

            run_header, rows = read_rows(csv_path)
            if run_header is not None:
                if header is None:
                    header = run_header
                if run_header == header:
                    new_rows += rows
                    # Saved after every run: a sweep stopped half way keeps what it finished.
                    write_csv(args.out, header,
                              merge(old_header, old_rows, header, new_rows, prune))
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
            failures.append(f"{p.label} run {run}: {why}: {last}")

    print(f"bench: {len(schedule)} runs in {fmt_duration(time.monotonic() - start)} "
          f"(estimated {fmt_duration(guessed)}); log in {log_path}")
    if header is None:
        print("bench: no run wrote a CSV row; nothing saved", file=sys.stderr)
        return 1
    kept = len(merge(old_header, old_rows, header, new_rows, prune))
    print(f"bench: {len(new_rows)} new rows, {kept} in {args.out}; "
          "now `make plots` redraws the figures and tables")
    if failures:
        print(f"bench: {len(failures)} run(s) failed:", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        return 1
    return 0


def print_plan(problems, all_problems, args):
    """The problems with their estimates, and how the whole plan splits into parts."""
    for i, p in enumerate(problems, 1):
        once, later = p.estimate_s(args, True), p.estimate_s(args, args.verify_every_run)
        runs = runs_of(p, args)
        extra = f" + {runs - 1} x {later:.1f} s" if runs > 1 else ""
        source = f"  [{p.source}]" if p.source else ""
        print(f"  {i:3d}. {p.label:<42} ~{once:.1f} s{extra}{source}")
    total = sum(p.estimate_all_s(args) for p in all_problems)
    rows = sum(p.kernels * runs_of(p, args) for p in problems)
    print(f"rows it will write: about {rows} (each problem's kernel count as last measured, "
          f"{DEFAULT_KERNELS} where never measured, times its runs)")
    n = max(1, math.ceil(total / PART_LIMIT_S))
    if n == 1:
        return
    print(f"the whole plan: {len(all_problems)} problems, roughly {fmt_duration(total)} for "
          f"{args.runs} runs" + (f"; split it in {n} (about {PART_LIMIT_S / 60:.0f} min or "
                                 f"less each): --part K/{n}" if n > 1 else ""))
    for k, part in enumerate(split_parts(all_problems, args, n), 1):
        if part:
            cost = sum(p.estimate_all_s(args) for p in part)
            print(f"  --part {k}/{n}: {len(part)} problems, {part[0].label} .. "
                  f"{part[-1].label}, roughly {fmt_duration(cost)}")


if __name__ == "__main__":
    sys.exit(main())
