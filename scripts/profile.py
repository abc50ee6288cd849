#!/usr/bin/env python3
"""Nsight Compute counters of one step's kernels, as rows of plots/data/profile.csv
(`make profile STEP=NN`; --help lists the options).

What it profiles is the [[profile]] groups of the step's facts (steps/NN_name/step.toml, or
lab/lab.toml): every shape x type of a group, with its args, each kernel (or the group's ids).
For each problem, from the repository root:
  1. runs ./stepNN once (one repetition, no verification) with --csv, to learn its kernels (id,
     name; the refused ones are skipped) and the device, driver and date;
  2. for each kernel, runs ncu on `./stepNN ... --only ID` and profiles its first launch (the
     harness's copies and cuBLAS are filtered out); in a group with `passes = true`, each launch
     of its first call, a row of its own (kernel_rows);
  3. converts ncu's raw CSV into rows `step,id,kernel,type,rows,cols,metric,value,unit,device,
     driver,date` that replace the step's earlier rows of that problem in --out (replace_rows),
     once per problem with every group's rows of it (combine).
The metrics are facts.py's PROFILE_METRICS, or a group's `metrics`. ncu runs with
--clock-control none (it never changes the GPU's clocks) and flushes the caches before each
profiled kernel: DRAM bytes are cold-cache numbers.

Exit codes: 0 done; 2 a bad argument, no facts to profile or no ./stepNN; 3 no ncu, no GPU, or
ncu failed.
"""

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plots"))
from bench import write_csv  # noqa: E402
from facts import PROFILE_METRICS, Course, FactsError, kernel_of, parse_shape  # noqa: E402

# Matched against the demangled name: anything but the copy-ceiling kernels and cuBLAS.
KERNEL_FILTER = "regex:^(?!.*(copy_|geam|gemm|cublas))"
HEADER = ["step", "id", "kernel", "type", "rows", "cols", "metric", "value", "unit", "device",
          "driver", "date"]
SCALE = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12}  # to bytes


class ProfileError(Exception):
    """Something that stops the profile, with its exit code."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def number(text):
    try:
        return float(text.replace(",", ""))  # ncu may print thousands separators
    except ValueError:
        return None  # "n/a"


def launches(text, wanted):
    """[(kernel name, {metric: (value, unit)})], one per profiled launch in order, from ncu's
    `--csv --page raw` output (one column per metric, a row of units, a row per launch)."""
    lines = text.splitlines()
    start = next((k for k, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    table = [r for r in csv.reader(lines[start:]) if r]
    names = table[0]
    col = {n: k for k, n in enumerate(names)}
    name_col = names.index("Kernel Name") if "Kernel Name" in names else None
    units = table[1] if len(table) > 1 and not table[1][0].strip().isdigit() else []
    found = {}
    for r in table[1:]:
        if not r[0].strip().isdigit():
            continue
        values = {}
        for k, n in enumerate(names):
            value = number(r[k]) if n in wanted and k < len(r) else None
            if value is not None:
                values[n] = (value, units[k] if k < len(units) else "")
        found[int(r[0])] = (r[name_col] if name_col is not None else "", values)
    return [found[k] for k in sorted(found)]


def function_name(kernel):
    """"void step09::swap_rows<float>(float*, long, const int*)" -> "swap_rows"."""
    base = re.sub(r"\(.*$", "", kernel)
    depth, plain = 0, ""
    for c in base:  # drop template arguments, nested ones too
        depth += c == "<"
        plain += c if depth == 0 else ""
        depth -= c == ">"
    return plain.split()[-1].split("::")[-1] if plain.split() else kernel


def rows_of(values, step, kid, kernel, run):
    """profile.csv rows of one launch's counters (bytes in bytes, sectors per request added)."""
    for m, (v, unit) in list(values.items()):
        if unit in SCALE:
            values[m] = (v * SCALE[unit], "byte")
    for kind in ("ld", "st"):
        s = values.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{kind}.sum")
        q = values.get(f"l1tex__t_requests_pipe_lsu_mem_global_op_{kind}.sum")
        if s and q and q[0] > 0:
            values[f"global_{kind}_sectors_per_request"] = (s[0] / q[0], "sector/request")
    out = []
    for metric, (v, unit) in values.items():
        text = f"{v:.0f}" if v == int(v) else f"{v:.4g}"
        out.append([step, kid, kernel, run["type"], run["rows"], run["cols"], metric, text, unit,
                    run["device"], run["driver"], run["date"]])
    return out


def kernel_rows(step, kid, name, found, run, passes):
    """The rows of one profiled kernel: its first launch, or with `passes` (a kernel that is one
    call of several launches: step 09's rectangle) each launch of its first call, id "ID-passP",
    name "NAME, pass P of N: function". The binary calls it twice (the verification run and one
    timed repetition), so the first half of the launches are one transpose."""
    if not found:
        raise ProfileError(f"ncu profiled no launch of '{name}'", 3)
    if not passes:
        return rows_of(dict(found[0][1]), step, kid, name, run)
    if len(found) % 2:
        raise ProfileError(f"'{name}': {len(found)} launches, not two calls of one transpose", 3)
    first = found[:len(found) // 2]
    out = []
    for p, (kernel, values) in enumerate(first, 1):
        out += rows_of(dict(values), step, f"{kid}-pass{p}",
                       f"{name}, pass {p} of {len(first)}: {function_name(kernel)}", run)
    return out


def replace_rows(path, new_rows, step, problem, ids):
    """Writes `path` with the step's rows of that problem (of those ids, when given; a kernel's
    passes with it) on the new rows' device replaced by new_rows; other devices' rows stay."""
    kept = []
    devices = {r[HEADER.index("device")] for r in new_rows}
    if path.exists():
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                same = (r.get("step") == step and (r.get("type"), r.get("rows"), r.get("cols"))
                        == problem and r.get("device") in devices)
                mine = ids is None or kernel_of(r.get("id", "")) in ids
                if not (same and mine):
                    kept.append([r.get(h, "") for h in HEADER])
    write_csv(path, HEADER, kept + new_rows)


def combine(pending, problem, rows, ids):
    """Adds one group's rows of a problem to `pending`, {problem: ({(id, metric): row}, ids)}, so
    that the problem's earlier rows are replaced once, by every group's: two groups that profile
    the same kernels there (one the bytes, one the stall reasons) both keep theirs, and a metric
    both measure keeps the later group's value. ids None (every kernel) stays None."""
    got, known = pending.get(problem, ({}, set()))
    for r in rows:
        got[(r[HEADER.index("id")], r[HEADER.index("metric")])] = r
    pending[problem] = (got, None if ids is None or known is None else known | set(ids))


def merge(path, out):
    """--merge: each problem's rows (step, type, shape; of the kernels they name) replace those
    of the same problem on the same device in `out`."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        print(f"profile: --merge: {e}", file=sys.stderr)
        return 2
    if rows and set(HEADER) - set(rows[0]):
        print(f"profile: --merge: {path} is not in profile.csv's columns", file=sys.stderr)
        return 2
    groups = {}
    for r in rows:
        groups.setdefault((r["step"], r["type"], r["rows"], r["cols"]), []).append(r)
    for (step, *problem), new in groups.items():
        ids = {kernel_of(r["id"]) for r in new}
        replace_rows(out, [[r[h] for h in HEADER] for r in new], step, tuple(problem), ids)
    print(f"profile: {len(rows)} rows of {path} merged into {out}", file=sys.stderr)
    return 0


def find_ncu():
    ncu = os.environ.get("NCU") or shutil.which("ncu")
    if not ncu:  # the toolkit's usual places, newest first
        places = ["/usr/local/cuda/bin/ncu"] + sorted(
            (str(p) for p in Path("/opt/nvidia/nsight-compute").glob("*/ncu")), reverse=True)
        ncu = next((p for p in places if os.access(p, os.X_OK)), None)
    if not ncu:
        raise ProfileError("Nsight Compute (ncu) not found: install it with the CUDA toolkit or "
                           "set NCU=/path/to/ncu", 3)
    return ncu


def profile_problem(exe, ncu, step, argv, metrics, ids, passes, tmp):
    """The rows of one problem: every kernel of the binary's run (those of `ids` when given)."""
    run_args = [str(exe), *argv, "--reps", "1", "--warmup", "0", "--no-verify"]
    listing = Path(tmp) / "list.csv"
    listing.unlink(missing_ok=True)
    done = subprocess.run(run_args + ["--csv", str(listing)], capture_output=True, text=True)
    if done.returncode != 0:
        raise ProfileError(f"{exe} {' '.join(argv)} failed: {done.stderr.strip()[-300:]}", 3)
    with open(listing, newline="") as f:
        rows = list(csv.DictReader(f))
    kernels = [(r["id"], r["kernel"]) for r in rows
               if not r["kernel"].startswith(("copy:", "cuBLAS")) and r["verified"] != "refused"
               and (ids is None or r["id"] in ids)]
    if not kernels:
        raise ProfileError(f"no kernel of {step} to profile at {' '.join(argv)}", 2)
    run, new_rows = rows[0], []
    for kid, name in kernels:
        print(f"profile: {step} {' '.join(argv)}: {kid} ({name})", file=sys.stderr)
        report = Path(tmp) / kid
        cmd = [ncu, "--clock-control", "none", "--metrics", ",".join(metrics),
               "--kernel-name-base", "demangled", "--kernel-name", KERNEL_FILTER,
               "--launch-count", "64" if passes else "1", "--export", str(report),
               "--force-overwrite", *run_args, "--only", kid]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            said = done.stdout + done.stderr
            hint = (" (the GPU's performance counters need permission: run as root, or see "
                    "NVIDIA's ERR_NVGPUCTRPERM page)" if "ERR_NVGPUCTRPERM" in said else "")
            raise ProfileError(f"ncu failed on '{kid}'{hint}: {said.strip()[-300:]}", 3)
        raw = subprocess.run([ncu, "--import", f"{report}.ncu-rep", "--csv", "--page", "raw",
                              "--print-units", "base"], capture_output=True, text=True)
        if raw.returncode != 0:
            raise ProfileError(f"ncu could not read its report for '{kid}'", 3)
        new_rows += kernel_rows(step, kid, name, launches(raw.stdout, set(metrics)), run, passes)
    return new_rows, (run["type"], run["rows"], run["cols"])


def selected(facts, shapes=None, types=None, only=None):
    """[(argv, ids, group)]: the problems of the facts' [[profile]] groups of those shapes and
    element types (all when None), each with the kernels to profile (the group's ids, narrowed
    by `only`; None for every kernel)."""
    out = []
    for group in facts.profile:
        if group.ids and only and not set(group.ids) & only:
            continue  # --ids names none of this group's kernels
        ids = set(group.ids) & only if group.ids and only else set(group.ids) or only
        for run_argv, shape, type_, _ in group.problems():
            if (shapes is None or shape in shapes) and (types is None or type_ in types):
                out.append((run_argv, ids, group))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", nargs="?", help="NN (05) or NN-lab (07-lab)")
    parser.add_argument("--shapes", help="only the problems of these shapes (ROWSxCOLS,...)")
    parser.add_argument("--types", help="only the problems of these element types (f32,i8,...)")
    parser.add_argument("--ids", help="only these kernels (ids, comma-separated)")
    parser.add_argument("--exe", type=Path, help="the binary (default ./stepNN)")
    parser.add_argument("--out", type=Path, default=ROOT / "plots" / "data" / "profile.csv",
                        help="the CSV to update (default plots/data/profile.csv)")
    parser.add_argument("--merge", type=Path, metavar="CSV",
                        help="run nothing: this CSV's rows (measured elsewhere: make gpu-check) "
                             "replace the same problems' rows in --out")
    args = parser.parse_args(argv)
    if args.merge:
        return merge(args.merge, args.out)
    m = re.fullmatch(r"(\d{1,2})(-lab)?", args.step or "")
    if not m:
        print("profile: usage: scripts/profile.py NN (e.g. 05, or 09-lab for a lab; or make "
              "profile STEP=05)", file=sys.stderr)
        return 2
    step = f"step{int(m.group(1)):02d}{m.group(2) or ''}"
    try:
        facts = Course(ROOT).of(step)
        if facts is None or not facts.profile:
            raise ProfileError(f"{step}: no [[profile]] groups in its facts (step.toml or "
                               "lab/lab.toml) to say what to profile", 2)
        exe = args.exe or ROOT / step
        if not exe.exists():
            raise ProfileError(f"{exe} not found: build it first (make {step}, or make profile "
                               f"STEP={args.step})", 2)
        ncu = find_ncu()
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode != 0:
            raise ProfileError("a CUDA device is needed to profile (nvidia-smi finds none)", 3)
        shapes = {parse_shape(s) for s in args.shapes.split(",")} if args.shapes else None
        types = set(args.types.split(",")) if args.types else None
        only = set(args.ids.split(",")) if args.ids else None
        pending = {}
        with tempfile.TemporaryDirectory(prefix="profile-") as tmp:
            for run_argv, ids, group in selected(facts, shapes, types, only):
                metrics = group.metrics or PROFILE_METRICS
                rows, problem = profile_problem(exe, ncu, step, run_argv, metrics, ids,
                                                group.passes, tmp)
                combine(pending, problem, rows, ids)
        total = 0
        for problem, (got, ids) in pending.items():
            replace_rows(args.out, list(got.values()), step, problem, ids)
            total += len(got)
    except (FactsError, ValueError, ProfileError) as e:
        print(f"profile: {e}", file=sys.stderr)
        return getattr(e, "code", 2)  # a bad fact or argument: 2
    if not total:
        print(f"profile: nothing of {step} matches --shapes/--types/--ids", file=sys.stderr)
        return 2
    print(f"profile: {total} rows of {step} written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
