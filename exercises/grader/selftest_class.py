#!/usr/bin/env python3
"""The class command's self-test (Python standard library only): a generated class of at least 30
submissions (the answers, three times, so two are identical; the skeletons; the self-test's broken
and hostile cases), graded by grade_class.py, then checked:
  - every student has a report and a gradebook row, and each row's points per exercise and total
    are those of the student's own results.json;
  - each case's points per exercise are what the case expects (its "total" on one exercise; the
    base's points on the exercises it does not change), the answers' and the skeletons' too;
  - identical submissions are graded once and flagged; a second run resumes (grades nothing);
  - two submissions graded alone by grade.py give the points of their gradebook rows;
  - a grading past its time limit is stopped and recorded, and the next one goes on.
Run by selftest.py (make grader-selftest); on its own:

    python3 exercises/grader/selftest_class.py [--work DIR] [--gpu] [--make-only DIR] [--lanes ...]
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GRADER_DIR = Path(__file__).resolve().parent
COURSE_DIR = GRADER_DIR.parent.parent
sys.path.insert(0, str(GRADER_DIR))
sys.dont_write_bytecode = True
import grade_class  # noqa: E402
from selftest_cases import CaseError, load_cases, make_submission  # noqa: E402

# Cases left out of the class: they need their own grade.py arguments, a submission graded
# before them, hidden tests, or a GPU.
LEFT_OUT = {"batch_reads_other", "deadline", "ex03_infinite_loop", "hidden_forged_list",
            "hidden_tests", "sanitizer_aware", "sanitizer_symlink"}
CPU_POINTS = {"01_rectangular": 16, "02_swizzle": 18, "03_inplace": 12}
SIZE = 30


def make_class(dest, manifest):
    """Writes the class into @p dest: {student: {exercise id: expected CPU points}} (None: no
    expectation for that exercise)."""
    dest.mkdir(parents=True, exist_ok=True)
    expected = {}
    cases = [c for c in load_cases([], "cpu") if c["name"] not in LEFT_OUT]
    by_name = {c["name"]: c for c in cases}
    picked = ["solutions", "skeletons"] + [c["name"] for c in cases
                                           if c["name"] not in ("solutions", "skeletons")]
    picked = picked[:SIZE - 2]  # and two copies of the answers
    for name in picked:
        case = by_name[name]
        try:
            make_submission(case, manifest, dest / name)
        except CaseError:
            continue
        base = case.get("base", "solutions")
        want = {ex: (CPU_POINTS[ex] if base == "solutions" else 0) for ex in CPU_POINTS}
        changed = case.get("exercises") or list(CPU_POINTS)
        totals = [e["total"] for e in case["expect"].get("cpu", []) + case["expect"].get("both", [])
                  if "total" in e]
        for ex in changed:
            want[ex] = None
        if totals and len(changed) == 1:
            want[changed[0]] = totals[0]
        if name == "solutions":
            want = dict(CPU_POINTS)
        if name in ("skeletons", "does_nothing"):
            want = {ex: 0 for ex in CPU_POINTS}
        expected[name] = want
    for copy in ("solutions-copy-1", "solutions-copy-2"):  # identical to the answers
        make_submission(by_name["solutions"], manifest, dest / copy)
        expected[copy] = dict(CPU_POINTS)
    return expected


def read_book(out):
    with open(out / "gradebook.csv", newline="") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def per_exercise(doc):
    got = {}
    for t in doc["tests"]:
        ex = t["extra_data"]["exercise"]
        got[ex] = got.get(ex, 0.0) + t["score"]
    return got


def class_checks(work, gpu=False, lanes_arg=None, log=print):
    """[(name, ok, detail)] of the class command's checks; grades the class in @p work/class."""
    out_checks = []

    def check(name, ok, detail=""):
        out_checks.append((name, bool(ok), detail))

    manifest = grade_class.load_manifest()
    root = work / "class"
    subs, out = root / "submissions", root / "out"
    shutil.rmtree(subs, ignore_errors=True)
    shutil.rmtree(out / "students", ignore_errors=True)
    expected = make_class(subs, manifest)
    check("class: at least 30 submissions generated", len(expected) >= 30, "%d" % len(expected))
    # The lane reuses the self-test's staged build (each grading restores the course's files
    # and deletes what the previous submission built): only changed files recompile.
    lanes = root / "lanes"
    lanes.mkdir(parents=True, exist_ok=True)
    if (work / "stage").is_dir() and not (lanes / "cpu0").exists() and not gpu:
        (lanes / "cpu0").mkdir()
        (lanes / "cpu0" / "stage").symlink_to(work / "stage")
    cmd = [sys.executable, str(GRADER_DIR / "grade_class.py"), "--submissions", str(subs),
           "--out", str(out), "--stage-root", str(lanes), "--quiet"]
    cmd += lanes_arg or ([] if gpu else ["--gpus", "none", "--grade-arg=--no-gpu"])
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    check("class: grade_class.py exits 0", r.returncode == 0, r.stderr[-500:])
    book = read_book(out) if (out / "gradebook.csv").is_file() else {}
    check("class: a gradebook row per student", set(book) == set(expected),
          "missing %s" % sorted(set(expected) - set(book)))
    bad_agree, bad_expect = [], []
    for name, want in expected.items():
        row = book.get(name)
        f = out / "students" / name / "results.json"
        if not row or not f.is_file():
            bad_agree.append("%s: no report" % name)
            continue
        doc = json.loads(f.read_text())
        got = per_exercise(doc)
        if abs(float(row["total"]) - doc["score"]) > 1e-6 or any(
                abs(float(row[ex] or 0) - got.get(ex, 0.0)) > 1e-6 for ex in CPU_POINTS):
            bad_agree.append("%s: row %s, report %s" % (name, row, got))
        if not gpu:
            for ex, pts in want.items():
                if pts is not None and abs(got.get(ex, 0.0) - pts) > 1e-6:
                    bad_expect.append("%s %s: %g, expected %g" % (name, ex, got.get(ex, 0), pts))
    check("class: each gradebook row agrees with the student's results.json", not bad_agree,
          "; ".join(bad_agree[:3]))
    if not gpu:
        check("class: each case's points per exercise as the case expects", not bad_expect,
              "; ".join(bad_expect[:4]))
    flagged = [n for n in ("solutions-copy-1", "solutions-copy-2")
               if "same files as solutions" in book.get(n, {}).get("flags", "")]
    check("class: identical submissions graded once and flagged", len(flagged) == 2,
          "flagged: %s" % flagged)
    summary = (out / "summary.txt").read_text() if (out / "summary.txt").is_file() else ""
    check("class: summary with the distribution, the flagged and the ungraded",
          all(s in summary for s in ("score distribution", "flagged (", "entries not graded")),
          summary[:200])
    log("class: %d submissions graded in %.0f s (%.1f s each)" % (
        len(expected), seconds, seconds / max(1, len(expected))))
    # Resume: nothing graded again.
    start = time.monotonic()
    r2 = subprocess.run(cmd, capture_output=True, text=True)
    again = time.monotonic() - start
    metas = [json.loads((out / "students" / n / "meta.json").read_text()) for n in expected
             if (out / "students" / n / "meta.json").is_file()]
    check("class: a second run resumes (same content hash and course version: nothing graded)",
          r2.returncode == 0 and "resumed %d" % len(expected) in r2.stderr and again < 60,
          "%.0f s; %s" % (again, r2.stderr[-300:]))
    check("class: every report records its content hash and course version",
          len(metas) == len(expected) and all(m.get("hash") and m.get("course") for m in metas))
    # Alone: two submissions graded by grade.py, as `make grade` does.
    alone_bad = []
    for name in ("skeletons", "ex02_padded"):
        if name not in book:
            continue
        dest = root / "alone" / name
        cmd1 = [sys.executable, str(GRADER_DIR / "grade.py"), "--submission", str(subs / name),
                "--out", str(dest), "--stage", str(lanes / "cpu0" / "stage"), "--quiet"]
        if not gpu:
            cmd1.append("--no-gpu")
        subprocess.run(cmd1, capture_output=True)
        try:
            got = per_exercise(json.loads((dest / "results.json").read_text()))
        except (OSError, ValueError):
            alone_bad.append("%s: no report" % name)
            continue
        row = book[name]
        if any(abs(float(row[ex] or 0) - got.get(ex, 0.0)) > 1e-6 for ex in CPU_POINTS):
            alone_bad.append("%s: gradebook %s, alone %s" % (
                name, {ex: row[ex] for ex in CPU_POINTS}, got))
    check("class: submissions graded alone get their gradebook rows' points", not alone_bad,
          "; ".join(alone_bad))
    # A grading past its limit is stopped and recorded; the class goes on.
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        status, why = grade_class.run_grader(["sh", "-c", "sleep 30 & sleep 30"], 1, dict(
            os.environ), Path(tmp) / "log")
        status2, _ = grade_class.run_grader(["sh", "-c", "exit 3"], 5, dict(os.environ),
                                            Path(tmp) / "log2")
        check("class: a grading past its time limit is stopped (its children too) and recorded",
              status == "timeout" and status2 == "failed" and time.monotonic() - t0 < 10,
              "%s, %s" % (status, status2))
    return out_checks, seconds, len(expected)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default=str(COURSE_DIR / "build-grade" / "selftest"))
    ap.add_argument("--gpu", action="store_true", help="grade the GPU parts too")
    ap.add_argument("--make-only", default="", help="only write the class into this folder")
    args, rest = ap.parse_known_args()
    if args.make_only:
        expected = make_class(Path(args.make_only), grade_class.load_manifest())
        print("%d submissions in %s" % (len(expected), args.make_only))
        return 0
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    checks, _, _ = class_checks(work, args.gpu, rest or None)
    for name, ok, detail in checks:
        print("%s %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail and not ok
                           else ""))
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
