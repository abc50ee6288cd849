#!/usr/bin/env python3
"""Grades a submission of the transpose course's exercises (Python standard library only).

Options: --help (`make grade SUBMISSION=DIR` runs it). What it does to a submission, step by step
(stage.py, checks.py, runs.py, timed.py, hidden.py, results.py), and why: exercises/INSTRUCTORS.md,
"The threat model" and "What happens to a submission".
"""

import argparse
import ctypes
import json
import os
import signal
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

GRADER_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(GRADER_DIR))
sys.dont_write_bytecode = True  # no __pycache__ in the course's folders
import sandbox  # noqa: E402
from checks import CheckMixin  # noqa: E402
from hidden import HiddenMixin  # noqa: E402
from limits import Limits  # noqa: E402
from results import Results  # noqa: E402
from runs import RunMixin  # noqa: E402
from stage import StageMixin  # noqa: E402
from timed import TimedMixin  # noqa: E402
from tools import tail  # noqa: E402

KINDS = ("check", "gpu", "shared_memory", "same_swizzle", "speed", "memory")


class Grader(StageMixin, CheckMixin, RunMixin, TimedMixin, HiddenMixin):
    """One grading: the stage and builds (stage.py), the static checks (checks.py), the runs and
    measurements (runs.py, timed.py), the hidden tests (hidden.py)."""

    def __init__(self, args, manifest, results):
        self.args = args
        self.m = manifest
        self.r = results
        self.timeouts = dict(manifest["timeouts_s"])
        for key, value in (("entry", args.test_timeout), ("exercise", args.exercise_deadline),
                           ("submission", args.deadline)):
            if value:
                self.timeouts[key] = value
        self.gpu, self.no_gpu_why = None, ""  # not known before detect_gpu
        self.jobs = args.jobs or os.cpu_count() or 2
        self.sanitizer = sandbox.find_tool("compute-sanitizer")
        self.sanitizer_mode = None
        self.sanitizer_failure = ""
        self.box = self.stage = self.build = self.judge_bin = self.nvml = None
        self.counter = 0
        self.nvml_why = ""
        self.reserved = {}
        self.submission = None
        self.gpu_test_passed = False
        self.launches = []
        self._exports = None
        self.static_kernels = {}
        self.deadline = self.ex_deadline = time.monotonic() + self.timeouts["submission"]
        self.deadline_hit = set()
        # A timed run that shared its GPU with another process is run again this many times,
        # this many seconds apart, before its entries say the GPU was busy.
        self.busy_retries = int(manifest["speed"].get("busy_retries", 1))
        self.busy_pause_s = float(manifest["speed"].get("busy_pause_s", 3))

    def start_clock(self):
        """The submission's time starts with its own build (the course's is the grader's)."""
        self.deadline = self.ex_deadline = time.monotonic() + self.timeouts["submission"]


def load_manifest(path=GRADER_DIR / "manifest.json"):
    m = json.loads(Path(path).read_text())
    for ex in m["exercises"]:
        for key in ("id", "title", "files", "objects", "worker", "entries", "checks"):
            if key not in ex:
                raise ValueError("manifest: exercise %s has no '%s'" % (ex.get("id"), key))
        for e in ex["entries"]:
            if e.get("kind") not in KINDS:
                raise ValueError("manifest: entry %s has an unknown kind %s"
                                 % (e.get("name"), e.get("kind")))
    return m


GPU_NOTE = ("The GPU entries ({points:g} points) were not graded: {why}. They are graded on a "
            "machine with an NVIDIA GPU, by the same command (make grade SUBMISSION=<your folder>"
            ", or EXERCISES=01_rectangular,... for some of them): run it there, or hand in where "
            "your instructor grades on a GPU. The CPU entries are final.")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--submission", required=True, help="folder with the student's files")
    ap.add_argument("--out", default="build-grade/results",
                    help="where results.json and junit.xml go (default: build-grade/results)")
    ap.add_argument("--hidden", default="", help="instructor folder of hidden tests: <id>/*.json")
    ap.add_argument("--exercises", default="",
                    help="comma-separated exercise ids to grade (default: all), e.g. "
                         "01_rectangular,03_inplace")
    ap.add_argument("--build-arch", default="",
                    help="CUDA architectures (e.g. 90); empty: the course default")
    ap.add_argument("--stage", default="",
                    help="reuse this folder for the staged course and its build (batches and the "
                         "self-test); default: a fresh temporary folder")
    ap.add_argument("--no-gpu", action="store_true", help="grade as if there were no CUDA device")
    ap.add_argument("--no-sanitizer", action="store_true", help="skip compute-sanitizer")
    ap.add_argument("--sanitizer-tools", default="",
                    help="comma-separated compute-sanitizer tools instead of the manifest's")
    ap.add_argument("--no-speed", action="store_true",
                    help="skip the timed runs (host work, extra memory)")
    ap.add_argument("--no-sandbox", action="store_true",
                    help="run the submission's code with the grader's rights (trusted code only)")
    ap.add_argument("--sandbox-user", default=sandbox.SANDBOX_USER,
                    help="the user the submission's code runs as (created if missing; default "
                         "%(default)s, or %(default)s-N when other gradings on this machine "
                         "hold it)")
    ap.add_argument("--data-limit-mib", type=int, default=sandbox.DATA_MIB,
                    help="RLIMIT_DATA of every process of a run, MiB (default %(default)s; 0: "
                         "none)")
    ap.add_argument("--memory-max-mib", type=int, default=65536,
                    help="memory of the whole grading, every process it runs together (its "
                         "cgroup v2, where the machine gives one; default %(default)s)")
    ap.add_argument("--pids-max", type=int, default=8192,
                    help="processes of the whole grading together (its cgroup; default "
                         "%(default)s)")
    ap.add_argument("--mask", action="append",
                    help="one more folder under the system folders (/usr, /etc) that the "
                         "submission's code must not see (repeatable)")
    ap.add_argument("--test-timeout", type=float, default=0,
                    help="seconds per entry (default: the manifest's)")
    ap.add_argument("--exercise-deadline", type=float, default=0,
                    help="seconds for the runs of one exercise (default: the manifest's)")
    ap.add_argument("--deadline", type=float, default=0,
                    help="seconds for the whole submission, its builds included (default: the "
                         "manifest's)")
    ap.add_argument("--jobs", type=int, default=0,
                    help="parallel compile jobs (default: all cores)")
    ap.add_argument("--cmake-arg", action="append",
                    help="extra argument for cmake's configure step (repeatable)")
    ap.add_argument("--quiet", action="store_true", help="do not print the summary table")
    # The class command's: this grading ends when that process ends (die_with_parent).
    ap.add_argument("--parent-pid", type=int, default=0, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def die_with_parent(parent):
    """Asks the kernel to kill this grading when @p parent (the class command) ends, however it
    ends; bwrap's --die-with-parent then takes the running sandbox with it."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # it ended before the request was made
        os._exit(1)


def grade(args, results):
    """Grades into @p results; returns the Grader (None if it never started)."""
    manifest = load_manifest()
    grader = Grader(args, manifest, results)
    wanted = [e for e in args.exercises.split(",") if e]
    known = [e["id"] for e in manifest["exercises"]]
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise ValueError("--exercises: no exercise %s (the exercises are %s)"
                         % (", ".join(unknown), ", ".join(known)))
    exercises = [e for e in manifest["exercises"] if not wanted or e["id"] in wanted]
    submission = Path(args.submission).resolve()
    if not submission.is_dir():
        results.notes.append("the submission folder %s does not exist" % args.submission)
    grader.set_up(Path(args.stage_path), submission, Path(args.out).resolve())
    found = grader.stage_submission(submission, exercises)
    grader.configure()
    grader.build_judge()
    grader.start_clock()
    # Every build first, then the runs: no process of the submission runs while its build
    # folder is writable.
    ready = [ex for ex in exercises if grader.build_exercise(ex, *found[ex["id"]])]
    # Hidden tests are data the judge checks (hidden.py): nothing of them is built.
    hidden = [ex for ex in ready if args.hidden and (grader.hidden_source / ex["id"]).is_dir()]
    grader.detect_gpu()
    for ex in ready:
        grader.run_exercise(ex)
    for ex in hidden:
        grader.run_hidden(ex)
    order = {ex["id"]: i for i, ex in enumerate(manifest["exercises"])}
    results.tests.sort(key=lambda t: order.get(t["extra_data"]["exercise"], len(order)))
    results.extra["gpu"] = "used" if grader.gpu else "none"
    gpu_points = results.not_graded([t for t in results.tests if "gpu" in t["tags"]])
    if gpu_points and not grader.gpu:
        results.notes.insert(0, GPU_NOTE.format(points=gpu_points, why=grader.no_gpu_why))
    return grader


def main(argv=None):
    args = parse_args(argv)
    if args.parent_pid:
        die_with_parent(args.parent_pid)
    start = time.monotonic()
    out_dir = Path(args.out).resolve()
    results = Results()
    results.extra = {"grader": "transpose-course", "arch": args.build_arch or "course default"}
    temp, code = None, 0
    limits = Limits(args.memory_max_mib << 20, args.pids_max)
    results.notes.append(limits.enter())
    results.extra["limits"] = "cgroup" if limits.group else "none"
    if args.stage:
        args.stage_path = str(Path(args.stage).resolve())
    else:
        temp = args.stage_path = tempfile.mkdtemp(prefix="transpose-grade-")
    try:
        grade(args, results)
    except sandbox.Unavailable as refusal:
        code = 2
        print("grade: %s" % refusal, file=sys.stderr)
        results.add("grader", "grader", "grader: not graded", 0, False,
                    "The submission was not graded: %s. Please tell the instructor." % refusal,
                    "grader_refused")
    except Exception as err:  # the grader's own failure is reported, never raised
        cause = (" ".join(str(err).split()) or type(err).__name__)[:300]
        # The cause goes where the person who ran the grader looks (the terminal, a test log),
        # not only into results.json.
        print("grade: the grader itself failed: %s\n%s" % (cause, tail(traceback.format_exc(),
                                                                        2000)), file=sys.stderr)
        results.add("grader", "grader", "grader error", 0, False,
                    "The grader itself failed (%s); this is not a verdict on the submission. "
                    "Please tell the instructor.\n%s" % (cause, tail(traceback.format_exc(), 4000)),
                    "grader_error")
    finally:
        limits.leave()
        if temp:
            shutil.rmtree(temp, ignore_errors=True)
    try:
        results.write(out_dir, time.monotonic() - start)
    except Exception:
        traceback.print_exc()
    if not args.quiet and code == 0:
        print(results.summary())
        for n in results.notes:
            print(n)
        print("results: %s" % (out_dir / "results.json"))
    return code


if __name__ == "__main__":
    sys.exit(main())
