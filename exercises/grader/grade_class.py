#!/usr/bin/env python3
"""Grades a whole class: every submission folder of a folder (Python standard library only).

Options: --help (`make grade-class SUBMISSIONS=DIR OUT=DIR` runs it). Each submission is graded by
grade.py into OUT/students/<name>/, in lanes (one per GPU), resumed when already graded, into
OUT/gradebook.csv and a summary: exercises/INSTRUCTORS.md, "A class". Exit status 0 when every
submission has a report, 1 otherwise.
"""

import argparse
import csv
import hashlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

GRADER_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(GRADER_DIR))
sys.dont_write_bytecode = True
from grade import load_manifest  # noqa: E402
from stage import COURSE_DIR, find_submission_file  # noqa: E402
from tools import run, stop_all  # noqa: E402

# Flags of a report: the entry outcomes and gate texts an instructor looks at first.
FLAG_OUTCOMES = {"grader_error": "grader error", "grader_refused": "grader refused",
                 "timeout": "timeout", "crashed": "crash", "sanitizer_error": "memory error"}
FLAG_TEXTS = {"done on the host": "host work", "second buffer": "second buffer",
              "the GPU was busy": "GPU busy",
              "does not use the unpadded, swizzled tile": "wrong technique"}
# Why an entry a busy machine left not graded begins: a grading to do again, never a lost point.
RETRY_REASONS = ("retry", "the GPU was busy")


def course_version():
    """The course's commit, with a hash of the changes on top of it that can change a grade when
    there are any (the course's code, the exercises, the grader; not its pages or its self-test's
    cases): a regrade after the grader changes is a new version."""
    def git(*a):
        r = subprocess.run(["git", "-C", str(COURSE_DIR)] + list(a), capture_output=True)
        return r.stdout if r.returncode == 0 else b""
    head = git("rev-parse", "HEAD").decode().strip() or "no-git"
    diff = git("diff", "HEAD", "--", "CMakeLists.txt", "cmake", "common", "exercises",
               ":(exclude)*.md", ":(exclude)exercises/grader/testdata")
    return head + ("+" + hashlib.sha256(diff).hexdigest()[:12] if diff.strip() else "")


def content_hash(folder, manifest, hidden=""):
    """sha256 of the allowlisted files the grader would take from @p folder (and of the hidden
    tests' folder, which changes a grade too)."""
    h = hashlib.sha256()
    limit = manifest["max_file_bytes"]
    for ex in manifest["exercises"]:
        for name in ex["files"]:
            path = find_submission_file(folder, ex["id"], name)
            h.update(("%s/%s\0" % (ex["id"], name)).encode())
            if path is None:
                h.update(b"missing\0")
                continue
            size = os.lstat(path).st_size
            h.update(b"%d\0" % size)
            if size <= limit:
                h.update(path.read_bytes())
    if hidden:
        for p in sorted(Path(hidden).rglob("*")):
            if p.is_file():
                h.update(str(p.relative_to(hidden)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def gpus():
    """[UUID] of the machine's GPUs, from nvidia-smi (empty without one)."""
    tool = shutil.which("nvidia-smi")
    listed = run([tool, "--query-gpu=uuid", "--format=csv,noheader"], timeout=60) if tool else None
    return [l.strip() for l in (listed.output if listed else "").splitlines()
            if l.strip().startswith(("GPU-", "MIG-"))]


def run_grader(cmd, timeout, env, log):
    """Runs one grading (its own process group, killed whole at its time limit, or when the class
    command is stopped): (status, why) with status "graded", "timeout" or "failed"."""
    # --parent-pid: grade.py asks the kernel to kill it when this process ends, even by
    # SIGKILL, where no handler of ours runs.
    ran = run(cmd + ["--parent-pid", str(os.getpid())], timeout=timeout, env=env, limit=600,
              log=log)
    if ran.timed_out:
        return "timeout", "the grading took more than %g s and was stopped" % timeout
    if ran.rc != 0:
        return "failed", "grade.py exited with %d: %s" % (ran.rc,
                                                          " ".join(ran.output.split())[-300:])
    return "graded", ""


def report_of(folder):
    """@p folder's results.json, parsed (None: none, or not JSON)."""
    try:
        return json.loads((folder / "results.json").read_text())
    except (OSError, ValueError):
        return None


def disturbed(doc):
    """Whether the report @p doc has an entry left not graded because the machine was busy (its
    timed runs varied too much, or another process used the GPU)."""
    return doc is not None and any(
        t["extra_data"]["outcome"] == "not_graded" and
        (t["extra_data"].get("reason") or "").startswith(RETRY_REASONS) for t in doc["tests"])


def csv_safe(value):
    """A cell a spreadsheet shows as text: one that begins with = + - @, a tab or a carriage
    return (a student's folder name, a grader message) would otherwise be a formula."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def grading_options(args, no_gpu):
    """What changes a grade besides the files and the course: a resumed report counts only if
    it was graded with the same options."""
    return {"grade_args": list(args.grade_arg), "build_arch": args.build_arch,
            "gpu": not no_gpu}


def row_of(name, doc, manifest, status, why, flags):
    """A gradebook row from a student's results.json (None: no report)."""
    row = {"student": name}
    for ex in manifest["exercises"]:
        row[ex["id"]] = ""
    row.update(hidden="", total="", max="", ungraded_points="", flags="", status=status,
               why=why)
    if doc is None:
        row["flags"] = "; ".join(flags)
        return row
    per = {}
    for t in doc["tests"]:
        ex = t["extra_data"]["exercise"]
        key = "hidden" if t["extra_data"].get("kind") == "hidden" else ex
        per[key] = per.get(key, 0.0) + t["score"]
        outcome = t["extra_data"]["outcome"]
        if outcome in FLAG_OUTCOMES:
            flags.append(FLAG_OUTCOMES[outcome])
        for text, flag in FLAG_TEXTS.items():
            if text in t["output"] and (flag != "wrong technique" or t.get("status") == "passed"
                                        or any(o["score"] > 0 for o in doc["tests"]
                                               if o["extra_data"]["exercise"] == ex)):
                flags.append(flag)
        if t["extra_data"].get("kind") in ("static", "build", "files") and \
                t.get("status") == "failed":
            flags.append({"static": "static finding", "build": "build error",
                          "files": "missing file"}[t["extra_data"]["kind"]])
    for ex in manifest["exercises"]:
        row[ex["id"]] = "%g" % per.get(ex["id"], 0.0)
    if "hidden" in per:
        row["hidden"] = "%g" % per["hidden"]
    row["total"] = "%g" % doc["score"]
    row["max"] = "%g" % doc["extra_data"]["max_score"]
    row["ungraded_points"] = "%g" % doc["extra_data"]["not_graded"]
    row["flags"] = "; ".join(dict.fromkeys(flags))
    return row


class Progress:
    def __init__(self, total, stream):
        self.total, self.done, self.stream, self.start = total, 0, stream, time.monotonic()
        self.counts = {}
        self.lock = threading.Lock()

    def step(self, status, name):
        with self.lock:
            self.done += 1
            self.counts[status] = self.counts.get(status, 0) + 1
            width = 30
            filled = int(width * self.done / max(1, self.total))
            spent = time.monotonic() - self.start
            eta = spent / self.done * (self.total - self.done)
            line = "\r[%s%s] %d/%d  %s  %.0f s, about %.0f s left  %-24s" % (
                "#" * filled, "." * (width - filled), self.done, self.total,
                ", ".join("%s %d" % kv for kv in sorted(self.counts.items())), spent, eta,
                name[:24])
            self.stream.write(line + ("\n" if not self.stream.isatty() else ""))
            self.stream.flush()

    def note(self, text):
        """A line of its own between the progress lines."""
        with self.lock:
            self.stream.write(("\n" if self.stream.isatty() else "") + text + "\n")

    def close(self):
        if self.stream.isatty():
            self.stream.write("\n")


def summarize(rows, manifest, out, seconds, lanes, ungraded, passes, still):
    top = sum(sum(e["points"] for e in ex["entries"]) +
              (ex.get("sanitizer") or {}).get("points", 0) for ex in manifest["exercises"])
    totals = [float(r["total"]) for r in rows if r["total"] != ""]
    bins = {}
    for t in totals:
        b = min(9, int(t * 10 // max(top, 1)))
        bins[b] = bins.get(b, 0) + 1
    flagged = [(r["student"], r["flags"]) for r in rows if r["flags"]]
    failed = [(r["student"], r["status"], r["why"]) for r in rows
              if r["status"] not in ("graded", "resumed")]
    doc = {"students": len(rows), "graded": len(totals), "seconds": round(seconds, 1),
           "seconds_per_submission": round(seconds / max(1, len(rows)), 2),
           "lanes": lanes, "course": course_version(),
           "distribution": {"%d-%d" % (b * 10, b * 10 + 10): bins.get(b, 0) for b in range(10)},
           "mean": round(sum(totals) / len(totals), 2) if totals else None,
           "flagged": [{"student": s, "flags": f} for s, f in flagged],
           "not_graded": [{"student": s, "status": st, "why": w} for s, st, w in failed],
           "ungraded_entries": [{"student": s, "entry": n, "why": w} for s, n, w in ungraded],
           "regraded": {"passes": passes, "still_not_graded": still}}
    (out / "summary.json").write_text(json.dumps(doc, indent=1) + "\n")
    resumed = sum(r["status"] == "resumed" for r in rows)
    lines = ["%d submissions, %d with a report (%d resumed from an earlier run), in %.0f s (%.1f s "
             "each) on %s" % (len(rows), len(totals), resumed, seconds,
                              doc["seconds_per_submission"], ", ".join(lanes)),
        "score distribution (percent of the maximum; mean %s):" % doc["mean"]]
    for b in range(10):
        n = bins.get(b, 0)
        lines.append("  %3d-%-3d %3d %s" % (b * 10, b * 10 + 10, n, "#" * n))
    lines.append("flagged (%d):" % len(flagged))
    lines += ["  %s: %s" % f for f in flagged] or ["  none"]
    lines.append("submissions without a grade (%d):" % len(failed))
    lines += ["  %s: %s, %s" % f for f in failed] or ["  none"]
    reasons = {}
    for s, _, w in ungraded:
        reasons.setdefault(w, set()).add(s)
    lines.append("entries not graded (%d), by why:" % len(ungraded))
    lines += ["  %s: %d submissions" % (w, len(s)) for w, s in sorted(reasons.items())] or \
        ["  none"]
    # Each pass grades again some of the previous one's: the first counts every one.
    lines.append("regraded for a disturbed timing: %d submissions (%s); still not graded: %s" % (
        passes[0] if passes else 0,
        ", ".join("pass %d: %d" % (i + 1, k) for i, k in enumerate(passes)) or "no pass",
        ", ".join(still) or "none"))
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    return "\n".join(lines)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--submissions", required=True, help="a folder of submission folders")
    ap.add_argument("--out", default="build-grade/class", help="reports, gradebook, summary")
    ap.add_argument("--hidden", default="", help="hidden tests: <exercise id>/*.json")
    ap.add_argument("--build-arch", default="", help="CUDA architectures (e.g. 90)")
    ap.add_argument("--gpus", default="auto",
                    help="auto (every GPU), none (CPU lanes only), or comma-separated UUIDs or "
                         "indices: one lane per GPU")
    ap.add_argument("--cpu-lanes", type=int, default=0,
                    help="lanes without a GPU (default: cores / 4, at least 1) when no GPU is used")
    ap.add_argument("--timeout", type=float, default=0,
                    help="seconds per submission (default: the manifest's submission deadline "
                         "plus 600 for the course's build)")
    ap.add_argument("--stage-root", default="",
                    help="folder of the lanes' staged builds, kept between runs (default: "
                         "OUT/.lanes)")
    ap.add_argument("--no-resume", action="store_true", help="grade every submission again")
    ap.add_argument("--grade-arg", action="append", default=[],
                    help="one more argument for grade.py (repeatable), e.g. --grade-arg=--no-gpu")
    ap.add_argument("--retries", type=int, default=2,
                    help="passes at the end that grade again each submission with an entry not "
                         "graded because the machine was busy (a disturbed timing, another "
                         "process on the GPU); 0: none (default 2)")
    ap.add_argument("--quiet", action="store_true", help="no summary on the terminal")
    ap.add_argument("--grader", default=str(GRADER_DIR / "grade.py"), help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    manifest = load_manifest()
    root = Path(args.submissions).resolve()
    out = Path(args.out).resolve()
    (out / "students").mkdir(parents=True, exist_ok=True)
    stage_root = Path(args.stage_root).resolve() if args.stage_root else out / ".lanes"
    names = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    version = course_version()
    hidden = str(Path(args.hidden).resolve()) if args.hidden else ""
    no_gpu = args.gpus == "none" or "--no-gpu" in args.grade_arg
    if no_gpu:
        devices = []
    elif args.gpus == "auto":
        devices = gpus()
    else:
        devices = [d for d in args.gpus.split(",") if d]
    cores = os.cpu_count() or 2
    lanes = [("gpu%d" % i, d) for i, d in enumerate(devices)] or \
        [("cpu%d" % i, None) for i in range(args.cpu_lanes or max(1, cores // 4))]
    jobs = max(1, cores // len(lanes))
    timeout = args.timeout or manifest["timeouts_s"]["submission"] + 600

    hashes = {n: content_hash(root / n, manifest, hidden) for n in names}
    options = grading_options(args, no_gpu)
    progress = Progress(len(names), sys.stderr)
    todo, rows, first_of, same = [], {}, {}, {}
    for n in names:
        # Every submission whose files another one has too is flagged, the first of them as well.
        same.setdefault(hashes[n], []).append(n)
        meta_file = out / "students" / n / "meta.json"
        try:
            meta = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
        except ValueError:
            meta = {}
        if not args.no_resume and meta.get("hash") == hashes[n] and \
                meta.get("course") == version and meta.get("status") == "graded" and \
                meta.get("options") == options and \
                (out / "students" / n / "results.json").is_file():
            rows[n] = ("resumed", "")
            first_of.setdefault(hashes[n], n)  # a new copy of it takes its report
            progress.step("resumed", n)
    for n in names:
        if n in rows:
            continue
        if hashes[n] in first_of:  # the same files as another: graded once
            rows[n] = ("identical", first_of[hashes[n]])
            continue
        first_of[hashes[n]] = n
        todo.append(n)

    work = queue.Queue()
    for n in todo:
        work.put(n)
    retried = {}  # student: how many times graded again for a disturbed timing

    def grade_one(n, label, device, stage, env):
        dest = out / "students" / n
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "meta.json").unlink(missing_ok=True)
        cmd = [sys.executable, args.grader, "--submission", str(root / n),
               "--out", str(dest), "--stage", str(stage / "stage"), "--jobs", str(jobs),
               "--build-arch", args.build_arch]
        if hidden:
            cmd += ["--hidden", hidden]
        if device is None and "--no-gpu" not in args.grade_arg:
            cmd.append("--no-gpu")  # a CPU lane: grade.py would otherwise find the GPUs
        cmd += args.grade_arg
        start = time.monotonic()
        # grade.py's output is the report: its table, or why it failed.
        status, why = run_grader(cmd, timeout, env, dest / "report.txt")
        if status == "graded" and not (dest / "results.json").is_file():
            status, why = "failed", "no results.json"
        (dest / "meta.json").write_text(json.dumps({
            "hash": hashes[n], "course": version, "options": options,
            "status": status, "why": why,
            "lane": label, "device": device or "none",
            "seconds": round(time.monotonic() - start, 1), "retried": retried.get(n, 0)}) + "\n")
        rows[n] = (status, why)
        progress.step("regraded" if status == "graded" and retried.get(n) else status, n)

    def lane(label, device):
        stage = stage_root / label
        stage.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        if device is not None:
            env["CUDA_VISIBLE_DEVICES"] = device
        while True:
            try:
                n = work.get_nowait()
            except queue.Empty:
                return
            grade_one(n, label, device, stage, env)

    def run_lanes():
        threads = [threading.Thread(target=lane, args=lane_of, daemon=True) for lane_of in lanes]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    start = time.monotonic()
    passes = []  # how many submissions each retry pass graded again
    # Ctrl-C, a kill or a hang-up of the class command ends its gradings, then the command.
    def stop(signum, frame):
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
    try:
        run_lanes()
        # A report with an entry a busy machine left not graded is graded again, whole, once every
        # lane is done: each pass grades fewer, so the machine is quieter. The last report is kept.
        for p in range(1, args.retries + 1):
            again = [n for n in names if rows[n][0] in ("graded", "resumed") and
                     disturbed(report_of(out / "students" / n))]
            if not again:
                break
            passes.append(len(again))
            progress.total += len(again)
            progress.note("retry pass %d: %d submissions whose timed runs were disturbed" % (
                p, len(again)))
            for n in again:
                retried[n] = p
                work.put(n)
            run_lanes()
    except KeyboardInterrupt:
        while not work.empty():
            try:
                work.get_nowait()
            except queue.Empty:
                break
        ended = stop_all()
        progress.close()
        print("grade-class: stopped; %d running gradings ended, the reports written so far are "
              "kept in %s" % (ended, out), file=sys.stderr)
        return 130
    # Identical submissions: the first one's report (after the retry passes), flagged.
    for n in names:
        if rows.get(n, ("",))[0] == "identical":
            src, dest = out / "students" / rows[n][1], out / "students" / n
            dest.mkdir(parents=True, exist_ok=True)
            meta = json.loads((src / "meta.json").read_text()) if (src / "meta.json").is_file() \
                else {"status": "failed"}
            for f in ("results.json", "junit.xml", "report.txt"):
                if (src / f).is_file():
                    shutil.copyfile(src / f, dest / f)
            (dest / "meta.json").write_text(json.dumps(dict(meta, hash=hashes[n],
                                                            identical_to=rows[n][1])) + "\n")
            rows[n] = (meta["status"], meta.get("why", ""))  # the first one's
            progress.step("identical", n)
    progress.close()
    seconds = time.monotonic() - start

    book, ungraded, still = [], [], []
    for n in names:
        status, why = rows[n]
        flags = []
        twins = [m for m in same[hashes[n]] if m != n]
        if twins:
            flags.append("same files as %s" % ", ".join(twins))
        f = out / "students" / n / "results.json"
        doc = None
        if f.is_file() and status not in ("timeout", "failed"):
            try:
                doc = json.loads(f.read_text())
            except ValueError:
                status, why = "failed", "results.json does not parse"
        if status == "timeout":
            flags.append("timeout")
        if doc:
            ungraded += [(n, t["name"], t["extra_data"].get("reason") or
                          t["output"].split("\n")[0][:120])
                         for t in doc["tests"] if t["extra_data"]["outcome"] == "not_graded"]
            if disturbed(doc):
                still.append(n)
        book.append(row_of(n, doc, manifest, status, why, flags))
    fields = ["student"] + [ex["id"] for ex in manifest["exercises"]] + \
        ["hidden", "total", "max", "ungraded_points", "flags", "status", "why"]
    with open(out / "gradebook.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows({k: csv_safe(v) for k, v in row.items()} for row in book)
    text = summarize(book, manifest, out, seconds,
                     ["%s (%s)" % (l, d or "no GPU") for l, d in lanes], ungraded, passes, still)
    if not args.quiet:
        print(text)
        print("gradebook: %s" % (out / "gradebook.csv"))
    return 0 if all(r["total"] != "" for r in book) else 1


if __name__ == "__main__":
    sys.exit(main())
