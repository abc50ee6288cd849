#!/usr/bin/env python3
"""Self-test of the exercise grader (Python standard library only).

    python3 exercises/grader/selftest.py            no GPU needed, every case (make grader-selftest)
    python3 exercises/grader/selftest.py --quick    the cases of QUICK_CASES only (run by
                                                    `make test`, label cpu)
    python3 exercises/grader/selftest.py --gpu      on a machine with a CUDA device, as root
    python3 exercises/grader/selftest.py --unit     the fast checks only (seconds)

Without --quick, --cases or --gpu it also grades a generated class of 30 submissions with the
class command (selftest_class.py) and checks the gradebook against the reports.

1. Unit checks (selftest_units.py): grade.py's pieces, the manifest against the course's test
   sources and the judge's checks, the readers of what a submission shapes (bounded), every
   case's patch against today's course; as root, the sandbox itself (bubblewrap); the GPU paths
   dry (canned outcomes instead of processes) and the rules that zero an exercise. Then (not with
   --unit) the judge against an independent model of the protocol, and the sanitizer runs'
   plumbing with stand-ins for the tool and the worker, attacks on it included.
2. Grades each case of testdata/ (a submission made of the solutions or the skeletons with a small
   patch: testdata/README.md) and checks the entries it expects. Without --gpu the grader runs
   with --no-gpu and the cases' "cpu" and "both" expectations are checked; with --gpu only the
   cases that have "gpu" expectations run, with those and "both". Hostile cases also check what
   must not have happened (a file written outside the sandbox, a results.json rewritten after the
   grader ended, a System V segment left behind, a secret in an entry). All cases share one
   staged build, as a batch does.
Prints one line per case and a verdict table at the end; exits 1 on any unexpected outcome.
"""

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

GRADER_DIR = Path(__file__).resolve().parent
COURSE_DIR = GRADER_DIR.parent.parent
# What `make test` runs (--quick): the answers and the skeletons, graded end to end, and the two
# quickest hostile cases (a forged report, a submission that reads the course's answer). Every
# case runs in `make grader-selftest`, which CI runs as well.
QUICK_CASES = ["solutions", "skeletons", "forged_report", "include_solution"]
sys.path.insert(0, str(GRADER_DIR))
sys.dont_write_bytecode = True  # no __pycache__ in the course's folders
import grade  # noqa: E402  (the module under test)
import selftest_judge  # noqa: E402
import selftest_units  # noqa: E402
from selftest_cases import (CaseError, NoSkeleton, load_cases, make_submission,  # noqa: E402
                            os_keys)


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


def entry_meets(t, exp, ctx):
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
    for s in exp.get("output_lacks", []):
        if s.format(**ctx) in t["output"]:
            why.append("output has %r" % s.format(**ctx))
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
    if "junit_valid" in exp:
        return "junit.xml and results.json are well-formed"
    if "ipc_absent" in exp:
        return "no System V segment left behind"
    if "grade_seconds_below" in exp:
        return "the grading ended within %g s" % exp["grade_seconds_below"]
    if "max_total" in exp:
        return "max score at most %g" % exp["max_total"]
    if "all_passed_or_busy" in exp:
        return ("every entry passed, or is 'not graded' for a busy GPU or an unsteady time "
                "(retry); the rest scores its max")
    sel = ",".join("%s=%s" % kv for kv in exp["entry"].items()) or "every entry"
    want = [("absent" if exp.get("absent") else "")] + \
        ["%s=%s" % (k, exp[k]) for k in ("status", "outcome", "score", "visibility",
                                         "max_seconds") if k in exp]
    if exp.get("some"):
        want.append("(at least one)")
    return "[%s] %s" % (sel, " ".join(w for w in want if w))


def expectation_checks():
    """The case expectation a GPU run met first: a busy host's 'not graded: retry' is no lost
    point (the solutions scored 98 + 2 not graded on a loaded 4-GPU machine), a failure is."""
    def doc(outcome, output):
        tests = [{"name": "fast", "score": 0, "max_score": 2, "status": "failed",
                  "output": output, "extra_data": {"outcome": outcome, "exercise": "02"}},
                 {"name": "rest", "score": 98, "max_score": 98, "status": "passed",
                  "output": "", "extra_data": {"outcome": "passed", "exercise": "01"}}]
        return {"tests": tests, "score": 98, "extra_data": {"max_score": 100}}
    exp = {"all_passed_or_busy": True}
    return [(name, got[0] == want, str(got))
            for name, d, want in (
                ("case expectation: 'not graded: retry' is no lost point",
                 ("not_graded", "not graded: retry: the timed runs on 4814 x 3966 varied"), True),
                ("case expectation: 'not graded: the GPU was busy' is no lost point",
                 ("not_graded", "not graded: the GPU was busy: pid 1"), True),
                ("case expectation: a failed speed entry is a lost point",
                 ("failed", "At most 2 times the course's kernel passes."), False))
            for got in [evaluate(exp, doc(*d), {})]]


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
    if "junit_valid" in exp:
        try:
            ET.parse(ctx["results"] / "junit.xml")
            json.loads((ctx["results"] / "results.json").read_text())
            return True, "", ""
        except (ET.ParseError, ValueError) as err:
            return False, "not well-formed: %s" % err, ""
    if "ipc_absent" in exp:
        left = os_keys() & set(exp["ipc_absent"])
        return not left, "left: %s" % sorted(left) if left else "", ""
    if "grade_seconds_below" in exp:
        ok = ctx["seconds"] < exp["grade_seconds_below"]
        return ok, "" if ok else "took %.0f s" % ctx["seconds"], ""
    if "max_total" in exp:
        top = doc["extra_data"]["max_score"]
        return top <= exp["max_total"], "max score %g" % top, ""
    if "all_passed_or_busy" in exp:
        # Another program on the same GPU may leave the timed entries "not graded: the GPU was
        # busy", a busy host "not graded: retry" (times too unsteady for a verdict); nothing else
        # may differ from a full score.
        busy = [t for t in tests if t["extra_data"]["outcome"] == "not_graded" and
                ("the GPU was busy" in t["output"] or t["output"].startswith("not graded: retry"))]
        bad = [t for t in tests if grade.Results.state(t) != "passed" and t not in busy]
        want = doc["extra_data"]["max_score"] - sum(t["max_score"] for t in busy)
        ok = not bad and abs(doc["score"] - want) < 1e-6
        return ok, "" if ok else "score %g (want %g); %s" % (
            doc["score"], want, "; ".join("%s: %s" % (t["name"], first_line(t["output"]))
                                          for t in bad[:3])), \
            first_line(busy[0]["output"]) if busy else ""
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
    verdicts = [(t, entry_meets(t, exp, ctx)) for t in picked]
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


def grade_one(case, args, manifest, work, mode, part=None):
    """Grades the case's submission (or its "previous" part, first, into the same stage)."""
    name = case["name"] + ("-" + part if part else "")
    sub, out = work / "submissions" / name, work / "results" / name
    make_submission(case, manifest, sub, part)
    spec = case[part] if part else case
    cmd = [sys.executable, str(GRADER_DIR / "grade.py"), "--submission", str(sub),
           "--out", str(out), "--stage", str(work / "stage"), "--quiet",
           "--build-arch", args.build_arch or ""]
    if mode == "cpu":
        cmd.append("--no-gpu")
    if spec.get("exercises"):
        cmd += ["--exercises", ",".join(spec["exercises"])]
    if not part and (case["dir"] / "hidden").is_dir():
        cmd += ["--hidden", str(case["dir"] / "hidden")]
    if not part:
        cmd += case.get("args", {}).get("both", []) + case.get("args", {}).get(mode, [])
    for a in args.cmake_arg or []:
        cmd.append("--cmake-arg=" + a)
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    if args.no_sandbox:
        cmd.append("--no-sandbox")
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc, out, time.monotonic() - start


def run_case(case, args, manifest, work, mode):
    ctx = {"work": work, "stage": work / "stage", "course": COURSE_DIR,
           "results": work / "results" / case["name"],
           "submission": work / "submissions" / case["name"]}
    absent = [Path(p.format(**ctx)) for exp in case["expect"].values() for e in exp
              if "files_absent" in e for p in e["files_absent"]]
    for p in absent:  # left by an earlier run without isolation
        if p.is_file():
            p.unlink()
    try:
        if case.get("previous"):
            grade_one(case, args, manifest, work, mode, "previous")
        proc, out, seconds = grade_one(case, args, manifest, work, mode)
    except NoSkeleton as err:
        return None, None, str(err)
    except CaseError as err:
        return 0.0, None, [(False, "the case cannot be built: %s" % err, "", "the case", False)]
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
    ctx.update(absent=absent, seconds=seconds)
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
    ap.add_argument("--no-sandbox", action="store_true",
                    help="grade with --no-sandbox (where bubblewrap is missing); the cases that "
                         "need isolation are skipped")
    ap.add_argument("--no-class", action="store_true",
                    help="leave out the class command's test (a generated class of 30)")
    ap.add_argument("--verbose", action="store_true",
                    help="print every expectation, not only the unexpected ones")
    args = ap.parse_args()

    failures = 0
    total_start = time.monotonic()
    units = selftest_units.unit_checks() + expectation_checks()
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
    judged = selftest_judge.judge_checks(work)
    bad_judged = [u for u in judged if not u[1]]
    print("judge checks: %d passed, %d failed" % (len(judged) - len(bad_judged), len(bad_judged)))
    for name, _, detail in bad_judged:
        print("  UNEXPECTED  %s: %s" % (name, detail))
    failures += len(bad_judged)
    bwrap = shutil.which("bwrap")
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.strip() \
        if bwrap else ""
    print("bubblewrap: %s" % ("%s (%s)" % (bwrap, version) if bwrap else "not installed"))
    why = selftest_units.sandbox_unavailable(work) if os.geteuid() == 0 else ""
    if why and not args.no_sandbox:
        print("bubblewrap cannot isolate here (%s): the cases run with --no-sandbox, and those "
              "that need isolation are skipped" % why)
        args.no_sandbox = True
    isolated = os.geteuid() == 0 and not args.no_sandbox
    selected = QUICK_CASES if args.quick and not args.cases else \
        [c for c in args.cases.split(",") if c]
    cases = load_cases(selected, mode)
    rows = []
    seen = {"isolation": set(), "device": set(), "sanitizer": set()}
    print("%-26s %-9s %-7s %-10s %5s  %s" % ("case (%s mode)" % mode, "score", "checks", "verdict",
                                             "time", "example message"))
    for case in cases:
        if case.get("needs_isolation") and not isolated:
            rows.append((case["name"], "-", "-", "skipped", "-", "needs isolation (root, bubblewrap)"))
            print("%-26s %-9s %-7s %-10s %5s  %s" % rows[-1])
            continue
        seconds, doc, checks = run_case(case, args, manifest, work, mode)
        if seconds is None:  # no pristine skeleton to grade
            rows.append((case["name"], "-", "-", "skipped", "-", checks[:90]))
            print("%-26s %-9s %-7s %-10s %5s  %s" % rows[-1])
            continue
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
                if not ok and what == "no grader error" and doc:
                    # The grader's own failure: its cause, here, where the person looks (not
                    # only in a results.json deep in the work folder).
                    err = next(t for t in doc["tests"]
                               if t["extra_data"]["outcome"] == "grader_error")
                    print("           " + err["output"][-2000:].replace("\n", "\n           "))

    # The class command on a generated class (selftest_class.py): not with --quick or --cases.
    if not args.no_class and not selected and mode == "cpu":
        import selftest_class
        checks, seconds, size = selftest_class.class_checks(work)
        bad = [c for c in checks if not c[1]]
        failures += len(bad)
        rows.append(("class (%d submissions)" % size, "-", "%d/%d" % (len(checks) - len(bad),
                                                                     len(checks)),
                     "ok" if not bad else "UNEXPECTED", "%.0fs" % seconds,
                     "%.1f s per submission" % (seconds / max(1, size))))
        print("%-26s %-9s %-7s %-10s %5s  %s" % rows[-1], flush=True)
        for name, ok, detail in checks:
            if not ok or args.verbose:
                print("      %s %s%s" % ("ok  " if ok else "FAIL", name,
                                         (": " + detail) if detail else ""))

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
