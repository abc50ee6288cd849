"""An instructor's hidden tests (a part of grade.Grader; Python standard library only).

Hidden tests are GoogleTest files linked with the submission's objects. Their names come from the
instructor's files (trusted), never from the test process; their points are capped
(hidden_tests.max_points). Each runs in its own sandbox, which shows its binary and nothing of the
hidden tests' sources or of the other exercises' hidden binaries; its verdict is what that process
reports about itself: a hostile submission shares the process and can forge a pass, so the
grader never gives hidden tests more than the cap (INSTRUCTORS.md, "Hidden tests")."""

import fnmatch
import json
import os
import re
import shutil

import sandbox
from checks import strip_comments
from results import NOT_GRADED
from tools import tail

TEST_MACRO = re.compile(r"^\s*(TEST|TEST_F)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.M)


def hidden_test_names(folder):
    """(full names of the TEST and TEST_F tests in the instructor's *.cu files, [notes])."""
    names, notes = [], []
    for path in sorted(folder.glob("*.cu")):
        text = strip_comments(path.read_text(errors="replace"), keep_strings=False)
        names += ["%s.%s" % (m.group(2), m.group(3)) for m in TEST_MACRO.finditer(text)]
        if re.search(r"\b(TEST_P|TYPED_TEST\w*)\s*\(", text):
            notes.append("%s: parameterized and typed tests are not graded (only TEST and "
                         "TEST_F)" % path.name)
    return list(dict.fromkeys(names)), notes


def is_gpu_test(name):
    return "Cpu" not in name


def clean_failure(text, stage_root):
    """A GoogleTest failure without its 'file:line / Failed' preamble and without stage paths."""
    lines = text.splitlines()
    while lines and (re.match(r"^\S+:\d+$", lines[0].strip())
                     or lines[0].strip() in ("Failed", "Failure", "unknown file")):
        lines.pop(0)
    return "\n".join(lines).replace(str(stage_root) + "/", "")


def skip_message(output):
    m = re.search(r"Skipped\n(.*)", output)
    return m.group(1).strip() if m else "skipped"


def read_gtest_json(text):
    """{full name: (result, [failure messages])} from a --gtest_output=json report."""
    doc = json.loads(text)
    results = {}
    for suite in doc.get("testsuites", []):
        for t in suite.get("testsuite", []):
            name = "%s.%s" % (suite.get("name"), t.get("name"))
            results[name] = (t.get("result", "COMPLETED"),
                             [f.get("failure", "") for f in t.get("failures", [])])
    return results


class HiddenMixin:

    def hidden_plan(self, ex):
        """[(name, points, visibility)] of the exercise's hidden tests, their points scaled down
        to hidden_tests.max_points together."""
        rules = self.m["hidden_tests"]
        names, notes = hidden_test_names(self.hidden_dir / ex["id"])
        self.r.notes += ["hidden tests: " + n for n in notes]
        plan = []
        for name in names:
            points, visibility = rules.get("points", 1), rules.get("visibility", "after_published")
            for rule in rules.get("rules", []):
                if fnmatch.fnmatchcase(name, rule["match"]):
                    points = rule.get("points", points)
                    visibility = rule.get("visibility", visibility)
            plan.append([name, float(points), visibility])
        total, cap = sum(p[1] for p in plan), rules.get("max_points", 10)
        if total > cap:
            for p in plan:
                p[1] = round(p[1] * cap / total, 4)
        return plan

    def run_hidden(self, ex):
        binary = self.build / "bin" / ex["hidden_target"]
        if not binary.is_file():
            return
        self.ex_deadline = self.deadline
        for name, points, visibility in self.hidden_plan(ex):
            self.run_hidden_test(ex, name, points, visibility, binary)

    def hidden_run(self, binary, args, timeout):
        n = self.next_id()
        outdir = self.runs / n
        outdir.mkdir(mode=0o700)
        owner = os.getuid()
        if self.box.isolated:
            owner = self.box.uid
            os.chown(outdir, self.box.uid, self.box.gid)
        log = self.private / ("hidden-" + n)
        try:
            ran = self.boxed([binary] + args(self.box.mount_point("out", outdir)), timeout, log,
                             ro=[self.build / "bin"], files={"out": (outdir, True)},
                             reveal=[binary], libraries=True)
            report = sandbox.read_owned(outdir, "report.json", 16 << 20, {owner})
        finally:
            shutil.rmtree(outdir, ignore_errors=True)
            log.unlink(missing_ok=True)
        return ran, report

    def run_hidden_test(self, ex, name, points, visibility, binary):
        ex_id = ex["id"]
        gpu = is_gpu_test(name)
        entry_name = "%s | hidden: %s" % (ex["title"], name)
        common = dict(gtest=name, visibility=visibility, tags=["gpu" if gpu else "cpu"],
                      verdict_from="the test process's own GoogleTest report")

        def add(passed, text, outcome, **extra):
            self.r.add(ex_id, "hidden", entry_name, points, passed, text, outcome,
                       **dict(common, **extra))

        if gpu and not self.gpu:
            return add(False, "not graded: " + self.no_gpu_why, NOT_GRADED, reason="no CUDA device")
        if self.time_left(self.timeouts["entry"]) < 1:
            return add(False, "not run: the submission's time is spent", "not_run")
        ran, report = self.hidden_run(
            binary, lambda d: ["--gtest_filter=%s" % name, "--gtest_output=json:%s/report.json" % d,
                               "--gtest_color=no"], self.time_left(self.timeouts["entry"]))
        common["seconds"] = ran.seconds
        if ran.timed_out:
            return add(False, "timed out after %g s: the test never finished; every process it "
                       "started was killed.\nlast output:\n%s"
                       % (round(ran.limit), tail(ran.output, 1500)), "timeout")
        try:
            results = read_gtest_json(report) if report else None
        except ValueError:
            results = None
        if not results or name not in results or ran.signal_no:
            why = ("killed by %s" % ran.signal_name()) if ran.signal_no else \
                  ("exited with code %s" % ran.rc)
            return add(False, "the test process %s without a report of this test (a crash?)."
                       "\nlast output:\n%s" % (why, tail(ran.output, 3000)), "crashed")
        result, failures = results[name]
        if result == "SKIPPED":
            msg = skip_message(ran.output)
            # Only the grader's probe says whether there is a GPU: a skip is no verdict.
            return add(False, "skipped: " + msg, "skipped")
        if failures or ran.rc != 0:
            text = "\n\n".join(clean_failure(f, self.course_root) for f in failures)
            if not text:
                text = "the test failed (exit code %s):\n%s" % (ran.rc, tail(ran.output, 3000))
            return add(False, tail(text), "cuda_error" if "CUDA error" in text else "failed")
        return add(True, "passed (%.1f s)" % ran.seconds, "passed")
