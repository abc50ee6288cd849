"""What `make bench` runs: the problems of every built binary, from the facts of its step
(steps/NN_name/step.toml [[sweep]] groups, lab/lab.toml's for stepNN-lab, steps/course.toml's
exercises, a step's peers script), with a guess of their time (the model of plots/README.md,
"What the sweep runs, and how long it takes") and the cut into parts. Standard library only.
"""

import argparse
import math
from pathlib import Path

import peers
from facts import DEFAULT_TYPE, parse_shapes

PEERS_MODULE = Path(peers.__file__).resolve()  # times the steps' [[peers]] problems
PROBLEM = ("step", "type", "rows", "cols", "batch")  # the CSV columns that make a Problem.key

START_S = 0.6               # process, CUDA context, cuBLAS handle
FILL_S_PER_GB = 0.3         # bit patterns (16 threads) and the pageable host-to-device copy
REFERENCE_S_PER_GB = 0.6    # the CPU transpose (first touch of its buffer included)
CHECK_S_PER_GB = 0.25       # per kernel: device-to-host copy and the compare
TIMED_GBPS = 1500           # the kernels' average bandwidth over the timed repetitions
PEERS_S = 60.0              # one run of a peers script (import, 16 problems)
DEFAULT_KERNELS = 8         # a binary with no facts and never measured: 6 kernels, 2 copies
PART_LIMIT_S = 5 * 60       # what --dry-run aims a part at: well under a 10-minute command
REFERENCES = 2              # the copies the harness times before a binary's kernels

# Fewer timed repetitions where one matrix passes this size: the median of 20 runs of several
# milliseconds each is already steady, and the sweep's time goes elsewhere.
BIG_BYTES = 1 << 30
BIG_REPS = 20
DEFAULT_REPS, DEFAULT_WARMUP = 50, 5  # the binaries' own defaults


class Problem:
    """One problem of the sweep: a binary (step01, step07-lab, bench_ex01_solution, pytorch)
    with its arguments. It runs --runs times."""

    def __init__(self, binary, argv, shape=(0, 0), type_=DEFAULT_TYPE, batch=1,
                 source=None, elem_bytes=4, kernels=DEFAULT_KERNELS, peers=None):
        self.binary, self.argv, self.source, self.peers = binary, list(argv), source, peers
        self.rows, self.cols = shape
        self.type, self.batch = type_, batch
        self.nbytes = self.rows * self.cols * batch * elem_bytes
        self.kernels = kernels
        mode = option_value(self.argv, "--mode")
        self.label = f"{binary} ({source})" if peers else \
            f"{binary} {self.rows}x{self.cols} {type_}" + (f" ({mode})" if mode else "") + \
            (f" batch {batch}" if batch != 1 else "")

    @property
    def key(self):
        """Its rows' PROBLEM columns in the CSV (see bench.merge())."""
        return (self.binary, self.type, str(self.rows), str(self.cols), str(self.batch))

    def reps(self, args):
        if args.reps:
            return args.reps
        if option_value(self.argv, "--reps"):
            return int(option_value(self.argv, "--reps"))
        return BIG_REPS if self.nbytes >= BIG_BYTES else DEFAULT_REPS

    def estimate_s(self, args, verify, kernels=None):
        """A guess of one run's wall time on an H100 host, with the kernel count last measured
        (or `kernels`)."""
        if self.peers:
            return PEERS_S
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
        later = self.estimate_s(args, args.verify_every_run, kernels)
        return self.estimate_s(args, True, kernels) + (args.runs - 1) * later


def option_value(argv, name):
    """The value of `--name V` or `--name=V` in argv, None when absent."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def parse_sizes(text):
    """--sizes: parse_shapes, its ValueError said as argparse says a bad value."""
    try:
        return parse_shapes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def parse_part(text):
    """"2/3" -> (2, 3)."""
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not K/N (e.g. 1/2)")
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"'{text}': K must be between 1 and N")
    return k, n


def problems_of(binary, groups, sizes, source, kernels=DEFAULT_KERNELS):
    """The Problems of a binary's sweep groups, each group's small problems first."""
    out = []
    for i, group in enumerate(groups, 1):
        found = group.problems()
        found.sort(key=lambda p: (group.types.index(p[2]), p[1][0] * p[1][1], p[1]))
        for argv, shape, type_, batch in found:
            out.append(Problem(binary, argv, shape, type_, batch, f"{source} [[sweep]] {i}",
                               sizes.get(type_, 4), kernels))
    return out


def plan(course, binaries, sizes, wanted=None, peers_ok=None):
    """Every problem, in the order the runs go: each step, then its lab; then the exercises
    and the peers scripts. `binaries`: the names that are built; `sizes`: {type: bytes}
    (from a binary's --list); `wanted`: what --steps asked for (None: everything);
    `peers_ok(path)`: whether a peers script can run here (its imports work)."""
    problems, notes = [], []
    for binary, facts in course.binaries.items():
        if binary not in binaries:
            if facts.is_lab and facts.sweep and (wanted is None or binary in wanted
                                                 or "labs" in wanted):
                notes.append(f"note: {binary} skipped: it is not built (make labs)")
            continue
        problems += problems_of(binary, facts.sweep, sizes, facts.shown,
                                REFERENCES + len(facts.kernels))
    for binary, group in course.exercises.items():
        if binary in binaries:
            problems += problems_of(binary, [group], sizes, "steps/course.toml")
    # The peers: every step's [[peers]] problems in one run of plots/peers.py (one import of
    # torch, each problem compiled once), then any step's own peers script.
    peer_problems = peers.facts_problems(course)
    scripts = [(PEERS_MODULE, ["--problems", ",".join(map(str, peer_problems))])] \
        if peer_problems else []
    scripts += [(f.peers, []) for f in course.lessons().values() if f.peers and f.peers.exists()]
    for script, argv in scripts:
        if wanted is not None and "pytorch" not in wanted:
            continue
        try:
            shown = script.relative_to(course.root).as_posix()
        except ValueError:
            shown = str(script)
        if peers_ok is None or peers_ok(script):
            # Its rows' step is the library it times: "pytorch" (peers.py, peers_pytorch.py).
            problems.append(Problem("pytorch", argv, source=shown, peers=script))
        else:
            notes.append(f"note: {shown} skipped: its imports fail here (torch)")
    # The same binary and arguments twice (two groups naming one problem) runs once; two steps'
    # peers scripts of one library are two problems.
    seen, unique = set(), []
    for p in problems:
        key = (p.binary, same_options(p.argv), p.peers)
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique, notes


def same_options(argv):
    """argv as a value that ignores the order of its `--option value` pairs."""
    names, values = argv[0::2], argv[1::2]
    if len(argv) % 2 or not all(n.startswith("--") for n in names):
        return tuple(argv)
    return tuple(sorted(zip(names, values)))


def count_kernels(problems, header, rows):
    """Sets each problem's kernel count (copies and cuBLAS included) from the CSV's last
    measurement of that problem, else of that binary and type (else it keeps the count of its
    facts), for the time estimate."""
    if header is None:
        return
    col = {name: i for i, name in enumerate(header)}
    exact, per_type, peer_rows = {}, {}, set()
    name = "id" if "id" in col else "kernel"
    for r in rows:
        key = tuple(r[col[k]] for k in PROBLEM)
        exact.setdefault(key, set()).add(r[col[name]])
        per_type.setdefault(key[:2], set()).add(r[col[name]])
        if key[0] == "pytorch":
            peer_rows.add((r[col[name]],) + key[1:])
    for p in problems:
        found = exact.get(p.key) or per_type.get(p.key[:2])
        if p.peers:  # one run: every shape and type of the script
            found = peer_rows
        if found:
            p.kernels = len(found)


def split_parts(problems, args, n):
    """n contiguous slices of the plan of about equal estimated time. The cut ignores the kernel
    counts read from the CSV, which change as soon as part 1 has written its rows: every
    invocation of one sweep must cut the plan at the same places. The peers, always last in the
    plan, cost nothing here, so the cut is the same with --no-pytorch as without it."""
    costs = [0.0 if p.peers else p.estimate_all_s(args, kernels=DEFAULT_KERNELS)
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


def print_plan(problems, all_problems, args, course):
    """The kernels each binary's facts name, the problems with their estimates, and how the
    whole plan splits into parts."""
    for binary in dict.fromkeys(p.binary for p in problems):
        facts = course.of(binary)
        if facts:
            print(f"  {binary}: {len(facts.kernels)} kernels ({', '.join(facts.kernels)}) "
                  f"[{facts.shown}]")
    for i, p in enumerate(problems, 1):
        once, later = p.estimate_s(args, True), p.estimate_s(args, args.verify_every_run)
        extra = f" + {args.runs - 1} x {later:.1f} s" if args.runs > 1 else ""
        source = f"  [{p.source}]" if p.source else ""
        print(f"  {i:3d}. {p.label:<42} ~{once:.1f} s{extra}{source}")
    total = sum(p.estimate_all_s(args) for p in all_problems)
    rows = sum(p.kernels * args.runs for p in problems)
    print(f"rows it will write: about {rows} (each problem's kernel count as last measured, "
          "else as its facts say, times its runs)")
    n = max(1, math.ceil(total / PART_LIMIT_S))
    if n == 1:
        return
    print(f"the whole plan: {len(all_problems)} problems, roughly {fmt_duration(total)} for "
          f"{args.runs} runs; split it in {n} (about {PART_LIMIT_S / 60:.0f} min or less each): "
          f"--part K/{n}")
    for k, part in enumerate(split_parts(all_problems, args, n), 1):
        if part:
            cost = sum(p.estimate_all_s(args) for p in part)
            print(f"  --part {k}/{n}: {len(part)} problems, {part[0].label} .. "
                  f"{part[-1].label}, roughly {fmt_duration(cost)}")
