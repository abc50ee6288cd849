#!/usr/bin/env python3
"""`make gpu-check`: the whole course checked on a GPU machine, every GPU at once.

It builds once, then runs the parts over the visible GPUs: one part per GPU at a time (its
CUDA_VISIBLE_DEVICES names the GPUs by UUID), a part of several GPUs on a set of free GPUs; no
part, a timed one least of all, shares a GPU with another. Each part has a time limit; a part
whose estimate would pass the budget (--budget, seconds from the start) is skipped, and the
summary gives the command that runs it alone. Before running it prints the plan (which part on
which GPU, when, from the estimates); while running, a line as each part starts and ends.

The parts come from the facts, not from a list kept here:
  - every step's folder: `tests-NN` (its GPU tests), `labs-NN` (its lab's tests), `bench-NN`
    (its [[sweep]] and its lab's, plots/bench.py) and `profile-NN` / `profile-NN-lab` (its
    [[profile]], scripts/profile.py); a step's `[check]` table gives their estimates
    (`seconds`), how many GPUs they need (`gpus`) and parts of its own (`[[check.parts]]`);
  - steps/course.toml's [[check]] (the course-wide parts: common/'s tests, the sanitizers, the
    exercises' and PyTorch's benchmarks) and exercises/grader/check.toml's (the grader).
The quick set (the default) is every part not marked `full = true`; --full adds the rest.

Writes OUT (default BUILD/gpu-check): summary.txt (printed last) and summary.json (each part's
status, seconds, GPUs and key numbers), and gpu-check.tar.gz with every part's log and CSVs.
Exit code: 0 when every part that ran passed, 1 when one failed, 2 a bad argument. --help lists
the options.
"""

import argparse
import fnmatch
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plots"))
from rows import read_csv  # noqa: E402  (the course's reader of its CSV rows)
# Never NVLink multicast (NVLS): on a shared host it can put every GPU out of service.
SAFE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
            "NVSHMEM_DISABLE_NVLS": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "PYTHONUNBUFFERED": "1"}
PART_KEYS = {"name", "what", "command", "gpus", "seconds", "limit", "full", "after", "each"}


class Part:
    """One job of the check: a shell command on `gpus` GPUs (0: none; "all": every one)."""

    def __init__(self, name, command, gpus=1, seconds=60, limit=None, full=False,
                 after=(), what="", step=""):
        self.name, self.command, self.gpus, self.seconds = name, command, gpus, float(seconds)
        # The limit: twice the estimate, and never under a minute more than it.
        self.limit = float(limit) if limit else max(2 * self.seconds, self.seconds + 60)
        self.full, self.after = full, list(after)
        self.what, self.step = what, step

    def need(self, ngpus):
        return ngpus if self.gpus == "all" else int(self.gpus)


class FactsError(Exception):
    pass


def parts_of(entries, where, step=""):
    """Part objects from [[check]] / [[check.parts]] entries; `each` makes one part per item."""
    out = []
    for i, e in enumerate(entries, 1):
        unknown = set(e) - PART_KEYS
        if unknown or "name" not in e or "command" not in e:
            raise FactsError(f"{where}: check part {i}: needs name and command"
                             + (f"; unknown key {', '.join(sorted(unknown))}" if unknown else ""))
        for item in e.get("each", [None]):
            sub = (lambda s: s.replace("{each}", item)) if item else (lambda s: s)
            seconds = e.get("seconds", 60)  # a table: each item's own estimate
            seconds = seconds.get(item, 60) if isinstance(seconds, dict) else seconds
            out.append(Part(sub(e["name"]), sub(e["command"]), e.get("gpus", 1), seconds,
                            e.get("limit"), e.get("full", False), e.get("after", ()),
                            sub(e.get("what", "")), step))
    return out


def read_toml(path):
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise FactsError(f"{path.relative_to(ROOT)}: {e}")


def course_parts(root=ROOT):
    """Every part the facts name, in a stable order: the build first."""
    parts = [Part("build", "cmake -S . -B {build} {generator} -DCMAKE_BUILD_TYPE=Release "
                  "-DCMAKE_CUDA_ARCHITECTURES={arch} >/dev/null && cmake --build {build} "
                  "-j {cores} --target all {labs}", gpus=0, seconds=60, limit=900,
                  what="configure and build the course (and the labs, where a part needs them)")]
    for folder in sorted((root / "steps").glob("[0-9][0-9]_*")):
        nn = folder.name[:2]
        facts = read_toml(folder / "step.toml")
        check = facts.get("check", {})
        secs = check.get("seconds", {})
        gpus = check.get("gpus", 1)
        lab = folder / "lab" / "lab.toml"
        lab_facts = read_toml(lab) if lab.exists() else {}
        parts.append(Part(f"tests-{nn}", "ctest --test-dir {build} -L '^gpu$' -R "
                          f"'^step{nn}[._]' -j {{jobs}} --output-on-failure --timeout 600",
                          gpus, secs.get("tests", 30), what=f"step {nn}'s GPU tests", step=nn))
        if lab.exists():
            # A lab's runs across GPUs (its .gpus. tests) can take many minutes: FULL=1's.
            parts.append(Part(f"labs-{nn}", "ctest --test-dir {build} -L '^lab' -R "
                              f"'^step{nn}-' -E '[.]gpus[.]' -j {{jobs}} --output-on-failure "
                              "--timeout 600",
                              gpus, secs.get("labs", 60), what=f"step {nn}'s lab tests", step=nn))
        if facts.get("sweep") and "bench" not in check.get("own", []):
            steps = nn + (f",{nn}-lab" if lab_facts.get("sweep") else "")
            parts.append(Part(f"bench-{nn}", "python3 plots/bench.py --build {build} --steps "
                              f"{steps} --no-pytorch --out {{out}}/bench.csv --log {{out}}/runs.log",
                              gpus, secs.get("bench", 120), full=True,
                              what=f"step {nn}'s sweep, 3 runs (bench.csv rows)", step=nn))
        for which, f in ((nn, facts), (f"{nn}-lab", lab_facts)):
            if f.get("profile"):
                binary = f"step{which}"
                parts.append(Part(f"profile-{which}", f"python3 scripts/profile.py {which} "
                                  f"--exe {{build}}/bin/{binary} --out {{out}}/profile.csv",
                                  gpus, secs.get("profile" + which[2:], 90),
                                  full=True, what=f"Nsight Compute counters of {binary}",
                                  step=nn))
        parts += parts_of(check.get("parts", []), f"{folder.name}/step.toml", nn)
    parts += parts_of(read_toml(root / "steps" / "course.toml").get("check", []),
                      "steps/course.toml")
    grader = root / "exercises" / "grader" / "check.toml"
    if grader.exists():
        parts += parts_of(read_toml(grader).get("check", []), "exercises/grader/check.toml")
    return after_build(parts)


def after_build(parts):
    """@p parts (the build first), each other one after the build; names unique, and each name
    that `after` gives a part's."""
    names = [p.name for p in parts]
    for p in parts[1:]:
        p.after = ["build"] + p.after
    for p in parts:
        if names.count(p.name) > 1:
            raise FactsError(f"two parts are named {p.name}")
        for a in p.after:
            if a not in names:
                raise FactsError(f"{p.name}: after: no part is named {a}")
    return parts


def select(parts, full=False, patterns=None, step=None, labs=False):
    """The parts asked for, with what they must come after (the build at least)."""
    def wanted(p):
        if p.name == "build":
            return False
        if patterns:  # "quick" names the quick set: PARTS=quick,profile-08
            return any(fnmatch.fnmatchcase(p.name, pat) for pat in patterns) or \
                ("quick" in patterns and not p.full)
        if step and p.step != step:
            return False
        if labs and "lab" not in p.name:
            return False
        return full or not p.full
    chosen = {p.name for p in parts if wanted(p)}
    by_name = {p.name: p for p in parts}
    todo = list(chosen)
    while todo:  # what a chosen part comes after is chosen too
        for a in by_name[todo.pop()].after:
            if a not in chosen:
                chosen.add(a)
                todo.append(a)
    return [p for p in parts if p.name in chosen]


def schedule(parts, ngpus, budget, start, wait, now):
    """Runs `parts` on GPUs 0..ngpus-1 (on one GPU the shortest first, on several the most
    GPU-seconds first) among those ready, one part per GPU
    at a time, a part of N GPUs on N free ones. `start(part, gpus, limit)` starts it, `wait()`
    returns (part, status) of the next to end, `now()` the seconds since the start. Returns
    {name: (status, start, end, gpus)}; a part is skipped when it needs more GPUs than there
    are, when its estimate would pass the budget, or when one it comes after did not pass."""
    result, free, running = {}, list(range(ngpus)), {}
    # On one GPU the parts run in turn: the shortest first, so that most of them fit the
    # budget. On several, the most GPU-seconds first, so that the long ones do not come last.
    pending = sorted(parts, key=lambda p: p.seconds if ngpus == 1 else
                     -max(1, p.need(ngpus)) * p.seconds)
    while pending or running:
        progressed, hold = False, None
        for p in list(pending):
            done = [result.get(a, (None,))[0] for a in p.after]
            n = p.need(ngpus)
            failed = [a for a, d in zip(p.after, done) if d not in (None, "passed")]
            if failed:
                skip = f"{failed[0]} did not pass"
            elif n > ngpus:
                skip = f"needs {n} GPU{'s' if n > 1 else ''}, {ngpus} here"
            elif now() + p.seconds > budget:
                skip = f"its estimate ({p.seconds:.0f} s) would pass the budget ({budget:.0f} s)"
            elif None in done:
                continue
            elif n > len(free) or (hold is not None and now() + p.seconds > hold):
                if n > len(free) and n > 1 and hold is None:
                    # The first part of several GPUs that must wait: the GPUs that free up are
                    # held for it (later one-GPU parts would take them one at a time and leave it
                    # to the end); a later part starts only where it ends before it can start.
                    ends = sorted(t0 + q.seconds for gpus, t0, q in running.values() for _ in gpus)
                    hold = ends[n - len(free) - 1]
                continue
            else:
                skip = None
                gpus, free[:] = free[:n], free[n:]
                running[p.name] = (gpus, now(), p)
                start(p, gpus, min(p.limit, budget - now()))
            if skip:
                result[p.name] = ("skipped: " + skip, now(), now(), [])
            pending.remove(p)
            progressed = True
        if not running and not progressed:  # only parts that wait for each other are left
            for p in pending:
                result[p.name] = ("skipped: what it comes after never ran", now(), now(), [])
            break
        if running and (not progressed or not pending):
            p, status = wait()
            gpus, t0, _ = running.pop(p.name)
            free = sorted(free + gpus)
            result[p.name] = (status, t0, now(), gpus)
    return result


def simulate(parts, ngpus, budget):
    """The plan: schedule() on the estimates, no command run."""
    clock, ends = [0.0], []

    def start(p, gpus, limit):
        ends.append((clock[0] + min(p.seconds, limit), p))

    def wait():
        ends.sort(key=lambda e: e[0])
        t, p = ends.pop(0)
        clock[0] = t
        return p, "passed"
    return schedule(parts, ngpus, budget, start, wait, lambda: clock[0])


class Runner:
    """Runs the parts for real: each in its own process group, its output in OUT/parts/NAME/."""

    def __init__(self, gpus, out, fields, log=print):
        self.gpus, self.out, self.fields, self.log = gpus, out, fields, log
        self.t0 = time.monotonic()
        self.procs = {}  # name -> (Popen, part, deadline, the limit as the summary says it)

    def now(self):
        return time.monotonic() - self.t0

    def start(self, part, gpus, limit):
        folder = self.out / "parts" / part.name
        folder.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, **SAFE_ENV)
        uuids = [self.gpus[i][0] for i in gpus]
        if part.need(len(self.gpus)) > 0:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(uuids)
        fields = dict(self.fields, out=str(folder), gpus=str(len(gpus)),
                      jobs=str(max(2, int(self.fields["cores"]) // max(1, len(self.gpus)))))
        command = part.command.format(**fields)
        where = ", ".join(f"GPU {i}" for i in gpus) or "no GPU"
        with open(folder / "log.txt", "w") as log:
            log.write(f"# {part.name}: {command}\n# on {where} {uuids}, limit {limit:.0f} s\n")
            log.flush()
            proc = subprocess.Popen(["bash", "-c", command], cwd=self.fields["root"], env=env,
                                    stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        self.procs[part.name] = (proc, part, self.now() + limit,
                                 f"{limit:.0f} s" + (", the budget's end" if limit < part.limit
                                                     else ""))
        self.log(f"[{self.now():4.0f} s] start {part.name} on {where} (about {part.seconds:.0f} s,"
                 f" limit {limit:.0f} s)")

    def kill(self, proc):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=10)
                return
            except subprocess.TimeoutExpired:
                continue

    def wait(self):
        while True:
            for name, (proc, part, deadline, limit) in list(self.procs.items()):
                rc = proc.poll()
                if rc is None and self.now() < deadline:
                    continue
                self.kill(proc)  # past its limit; or its leftovers (a server it started)
                status = (f"FAILED: time limit ({limit})" if rc is None else
                          "passed" if rc == 0 else f"FAILED: exit {rc}")
                del self.procs[name]
                self.log(f"[{self.now():4.0f} s] end   {name}: {status}")
                return part, status
            time.sleep(0.05)

    def stop_all(self):
        for proc, *_ in self.procs.values():
            self.kill(proc)


def key_numbers(folder):
    """A few numbers from a part's log and CSVs: tests passed, sanitizer errors, % of copy..."""
    try:
        log = (folder / "log.txt").read_text(errors="replace")
    except OSError:
        return ""
    notes = []
    m = re.findall(r"(\d+)% tests passed(?:, (\d+) tests? failed)? out of (\d+)", log)
    if m:
        _, failed, total = m[-1]
        failed = failed or "0"
        skipped = len(re.findall(r"\*\*\*Skipped|Not Run", log))
        notes.append(f"{int(total) - int(failed) - skipped} tests passed, {failed} failed, "
                     f"{skipped} skipped")
    errors = [int(n) for n in re.findall(r"(?:ERROR|RACECHECK) SUMMARY: (\d+)", log)]
    if errors and folder.name.startswith("sanitize"):  # not the grader's planted errors
        notes.append(f"sanitizer errors: {sum(errors)} in {len(errors)} runs")
    m = re.findall(r"unit checks: \d+/\d+; cases: .*", log)  # the grader's self-test
    if m:
        notes.append(m[-1])
    for csv_path in sorted(folder.glob("*.csv")):
        rows = read_csv(csv_path)
        pct = [float(r["pct_copy"]) for r in rows if r.get("pct_copy") not in (None, "", "-")]
        if pct:
            notes.append(f"{csv_path.name}: {len(rows)} rows, % of copy {min(pct):.1f}-"
                         f"{max(pct):.1f}")
        elif rows:
            notes.append(f"{csv_path.name}: {len(rows)} rows")
    problem = ""
    for line in log.splitlines():  # step 10's summary: its best against NCCL's and PyTorch's best
        if re.match(r"\d+ GPUs, ", line):
            problem = line.split(":")[0]
        elif re.match(r"\s*step10(-lab)?'s best, ", line):
            notes.append(f"{problem}: {line.strip()}")
    return "; ".join(notes)


def visible_gpus():
    """[(uuid, name)] of the GPUs CUDA_VISIBLE_DEVICES leaves visible (all, without it)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    gpus = [[x.strip() for x in line.split(",", 2)] for line in out.stdout.splitlines() if line]
    seen = os.environ.get("CUDA_VISIBLE_DEVICES")
    if seen is not None:
        keep = [s.strip() for s in seen.split(",") if s.strip()]
        gpus = [g for k in keep for g in gpus if k in (g[0], g[1]) or g[1].startswith(k)]
    return [(uuid, name) for _, uuid, name in gpus]


def fmt_plan(result, parts, gpus):
    by = {p.name: p for p in parts}
    lines = []
    for name, (status, t0, t1, on) in sorted(result.items(), key=lambda kv: (kv[1][1], kv[0])):
        where = ",".join(str(i) for i in on) if on else ("-" if by[name].need(len(gpus)) else
                                                          "host")
        if status.startswith("skipped"):
            lines.append(f"  {name:26} {status}")
        else:
            lines.append(f"  {name:26} GPU {where:8} {t0:5.0f} -> {t1:5.0f} s  {by[name].what}")
    return lines


def summarize(result, parts, gpus, out, elapsed, make_args):
    rows, lines = [], []
    device = gpus[0][1] if gpus else "no GPU"
    lines.append(f"gpu-check: {len(gpus)} x {device}, {elapsed:.0f} s")
    lines.append(f"{'part':26} {'status':34} {'s':>5}  {'GPUs':8} key numbers")
    failed = skipped = 0
    for p in parts:
        status, t0, t1, on = result.get(p.name, ("not run", 0, 0, []))
        where = ",".join(str(i) for i in on) or "-"
        numbers = key_numbers(out / "parts" / p.name) if on or p.name == "build" else ""
        if status.startswith("skipped"):
            skipped += 1
            numbers = f"run it alone: make gpu-check PARTS={p.name}"
        elif status != "passed":
            failed += 1
        lines.append(f"{p.name:26} {status[:34]:34} {t1 - t0:5.0f}  {where:8} {numbers}")
        rows.append({"part": p.name, "status": status, "seconds": round(t1 - t0, 1),
                     "gpus": [gpus[i][0] for i in on], "numbers": numbers, "what": p.what})
    ran = len(parts) - skipped
    lines.append(f"gpu-check: {ran - failed} passed, {failed} failed, {skipped} skipped"
                 + (f" ({make_args})" if make_args else ""))
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    (out / "summary.json").write_text(json.dumps(
        {"device": device, "gpus": [g[0] for g in gpus], "seconds": round(elapsed, 1),
         "parts": rows}, indent=1) + "\n")
    return lines, failed


def archive(out):
    """Every part's log and CSV in one archive, beside the summary."""
    path = out / "gpu-check.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for f in [out / "summary.txt", out / "summary.json"] + sorted((out / "parts").rglob("*")):
            if f.is_file() and (f.suffix in (".txt", ".csv", ".log", ".json")):
                tar.add(f, arcname=f.relative_to(out).as_posix())
    return path


def merge(path):
    """--merge: the archive's bench rows into plots/data/bench.csv, its profile rows into
    plots/data/profile.csv (each problem's rows replace the same problem's on that device)."""
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(path) as tar:
        tar.extractall(tmp, filter="data")
        bench = sorted(Path(tmp).rglob("bench.csv")) + sorted(Path(tmp).rglob("peers.csv"))
        profile = sorted(Path(tmp).rglob("profile.csv"))
        rc = 0
        if bench:
            rc |= subprocess.call([sys.executable, str(ROOT / "plots" / "bench.py"), "--merge"]
                                  + [str(b) for b in bench])
        for p in profile:
            rc |= subprocess.call([sys.executable, str(ROOT / "scripts" / "profile.py"),
                                   "--merge", str(p)])
        if not bench and not profile:
            print(f"gpu-check: {path} holds no bench.csv, peers.csv or profile.csv")
        return rc


def arguments(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"),
                    help="the build folder (default $BUILD, else build)")
    ap.add_argument("--out", help="where the summary and the archive go (default BUILD/gpu-check)")
    ap.add_argument("--arch", default="native", help="CUDA architectures of the build")
    ap.add_argument("--full", action="store_true", help="every part, not only the quick set")
    ap.add_argument("--parts", help="only these parts (names or patterns: bench-*,tests-08; "
                    "quick: the quick set)")
    ap.add_argument("--step", help="only step NN's parts")
    ap.add_argument("--labs", action="store_true", help="only the labs' parts")
    ap.add_argument("--budget", type=float, default=0,
                    help="seconds for the whole; parts that would pass it are skipped")
    ap.add_argument("--list", action="store_true", help="print the parts and the plan only")
    ap.add_argument("--fake-gpus", type=int, default=0,
                    help="plan (or run) on N made-up GPUs: the self-test's, no GPU needed")
    ap.add_argument("--facts", type=Path, help="a TOML file of [[check]] parts to use instead "
                    "of the course's (the self-test's)")
    ap.add_argument("--merge", type=Path, metavar="ARCHIVE",
                    help="run nothing: merge an archive's CSVs into plots/data")
    ap.add_argument("--self-test", action="store_true", help="check the planner and the runner")
    args = ap.parse_args(argv)
    if args.step:
        if not re.fullmatch(r"\d{1,2}", args.step):
            ap.error(f"--step {args.step}: a step number, like 08")
        args.step = f"{int(args.step):02d}"
    return args


def main(argv=None):
    args = arguments(argv)
    if args.self_test:
        return self_test()
    if args.merge:
        return merge(args.merge)
    try:
        if args.facts:
            parts = after_build([Part("build", "true", gpus=0, seconds=0)] +
                                parts_of(read_toml(args.facts).get("check", []), str(args.facts)))
        else:
            parts = course_parts()
    except FactsError as e:
        print(f"gpu-check: {e}", file=sys.stderr)
        return 2
    patterns = [s for s in (args.parts or "").split(",") if s]
    parts = select(parts, args.full, patterns, args.step, args.labs)
    if patterns and len(parts) <= 1:
        print(f"gpu-check: --parts {args.parts}: no part of that name (--list lists them)",
              file=sys.stderr)
        return 2
    gpus = [(f"GPU-fake-{i}", "made-up GPU") for i in range(args.fake_gpus)] or visible_gpus()
    if not gpus and not args.list:
        print("gpu-check: no CUDA device is visible (nvidia-smi finds none): nothing to check "
              "here; --list shows the plan", file=sys.stderr)
        return 3
    budget = args.budget or float("inf")
    plan = simulate(parts, len(gpus), budget)
    print(f"gpu-check: {len(parts)} parts on {len(gpus)} GPU(s)"
          + (f" ({gpus[0][1]})" if gpus else " (no GPU visible: only the build can run)")
          + (f", budget {budget:.0f} s" if args.budget else "") + ". The plan, from the estimates:")
    for line in fmt_plan(plan, parts, gpus):
        print(line)
    if args.list:
        return 0
    out = Path(args.out or Path(args.build) / "gpu-check")
    out.mkdir(parents=True, exist_ok=True)
    for old in (out / "parts").glob("*/*"):  # nothing of an earlier run is taken for this one's
        old.unlink()
    cores = os.cpu_count() or 2
    fields = {"root": str(ROOT), "build": args.build, "arch": args.arch, "cores": str(cores),
              "generator": "-G Ninja" if subprocess.call(
                  ["sh", "-c", "command -v ninja"], stdout=subprocess.DEVNULL) == 0 else "",
              # The labs' binaries, where a part runs a lab (its tests, or bench.py's NN-lab rows).
              "labs": "labs" if any("lab" in p.name or "-lab" in p.command for p in parts) else ""}
    runner = Runner(gpus, out, fields)
    try:
        result = schedule(parts, len(gpus), budget, runner.start, runner.wait, runner.now)
    except KeyboardInterrupt:
        runner.stop_all()
        print("gpu-check: stopped; the parts still running were ended", file=sys.stderr)
        return 130
    make_args = " ".join(f"{k}={v}" for k, v in (("FULL", "1" if args.full else ""),
                         ("PARTS", args.parts), ("STEP", args.step),
                         ("LAB", "1" if args.labs else ""),
                         ("BUDGET", f"{args.budget:.0f}" if args.budget else "")) if v)
    lines, failed = summarize(result, parts, gpus, out, runner.now(), make_args)
    tar = archive(out)
    print("\n".join(lines))
    print(f"gpu-check: summary in {out / 'summary.txt'}, logs and CSVs in {tar} "
          f"(python3 scripts/gpu_check.py --merge {tar} puts its rows into plots/data)")
    return 1 if failed else 0


def self_test():
    """The planner on made-up GPUs and parts, then the runner on short shell commands."""
    problems = []

    def check(cond, what):
        if not cond:
            problems.append(what)

    def overlaps(result):
        spans = [(g, t0, t1, n) for n, (s, t0, t1, on) in result.items() for g in on]
        return [(a[3], b[3]) for i, a in enumerate(spans) for b in spans[i + 1:]
                if a[0] == b[0] and a[1] < b[2] - 1e-9 and b[1] < a[2] - 1e-9]

    # 1. The plan: 4 GPUs, parts of 1, 2 and all GPUs, one too long for the budget, one that
    #    needs more GPUs than there are, one after a part that fails.
    parts = [Part("build", "", 0, 10), Part("a", "", 1, 100), Part("b", "", 1, 80),
             Part("c", "", 2, 50), Part("d", "", "all", 30), Part("e", "", 1, 1000),
             Part("f", "", 8, 10), Part("g", "", 1, 40), Part("h", "", 1, 20, after=["g"])]
    after_build(parts)
    plan = simulate(parts, 4, 300)
    check(not overlaps(plan), f"the plan puts two parts on one GPU at once: {overlaps(plan)}")
    check(plan["e"][0].startswith("skipped: its estimate"), f"e not skipped: {plan['e']}")
    check(plan["f"][0] == "skipped: needs 8 GPUs, 4 here", f"f: {plan['f']}")
    check(all(plan[n][0] == "passed" for n in "abcdgh"), f"plan: {plan}")
    check(all(plan[n][1] >= plan["build"][2] for n in "abcdg"), "a part began before the build")
    check(plan["h"][1] >= plan["g"][2], "h began before g ended")
    check(len(plan["d"][3]) == 4 and len(plan["c"][3]) == 2, "wrong GPU counts")
    check(max(t1 for _, _, t1, _ in plan.values()) <= 300, "the plan passes the budget")
    one = simulate(parts, 1, 300)
    check(not overlaps(one) and one["c"][0].startswith("skipped: needs 2"), f"one GPU: {one}")
    # A part of 2 GPUs behind four of one GPU starts on the first two that free up, before the
    # shorter one-GPU parts after it.
    held = [Part("build", "", 0, 10)] + [Part(f"p{i}", "", 1, 100 + 10 * i) for i in range(4)] + \
        [Part("pair", "", 2, 45)] + [Part(f"s{i}", "", 1, 40) for i in range(6)] + \
        [Part("tiny", "", 1, 5)]
    after_build(held)
    plan_held = simulate(held, 4, 1000)
    check(plan_held["pair"][1] == plan_held["p1"][2], f"the 2-GPU part waited: {plan_held}")
    check(plan_held["tiny"][1] == plan_held["p0"][2], f"tiny did not fill the wait: {plan_held}")

    # 2. The runner, on 2 made-up GPUs: a pass, a failure, a part past its limit, a part that
    #    comes after the failure, a part too long for the budget; then the summary.
    facts = """
[[check]]
name = "quick"
command = "sleep 0.2; echo '100% tests passed, 0 tests failed out of 3'"
seconds = 1
[[check]]
name = "broken"
command = "sleep 0.1; exit 3"
seconds = 1
[[check]]
name = "slow"
command = "sleep 30"
seconds = 1
limit = 1
[[check]]
name = "later"
command = "true"
seconds = 1
after = ["broken"]
[[check]]
name = "huge"
command = "true"
seconds = 100000
"""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "facts.toml"
        path.write_text(facts)
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, __file__, "--facts", str(path), "--fake-gpus", "2",
                            "--budget", "60", "--out", tmp + "/out", "--build", tmp],
                           capture_output=True, text=True, timeout=120)
        took = time.monotonic() - t0
        summary = (Path(tmp) / "out" / "summary.txt").read_text() if \
            (Path(tmp) / "out" / "summary.txt").exists() else ""
        data = json.loads((Path(tmp) / "out" / "summary.json").read_text()) if summary else {}
        status = {p["part"]: p["status"] for p in data.get("parts", [])}
        check(r.returncode == 1, f"runner exit {r.returncode}, not 1 (a part failed)")
        check(status.get("quick") == "passed", f"quick: {status.get('quick')}")
        check(status.get("broken") == "FAILED: exit 3", f"broken: {status.get('broken')}")
        check(status.get("slow", "").startswith("FAILED: time limit"), f"slow: {status}")
        check(status.get("later", "").startswith("skipped: broken did not pass"), f"{status}")
        check(status.get("huge", "").startswith("skipped: its estimate"), f"huge: {status}")
        check("run it alone: make gpu-check PARTS=huge" in summary, "no command for huge")
        check("3 tests passed, 0 failed" in summary, "the tests' numbers are not in the summary")
        check(summary.strip().endswith("2 passed, 2 failed, 2 skipped (BUDGET=60)"),
              f"last line: {summary.strip().splitlines()[-1] if summary else r.stderr}")
        check(took < 30, f"the part past its limit was not stopped ({took:.0f} s)")
        check((Path(tmp) / "out" / "gpu-check.tar.gz").exists(), "no archive")
        runs = {p["part"]: p for p in data.get("parts", [])}
        check(len(runs.get("quick", {}).get("gpus", [])) == 1, "quick did not get one GPU")
    if problems:
        for p in problems:
            print(f"gpu-check self-test: {p}", file=sys.stderr)
        return 1
    print("gpu-check self-test: the plan and the runner behave (9 parts on 4 and 1 GPUs, 6 parts"
          " run on 2 made-up GPUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
