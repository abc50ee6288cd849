#!/usr/bin/env python3
"""Self-test of the exercise grader (Python standard library only).

    python3 exercises/grader/selftest.py            no GPU needed, every case (make grader-selftest)
    python3 exercises/grader/selftest.py --quick    the cases of QUICK_CASES only (run by
                                                    `make test`, label cpu)
    python3 exercises/grader/selftest.py --gpu      on a machine with a CUDA device, as root
    python3 exercises/grader/selftest.py --unit     the fast checks only (seconds)

1. Unit checks of grade.py's and sandbox.py's pieces, and of the manifest against the course's
   test sources and the judge's checks. As root, the sandbox itself: an orphan that holds the
   output, a time limit, the course hidden, writes outside the scratch space refused, the timed
   runs' handshake. The GPU paths dry (canned outcomes instead of processes) and the rules that
   zero an exercise. Then (not with --unit) the judge against an independent model of the
   protocol, and the sanitizer runs' plumbing with stand-ins for the tool and the worker.
2. Grades each case of testdata/ (a submission made of the solutions or the skeletons, with some
   files replaced or removed: testdata/README.md) and checks the entries it expects. Without
   --gpu the grader runs with --no-gpu and the cases' "cpu" and "both" expectations are checked;
   with --gpu only the cases that have "gpu" expectations run, with those and "both". Hostile
   cases also check what must not have happened (a file written outside the sandbox, a
   results.json rewritten after the grader ended). All cases share one staged build.
Prints one line per case and a verdict table at the end; exits 1 on any unexpected outcome.
"""

import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GRADER_DIR = Path(__file__).resolve().parent
COURSE_DIR = GRADER_DIR.parent.parent
TESTDATA = GRADER_DIR / "testdata"
# What `make test` runs (--quick): the answers and the skeletons, graded end to end, and the two
# quickest hostile cases (a forged report, a submission that reads the course's answer). Every
# case, each hostile class and the broken answers, runs in `make grader-selftest`, which CI runs
# as well: on 2 cores the whole list would be the longest part of `make test`.
QUICK_CASES = ["solutions", "skeletons", "forged_report", "include_solution"]
sys.path.insert(0, str(GRADER_DIR))
sys.dont_write_bytecode = True  # no __pycache__ in the course's folders
import grade  # noqa: E402  (the module under test)
import sandbox  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Unit checks


def unit_checks():
    """[(name, ok, detail)] of fast checks that need no GPU."""
    out = []

    def check(name, ok, detail=""):
        out.append((name, bool(ok), detail))

    m = grade.load_manifest(GRADER_DIR / "manifest.json")
    points = [e["points"] for ex in m["exercises"] for e in ex["entries"]] + \
        [ex.get("sanitizer", {}).get("points", 0) for ex in m["exercises"]]
    check("manifest: points add up to 100", sum(points) == 100, "total %s" % sum(points))
    names = [e["name"] for ex in m["exercises"] for e in ex["entries"]]
    check("manifest: entry names are unique", len(names) == len(set(names)))
    vis = {e.get("visibility", "visible") for ex in m["exercises"] for e in ex["entries"]}
    vis.add(m["hidden_tests"].get("visibility", "after_published"))
    check("manifest: visibilities are Gradescope's", vis <= {"visible", "hidden", "after_due_date",
                                                            "after_published"}, str(vis))
    registry = (GRADER_DIR / "judge" / "cpu_checks.hpp").read_text()
    for ex in m["exercises"]:
        check("manifest %s: checks exist" % ex["id"], all(c in m["checks"] for c in ex["checks"]))
        for f in ex["files"]:
            for tree in ("exercises", "solutions"):
                check("%s/%s/%s exists" % (tree, ex["id"], f),
                      (COURSE_DIR / tree / ex["id"] / f).is_file())
        # Every test of the course's test file is an entry, and every entry that names one exists.
        tests_dir = COURSE_DIR / "exercises" / ex["id"] / "tests"
        sources = "".join(p.read_text() for p in tests_dir.glob("test_*.cu"))
        in_source = {"%s.%s" % s for s in re.findall(r"^TEST\((\w+),\s*(\w+)\)", sources, re.M)}
        in_manifest = {e["name"] for e in ex["entries"] if not e["name"].startswith("Grader.")}
        check("manifest %s: an entry for every test of the test file" % ex["id"],
              in_source == in_manifest,
              "only in source: %s; only in manifest: %s" % (sorted(in_source - in_manifest),
                                                            sorted(in_manifest - in_source)))
        for e in ex["entries"]:
            if e["kind"] == "check":
                check("manifest %s: the judge knows check %s" % (ex["id"], e["check"]),
                      '"%s"' % e["check"] in registry)
            if e["kind"] == "gpu":
                check("manifest %s: %s has problems" % (ex["id"], e["name"]),
                      "shapes" in e or "random" in e)
            check("manifest %s: %s is a GPU test exactly when its name says so"
                  % (ex["id"], e["name"]),
                  e["name"].startswith("Grader.") or (e["kind"] == "gpu") == grade.is_gpu_test(
                      e["name"]))

    src = ('// cublasSgeam in a comment\n#include "ex01.cuh"\n'
           'const char* s = "cublas"; /* new */ int x = 1\'000;\n'
           '#include <cublas_v2.h>\nint* p = new int;\n#include "../common/x.h"\n')
    code = grade.strip_comments(src, keep_strings=False)
    check("strip_comments: comments and strings go, lines stay",
          "cublasSgeam" not in code and '"cublas"' not in code
          and code.count("\n") == src.count("\n") and "1'000" in code)
    lib = grade.source_findings("f.cu", src, m["checks"]["no_library"]["source"])
    check("source check: a library include is found on its line",
          any(f.startswith("f.cu:4: includes a library header") for f in lib), "\n".join(lib))
    check("source check: comments and strings are not findings",
          not any(f.startswith(("f.cu:1:", "f.cu:3:")) for f in lib), "\n".join(lib))
    check("source check: an include from outside the folder is found",
          any(f.startswith("f.cu:6: includes a file from outside") for f in lib), "\n".join(lib))
    alloc = grade.source_findings("f.cu", src, m["checks"]["no_allocation"]["source"])
    check("source check: new is found in code, not in a comment",
          [f.split(":")[1] for f in alloc] == ["5"], "\n".join(alloc))
    tile = grade.source_findings("s.cu", "extern __shared__ float t[];\n// extern __shared__\n",
                                 m["checks"]["static_tile"]["source"])
    check("source check: dynamic shared memory is found", len(tile) == 1, "\n".join(tile))

    listing = ("Ex01.\n  Square\n  Tall\nCpuEx01Launcher.\n  Refuses\n"
               "Param/Suite.\n  Test/0  # GetParam() = 4\n")
    check("parse_gtest_list", grade.parse_gtest_list(listing) ==
          ["Ex01.Square", "Ex01.Tall", "CpuEx01Launcher.Refuses", "Param/Suite.Test/0"])
    check("clean_failure drops the location and the stage path",
          grade.clean_failure("/s/course/exercises/t.cu:12\nFailed\nmismatch in /s/course/x.cu",
                              Path("/s/course")) == "mismatch in x.cu")

    syms = [("T", "_ZN4ex019transposeEv", "ex01::transpose()", 0),
            ("T", "_ZN6course11fresh_seedEv", "course::fresh_seed()", 0),
            ("T", "cudaDeviceSynchronize", "cudaDeviceSynchronize", 0),
            ("V", "DW.ref.__gxx_personality_v0", "DW.ref.__gxx_personality_v0", 8),
            ("U", "cublasSgeam_v2", "cublasSgeam_v2", 0),
            ("U", "_Znwm", "operator new(unsigned long)", 0),
            ("b", "_ZL7scratch", "scratch", 1 << 20)]
    own = grade.own_names_findings("o", syms, "ex01")
    check("own names: course:: and C definitions are found, the exercise's are not",
          len(own) == 2 and "course::fresh_seed" in own[0] and "cudaDeviceSynchronize" in own[1],
          "\n".join(own))
    und = grade.symbol_findings("o", syms, m["checks"]["no_library"]["undefined_symbols"])
    check("symbol check: cublas is found", len(und) == 1 and "cublasSgeam_v2" in und[0])
    und = grade.symbol_findings("o", syms, m["checks"]["no_allocation"]["undefined_symbols"])
    check("symbol check: operator new is found", len(und) == 1 and "operator new" in und[0])
    big = grade.static_size_findings("o", syms, m["checks"]["no_allocation"]["max_static_bytes"])
    check("static memory check: a 1 MiB array is found", len(big) == 1 and "1048576" in big[0])
    check("sanitizer summaries are read",
          grade.sanitizer_errors("========= ERROR SUMMARY: 0 errors\n")[0] == 0 and
          grade.sanitizer_errors("========= RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 "
                                 "warning)\n")[0] == 2 and
          grade.sanitizer_errors("garbage")[0] is None)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a" / "top" / "exercises" / "01_rectangular").mkdir(parents=True)
        (root / "a" / "top" / "exercises" / "01_rectangular" / "rectangular.cu").write_text("x")
        (root / "b").mkdir()
        (root / "b" / "inplace.cu").write_text("y")
        found_a = grade.find_submission_file(root / "a", "01_rectangular", "rectangular.cu")
        found_b = grade.find_submission_file(root / "b", "03_inplace", "inplace.cu")
        check("submission layouts: nested exercises/ and flat",
              found_a is not None and found_a.read_text() == "x" and found_b is not None)
        check("submission layouts: a missing file is None",
              grade.find_submission_file(root / "b", "01_rectangular", "rectangular.cu") is None)

        start = time.monotonic()
        ran = grade.run(["sh", "-c", "sleep 30 & sleep 30"], timeout=1)
        check("run: a timeout kills the process group quickly",
              ran.timed_out and time.monotonic() - start < 10)

        r = grade.Results()
        r.titles["01_rectangular"] = "Exercise 1 (rectangular)"
        long_name = "Exercise 1 (rectangular) | random shapes, sides not multiples of 32"
        r.add("01_rectangular", "test", "a | b", 2, True, "ok", "passed", gtest="A.B")
        r.add("01_rectangular", "test", long_name, 3, False, "not graded: no CUDA device",
              grade.NOT_GRADED, tags=["gpu"])
        r.add("01_rectangular", "test", "a | d", 1, False, "mismatch <&>", "failed")
        r.write(root / "out", 1.0)
        doc = json.loads((root / "out" / "results.json").read_text())
        check("results.json: Gradescope fields", doc["score"] == 2 and all(
            set(t) >= {"name", "score", "max_score", "output", "visibility", "tags",
                       "extra_data"} for t in doc["tests"]))
        ng = doc["tests"][1]
        check("results.json: an entry not graded has no pass/fail status, says so, scores 0",
              "status" not in ng and ng["output"].startswith("not graded") and ng["score"] == 0
              and ng["extra_data"]["outcome"] == "not_graded"
              and doc["tests"][2]["status"] == "failed")
        import xml.etree.ElementTree as ET
        junit = ET.parse(root / "out" / "junit.xml").getroot()
        check("junit.xml: one failure, one skipped",
              junit.get("failures") == "1" and len(junit.findall(".//skipped")) == 1)
        table = r.summary()
        check("the table keeps whole names and says 'not graded'",
              long_name in table and "not graded" in table.splitlines()[2], table)
        check("per-exercise subtotal with the points not graded",
              "Exercise 1 (rectangular): 2 of 6 points, 3 not graded" in table, table)

    for case in sorted(TESTDATA.iterdir()):
        if not (case / "case.json").is_file():
            continue
        c = json.loads((case / "case.json").read_text())
        files = [p.relative_to(case) for p in case_files(case)]
        allowed = {Path(ex["id"], f) for ex in m["exercises"] for f in ex["files"]}
        check("testdata %s: valid case" % case.name,
              c.get("base") in ("solutions", "skeletons") and set(files) <= allowed
              and set(c.get("expect", {})) <= {"cpu", "gpu", "both"}
              and set(c.get("args", {})) <= {"cpu", "gpu", "both"},
              "files %s" % files)
    out += sandbox_checks()
    out += dry_gpu_checks(m)
    return out


class DryGrader(grade.Grader):
    """The grader's GPU paths with the processes replaced by canned outcomes: the entries, the
    sanitizers, the timed runs and the rules that zero an exercise, without a GPU."""

    def __init__(self, manifest, scenario):
        class Args:
            no_gpu = no_sanitizer = no_speed = no_sandbox = False
            test_timeout = jobs = 0
            sanitizer_tools = ""
            cmake_arg = []
            sandbox_user = "x"
        super().__init__(Args(), manifest, grade.Results())
        self.scenario = scenario
        self.gpu = True
        self.sanitizer = "/bin/true"
        self.build = Path("/nonexistent")
        self.box = sandbox.Sandbox(sandbox.NAMESPACES, 1, 1)

    def ran(self, cpu=1.0, wall=None):
        r = sandbox.Ran(0, None, False, 0.5, cpu, 100.0, "", {})
        r.go_time = 100.0 - wall if wall is not None else None
        r.limit = 60
        return r

    def run_plan(self, binary, number, items, timeout, handshake=None, monitor=None, key=0):
        sc, probe = self.scenario, "grader_probe" in str(binary)
        if items[0].startswith("speed"):
            if handshake:
                handshake()
            if monitor:
                monitor.peak = monitor.ready_used + (sc.get("extra_mib", 0) << 20 if not probe
                                                     else 0)
            v = {"item": 0, "ok": True, "timing": "roundtrip_ms=20 loop_ms=100"}
            return (self.ran(cpu=1.0 if probe else 1.0 + sc.get("host_cpu", 0),
                             wall=0.5 if probe else 0.5 + sc.get("slower_s", 0)), [v], "")
        ok = not (items[0] == "swizzle" and sc.get("two_swizzles"))
        return self.ran(), [{"item": i, "ok": ok, "message": "differs" if not ok else ""}
                            for i in range(len(items))], ""

    def sanitize(self, binary, number, items, tool, mode, timeout=None):
        errors = 1 if self.scenario.get("race") and tool == "racecheck" else 0
        return (self.ran(), errors, "ERROR SUMMARY: %d errors" % errors, "",
                [{"item": i, "ok": True} for i in range(len(items))])

    def shared_memory(self, ex, e):
        return ("failed", "4224 bytes") if self.scenario.get("padded") else ("passed", "4096")

    def course_shapes(self, spec):
        return [(3, 5)]

    def memory_monitor(self):
        class Monitor:
            ready_used, peak, samples = None, 0, 3

            def mark_ready(self):
                self.ready_used = 1 << 30

            def start(self):
                pass

            def stop(self):
                pass
        return Monitor()


def dry_gpu_checks(m):
    out = []
    scenarios = [
        ("everything right: 100", {}, {"01_rectangular": 35, "02_swizzle": 35, "03_inplace": 30}),
        ("a race: the kernel tests zeroed", {"race": True},
         {"01_rectangular": 18, "02_swizzle": 22, "03_inplace": 17}),
        ("host work: the exercise lost", {"host_cpu": 20, "slower_s": 10},
         {"01_rectangular": 0, "02_swizzle": 0, "03_inplace": 0}),
        ("slow but honest: the speed entry only", {"slower_s": 1},
         {"01_rectangular": 33, "02_swizzle": 33, "03_inplace": 28}),
        ("a second buffer: exercise 3 lost", {"extra_mib": 256},
         {"01_rectangular": 35, "02_swizzle": 35, "03_inplace": 0}),
        ("padding: the swizzle's points lost", {"padded": True}, {"02_swizzle": 21}),
        ("a host-only swizzle: the swizzle's points lost", {"two_swizzles": True},
         {"02_swizzle": 21}),
    ]
    for title, scenario, want in scenarios:
        g = DryGrader(m, scenario)
        try:
            for ex in m["exercises"]:
                if ex["id"] in want:
                    g.run_exercise(ex)
            got = {}
            for t in g.r.tests:
                ex = t["extra_data"]["exercise"]
                got[ex] = got.get(ex, 0) + t["score"]
            ok, detail = got == want, "got %s" % got
        except Exception:  # a bug in a GPU path shows here
            import traceback
            ok, detail = False, traceback.format_exc()[-1500:]
        out.append(("GPU paths, dry: " + title, ok, detail))
    return out


FAKE_WORKER = '''#!/usr/bin/python3
# A stand-in for the grader's worker (no GPU here): answers "transpose" items from a model.
import os, struct
M64 = (1 << 64) - 1
%s
%s
plan = open(os.environ["GRADER_PLAN"]).read().splitlines()[1:]
out = open(os.environ["GRADER_DATA"], "wb")
for i, line in enumerate(plan):
    _, rows, cols, seed = line.split()
    rows, cols, seed = int(rows), int(cols), int(seed)
    a = [pattern32(k, seed) for k in range(rows * cols)]
    t = [0] * (rows * cols)
    for r in range(rows):
        for c in range(cols):
            t[c * rows + r] = a[r * cols + c]
    body = b"\\xff" * 4096 + struct.pack("<%%dI" %% len(t), *t) + b"\\xff" * 4096
    out.write(b"@%%d region %%d\\n" %% (i, len(body)) + body + b"@%%d done 0\\n" %% i)
'''

FAKE_TIMED = '''#!/usr/bin/python3
# A stand-in for the grader's worker in a timed run (no GPU here): "ready", the grader's "go",
# then the chained calls from a model, on descriptors 0, 3, 4 and 5 as the real one.
import os, struct, sys
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1
%s
%s
%s
%s
%s
%s
line = os.fdopen(3).read().splitlines()[1]
_, rows, cols, seed, reps = line.split()
os.write(5, b"ready\\n")
go = sys.stdin.readline().split()
final = chained(int(rows), int(cols), int(seed), int(reps), int(go[1], 16), "inplace" in sys.argv[0])
out = os.fdopen(4, "wb")
timing = b"roundtrip_ms=20 loop_ms=100"
out.write(b"@0 region %%d\\n" %% len(final) + final + b"@0 timing %%d\\n" %% len(timing) + timing
          + b"@0 done 0\\n")
'''

FAKE_SANITIZER = """#!/bin/sh
# A stand-in for compute-sanitizer: runs the program, then writes a clean summary to its log.
log=""
while [ $# -gt 0 ]; do
  case "$1" in
    --log-file) log="$2"; shift 2 ;;
    --tool|--print-limit|--error-exitcode) shift 2 ;;
    *) break ;;
  esac
done
"$@"; rc=$?
echo "========= ERROR SUMMARY: 0 errors" > "$log"
exit $rc
"""


def sanitizer_plumbing(work, judge_grader):
    """The sanitizer runs' plumbing, with stand-ins for the tool and the worker: the plan and the
    data as paths, the report where only root writes (root mode) or in the run's folder (user
    mode), the worker dropped to the sandbox user, the judge on its output."""
    import inspect
    if os.geteuid() != 0 or not Path("/usr/bin/python3").exists():
        return [("sanitizer plumbing: needs root and /usr/bin/python3, not checked", True, "")]
    out = []

    class Args:
        no_sandbox = no_gpu = no_speed = no_sanitizer = False
        sanitizer_tools = ""
        cmake_arg = []
        sandbox_user = sandbox.SANDBOX_USER
        mask = []
        hidden = ""
        test_timeout = jobs = 0
    stage = work / "plumbing"
    shutil.rmtree(stage, ignore_errors=True)
    g = grade.Grader(Args(), grade.load_manifest(GRADER_DIR / "manifest.json"), grade.Results())
    g.set_up(stage, work / "nothing", work / "nothing-out")
    g.judge_bin = judge_grader.judge_bin
    bin_dir = g.build / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    worker, tool = bin_dir / "fake-worker", bin_dir / "fake-sanitizer"
    worker.write_text(FAKE_WORKER % (inspect.getsource(mix_bits), inspect.getsource(pattern32)))
    tool.write_text(FAKE_SANITIZER)
    for p in (worker, tool):
        os.chmod(p, 0o755)
    for p in (bin_dir, g.build):
        os.chmod(p, 0o755)
    g.sanitizer = str(tool)
    items = ["transpose 3 5 11", "transpose 33 2 12"]
    # A timed run, the course's probe and the submission both stand-ins: the handshake, the
    # judge of the final matrix, the clock and the CPU time, through run_timed itself.
    timed = FAKE_TIMED % tuple(inspect.getsource(f) for f in (
        mix_bits, pattern32, mix32, step_key, mask_of, chained))
    for name in ("grader_probe", "grader_probe_inplace", "fake-timed-inplace"):
        (bin_dir / name).write_text(timed)
        os.chmod(bin_dir / name, 0o755)
    ex = dict(next(e for e in g.m["exercises"] if e["id"] == "03_inplace"))
    ex["speed"] = {"size": 12, "reps": 5}
    g.gpu, g.gpu_test_passed = True, True
    gates = []
    try:
        entries = g.run_timed(ex, 3, bin_dir / "fake-timed-inplace",
                              [e for e in ex["entries"] if e["kind"] in ("speed", "memory")],
                              gates)
        speed = next(e for e in entries if e.kind == "speed")
        ok = speed.passed and not gates and "CPU time" in speed.output
        detail = "%s: %s; gates %s" % (speed.outcome, speed.output, gates)
    except Exception:
        import traceback
        ok, detail = False, traceback.format_exc()[-1500:]
    out.append(("timed run plumbing: handshake, judge, clock, CPU time (stand-ins)", ok, detail))
    for mode in ("root", "user"):
        try:
            ran, errors, summary, log, verdicts = g.sanitize(worker, 1, items, "memcheck", mode,
                                                             timeout=60)
            ok = errors == 0 and len(verdicts) == 2 and all(v["ok"] for v in verdicts)
            detail = "errors %s, verdicts %s, output %s" % (errors, verdicts, ran.output[-400:])
        except Exception:  # a bug in the plumbing shows here
            import traceback
            ok, detail = False, traceback.format_exc()[-1500:]
        out.append(("sanitizer plumbing (%s mode): the report and the worker's data come back"
                    % mode, ok, detail))
    # A clean report beside the tool's error exit status (a report the submission rewrote):
    # the exit status decides.
    tool.write_text(FAKE_SANITIZER.replace("exit $rc", "exit 86"))
    try:
        ran, errors, summary, log, verdicts = g.sanitize(worker, 1, items, "memcheck", "user",
                                                         timeout=60)
        ok, detail = bool(errors), "errors %s, summary %s" % (errors, summary)
    except Exception:
        import traceback
        ok, detail = False, traceback.format_exc()[-1500:]
    out.append(("sanitizer plumbing: the tool's error exit status outweighs a clean report", ok,
                detail))
    shutil.rmtree(stage, ignore_errors=True)
    return out


def sandbox_checks():
    """The sandbox itself, as root (it isolates nothing otherwise)."""
    out = []
    if os.geteuid() != 0:
        return [("sandbox: not root, so not checked (run the self-test as root)", True, "")]
    box = sandbox.Sandbox.create(hide=[str(COURSE_DIR)])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.chmod(tmp, 0o755)
        private = tmp / "private"
        private.mkdir(mode=0o700)
        marker = tmp / "outside"
        start = time.monotonic()
        # An orphan in its own session that holds the output, and a write outside the scratch.
        token = "grader-selftest-orphan-%d" % os.getpid()
        ran = box.run(["/bin/sh", "-c",
                       "(setsid sh -c 'sleep 300; : %s' &); echo written > %s; ls %s; echo done"
                       % (token, marker, COURSE_DIR)],
                      timeout=30, log=private / "log", private=private)
        took = time.monotonic() - start
        out.append(("sandbox (%s): an orphan holding the output does not stall the run"
                    % box.level, took < 20, "took %.1f s" % took))
        out.append(("sandbox (%s): the command's exit and output are reported" % box.level,
                    ran.rc == 0 and "done" in ran.output, ran.output[-300:]))
        leftovers = subprocess.run(["pgrep", "-f", token], capture_output=True,
                                   text=True).stdout.strip()
        out.append(("sandbox (%s): nothing outlives the run" % box.level, leftovers == "",
                    "left: %s" % leftovers))
        if box.level == sandbox.NAMESPACES:
            out.append(("sandbox: a write outside the scratch space is refused",
                        not marker.exists(), ran.output[-300:]))
            out.append(("sandbox: the course is hidden",
                        "grader" not in ran.output and "solutions" not in ran.output,
                        ran.output[-300:]))
        start = time.monotonic()
        ran = box.run(["/bin/sh", "-c", "sleep 100 & sleep 100"], timeout=1,
                      log=private / "log", private=private)
        out.append(("sandbox (%s): the time limit holds" % box.level,
                    ran.timed_out and time.monotonic() - start < 10,
                    "%.1f s" % (time.monotonic() - start)))
        # The timed runs' handshake: "ready" on fd 5, the "go" line on stdin, the clock between.
        data = private / "data"
        ran = box.run(["/bin/sh", "-c", "echo ready >&5; read go; sleep 0.3; echo \"$go\" >&4"],
                      timeout=20, log=private / "log", private=private, fds={4: str(data)},
                      handshake=lambda: "go 1234\n")
        took = ran.exit_time - ran.go_time if ran.go_time and ran.exit_time else -1
        out.append(("sandbox (%s): the timed runs' handshake" % box.level,
                    ran.ready and data.read_text() == "go 1234\n" and 0.25 < took < 10,
                    "ready %s, go to exit %.2f s, data %r" % (ran.ready, took,
                                                            data.read_text()[:40])))
    return out


# ---------------------------------------------------------------------------------------------
# The judge against an independent model of the protocol (Python): the inputs' bit patterns,
# the masks of the timed run, a right and a wrong answer of each kind.

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def mix_bits(x, k):
    mask = M64 if k == 64 else (1 << k) - 1
    shift = (k + 1) // 2
    x &= mask
    x = (x * 0x9E3779B97F4A7C15) & mask
    x ^= x >> shift
    x = (x * 0xBF58476D1CE4E5B9) & mask
    x ^= x >> shift
    return x


def pattern32(index, seed):
    v = mix_bits((index + seed) & M64, 31)
    return (v & ((1 << 30) - 1)) | (((v >> 30) & 1) << 31)


def mix32(x):
    x ^= x >> 16
    x = (x * 0x7feb352d) & M32
    x ^= x >> 15
    x = (x * 0x846ca68b) & M32
    return x ^ (x >> 16)


def step_key(key, step):
    return mix32((key & M32) ^ mix32(((key >> 32) + 0x9e3779b9 * (step + 1)) & M32))


def mask_of(k, pos):
    h = k ^ mix32((pos + 0x632be5ab) & M32)
    h ^= (pos >> 32) & M32
    for r in range(12):
        h = mix32((h + 0x85ebca6b * r) & M32)
    return h & 0x000FFFFF


def chained(rows, cols, seed, reps, key, in_place):
    """The final matrix of a timed run, the slow way."""
    import struct
    data = [pattern32(i, seed) for i in range(rows * cols)]
    r, c = rows, cols
    for k in range(reps):
        out = [0] * (r * c)
        for i in range(r):
            for j in range(c):
                out[j * r + i] = data[i * c + j]
        sk = step_key(key, k)
        data = [v ^ mask_of(sk, p) for p, v in enumerate(out)]
        if not in_place:
            r, c = c, r
    return struct.pack("<%dI" % len(data), *data)


def judge_checks(work):
    """[(name, ok, detail)]: the judge, compiled here as the grader compiles it, on records
    written by this independent model."""
    import struct
    out = []
    g = grade.Grader.__new__(grade.Grader)
    g.private = work / "judge"
    g.private.mkdir(parents=True, exist_ok=True)
    g.timeouts = {"judge": 120}
    g.build_judge()

    def verdicts(number, items, records, key=0):
        plan, data = work / "judge" / "plan", work / "judge" / "data"
        plan.write_text("plan 1\n" + "\n".join(items) + "\n")
        blob = b""
        for item, tag, payload in records:
            blob += b"@%d %s %d\n" % (item, tag.encode(), len(payload)) + payload
        data.write_bytes(blob)
        return g.judge(number, plan, data, key)[0]

    guard = b"\xff" * 4096
    rows, cols, seed = 5, 7, 12345
    a = [pattern32(i, seed) for i in range(rows * cols)]
    t = [0] * (rows * cols)
    for i in range(rows):
        for j in range(cols):
            t[j * rows + i] = a[i * cols + j]
    right = guard + struct.pack("<%dI" % len(t), *t) + guard
    item = "transpose %d %d %d" % (rows, cols, seed)
    v = verdicts(1, [item, item, item], [(0, "region", right), (0, "done", b""),
                                         (1, "region", right[:-1] + b"\x00"), (1, "done", b""),
                                         (2, "region", right)])
    out.append(("judge: a right transpose passes (bit patterns agree with the course's)",
                v[0]["ok"], v[0]["message"]))
    out.append(("judge: a byte written past the end fails",
                not v[1]["ok"] and "past the end" in v[1]["message"], v[1]["message"]))
    out.append(("judge: an item without 'done' is missing", v[2].get("missing"), str(v[2])))
    for number, in_place, (r, c) in ((1, False, (6, 9)), (3, True, (7, 7))):
        key, reps = 0x0123456789abcdef, 5
        final = chained(r, c, seed, reps, key, in_place)
        bad = bytearray(final)
        bad[len(bad) // 2] ^= 1
        item = "speed %d %d %d %d" % (r, c, seed, reps)
        v = verdicts(number, [item, item], [(0, "region", final), (0, "done", b""),
                                            (1, "region", bytes(bad)), (1, "done", b"")], key)
        out.append(("judge: a right timed run passes (%s; masks agree)" % (
            "in place" if in_place else "out of place"), v[0]["ok"], v[0]["message"]))
        out.append(("judge: one wrong bit of a timed run fails (%s)" % (
            "in place" if in_place else "out of place"), not v[1]["ok"], v[1]["message"]))
    return out + sanitizer_plumbing(work, g)


# ---------------------------------------------------------------------------------------------
# Cases


def load_cases(selected, mode):
    cases = []
    for d in sorted(TESTDATA.iterdir()):
        if (d / "case.json").is_file() and (not selected or d.name in selected):
            c = json.loads((d / "case.json").read_text())
            c["name"], c["dir"] = d.name, d
            runs = "gpu" in c["expect"] if mode == "gpu" else \
                ("cpu" in c["expect"] or "both" in c["expect"])
            if runs or d.name in selected:
                cases.append(c)
    # The solutions first (the full build), the skeletons last: each case then recompiles only
    # the files it changes.
    order = {"solutions": 0, "skeletons": 2}
    cases.sort(key=lambda c: (order.get(c["name"], 1), c["name"]))
    return cases


def case_files(case_dir):
    """The submission files of a case: everything but case.json, README.md and hidden/ (the
    instructor's hidden tests, passed to the grader with --hidden)."""
    return [p for p in sorted(case_dir.rglob("*")) if p.is_file()
            and p.name not in ("case.json", "README.md")
            and p.relative_to(case_dir).parts[0] != "hidden"]


def make_submission(case, manifest, dest):
    if dest.exists():
        shutil.rmtree(dest)
    base = COURSE_DIR / ("solutions" if case["base"] == "solutions" else "exercises")
    for ex in manifest["exercises"]:
        for f in ex["files"]:
            target = dest / ex["id"] / f
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(base / ex["id"] / f, target)
    for p in case_files(case["dir"]):
        target = dest / p.relative_to(case["dir"])
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, target)
    for rel in case.get("remove", []):
        (dest / rel).unlink()


def select(tests, sel):
    picked = []
    for t in tests:
        d = t["extra_data"]
        if "exercise" in sel and d.get("exercise") != sel["exercise"]:
            continue
        if "kind" in sel and d.get("kind") != sel["kind"]:
            continue
        if "test" in sel and not fnmatch.fnmatchcase(d.get("gtest", ""), sel["test"]):
            continue
        picked.append(t)
    return picked


def entry_meets(t, exp):
    why = []
    state = grade.Results.state(t)
    if "status" in exp and state != exp["status"]:
        why.append("status %s" % state)
    outcomes = exp.get("outcome")
    if isinstance(outcomes, str):
        outcomes = [outcomes]
    if outcomes and t["extra_data"]["outcome"] not in outcomes:
        why.append("outcome %s" % t["extra_data"]["outcome"])
    for s in exp.get("output_contains", []):
        if s not in t["output"]:
            why.append("output lacks %r" % s)
    if exp.get("output_any") and not any(s in t["output"] for s in exp["output_any"]):
        why.append("output has none of %r" % exp["output_any"])
    if "visibility" in exp and t["visibility"] != exp["visibility"]:
        why.append("visibility %s" % t["visibility"])
    if "score" in exp:
        want = t["max_score"] if exp["score"] == "max" else exp["score"]
        if abs(t["score"] - want) > 1e-6:
            why.append("score %g" % t["score"])
    if "max_seconds" in exp and t["extra_data"].get("seconds", 0) > exp["max_seconds"]:
        why.append("took %s s" % t["extra_data"].get("seconds"))
    return why


def describe(exp):
    if "total" in exp:
        return "total score = %s" % exp["total"]
    if "any" in exp:
        return "any of: " + " | ".join(describe(e) for e in exp["any"])
    if "score_below_max" in exp:
        return "%s scores below its maximum" % exp["score_below_max"]
    if "results_clean" in exp:
        return "results.json still the grader's %g s later" % exp["results_clean"]
    if "files_absent" in exp:
        return "no file written outside the sandbox (%d places)" % len(exp["files_absent"])
    sel = ",".join("%s=%s" % kv for kv in exp["entry"].items()) or "every entry"
    want = [("absent" if exp.get("absent") else "")] + \
        ["%s=%s" % (k, exp[k]) for k in ("status", "outcome", "score", "visibility",
                                         "max_seconds") if k in exp]
    if exp.get("some"):
        want.append("(at least one)")
    return "[%s] %s" % (sel, " ".join(w for w in want if w))


def expand(path, work, case_name):
    return Path(path.format(work=work, stage=work / "stage", course=COURSE_DIR,
                            results=work / "results" / case_name))


def evaluate(exp, doc, ctx):
    """(ok, detail, example output) of one expectation against a results.json document."""
    tests = doc["tests"]
    if "total" in exp:
        want = doc["extra_data"]["max_score"] if exp["total"] == "max" else exp["total"]
        return abs(doc["score"] - want) < 1e-6, "score %g (want %g)" % (doc["score"], want), ""
    if "score_below_max" in exp:
        mine = [t for t in tests if t["extra_data"]["exercise"] == exp["score_below_max"]]
        got, top = sum(t["score"] for t in mine), sum(t["max_score"] for t in mine)
        return got < top, "%g / %g" % (got, top), ""
    if "results_clean" in exp:
        time.sleep(exp["results_clean"])
        text = (ctx["results"] / "results.json").read_text()
        try:
            again = json.loads(text)
        except ValueError:
            return False, "results.json no longer parses", text[:200]
        ok = "FORGED" not in text and again["score"] == doc["score"]
        return ok, "" if ok else "results.json was rewritten", "" if ok else text[:200]
    if "files_absent" in exp:
        found = [str(p) for p in ctx["absent"] if p.exists()]
        return not found, "written: %s" % ", ".join(found) if found else "", ""
    if "any" in exp:
        results = [evaluate(e, doc, ctx) for e in exp["any"]]
        ok = any(r[0] for r in results)
        example = next((r[2] for r in results if r[0]), results[0][2])
        return ok, "; ".join(r[1] for r in results if r[1]), example
    picked = select(tests, exp["entry"])
    if exp.get("absent"):
        return not picked, "%d entries present" % len(picked) if picked else "", ""
    if not picked:
        return False, "no entry matches", ""
    verdicts = [(t, entry_meets(t, exp)) for t in picked]
    good = [t for t, why in verdicts if not why]
    bad = [(t, why) for t, why in verdicts if why]
    ok = bool(good) if exp.get("some") else not bad
    detail = "" if ok else "; ".join("%s: %s" % (t["name"], ", ".join(why)) for t, why in bad[:3])
    shown = (bad[0][0] if bad and not ok else (good or picked)[0])
    return ok, detail, first_line(shown["output"])


def expects_failure(exp):
    """True for an expectation about something that must go wrong (its output is the example
    the summary shows)."""
    if "any" in exp:
        return any(expects_failure(e) for e in exp["any"])
    outcome = exp.get("outcome", "")
    outcome = outcome if isinstance(outcome, str) else outcome[0]
    return exp.get("status") == "failed" or outcome not in ("", "passed", "not_graded")


def first_line(text):
    """The first line of an entry's output, with the next one when it only announces it."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    if not lines:
        return ""
    return lines[0] + (" " + lines[1] if lines[0].endswith(":") and len(lines) > 1 else "")


def run_case(case, args, manifest, work, mode):
    sub = work / "submissions" / case["name"]
    out = work / "results" / case["name"]
    make_submission(case, manifest, sub)
    absent = [expand(p, work, case["name"]) for exp in case["expect"].values() for e in exp
              if "files_absent" in e for p in e["files_absent"]]
    for p in absent:  # left by an earlier run without isolation
        if p.is_file():
            p.unlink()
    cmd = [sys.executable, str(GRADER_DIR / "grade.py"), "--submission", str(sub),
           "--out", str(out), "--stage", str(work / "stage"), "--quiet",
           "--build-arch", args.build_arch or ""]
    if mode == "cpu":
        cmd.append("--no-gpu")
    if case.get("exercises"):
        cmd += ["--exercises", ",".join(case["exercises"])]
    if (case["dir"] / "hidden").is_dir():
        cmd += ["--hidden", str(case["dir"] / "hidden")]
    cmd += case.get("args", {}).get("both", []) + case.get("args", {}).get(mode, [])
    for a in args.cmake_arg or []:
        cmd.append("--cmake-arg=" + a)
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - start
    results_file = out / "results.json"
    if proc.returncode != 0 or not results_file.is_file():
        why = "grade.py exited with %d / wrote no results.json" % proc.returncode
        return seconds, None, [(False, why, proc.stdout.decode(errors="replace")[-2000:],
                                "grader run", False)]
    doc = json.loads(results_file.read_text())
    expectations = case["expect"].get("both", []) + case["expect"].get(mode, [])
    checks = []
    errors = [t for t in doc["tests"] if t["extra_data"]["outcome"] == "grader_error"]
    checks.append((not errors, "grader error" if errors else "",
                   first_line(errors[0]["output"]) if errors else "", "no grader error", False))
    ctx = {"results": out, "absent": absent}
    for exp in expectations:
        ok, detail, example = evaluate(exp, doc, ctx)
        checks.append((ok, detail, example, describe(exp), expects_failure(exp)))
    return seconds, doc, checks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", action="store_true",
                    help="a CUDA device is here: the cases' GPU expectations")
    ap.add_argument("--unit", action="store_true", help="only the fast unit checks")
    ap.add_argument("--work", default=str(COURSE_DIR / "build-grade" / "selftest"),
                    help="work folder (staged build, submissions, results); kept between runs")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--quick", action="store_true",
                    help="only the cases of QUICK_CASES (what `make test` runs)")
    ap.add_argument("--build-arch", default="", help="CUDA architectures for the staged build")
    ap.add_argument("--cmake-arg", action="append", help="extra cmake configure argument")
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--verbose", action="store_true",
                    help="print every expectation, not only the unexpected ones")
    args = ap.parse_args()

    failures = 0
    total_start = time.monotonic()
    units = unit_checks()
    bad_units = [u for u in units if not u[1]]
    print("unit checks: %d passed, %d failed" % (len(units) - len(bad_units), len(bad_units)))
    for name, _, detail in bad_units:
        print("  UNEXPECTED  %s: %s" % (name, detail))
    failures += len(bad_units)
    if args.unit:
        return 1 if failures else 0

    mode = "gpu" if args.gpu else "cpu"
    manifest = grade.load_manifest(GRADER_DIR / "manifest.json")
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    judged = judge_checks(work)
    bad_judged = [u for u in judged if not u[1]]
    print("judge checks: %d passed, %d failed" % (len(judged) - len(bad_judged), len(bad_judged)))
    for name, _, detail in bad_judged:
        print("  UNEXPECTED  %s: %s" % (name, detail))
    failures += len(bad_judged)
    isolated = os.geteuid() == 0
    selected = QUICK_CASES if args.quick and not args.cases else \
        [c for c in args.cases.split(",") if c]
    cases = load_cases(selected, mode)
    rows = []
    seen = {"isolation": set(), "device": set(), "sanitizer": set()}
    print("%-26s %-9s %-7s %-10s %5s  %s" % ("case (%s mode)" % mode, "score", "checks", "verdict",
                                             "time", "example message"))
    for case in cases:
        if case.get("needs_isolation") and not isolated:
            rows.append((case["name"], "-", "-", "skipped", "-", "needs root (isolation)"))
            print("%-26s %-9s %-7s %-10s %5s  %s" % rows[-1])
            continue
        seconds, doc, checks = run_case(case, args, manifest, work, mode)
        bad = [c for c in checks if not c[0]]
        failures += len(bad)
        if doc:
            seen["isolation"].add(doc["extra_data"].get("isolation", "?"))
            seen["device"].add(doc["extra_data"].get("device", "none"))
            seen["sanitizer"].update(t["extra_data"]["sanitizer_mode"] for t in doc["tests"]
                                     if "sanitizer_mode" in t["extra_data"])
        score = "%g/%g" % (doc["score"], doc["extra_data"]["max_score"]) if doc else "-"
        example = next((c[2] for c in checks if c[4] and c[2]), "") or \
            next((c[2] for c in checks if c[2]), "")
        rows.append((case["name"], score, "%d/%d" % (len(checks) - len(bad), len(checks)),
                     "ok" if not bad else "UNEXPECTED", "%.0fs" % seconds, example[:90]))
        print("%-26s %-9s %-7s %-10s %5s  %s" % rows[-1], flush=True)
        for ok, detail, example, what, _ in checks:
            if not ok or args.verbose:
                print("      %s %s%s" % ("ok  " if ok else "FAIL", what,
                                         (": " + detail) if detail else ""))
                if not ok and example:
                    print("           e.g. %s" % example[:160])

    print("\nVerdicts (%s mode, %d cases, %.0f s):" % (mode, len(cases),
                                                      time.monotonic() - total_start))
    print("  %-26s %-9s %-7s %-10s %s" % ("case", "score", "checks", "verdict", "time"))
    for r in rows:
        print("  %-26s %-9s %-7s %-10s %s" % r[:5])
    print("grader: isolation %s; device %s; compute-sanitizer ran as %s" % (
        ", ".join(sorted(seen["isolation"])) or "-", ", ".join(sorted(seen["device"])) or "-",
        {"root": "root, the worker dropped", "user": "the sandbox user"}.get(
            ",".join(sorted(seen["sanitizer"])), ",".join(sorted(seen["sanitizer"])) or "-")))
    print("unit checks: %d/%d; cases: %s" % (
        len(units) - len(bad_units), len(units),
        "all as expected" if not failures else "%d UNEXPECTED outcomes" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
