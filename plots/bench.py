#!/usr/bin/env python3
"""Runs every step of the course over its sweep, several times, into one CSV for the plots.

What runs, how often, how the rows are merged into --out, and the exit codes (1 a run failed, 2
facts it cannot use, 3 no CUDA device): plots/README.md ("What the sweep runs", "Runs and
spread"). The plan is plan.py's. Standard library only.
"""

import argparse
import csv
import ctypes
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from facts import Course, FactsError, gpu_count, list_binary, normalize_step
from plan import (BIG_BYTES, PROBLEM, count_kernels, fmt_duration, option_value, parse_part,
                  parse_sizes, plan, print_plan, split_parts)

ROOT = Path(__file__).resolve().parent.parent
# One problem of one binary on one device; a run replaces the rows of its key only. The number
# of GPUs its ids name (step 10's "-2gpus") is part of the key too (run_key).
RUN_KEY = ("step", "type", "rows", "cols", "batch", "device")


def cuda_devices(why):
    """How many devices the CUDA driver sees; 0 with the reason appended to why."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        why.append("no CUDA driver: libcuda.so.1 does not load")
        return 0
    count = ctypes.c_int(0)
    status = cuda.cuInit(0)
    if status == 0:
        status = cuda.cuDeviceGetCount(ctypes.byref(count))
    if status == 0 and count.value > 0:
        return count.value
    name = ctypes.c_char_p()
    if status and cuda.cuGetErrorName(status, ctypes.byref(name)) == 0 and name.value:
        why.append(f"the CUDA driver says {name.value.decode()}")
    else:
        why.append("the CUDA driver sees no device")
    return 0


# -- merging the CSV ---------------------------------------------------------------------------

def read_rows(path):
    """(header, rows) of a CSV file; (None, []) when it is missing or empty."""
    if not path.exists() or path.stat().st_size == 0:
        return None, []
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        return header, [r for r in reader if r and r != header]


def run_key(r, col):
    """The RUN_KEY of a CSV row (a list, its columns in `col`), with its ids' GPU count."""
    return tuple(r[col[k]] for k in RUN_KEY) + (gpu_count(r[col["id"]]) if "id" in col else "",)


def merge(old_header, old_rows, header, new_rows, type_order, prune=None):
    """The old rows, less all the rows (every run) of each problem measured again on the same
    device (and number of GPUs), plus the new rows, sorted by step, element type (in
    `type_order`), batch, size, device and GPU count (the order of the runs, and of a binary's
    own rows within a run, kept). prune=(binaries, keys) also drops the old rows of those
    binaries whose problem (PROBLEM, any device) is not among keys (shapes the sweep no longer
    has)."""
    col = {name: i for i, name in enumerate(header)}
    key = lambda r: run_key(r, col)
    if old_header is not None and old_header != header:
        print("note: the old CSV has other columns; its rows are dropped", file=sys.stderr)
        old_rows = []
    remeasured = {key(r) for r in new_rows}
    rows = [r for r in old_rows if key(r) not in remeasured] + new_rows
    if prune:
        binaries, keys = prune
        rows = [r for r in rows if r[col["step"]] not in binaries
                or tuple(r[col[k]] for k in PROBLEM) in keys]
    rank = {t: i for i, t in enumerate(type_order)}

    def order(r):
        step = r[col["step"]]
        rows_, cols = int(r[col["rows"]]), int(r[col["cols"]])
        return (not step.startswith("step"), step, rank.get(r[col["type"]], len(rank)),
                int(r[col["batch"]]), rows_ * cols, rows_, key(r)[len(PROBLEM):])
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

def find_binaries(build, course, wanted):
    """{binary name: path} of everything built that the sweep may run."""
    binaries = {}
    for name in list(course.binaries) + list(course.exercises):
        if wanted is not None and not selected(name, course, wanted):
            continue
        path = build / "bin" / name
        if path.exists() and os.access(path, os.X_OK):
            binaries[name] = path.absolute()
        elif name in course.binaries and not course.binaries[name].is_lab:
            print(f"note: {name} skipped: {path} is not built")
    return binaries


def selected(name, course, wanted):
    return (name in wanted or (name.endswith("-lab") and "labs" in wanted)
            or (name in course.exercises and "exercises" in wanted))


def element_types(binaries):
    """([types in common/problem.cpp's order], {type: bytes}) from a built binary's --list."""
    for path in binaries.values():
        try:
            types, _ = list_binary(path)
        except (OSError, RuntimeError):
            continue
        if types:
            return [t for t, _, _ in types], {t: size for t, size, _ in types}
    return [], {}


def parse_steps(text):
    """"05,07-lab,exercises" -> {"step05", "step07-lab", "exercises"}."""
    wanted = {normalize_step(item.strip()) for item in text.split(",") if item.strip()}
    for name in wanted:
        if not re.fullmatch(r"step\d\d(-lab)?|labs|exercises|pytorch", name):
            raise argparse.ArgumentTypeError(
                f"'{name}' is not a step (05, step05, 05-lab) or labs, exercises, pytorch")
    return wanted


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=Path, default=Path(os.environ.get("BUILD") or "build"),
                        help="the build folder whose bin/ holds the binaries (default: $BUILD, "
                             "as for make, else build)")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the repository whose steps' facts say what to run (default: the "
                             "one holding this script)")
    parser.add_argument("--runs", type=int, default=3,
                        help="separate runs of every problem (default 3; the first verifies)")
    parser.add_argument("--verify-every-run", action="store_true",
                        help="verify in every run, not only the first (slower)")
    parser.add_argument("--part", type=parse_part,
                        help="K/N: only the K-th of N slices of the plan, cut at about equal "
                             "estimated time (--dry-run shows the slices)")
    parser.add_argument("--sizes", type=parse_sizes,
                        help="only the problems of these shapes, e.g. 1024,8192x2048 (a bare N "
                             "is N x N)")
    parser.add_argument("--steps", type=parse_steps,
                        help="only these, e.g. 05,07-lab,labs,exercises,pytorch "
                             "(default: everything built)")
    parser.add_argument("--types", help="only the problems of these element types, e.g. f16,i8")
    parser.add_argument("--gpus", help="only the problems run on this many GPUs (step 10's "
                        "--gpus N), e.g. 1,2")
    parser.add_argument("--out", type=Path, help="the CSV to update (default "
                        "ROOT/plots/data/bench.csv)")
    parser.add_argument("--log", type=Path,
                        help="the binaries' tables and messages (default BUILD/bench.log)")
    parser.add_argument("--reps", type=int, help="timed repetitions per kernel (default: the "
                        "binary's, 20 for matrices over 1 GiB)")
    parser.add_argument("--warmup", type=int, help="untimed runs per kernel (binary's default)")
    parser.add_argument("--replace", action="store_true",
                        help="start --out afresh instead of updating it")
    parser.add_argument("--prune", action="store_true",
                        help="also drop the rows of the binaries swept whose problem the whole "
                             "plan no longer has (old shapes); safe with --part, in any order")
    parser.add_argument("--no-pytorch", dest="peers", action="store_false",
                        help="skip the peers scripts (PyTorch)")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds before one run is stopped and counted failed (default 900)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan, its parts and the time estimate, and stop")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="CSV",
                        help="run nothing: merge these CSV files of rows measured elsewhere (in "
                             "bench.csv's columns) into --out, as a sweep would")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.prune and args.sizes:
        parser.error("--prune with --sizes would drop every other shape of the binaries swept")
    if args.steps is not None and "pytorch" not in args.steps:
        args.peers = False
    args.out = args.out or args.root / "plots" / "data" / "bench.csv"
    return args


def peers_import(path):
    """Whether the peers scripts' library, torch, imports here."""
    return subprocess.run([sys.executable, "-c", "import torch"],
                          capture_output=True).returncode == 0


def merge_files(args):
    """--merge: each file's rows replace those of the same problems, devices and GPU counts."""
    old_header, old_rows = read_rows(args.out)
    binaries = {p.name: p for p in (args.build / "bin").glob("step*") if os.access(p, os.X_OK)}
    type_order, _ = element_types(binaries)
    if not type_order:  # nothing built: the order the CSV already has
        col = {name: i for i, name in enumerate(old_header or [])}
        type_order = list(dict.fromkeys(r[col["type"]] for r in old_rows)) if col else []
    rows, header = old_rows, old_header
    for path in args.merge:
        new_header, new_rows = read_rows(path)
        if new_header is None or (header is not None and new_header != header) or \
                "id" not in new_header or "device" not in new_header:
            print(f"bench: --merge: {path} is not in {args.out}'s columns", file=sys.stderr)
            return 2
        rows, header = merge(header, rows, new_header, new_rows, type_order), new_header
        print(f"bench: {len(new_rows)} rows of {path} merged")
    write_csv(args.out, header, rows)
    print(f"bench: {len(rows)} rows in {args.out} (were {len(old_rows)})")
    return 0


def main(argv=None):
    args = arguments(argv)
    if args.merge:
        return merge_files(args)
    if not args.dry_run:  # once, before anything runs
        why = []
        gpus = cuda_devices(why)
        if not gpus:
            print(f"bench: a CUDA device is needed to run the benchmark ({why[0]}); "
                  "`make plots` redraws from the committed data without one", file=sys.stderr)
            return 3
    try:
        course = Course(args.root)
    except FactsError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    binaries = find_binaries(args.build, course, args.steps)
    type_order, sizes = element_types(binaries)
    wanted_types = args.types.split(",") if args.types else None
    for t in wanted_types or []:
        if type_order and t not in type_order:
            print(f"bench: --types: unknown type {t} (known: {', '.join(type_order)})",
                  file=sys.stderr)
            return 2
    whole, notes = plan(course, binaries, sizes, args.steps,
                        peers_import if args.peers else lambda path: False)
    for note in notes:
        print(note)
    all_problems = [p for p in whole
                    if (not args.sizes or p.peers or (p.rows, p.cols) in args.sizes)
                    and (not wanted_types or p.peers or p.type in wanted_types)
                    and (not args.gpus or p.peers
                         or option_value(p.argv, "--gpus") in args.gpus.split(","))]
    # A problem that names more GPUs than this machine has (step 10's --gpus N) is left out.
    if not args.dry_run:
        for p in all_problems:
            wanted = option_value(p.argv, "--gpus")
            if wanted and wanted.isdigit() and int(wanted) > gpus:
                print(f"note: {p.label} --gpus {wanted} skipped: {gpus} GPU(s) here")
        all_problems = [p for p in all_problems if not (option_value(p.argv, "--gpus") or "")
                        .isdigit() or int(option_value(p.argv, "--gpus")) <= gpus]
    if not all_problems:
        print("bench: nothing to run: build the steps first (make all)", file=sys.stderr)
        return 1
    old_header, old_rows = read_rows(args.out)
    count_kernels(all_problems, old_header, old_rows)

    # What --prune keeps: every problem of the whole plan, whatever the part (a peers script's
    # rows are its own shapes, unknown here: never pruned).
    prune = None
    if args.prune:
        swept = [p for p in whole if not p.peers]
        prune = ({p.binary for p in swept}, {p.key for p in swept})
    problems = all_problems
    if args.part:
        k, n = args.part
        problems = split_parts(all_problems, args, n)[k - 1]
        if not problems:
            print(f"bench: part {k}/{n} is empty (the plan has {len(all_problems)} problems)")
            return 0
    total = sum(p.estimate_all_s(args) for p in problems)
    nruns = len(problems) * args.runs
    where = f" (part {args.part[0]}/{args.part[1]})" if args.part else ""
    print(f"bench{where}: {len(problems)} problems x {args.runs} runs = {nruns} runs, roughly "
          f"{fmt_duration(total)} on an H100 host (a guess: the first run of a problem verifies, "
          "the others do not; each line below says what it took)")
    if args.dry_run:
        print_plan(problems, all_problems, args, course)
        return 0
    return sweep(problems, binaries, args, old_header, old_rows, type_order, prune)


def command(problem, binaries, csv_path, args, verify):
    if problem.peers:
        cmd = [sys.executable, str(problem.peers)] + problem.argv + ["--csv", str(csv_path)]
        return cmd + ([] if verify or problem.argv == [] else ["--no-verify"])
    cmd = [str(binaries[problem.binary])] + problem.argv + ["--csv", str(csv_path)]
    if args.reps or (problem.nbytes >= BIG_BYTES and not option_value(problem.argv, "--reps")):
        cmd += ["--reps", str(problem.reps(args))]
    if args.warmup is not None:
        cmd += ["--warmup", str(args.warmup)]
    if not verify:
        cmd.append("--no-verify")
    return cmd


def sweep(problems, binaries, args, old_header, old_rows, type_order, prune):
    """Runs the problems --runs times round the plan, merging each run's rows into --out."""
    log_path = args.log or args.build / "bench.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    header, new_rows, failures = None, [], []
    if args.replace:
        old_header, old_rows = None, []
    schedule = [(r, p) for r in range(1, args.runs + 1) for p in problems]
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
                                      cwd=args.root)
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
                    write_csv(args.out, header, merge(old_header, old_rows, header, new_rows,
                                                      type_order, prune))
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
    kept = len(merge(old_header, old_rows, header, new_rows, type_order, prune))
    print(f"bench: {len(new_rows)} new rows, {kept} in {args.out}; "
          "now `make plots` redraws the figures and tables")
    if failures:
        print(f"bench: {len(failures)} run(s) failed:", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
