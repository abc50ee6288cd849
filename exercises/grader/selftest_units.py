"""The self-test's unit checks (Python standard library only): the grader's pieces, the readers
of what a submission shapes, the manifest, the test data, the sandbox (as root), the GPU paths
with canned outcomes, the judge against an independent model of the protocol, and the sanitizer
runs' plumbing with stand-ins for the tool and the worker (attacks on it included)."""

import csv
import json
import os
import shutil
import signal
import struct
import sys
import subprocess
import tempfile
import threading
import time
import re
from pathlib import Path

import checks
import grade
import hidden
import results
import runs
import sandbox
import selftest_cases
import stage
import tools

GRADER_DIR = Path(__file__).resolve().parent
COURSE_DIR = GRADER_DIR.parent.parent
TESTDATA = GRADER_DIR / "testdata"


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
                  e["name"].startswith("Grader.") or (e["kind"] == "gpu") ==
                  ("Cpu" not in e["name"]))

    src = ('// cublasSgeam in a comment\n#include "ex01.cuh"\n'
           'const char* s = "cublas"; /* new */ int x = 1\'000;\n'
           '#include <cublas_v2.h>\nint* p = new int;\n#include "../common/x.h"\n')
    code = checks.strip_comments(src, keep_strings=False)
    check("strip_comments: comments and strings go, lines stay",
          "cublasSgeam" not in code and '"cublas"' not in code
          and code.count("\n") == src.count("\n") and "1'000" in code)
    lib = checks.source_findings("f.cu", src, m["checks"]["no_library"]["source"])
    check("source check: a library include is found on its line",
          any(f.startswith("f.cu:4: includes a library header") for f in lib), "\n".join(lib))
    check("source check: comments and strings are not findings",
          not any(f.startswith(("f.cu:1:", "f.cu:3:")) for f in lib), "\n".join(lib))
    check("source check: an include from outside the folder is found",
          any(f.startswith("f.cu:6: includes a file from outside") for f in lib), "\n".join(lib))
    alloc = checks.source_findings("f.cu", src, m["checks"]["no_allocation"]["source"])
    check("source check: new is found in code, not in a comment",
          [f.split(":")[1] for f in alloc] == ["5"], "\n".join(alloc))
    tile = checks.source_findings("s.cu", "extern __shared__ float t[];\n// extern __shared__\n"
                                  "extern __attribute__((aligned(16))) __attribute__((shared)) "
                                  "float u[];\n__shared__ float ok[32][32];\n",
                                  m["checks"]["static_tile"]["source"])
    check("source check: dynamic shared memory is found, as written and once expanded",
          [f.split(":")[1] for f in tile] == ["1", "3"], "\n".join(tile))


    syms = [("T", "_ZN4ex019transposeEv", "ex01::transpose()", 0),
            ("T", "_ZN6course11fresh_seedEv", "course::fresh_seed()", 0),
            ("T", "cudaDeviceSynchronize", "cudaDeviceSynchronize", 0),
            ("V", "DW.ref.__gxx_personality_v0", "DW.ref.__gxx_personality_v0", 8),
            ("U", "cublasSgeam_v2", "cublasSgeam_v2", 0),
            ("U", "_Znwm", "operator new(unsigned long)", 0),
            ("W", "write", "write", 0),
            ("i", "memcpy", "memcpy", 0),
            ("W", "_ZNSt6vectorIfSaIfEE9push_backERKf",
             "std::vector<float>::push_back(float const&)", 0),
            ("W", "_ZNKSt9bad_alloc4whatEv", "std::bad_alloc::what() const", 0),
            ("U", "dlmopen", "dlmopen", 0),
            ("U", "__real___cudaLaunchKernel", "__real___cudaLaunchKernel", 0),
            ("U", "cuMemAlloc_v2", "cuMemAlloc_v2", 0),
            ("b", "_ZL7scratch", "scratch", 1 << 20)]
    own = checks.own_names_findings("o", syms, "ex01", {"_ZNKSt9bad_alloc4whatEv"})
    check("own names: course::, C definitions of every kind (weak write, an ifunc) and what "
          "libstdc++ exports are found; the exercise's names and weak templates are not",
          len(own) == 5 and "course::fresh_seed" in own[0] and "cudaDeviceSynchronize" in own[1]
          and "'write'" in own[2] and "'memcpy'" in own[3] and "bad_alloc" in own[4],
          "\n".join(own))
    und = checks.symbol_findings("o", syms, m["checks"]["no_library"]["undefined_symbols"])
    check("symbol check: cublas, dlmopen, __real_ and the driver API are found",
          len(und) == 4 and "cublasSgeam_v2" in und[0] and "dlmopen" in und[1]
          and "__real_" in und[2] and "driver API" in und[3], "\n".join(und))
    und = checks.symbol_findings("o", syms, m["checks"]["no_allocation"]["undefined_symbols"])
    check("symbol check: operator new and a driver allocation are found",
          len(und) == 2 and "operator new" in und[0] and "cuMemAlloc" in und[1], "\n".join(und))
    big = checks.static_size_findings("o", syms, m["checks"]["no_allocation"]["max_static_bytes"])
    check("static memory check: a 1 MiB array is found", len(big) == 1 and "1048576" in big[0])
    check("sanitizer summaries are read",
          runs.sanitizer_errors("========= ERROR SUMMARY: 0 errors\n")[0] == 0 and
          runs.sanitizer_errors("========= RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 "
                                 "warning)\n")[0] == 2 and
          runs.sanitizer_errors("garbage")[0] is None)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a" / "top" / "exercises" / "01_rectangular").mkdir(parents=True)
        (root / "a" / "top" / "exercises" / "01_rectangular" / "rectangular.cu").write_text("x")
        (root / "b").mkdir()
        (root / "b" / "inplace.cu").write_text("y")
        found_a = stage.find_submission_file(root / "a", "01_rectangular", "rectangular.cu")
        found_b = stage.find_submission_file(root / "b", "03_inplace", "inplace.cu")
        check("submission layouts: nested exercises/ and flat",
              found_a is not None and found_a.read_text() == "x" and found_b is not None)
        check("submission layouts: a missing file is None",
              stage.find_submission_file(root / "b", "01_rectangular", "rectangular.cu") is None)

        start = time.monotonic()
        ran = tools.run(["sh", "-c", "sleep 30 & sleep 30"], timeout=1)
        check("run: a timeout kills the process group quickly",
              ran.timed_out and time.monotonic() - start < 10)

        r = results.Results()
        r.titles["01_rectangular"] = "Exercise 1 (rectangular)"
        long_name = "Exercise 1 (rectangular) | random shapes, sides not multiples of 32"
        r.add("01_rectangular", "test", "a | b", 2, True, "ok", "passed", gtest="A.B")
        r.add("01_rectangular", "test", long_name, 3, False, "not graded: no CUDA device",
              results.NOT_GRADED, tags=["gpu"])
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

        text = ("\x1b[31mred\x00nul\x07bell \udcff" + "x" * 10)
        r2 = results.Results()
        r2.add("01_rectangular", "test", "a \x01 b", 1, False, "why:\n" + text, "crashed")
        r2.write(root / "out2", 1.0)
        try:
            ET.parse(root / "out2" / "junit.xml")
            well_formed = "\x1b" not in (root / "out2" / "results.json").read_text()
        except ET.ParseError:
            well_formed = False
        check("control characters from the submission leave junit.xml well-formed", well_formed)
        check("the table shows the first lines of why under a failed entry",
              "      why:" in r2.summary(), r2.summary())

        sparse = root / "sparse.cu"
        with open(sparse, "wb") as f:
            f.truncate(8 << 30)
        data, size = stage.read_limited(sparse, 262144)
        check("a sparse 8 GiB source is refused by its size, unread", data is None
              and size == 8 << 30)

        secret = root / "secret"
        secret.write_text("root-only")
        (root / "logs").mkdir()
        os.symlink(secret, root / "logs" / "sanitizer.log")
        check("a report replaced by a link is not read", sandbox.read_owned(
            root / "logs", "sanitizer.log", 1000, {os.getuid()}) is None)
        os.unlink(root / "logs" / "sanitizer.log")
        os.link(secret, root / "logs" / "sanitizer.log")
        check("a report that is another file's second name is not read", sandbox.read_owned(
            root / "logs", "sanitizer.log", 1000, {os.getuid()}) is None)
        os.unlink(root / "logs" / "sanitizer.log")
        (root / "logs" / "sanitizer.log").write_text("========= ERROR SUMMARY: 0 errors\n")
        check("a plain report of the right owner is read", "SUMMARY" in (sandbox.read_owned(
            root / "logs", "sanitizer.log", 1000, {os.getuid()}) or "") and
            sandbox.read_owned(root / "logs", "sanitizer.log", 1000, {12345}) is None)

        ii = root / "t.cpp1.ii"
        ii.write_text('# 1 "/stage/ex/a.cu"\n#define X extern\n'
                      '# 1 "/usr/include/x.h" 1 3\nint hidden_from_rules;\n'
                      '# 3 "/stage/ex/a.cu" 2\nextern __attribute__((shared)) float t[];\n'
                      '# 1 "/elsewhere/solution.cu" 1\nint stolen;\n')
        lines, included, renamed = checks.preprocessed(ii, {"/stage/ex/a.cu"})
        check("preprocessed text: the submission's lines, at their own line numbers, and what "
              "they include", lines.get("/stage/ex/a.cu") == [
                  (1, "#define X extern"), (3, "extern __attribute__((shared)) float t[];")]
              and [p for _, _, p in included] == ["/usr/include/x.h", "/elsewhere/solution.cu"]
              and not renamed, "%s %s %s" % (lines, included, renamed))
        ii.write_text('# 1 "/stage/ex/a.cu"\nint a;\n# 1 "/usr/include/stdio.h"\n'
                      '# 1 "/elsewhere/solution.cu" 1\nint stolen;\n# 7 "/stage/ex/a.cu"\n'
                      'int b;\n# 20 "/stage/ex/a.cu"\nint c;\n')
        lines, included, renamed = checks.preprocessed(ii, {"/stage/ex/a.cu"})
        check("preprocessed text: a #line naming another file is seen (the lines after it "
              "would escape the checks); one that only renumbers is not",
              [(f, p) for f, _, p in renamed] == [("/stage/ex/a.cu", "/usr/include/stdio.h")],
              "%s" % renamed)
        rules = m["checks"]["no_library"]["source"] + \
            m["checks"]["static_tile"]["source"]
        pad = "#if 0\n" + "#include< extern extern\n" * 10000 + "extern " * 30000 + "\n#endif\n"
        start = time.monotonic()
        found = checks.source_findings("a.cu", pad, rules)
        took = time.monotonic() - start
        check("source rules run in linear time: 256 KiB of '#include<' lines and 'extern' words "
              "in %.2f s" % took, took < 5 and not found, "%.1f s, %s" % (took, found[:2]))
        found = checks.source_findings("a.cu", "extern\n__shared__ float t[];\n__shared__ float "
                                       "u[32]; extern int x;\n", rules)
        check("a rule on one statement: extern __shared__ across lines found, extern in the next "
              "statement not", len(found) == 1 and "a.cu:1:" in found[0], "%s" % found)
        try:
            checks.source_findings("a.cu", "int x;\n", rules, deadline=time.monotonic() - 1)
            past = False
        except TimeoutError:
            past = True
        check("the static checks stop at the submission's deadline", past)

        (root / "hid").mkdir()
        (root / "hid" / "t.cu").write_text("TEST(HiddenEx01, A) {}\n")
        (root / "hid" / "t.json").write_text(json.dumps([
            {"name": "HiddenEx01.A", "kind": "gpu", "shapes": [[3, 5], 7]},
            {"name": "CpuHiddenEx01.B", "kind": "check", "check": "refuses_empty"},
            {"name": "HiddenEx01.A", "kind": "check", "check": "refuses_empty"},
            {"name": "bad name", "kind": "gpu", "shapes": [[3, 5]]},
            {"name": "HiddenEx01.Huge", "kind": "gpu", "shapes": [[1 << 20, 1 << 20]]},
            {"name": "HiddenEx01.Code", "kind": "gtest", "source": "TEST(...)"}]))
        entries, notes = hidden.hidden_entries(root / "hid")
        check("hidden tests are data: their names, kinds and bounded shapes come from the "
              "instructor's JSON; a .cu file is not run, and says so",
              [e["name"] for e in entries] == ["HiddenEx01.A", "CpuHiddenEx01.B"] and
              len(notes) == 5 and "t.cu is not run" in notes[0], "%s %s" % (entries, notes))
        (root / "hid2" / "01_rectangular").mkdir(parents=True)
        (root / "hid2" / "01_rectangular" / "t.json").write_text(json.dumps(
            [{"name": "CpuHiddenEx01.T%d" % i, "kind": "check", "check": "refuses_empty"}
             for i in range(30)] + [{"name": "CpuHiddenEx01.Large", "kind": "check",
                                     "check": "refuses_empty"}]))
        g = grade.Grader.__new__(grade.Grader)
        g.m, g.r, g.hidden_source = m, results.Results(), root / "hid2"
        plan = g.hidden_plan({"id": "01_rectangular"})
        total = sum(p[1] for p in plan)
        check("hidden tests' points are capped (hidden_tests.max_points)", len(plan) == 31 and
              abs(total - m["hidden_tests"]["max_points"]) < 1e-3, "%d tests, %g points" % (
                  len(plan), total))

    header = struct.pack("<IHHQ", checks.FATBIN_MAGIC, 1, 16, 1 << 20)
    for what, blob in (("a size past its section", header + b"\0" * 64),
                       ("size 0", struct.pack("<IHHQ", checks.FATBIN_MAGIC, 1, 16, 0)),
                       ("an entry of size 0", struct.pack("<IHHQ", checks.FATBIN_MAGIC, 1, 16, 64)
                        + struct.pack("<HHIQ", 2, 0, 0, 0) + b"\0" * 48)):
        start = time.monotonic()
        try:
            checks.fatbin_images(blob, 0)
            refused = False
        except ValueError:
            refused = True
        check("fat binary reader: %s is refused at once" % what,
              refused and time.monotonic() - start < 1)

    for case in sorted(TESTDATA.iterdir()):
        if not (case / "case.json").is_file():
            continue
        c = json.loads((case / "case.json").read_text())
        c["name"], c["dir"] = case.name, case
        try:
            for part in [None] + (["previous"] if c.get("previous") else []):
                selftest_cases.submission_files(c, m, part)
            detail, ok = "", True
        except selftest_cases.NoSkeleton as err:
            detail, ok = "not checked: %s" % err, True
        except selftest_cases.CaseError as err:
            detail, ok = str(err), False
        ok = ok and c.get("base", "solutions") in ("solutions", "skeletons") \
            and set(c.get("expect", {})) <= {"cpu", "gpu", "both"} \
            and set(c.get("args", {})) <= {"cpu", "gpu", "both"}
        check("testdata %s: a valid case whose patch applies to today's course" % case.name,
              ok, detail)
    # Static findings name files relative to the course, never a folder of the grader's
    # machine (the stage), and a line marker in a submitted file is a finding, flags or not.
    class Paths(checks.CheckMixin):
        course_root, build, stage = Path("/g/stage/course"), Path("/g/stage/build"), \
            Path("/g/stage")

        def static_findings(self, ex, files):
            return ["rectangular.cu (as compiled):3: cudaMemcpy: const char* f = "
                    "\"/g/stage/course/exercises/01_rectangular/rectangular.cu\";",
                    "the compiled code could not be checked: nm could not read "
                    "/g/stage/build/x.o"]
    found = Paths().static_checks({}, {"rectangular.cu": (None, b'#include "ex01.cuh"\n'
                                                           b'# 1 "/usr/include/x.h" 1 3\n')})
    check("static checks: findings show no stage path, and a flagged line marker is one",
          not any("/g/" in f for f in found) and any("line marker" in f for f in found) and
          len(found) == 3, found)
    # The grading's cgroup, on a stand-in of the cgroup v2 files: its limits are written and
    # the grader enters it; without the controllers, the report says why.
    import limits
    with tempfile.TemporaryDirectory(prefix="grader-cgroup-") as tmp:
        root = Path(tmp)
        (root / "cgroup.controllers").write_text("cpu memory pids\n")
        (root / "cgroup.subtree_control").write_text("")
        lim = limits.Limits(1 << 30, 300, root=root)
        note = lim.enter() if os.geteuid() == 0 else "not root"
        group = root / limits.PARENT / ("grading-%d" % os.getpid())
        ok = os.geteuid() != 0 or (
            "1024 MiB" in note and (group / "memory.max").read_text() == str(1 << 30) and
            (group / "pids.max").read_text() == "300" and
            (group / "cgroup.procs").read_text() == str(os.getpid()))
        lim.leave()
        (root / "cgroup.controllers").write_text("cpu hugetlb\n")
        bare = limits.Limits(1 << 30, 300, root=root).enter()
        check("limits: a cgroup per grading with its memory and process limits; without the "
              "controllers the report says why", ok and "no cgroup for this grading" in bare
              and "no memory and pids controllers" in bare, "%s / %s" % (note, bare))
    with tempfile.TemporaryDirectory() as tmp:
        class Runs(runs.RunMixin):
            private = Path(tmp)
        r = Runs()
        ram, shm = r.data_dir(True), os.statvfs("/dev/shm") if os.path.isdir("/dev/shm") else None
        roomy = shm is not None and shm.f_bavail * shm.f_frsize >= 4 << 30
        check("a timed run's output goes to memory (/dev/shm) where it has room, other runs' to "
              "the stage", r.data_dir(False) == Path(tmp) and ram.is_dir() and
              (str(ram).startswith("/dev/shm/") if roomy else ram == Path(tmp)), str(ram))
        if ram != Path(tmp):
            shutil.rmtree(ram, ignore_errors=True)

    class Settling(runs.RunMixin):  # a killed run's process leaves the device on the 3rd look
        def __init__(self, lingers):
            self.gpu, self.looks, self.lingers, self.r = True, 0, lingers, results.Results()

        def device_processes(self):
            self.looks += 1
            return {1} | ({2} if self.looks <= self.lingers else set())
    s, t0 = Settling(3), time.monotonic()
    s.settle({1})
    late, t1 = Settling(10 ** 6), time.monotonic()
    late.settle({1}, limit_s=0.2)
    check("after a killed run the next waits until the GPU no longer holds the killed run, at most "
          "its limit, and says so past it", s.looks == 4 and not s.r.notes and
          time.monotonic() - t1 < 1 and late.r.notes and t1 - t0 < 1, "%d looks" % s.looks)
    out += sandbox_checks()
    out += dry_gpu_checks(m)
    out += probe_checks(m)
    out += class_command_checks()
    out += class_retry_checks()
    return out


FAKE_GRADER = r'''#!/usr/bin/env python3
# A stand-in for grade.py in the class command's unit checks: one entry per exercise and a timed
# one, at once, or a grading that never ends when the submission's rectangular.cu says "sleep".
# "disturbed N" ("busy N") in it: its first N gradings leave the timed entry not graded, as a busy
# machine does (gradings counted in the student's out folder).
import json, os, re, sys, time
sys.path.insert(0, %(grader_dir)r)
sys.dont_write_bytecode = True
from grade import die_with_parent
a = sys.argv[1:]
opt = lambda k: a[a.index(k) + 1] if k in a else ""
if opt("--parent-pid"):
    die_with_parent(int(opt("--parent-pid")))
out = opt("--out")
with open(os.path.join(os.path.dirname(out), "..", "graded.log"), "a") as f:
    f.write(os.path.basename(out) + "\n")
if "--no-gpu" not in a:  # graded with the GPUs visible: listed for the --gpus none check
    with open(os.path.join(os.path.dirname(out), "..", "gpu.log"), "a") as f:
        f.write(os.path.basename(out) + "\n")
src = os.path.join(opt("--submission"), "01_rectangular", "rectangular.cu")
if os.path.isfile(src) and "sleep" in open(src).read():
    open(os.path.join(out, "pid"), "w").write(str(os.getpid()))
    time.sleep(300)
tests = [{"name": ex, "score": 1, "max_score": 2, "status": "passed", "output": "",
          "extra_data": {"exercise": ex, "kind": "test", "outcome": "passed"}}
         for ex in ("01_rectangular", "02_swizzle", "03_inplace")]
speed = {"name": "speed", "score": 1, "max_score": 1, "status": "passed", "output": "",
         "extra_data": {"exercise": "01_rectangular", "kind": "timed", "outcome": "passed"}}
m = re.search(r"(disturbed|busy) (\d+)", open(src).read() if os.path.isfile(src) else "")
calls = os.path.join(out, "calls")
n = int(open(calls).read()) + 1 if os.path.isfile(calls) else 1
open(calls, "w").write(str(n))
if m and n <= int(m.group(2)):
    why = {"disturbed": "retry: the timed runs on 64 x 64 varied more than the verdict can bear "
                        "(the machine was busy); grade this exercise again",
           "busy": "the GPU was busy: pid 1 (run again 3 times); grade it when the GPU is free"}
    speed.update(score=0, status="failed", output="not graded: " + why[m.group(1)])
    speed["extra_data"].update(outcome="not_graded", reason=why[m.group(1)])
tests.append(speed)
json.dump({"score": sum(t["score"] for t in tests), "tests": tests,
           "extra_data": {"max_score": 7, "not_graded": 1 - speed["score"]}},
          open(os.path.join(out, "results.json"), "w"))
'''


def class_command_checks():
    """The class command around its gradings, with a stand-in grader (seconds): the gradebook's
    cells, identical submissions, resume and its options, and a stop that ends the gradings."""
    out = []
    with tempfile.TemporaryDirectory(prefix="grader-class-units-") as tmp:
        tmp = Path(tmp)
        fake = tmp / "fake_grade.py"
        fake.write_text(FAKE_GRADER % {"grader_dir": str(GRADER_DIR)})
        subs, res = tmp / "subs", tmp / "out"

        def student(name, text):
            d = subs / name / "01_rectangular"
            d.mkdir(parents=True, exist_ok=True)
            (d / "rectangular.cu").write_text(text)

        def run_class(*extra, wait=True):
            cmd = [sys.executable, str(GRADER_DIR / "grade_class.py"), "--submissions",
                   str(subs), "--out", str(res), "--gpus", "none", "--cpu-lanes", "1",
                   "--quiet", "--grader", str(fake)] + list(extra)
            if not wait:  # Ctrl-C's signal as a terminal sends it, even where this self-test
                # runs in the background (a shell's `&` starts its command with SIGINT ignored)
                return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                         signal.SIG_DFL))
            return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

        def book():
            with open(res / "gradebook.csv", newline="") as f:
                return {r["student"]: r for r in csv.DictReader(f)}

        def graded():
            log = res / "graded.log"
            names = log.read_text().split() if log.is_file() else []
            log.unlink(missing_ok=True)
            return names

        for name, text in (("=1+2", "a"), ("@cmd", "b"), ("alice", "c"), ("bob", "c"),
                           ("carol", "d")):
            student(name, text)
        r = run_class()
        rows, done = book(), graded()
        gpu_log = res / "gpu.log"
        out.append(("class command: --gpus none grades with --no-gpu, so that no CPU lane uses "
                    "the machine's GPUs beside the others",
                    not gpu_log.is_file(), "graded with the GPUs visible: %s" % (
                        gpu_log.read_text().split() if gpu_log.is_file() else [])))
        out.append(("class command: a cell that begins with = + - @ is written as text",
                    set(rows) == {"'=1+2", "'@cmd", "alice", "bob", "carol"},
                    "rows %s, %s" % (sorted(rows), r.stderr[-300:])))
        out.append(("class command: every one of identical submissions is flagged, the first "
                    "too, and they are graded once",
                    "same files as bob" in rows.get("alice", {}).get("flags", "") and
                    "same files as alice" in rows.get("bob", {}).get("flags", "") and
                    "same files" not in rows.get("carol", {}).get("flags", "x") and
                    sorted(done) == ["=1+2", "@cmd", "alice", "carol"],
                    "graded %s, flags %s" % (done, {k: v["flags"] for k, v in rows.items()})))
        student("dave", "d")  # a late copy of a student graded in the first run
        run_class()
        rows, done = book(), graded()
        out.append(("class command: a late copy of a resumed student is flagged, both of them",
                    done == [] and "same files as dave" in rows.get("carol", {}).get("flags", "")
                    and "same files as carol" in rows.get("dave", {}).get("flags", ""),
                    "graded %s, flags %s" % (done, {k: v["flags"] for k, v in rows.items()})))
        run_class("--grade-arg=--exercises=01_rectangular")
        done = graded()
        out.append(("class command: a report graded with other options is not resumed",
                    sorted(done) == ["=1+2", "@cmd", "alice", "carol"], "graded %s" % done))
        student("sleeper", "sleep")
        for how in ("SIGINT", "SIGKILL"):
            shutil.rmtree(res / "students" / "sleeper", ignore_errors=True)
            proc = run_class("--no-resume", wait=False)
            pid_file = res / "students" / "sleeper" / "pid"
            until = time.monotonic() + 60
            while not pid_file.is_file() and time.monotonic() < until and proc.poll() is None:
                time.sleep(0.1)
            time.sleep(0.3)
            child = int(pid_file.read_text() or 0) if pid_file.is_file() else 0
            os.kill(proc.pid, getattr(signal, how))
            rc = proc.wait(timeout=30)
            until = time.monotonic() + 5
            while child and os.path.exists("/proc/%d" % child) and time.monotonic() < until:
                time.sleep(0.1)
            alive = child and os.path.exists("/proc/%d" % child) and \
                b"fake_grade" in Path("/proc/%d/cmdline" % child).read_bytes()
            out.append(("class command: %s to the class command ends its running gradings" % how,
                        child > 0 and not alive and (how != "SIGINT" or rc == 130),
                        "grading pid %s still running: %s, exit code %s" % (child, alive, rc)))
            if alive:
                os.kill(child, signal.SIGKILL)
    return out


def class_retry_checks():
    """The class command's retry passes, with the stand-in grader (seconds): a report with an
    entry a busy machine left not graded is graded again at the end, the last report kept."""
    out = []
    with tempfile.TemporaryDirectory(prefix="grader-class-retry-") as tmp:
        tmp = Path(tmp)
        fake = tmp / "fake_grade.py"
        fake.write_text(FAKE_GRADER % {"grader_dir": str(GRADER_DIR)})
        subs = tmp / "subs"
        # alice: disturbed once; alice2: her copy; carol: the GPU always busy; bob: never.
        for name, text in (("alice", "disturbed 1"), ("alice2", "disturbed 1"),
                           ("bob", "quiet"), ("carol", "busy 9")):
            (subs / name / "01_rectangular").mkdir(parents=True)
            (subs / name / "01_rectangular" / "rectangular.cu").write_text(text)

        def run_class(res, *extra):
            r = subprocess.run([sys.executable, str(GRADER_DIR / "grade_class.py"),
                                "--submissions", str(subs), "--out", str(res), "--gpus", "none",
                                "--cpu-lanes", "2", "--quiet", "--grader", str(fake)] +
                               list(extra), capture_output=True, text=True, timeout=120)
            if r.returncode != 0:  # an option it does not know, say
                return r, {}, {}, ""
            with open(res / "gradebook.csv", newline="") as f:
                book = {r["student"]: r for r in csv.DictReader(f)}
            meta = {n: json.loads((res / "students" / n / "meta.json").read_text())
                    for n in book}
            return r, book, meta, (res / "summary.txt").read_text()

        r, book, meta, summary = run_class(tmp / "out")
        cells = {n: (row["total"], row["ungraded_points"]) for n, row in book.items()}
        out.append(("class command: a grading whose timed runs were disturbed is graded again at "
                    "the end (its copy takes the new report): full points, meta.json's retried",
                    cells == {"alice": ("4", "0"), "alice2": ("4", "0"), "bob": ("4", "0"),
                              "carol": ("3", "1")} and
                    [meta[n].get("retried") for n in ("alice", "alice2", "bob")] == [1, 1, 0] and
                    meta["alice2"].get("identical_to") == "alice",
                    "rows %s, meta %s, %s" % (cells, meta, r.stderr[-300:])))
        out.append(("class command: at most --retries passes (default 2), shown and summed up; "
                    "what is left is listed as not graded",
                    meta.get("carol", {}).get("retried") == 2 and
                    "retry pass 2: 1 submissions" in r.stderr and
                    "regraded for a disturbed timing: 2 submissions (pass 1: 2, pass 2: 1); "
                    "still not graded: carol" in summary, summary[-300:] + r.stderr[-300:]))
        r, book, meta, summary = run_class(tmp / "out0", "--retries", "0")
        out.append(("class command: --retries 0 grades nothing again (the entry stays not graded)",
                    book.get("alice", {}).get("ungraded_points") == "1" and
                    meta["alice"].get("retried") == 0 and "retry pass" not in r.stderr and
                    "still not graded: alice, alice2, carol" in summary,
                    "%s %s" % (book.get("alice"), r.stderr[-300:])))
    return out


def sandbox_unavailable(work):
    """'' when bubblewrap isolates here (as root), else why not."""
    private = Path(work) / "sandbox-check"
    private.mkdir(parents=True, exist_ok=True)
    os.chmod(private, 0o700)
    try:
        sandbox.Sandbox.create(private=private)
        return ""
    except sandbox.Unavailable as err:
        return str(err)


def sandbox_checks():
    """The sandbox itself, as root with bubblewrap (it isolates nothing otherwise)."""
    out = []
    if os.geteuid() != 0:
        return [("sandbox: not root, so not checked (run the self-test as root)", True, "")]
    with tempfile.TemporaryDirectory() as tmp:
        why = sandbox_unavailable(tmp)
    if why:
        return [("sandbox: not checked, bubblewrap cannot isolate here: " + why, True, "")]
    with tempfile.TemporaryDirectory() as tmp:
        private = Path(tmp) / "private"
        private.mkdir(mode=0o700)
        shown = Path(tmp) / "shown"
        shown.mkdir(mode=0o755)
        box = sandbox.Sandbox.create(private=private)
        log = private / "log"
        token = "grader-selftest-orphan-%d" % os.getpid()
        start = time.monotonic()
        # An orphan in its own session that holds the output, a write into a shown folder, a
        # look at the course, at pid 1 and at the libraries, a System V segment, a detached burner.
        script = ("(setsid sh -c 'sleep 300; : %s' &); (setsid sh -c 'while :; do :; done' &); "
                  "echo written > %s/outside; ls %s 2>/dev/null | sed 's/^/LIS''TED /'; "
                  "ipcmk -M 4096 -p 0600 >/dev/null; "
                  "tr '\\0' ' ' < /proc/1/cmdline; echo; "
                  "cat /usr/local/cuda/lib64/libcublas.so 2>&1 | head -c 4 | od -c | head -1; "
                  "sleep 1; echo done" % (token, shown, COURSE_DIR))
        ran = box.run(["/bin/sh", "-c", script], timeout=30, log=log, ro=[shown])
        took = time.monotonic() - start
        out.append(("sandbox: an orphan holding the output does not stall the run", took < 20,
                    "took %.1f s" % took))
        out.append(("sandbox: the command's exit and output are reported",
                    ran.rc == 0 and "done" in ran.output, ran.output[-300:]))
        left = subprocess.run(["pgrep", "-f", token], capture_output=True, text=True).stdout
        out.append(("sandbox: nothing outlives the run", left.strip() == "", "left: %s" % left))
        out.append(("sandbox: a write into a folder it is shown is refused",
                    not (shown / "outside").exists(), ran.output[-300:]))
        out.append(("sandbox: the course is not there", "LISTED" not in ran.output,
                    ran.output[-300:]))
        out.append(("sandbox: pid 1's command line holds no paths of the grader",
                    str(private) not in ran.output and "--bind" not in ran.output,
                    ran.output[-300:]))
        out.append(("sandbox: its System V segment died with it",
                    not any(line.split()[2:3] == [str(box.uid)] for line in
                            Path("/proc/sysvipc/shm").read_text().splitlines()[1:]), ""))
        out.append(("sandbox: the CPU time of a detached process is counted", ran.cpu > 0.1,
                    "%.2f s" % ran.cpu))
        if Path("/usr/local/cuda/lib64/libcublas.so").exists():
            out.append(("sandbox: cuBLAS cannot be loaded (the file is empty)",
                        "177   E   L   F" not in ran.output, ran.output[-300:]))
        start = time.monotonic()
        ran = box.run(["/bin/sh", "-c", "sleep 100 & sleep 100"], timeout=1, log=log)
        out.append(("sandbox: the time limit holds", ran.timed_out and
                    time.monotonic() - start < 10, "%.1f s" % (time.monotonic() - start)))
        # A tool installed outside the system folders (a CMake in a Python environment under
        # /opt, say), several folders down from any folder the sandbox shows: it must still run.
        top = Path(tempfile.mkdtemp(prefix="grader-selftest-", dir="/var/lib"))
        try:
            tool = top / "opt" / "env"
            (tool / "bin").mkdir(parents=True)
            (tool / "bin" / "tool").write_text("#!/bin/sh\necho tool ran\n")
            os.chmod(tool / "bin" / "tool", 0o755)
            for d in (top, top / "opt"):
                os.chmod(d, 0o755)
            box.roots.append(str(tool))
            ran = box.run([str(tool / "bin" / "tool")], timeout=20, log=log)
            box.roots.remove(str(tool))
            out.append(("sandbox: a tool installed deep outside the system folders runs",
                        "tool ran" in ran.output, ran.output[-300:]))
        finally:
            shutil.rmtree(top, ignore_errors=True)
        data = private / "data"
        data.touch(mode=0o600)
        os.chown(data, box.uid, box.gid)
        ran = box.run(["/bin/bash", "-c", "echo ready >&{ready}; read go; sleep 0.3; "
                       "echo \"$go\" > /run/grader/data"], timeout=20, log=log,
                      files={"data": (data, True)}, handshake=lambda: "go 1234\n")
        took = ran.exit_time - ran.go_time if ran.go_time and ran.exit_time else -1
        out.append(("sandbox: the timed runs' handshake and files",
                    ran.go_time is not None and data.read_text() == "go 1234\n" and 0.25 < took < 10,
                    "ready %s, go to exit %.2f s, data %r, %s" % (
                        ran.go_time, took, data.read_text()[:40], ran.output[-200:])))
        # A process's data (its heap) is bounded: one run cannot take the host's memory.
        box.data_mib = 256
        ran = box.run(["python3", "-c", "try:\n  b = bytearray(1 << 30); print('ALLOCATED')\n"
                       "except MemoryError:\n  print('REFUSED')"], timeout=30, log=log)
        box.data_mib = sandbox.DATA_MIB
        out.append(("sandbox: a process's data is limited (1 GiB refused under a 256 MiB limit)",
                    "REFUSED" in ran.output, ran.output[-200:]))
        # Two gradings at once: each claims a sandbox user of its own, so a submission holding
        # every process its user may have does not starve the one beside it.
        private2 = Path(tmp) / "private2"
        private2.mkdir(mode=0o700)
        other = sandbox.Sandbox.create(private=private2)
        hog = threading.Thread(target=lambda: box.run(
            ["/bin/sh", "-c", "i=0; while [ $i -lt 1020 ]; do sleep 30 & i=$((i+1)); done; "
             "wait"], timeout=12, log=private / "hog"))  # 1021 of its user's 1024
        hog.start()
        until = time.monotonic() + 10
        count = 0
        while time.monotonic() < until:
            count = len(subprocess.run(["pgrep", "-u", str(box.uid)], capture_output=True,
                                       text=True).stdout.split())
            if count >= 1000:
                break
            time.sleep(0.2)
        ran = other.run(["/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8; do sleep 0.1 & done; "
                         "wait; echo forked"], timeout=20, log=private2 / "log")
        hog.join()
        out.append(("sandbox: concurrent gradings run as different users (%d processes of one "
                    "do not starve the other)" % count,
                    other.uid != box.uid and "forked" in ran.output and count >= 1000,
                    "users %s and %s, %d processes, %s" % (box.uid, other.uid, count,
                                                          ran.output[-200:])))
    return out


class DryGrader(grade.Grader):
    """The grader's GPU paths with the processes replaced by canned outcomes: the entries, the
    technique, the sanitizers, the timed runs and the rules that zero an exercise, without a GPU."""

    def __init__(self, manifest, scenario):
        class Args:
            no_gpu = no_sanitizer = no_speed = no_sandbox = False
            test_timeout = jobs = exercise_deadline = deadline = 0
            sanitizer_tools = ""
            cmake_arg = []
            sandbox_user = "x"
        super().__init__(Args(), manifest, results.Results())
        self.scenario = scenario
        self.gpu = True
        self.sanitizer, self.sanitizer_mode = "/bin/true", "user"
        self.build = Path("/nonexistent")
        self.box = sandbox.Sandbox(sandbox.NONE)
        self.busy_pause_s = 0
        self.timed_counts, self.speed_calls = {}, 0
        if scenario.get("no_time") == "submission":
            self.deadline = time.monotonic()
        elif scenario.get("no_time"):
            self.timeouts["exercise"] = 0

    def ran(self, cpu=1.0, wall=None):
        r = sandbox.Ran(0, None, False, 0.5, cpu, 100.0, "")
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
            # A run's wall time: its start and end (0.5 s), the loop (the course's kernel:
            # loop_ms), and what a neighbour adds to this run's start or end: "delays" lists
            # the extra seconds of the submission's successive timed runs, per exercise.
            loop = sc.get("loop_ms", 100) / 1000.0
            # "second_delay": seconds added to the second timed run of each round, whichever
            # kernel it is (the kernel's writeback throttling the second 256 MiB output written).
            self.speed_calls += 1
            delay = sc.get("second_delay", 0.0) if self.speed_calls % 2 == 0 else 0.0
            if not probe:
                done = self.timed_counts.get(binary, 0)
                self.timed_counts[binary] = done + 1
                delays = sc.get("delays", [])
                delay += delays[done] if done < len(delays) else 0.0
            v = {"item": 0, "ok": True,
                 "timing": "roundtrip_ms=20 loop_ms=%g" % (loop * 1000)}
            return (self.ran(cpu=1.0 if probe else 1.0 + sc.get("host_cpu", 0),
                             wall=0.5 + loop + delay if probe else
                             0.5 + loop + sc.get("slower_s", 0) + delay), [v], "")
        ok = not (items[0] == "swizzle" and sc.get("two_swizzles"))
        launches = sc.get("launch", "k 4096 0 1024") if items[0].startswith("transpose") else ""
        return self.ran(), [{"item": i, "ok": ok, "message": "differs" if not ok else "",
                             "launches": launches} for i in range(len(items))], ""

    def sanitize(self, binary, number, items, tool, mode, timeout):
        sc = self.scenario
        errors = None if sc.get("tool_killed") else \
            1 if sc.get("race") and tool == "racecheck" else 0
        return (self.ran(), errors, "ERROR SUMMARY: %s errors" % errors, "",
                [{"item": i, "ok": True} for i in range(len(items))])

    def shared_memory_static(self, ex, want):
        return (False, "4224 bytes") if self.scenario.get("padded") else (True, "4096 bytes")

    def course_shapes(self, spec):
        return [(3, 5)]

    def memory_monitor(self):
        class Monitor:
            ready_used, peak, samples = None, 0, 3

            def mark_ready(self):
                self.ready_used = 1 << 30

            def start(self, root=None):
                pass

            def stop(self):
                pass

            def busy(self):
                return busy
        # "busy": another process on the device during the first "busy_monitors" runs (all
        # of them without it)
        busy = self.scenario.get("busy", "")
        self.monitors = getattr(self, "monitors", 0) + 1
        if self.monitors > self.scenario.get("busy_monitors", 1 << 30):
            busy = ""
        return Monitor()


def dry_gpu_checks(m):
    out = []
    full = {"01_rectangular": 35, "02_swizzle": 35, "03_inplace": 30}
    scenarios = [
        ("everything right: 100", {}, full),
        ("a race: the kernel tests zeroed", {"race": True},
         {"01_rectangular": 18, "02_swizzle": 22, "03_inplace": 17}),
        ("the sanitizer killed or its report replaced: the kernel tests zeroed",
         {"tool_killed": True}, {"01_rectangular": 18, "02_swizzle": 22, "03_inplace": 17}),
        ("host work: the exercise lost", {"host_cpu": 20, "slower_s": 10},
         {"01_rectangular": 0, "02_swizzle": 0, "03_inplace": 0}),
        ("slow but honest: the speed entry only", {"slower_s": 1},
         {"01_rectangular": 33, "02_swizzle": 33, "03_inplace": 28}),
        ("a second buffer: exercise 3 lost", {"extra_mib": 256}, dict(full, **{"03_inplace": 0})),
        ("padding: the swizzle's points lost", {"padded": True}, {"02_swizzle": 21}),
        ("dynamic shared memory at launch: the swizzle's points lost",
         {"launch": "k 4096 128 1024"}, {"02_swizzle": 21}),
        ("a launched kernel without the tile: the swizzle's points lost",
         {"launch": "naive 0 0 1024"}, {"02_swizzle": 21}),
        ("no launch seen: the swizzle's points lost", {"launch": ""}, {"02_swizzle": 21}),
        ("another process on the GPU at every try: the timed entries not graded, not failed",
         {"busy": "pid 4242 (python3 load.py)"},
         {"01_rectangular": 33, "02_swizzle": 33, "03_inplace": 25}),
        ("another process on the GPU once: the timed runs again, graded", {
            "busy": "pid 4242 (python3 load.py)", "busy_monitors": 1}, full),
        # Issue 45's lost points: an honest exercise 3 whose course loop is short (15 ms) and
        # whose one timed run ended 60 ms late, its exit delayed by a neighbour lane's work.
        # One run decided the speed, so 2 points were lost in one lane and not in another.
        ("a neighbour delays one timed run's end: full marks, the round is run again",
         {"loop_ms": 15, "delays": [0.06]}, full),
        ("a neighbour delays the first two rounds: still full marks",
         {"loop_ms": 15, "delays": [0.3, 0.06, 0, 0]}, full),
        # The class run on 4 lanes of 4 x H200: 2 of 24 honest answers lost the speed's points.
        # Each round ran the course's kernel, then the submission: anything the machine does to
        # the second run of a pair fell on the submission every time, and looked steady.
        ("the second run of every round 0.3 s late: full marks (the order alternates)",
         {"loop_ms": 15, "second_delay": 0.3}, full),
        ("a machine too busy for a steady time: the speed 'not graded: retry', never failed",
         {"loop_ms": 15, "delays": [0.3, 0.2, 0.1, 0.4] * 3, "expect_retry": True},
         {"01_rectangular": 33, "02_swizzle": 33, "03_inplace": 28}),
        ("slow but honest on a busy machine: the speed entry fails in every lane",
         {"slower_s": 1, "delays": [0.06, 0, 0.1, 0]},
         {"01_rectangular": 33, "02_swizzle": 33, "03_inplace": 28}),
        ("a host-only swizzle: the swizzle's points lost", {"two_swizzles": True},
         {"02_swizzle": 21}),
        ("the submission's time spent: nothing more runs", {"no_time": "submission"},
         {"01_rectangular": 0, "02_swizzle": 0, "03_inplace": 0}),
        ("out of time: nothing more runs", {"no_time": True},
         {"01_rectangular": 0, "02_swizzle": 0, "03_inplace": 0}),
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
            speed = [t for t in g.r.tests if t["extra_data"].get("kind") == "speed"]
            if scenario.get("expect_retry"):
                ok = ok and speed and all(t["extra_data"]["outcome"] == results.NOT_GRADED and
                                          "retry" in t["output"] for t in speed)
                detail += "; speed entries: %s" % [t["output"][:120] for t in speed]
        except Exception:  # a bug in a GPU path shows here
            import traceback
            ok, detail = False, traceback.format_exc()[-1500:]
        out.append(("GPU paths, dry: " + title, ok, detail))
    return out


def probe_checks(m):
    """The device probe on a busy machine: a case whose tests get 5 s once graded every GPU
    entry "not graded: no CUDA device" when starting CUDA took longer than that (the probe had
    the test's limit). The probe has a limit of its own; past it the grading says to grade
    again, never that there is no device."""
    out = []
    for title, probe_s, want_gpu, want_why in (
            ("a probe that answers in 8 s (tests get 5 s) finds the device", 8, True, ""),
            ("a probe past its own limit: grade again, not 'no CUDA device'", 1000, False,
             "grade again")):
        g = DryGrader(m, {})
        g.timeouts["entry"] = 5

        def run_plan(binary, number, items, timeout, probe_s=probe_s, **kw):
            timed_out = probe_s > timeout
            r = sandbox.Ran(None if timed_out else 0, None, timed_out, min(probe_s, timeout),
                            0.1, 0.0, "")
            return r, ([] if timed_out else [{"item": 0, "ok": True, "message": "GPU 0"}]), ""
        g.run_plan = run_plan
        g.args.no_gpu = False
        try:
            g.detect_gpu()
            ok = g.gpu == want_gpu and (want_gpu or want_why in g.no_gpu_why)
            detail = "gpu %s, why %r" % (g.gpu, getattr(g, "no_gpu_why", ""))
        except Exception:
            import traceback
            ok, detail = False, traceback.format_exc()[-1500:]
        out.append(("device probe: " + title, ok, detail))
    return out
