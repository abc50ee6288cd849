#!/usr/bin/env python3
"""Grades a submission of the transpose course's exercises (Python standard library only).

    python3 exercises/grader/grade.py --submission DIR [--out DIR] [--hidden DIR] [--build-arch A]
    make grade SUBMISSION=DIR [OUT=DIR] [HIDDEN=DIR] [ARCH=A]

What it does, exercise by exercise (exercises/INSTRUCTORS.md has the details):
  1. stages a clean copy of the course (tests, harness, build files) and copies in only the
     allowlisted files of the submission (manifest.json, "files");
  2. builds each exercise on its own: a compile error zeroes that exercise only, and its entry
     shows the compiler's messages;
  3. static checks of the submission's source and objects (no library transpose, no allocation
     in the in-place exercise, no redefinition of the course's names);
  4. runs each test in its own process with a timeout: a crash, a CUDA error or a hang fails that
     test alone, with the reason;
  5. reruns the passed GPU tests under compute-sanitizer as a separate memory-safety entry;
  6. grades hidden tests from an instructor's folder (--hidden) by the manifest's rules;
  7. writes results.json (Gradescope's format) and junit.xml into --out, always, even when the
     grader itself fails, and exits 0 whatever the score.
Without a CUDA device it still compiles, runs the static and CPU checks, and marks the GPU tests
"not graded: no CUDA device".
"""

import argparse
import fnmatch
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import xml.etree.ElementTree as ET
from pathlib import Path

GRADER_DIR = Path(__file__).resolve().parent
COURSE_DIR = GRADER_DIR.parent.parent
OUTPUT_LIMIT = 6000  # characters of output kept in one entry

# ---------------------------------------------------------------------------------------------
# Processes


class Ran:
    """The outcome of one command: exit status, combined output, and why it stopped."""

    def __init__(self, rc, output, seconds, timed_out):
        self.rc = rc
        self.output = output
        self.seconds = seconds
        self.timed_out = timed_out

    def signal_name(self):
        if self.rc is not None and self.rc < 0:
            try:
                return signal.Signals(-self.rc).name
            except ValueError:
                return "signal %d" % -self.rc
        return None


def run(cmd, cwd=None, timeout=None, env=None):
    """Runs cmd in its own process group; on timeout kills that group (the test and anything it
    started) and returns what it had printed."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [str(c) for c in cmd], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, start_new_session=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = proc.communicate()
    text = out.decode("utf-8", errors="replace") if out else ""
    return Ran(proc.returncode, text, time.monotonic() - start, timed_out)


def tail(text, limit=OUTPUT_LIMIT):
    text = text.rstrip()
    if len(text) <= limit:
        return text
    return "[... %d characters cut ...]\n" % (len(text) - limit) + text[-limit:]


def head(text, limit=OUTPUT_LIMIT):
    text = text.rstrip()
    if len(text) <= limit:
        return text
    return text[:limit] + "\n[... %d characters cut ...]" % (len(text) - limit)


# ---------------------------------------------------------------------------------------------
# Source text


def strip_comments(src, keep_strings):
    """C/C++ source with comments (and, unless keep_strings, string and character literals)
    replaced by spaces; newlines are kept, so line numbers stay right."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        nxt = src[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and nxt == "*":
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "R" and nxt == '"' and not (i and (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', src[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = src.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(src[i:j] if keep_strings else re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and (src[i - 1].isalnum()):  # a digit separator: 1'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(src[i:j] if keep_strings else c + " " * max(0, j - i - 2) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def source_findings(name, text, patterns):
    """[(line, message, excerpt)] for each pattern that matches the source."""
    views = {"code": strip_comments(text, keep_strings=False),
             "code_and_strings": strip_comments(text, keep_strings=True)}
    raw_lines = text.splitlines()
    found, seen = [], set()
    for p in patterns:
        flags = re.MULTILINE | (re.IGNORECASE if "i" in p.get("flags", "") else 0)
        view = views[p.get("in", "code")]
        for m in re.finditer(p["regex"], view, flags):
            start = m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
            line = view.count("\n", 0, start) + 1
            if (line, p["message"]) in seen:  # one finding per line and rule
                continue
            seen.add((line, p["message"]))
            excerpt = raw_lines[line - 1].strip() if line - 1 < len(raw_lines) else ""
            found.append("%s:%d: %s: %s" % (name, line, p["message"], excerpt[:120]))
    return found


# ---------------------------------------------------------------------------------------------
# Objects


def nm_symbols(obj):
    """[(type letter, raw name, demangled name, size)] of an object file, from nm (in the
    order of the symbol table, so that the raw and the demangled listings line up)."""
    raw = run(["nm", "-p", "-S", str(obj)], timeout=60)
    dem = run(["nm", "-p", "-S", "-C", str(obj)], timeout=60)
    if raw.rc != 0 or dem.rc != 0:
        raise RuntimeError("nm failed on %s: %s" % (obj, raw.output + dem.output))
    rows = []
    for r, d in zip(raw.output.splitlines(), dem.output.splitlines()):
        # "U name", "addr T name" or "addr size T name"; raw (mangled) names have no spaces.
        fields = r.split()
        if len(fields) < 2:
            continue
        demangled = d.split(None, len(fields) - 1)[-1].strip()
        size = int(fields[1], 16) if len(fields) == 4 else 0
        rows.append((fields[-2], fields[-1], demangled, size))
    return rows


# C-linkage names the CUDA compiler itself defines in every object.
_GENERATED = re.compile(r"^(DW\.ref\.|__cuda|__nv|__fatbin|__device_stub|_GLOBAL__|__sti__)")


def own_names_findings(obj_name, symbols, exercise_ns):
    """Strong definitions that could replace the course's code (its test helpers, the C library,
    the CUDA runtime, operator new) when the objects are linked with the tests."""
    found = []
    for kind, raw, name, _ in symbols:
        if kind not in ("T", "D", "B", "R", "G", "S"):  # strong, global definitions only
            continue
        if _GENERATED.match(raw):
            continue
        if not raw.startswith("_Z"):
            found.append("%s: defines the C function or variable '%s'; define your code inside "
                         "namespace %s" % (obj_name, raw, exercise_ns))
        elif re.match(r"^(course|testing|exercise|std|__gnu_cxx)::|^operator (new|delete)", name):
            found.append("%s: defines '%s', a name that belongs to the course or the C++ "
                         "library" % (obj_name, name))
    return found


def symbol_findings(obj_name, symbols, rules):
    found = []
    for kind, raw, name, _ in symbols:
        if kind != "U":
            continue
        for rule in rules:
            if re.search(rule["regex"], raw) or re.search(rule["regex"], name):
                found.append("%s: %s ('%s')" % (obj_name, rule["message"], name))
                break
    return found


def static_size_findings(obj_name, symbols, limit):
    found = []
    for kind, raw, name, size in symbols:
        if kind.upper() in "BD" and size >= limit and not _GENERATED.match(raw):
            found.append("%s: reserves %d bytes of static memory ('%s'); an in-place transpose "
                         "may use shared memory only" % (obj_name, size, name))
    return found


def device_call_findings(obj_name, obj, names):
    """Device code that calls malloc leaves the name in the object's embedded device code."""
    data = Path(obj).read_bytes()
    return ["%s: device code calls %s: in place means no second buffer" % (obj_name, n)
            for n in names if (b"\0" + n.encode() + b"\0") in data]


# ---------------------------------------------------------------------------------------------
# GoogleTest


def parse_gtest_list(text):
    """Full test names from --gtest_list_tests output."""
    names, suite = [], None
    for line in text.splitlines():
        if not line.strip() or line.startswith("["):
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
            if not suite.endswith("."):
                suite = None
            continue
        if suite:
            names.append(suite + line.split("#")[0].strip())
    return names


def clean_failure(text, stage_root):
    """A GoogleTest failure without its 'file:line / Failed' preamble and without stage paths."""
    lines = text.splitlines()
    while lines and (re.match(r"^\S+:\d+$", lines[0].strip())
                     or lines[0].strip() in ("Failed", "Failure", "unknown file")):
        lines.pop(0)
    return "\n".join(lines).replace(str(stage_root) + "/", "")


def read_gtest_json(path):
    """{full name: (result, [failure messages])} from a --gtest_output=json report."""
    data = json.loads(Path(path).read_text(errors="replace"))
    results = {}
    for suite in data.get("testsuites", []):
        for t in suite.get("testsuite", []):
            name = "%s.%s" % (suite.get("name"), t.get("name"))
            failures = [f.get("failure", "") for f in t.get("failures", [])]
            results[name] = (t.get("result", "COMPLETED"), t.get("status", "RUN"), failures)
    return results


def skip_message(output):
    m = re.search(r"Skipped\n(.*)", output)
    return m.group(1).strip() if m else "skipped"


def is_gpu_test(name):
    return "Cpu" not in name


# ---------------------------------------------------------------------------------------------
# Results


class Results:
    """The graded entries, in Gradescope's results.json format, plus a JUnit report."""

    def __init__(self):
        self.tests = []
        self.notes = []
        self.extra = {}

    def add(self, exercise, kind, name, max_score, passed, output, outcome, visibility="visible",
            score=None, gtest=None, tags=(), seconds=None, **extra):
        if score is None:
            score = max_score if passed else 0.0
        data = {"exercise": exercise, "kind": kind, "outcome": outcome}
        if gtest:
            data["gtest"] = gtest
        if seconds is not None:
            data["seconds"] = round(seconds, 2)
        data.update(extra)
        entry = {
            "name": name,
            "score": round(float(score), 4),
            "max_score": float(max_score),
            "status": "passed" if passed else "failed",
            "output": output,
            "visibility": visibility,
            "tags": [exercise, kind] + list(tags),
            "extra_data": data,
        }
        self.tests.append(entry)
        return entry

    def total(self):
        return round(sum(t["score"] for t in self.tests), 4)

    def max_total(self):
        return round(sum(t["max_score"] for t in self.tests), 4)

    def summary(self):
        lines = ["%-62s %8s  %s" % ("entry", "points", "outcome")]
        for t in self.tests:
            lines.append("%-62s %8s  %s" % (t["name"][:62], "%g/%g" % (t["score"], t["max_score"]),
                                             t["extra_data"]["outcome"]))
        lines.append("%-62s %8s" % ("total", "%g/%g" % (self.total(), self.max_total())))
        return "\n".join(lines)

    def write(self, out_dir, seconds):
        out_dir.mkdir(parents=True, exist_ok=True)
        text = "Score: %g / %g\n" % (self.total(), self.max_total())
        if self.notes:
            text += "\n" + "\n".join(self.notes) + "\n"
        doc = {
            "score": self.total(),
            "execution_time": int(seconds),
            "output": text,
            "visibility": "visible",
            "stdout_visibility": "hidden",
            "tests": self.tests,
            "extra_data": dict(self.extra, max_score=self.max_total()),
        }
        (out_dir / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
        self.write_junit(out_dir / "junit.xml")

    def write_junit(self, path):
        suites = ET.Element("testsuites", name="transpose exercises")
        by_exercise = {}
        for t in self.tests:
            ex = t["extra_data"]["exercise"]
            if ex not in by_exercise:
                by_exercise[ex] = ET.SubElement(suites, "testsuite", name=ex)
            case = ET.SubElement(by_exercise[ex], "testcase", classname=ex, name=t["name"],
                                 time=str(t["extra_data"].get("seconds", 0)))
            outcome = t["extra_data"]["outcome"]
            first = (t["output"].strip().splitlines() or [outcome])[0][:200]
            if outcome == "not_graded":
                ET.SubElement(case, "skipped", message=first)
            elif t["status"] == "failed":
                f = ET.SubElement(case, "failure", message=first, type=outcome)
                f.text = t["output"]
            ET.SubElement(case, "system-out").text = "score %g / %g\n%s" % (
                t["score"], t["max_score"], t["output"])
        for ex, suite in by_exercise.items():
            cases = [t for t in self.tests if t["extra_data"]["exercise"] == ex]
            suite.set("tests", str(len(cases)))
            suite.set("failures", str(sum(1 for t in cases if t["status"] == "failed"
                                          and t["extra_data"]["outcome"] != "not_graded")))
            suite.set("skipped", str(sum(1 for t in cases
                                         if t["extra_data"]["outcome"] == "not_graded")))
        suites.set("tests", str(len(self.tests)))
        suites.set("failures", str(sum(1 for t in self.tests if t["status"] == "failed"
                                       and t["extra_data"]["outcome"] != "not_graded")))
        ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


# ---------------------------------------------------------------------------------------------
# Staging


def find_submission_file(submission, exercise_id, name):
    """Where a submission keeps one allowlisted file: <id>/<name>, exercises/<id>/<name>, the
    same one folder down (an archive's top folder), or <name> at the top (names are unique)."""
    candidates = [submission / exercise_id / name, submission / "exercises" / exercise_id / name,
                  submission / name]
    if submission.is_dir():
        for sub in sorted(p for p in submission.iterdir() if p.is_dir() and not p.is_symlink()):
            candidates += [sub / exercise_id / name, sub / "exercises" / exercise_id / name,
                           sub / name]
    root = submission.resolve()
    for c in candidates:
        # A plain file inside the submission: no link out of it (to a hidden test, say).
        if c.is_file() and not c.is_symlink() and c.resolve().is_relative_to(root):
            return c
    return None


def write_if_changed(path, data):
    """Writes only when the content differs, so the build tool recompiles only what changed."""
    if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
        return False
    if path.is_symlink() or path.is_dir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def course_files(manifest):
    """{relative path: bytes} of the course files the stage needs."""
    files = {}
    skip = [Path(s) for s in manifest["stage"]["skip"]]
    for top in manifest["stage"]["copy"]:
        root = COURSE_DIR / top
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for p in paths:
            rel = p.relative_to(COURSE_DIR)
            if any(rel == s or s in rel.parents for s in skip) or "__pycache__" in rel.parts:
                continue
            files[rel] = p.read_bytes()
    return files


def sync_stage(course_root, wanted):
    """Makes course_root hold exactly `wanted` (relative path -> bytes)."""
    changed = 0
    for rel, data in wanted.items():
        changed += write_if_changed(course_root / rel, data)
    for p in sorted(course_root.rglob("*"), reverse=True):
        rel = p.relative_to(course_root)
        if (p.is_file() or p.is_symlink()) and rel not in wanted:
            p.unlink()
        elif p.is_dir() and not any(p.iterdir()):
            p.rmdir()
    return changed


def sync_dir(src, dst):
    wanted = {p.relative_to(src): p.read_bytes() for p in src.rglob("*")
              if p.is_file() and not p.is_symlink()} if src else {}
    dst.mkdir(parents=True, exist_ok=True)
    sync_stage(dst, wanted)


# ---------------------------------------------------------------------------------------------
# Grading


class Grader:
    def __init__(self, args, manifest, results):
        self.args = args
        self.m = manifest
        self.r = results
        self.timeouts = dict(manifest["timeouts_s"])
        if args.test_timeout:
            self.timeouts["test"] = args.test_timeout
        self.gpu = False if args.no_gpu else None  # None: not known until a GPU test runs
        self.stage = None
        self.build = None
        self.jobs = args.jobs or os.cpu_count() or 2
        self.sanitizer = self.find_sanitizer()

    # -- setup ----------------------------------------------------------------------------

    def find_sanitizer(self):
        found = shutil.which("compute-sanitizer")
        if found:
            return found
        for d in [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""),
                  "/usr/local/cuda"]:
            if d and Path(d, "bin", "compute-sanitizer").is_file():
                return str(Path(d, "bin", "compute-sanitizer"))
        nvcc = shutil.which("nvcc")
        if nvcc and Path(nvcc).with_name("compute-sanitizer").is_file():
            return str(Path(nvcc).with_name("compute-sanitizer"))
        return None

    def stage_submission(self, submission, exercises):
        """Copies the course and the submission's allowlisted files into the stage. Returns
        {exercise id: (present files {name: source path}, problems [text])}."""
        wanted = course_files(self.m)
        found = {}
        for ex in exercises:
            files, problems = {}, []
            for name in ex["files"]:
                path = find_submission_file(submission, ex["id"], name) \
                    if submission.is_dir() else None
                if path is None:
                    problems.append("missing: %s (expected at %s/%s in the submission)"
                                    % (name, ex["id"], name))
                    continue
                data = path.read_bytes()
                if len(data) > self.m["max_file_bytes"]:
                    problems.append("%s is %d bytes, more than the %d allowed"
                                    % (name, len(data), self.m["max_file_bytes"]))
                    continue
                files[name] = (path, data)
                wanted[Path("exercises", ex["id"], name)] = data
            found[ex["id"]] = (files, problems)
        sync_stage(self.stage / "course", wanted)
        shutil.rmtree(self.stage / "run", ignore_errors=True)  # the last run's reports
        return found

    def configure(self):
        hidden = self.stage / "hidden"
        if self.args.hidden:
            sync_dir(Path(self.args.hidden).resolve(), hidden)
        elif hidden.exists():
            shutil.rmtree(hidden)
        cmd = ["cmake", "-S", self.stage / "course", "-B", self.build,
               "-DCMAKE_BUILD_TYPE=Release", "-DCOURSE_GRADER_STAGE=ON",
               "-DCOURSE_HIDDEN_TESTS=%s" % (hidden if self.args.hidden else "")]
        if shutil.which("ninja") and not (self.build / "CMakeCache.txt").exists():
            cmd += ["-G", "Ninja"]
        if self.args.build_arch:
            cmd.append("-DCMAKE_CUDA_ARCHITECTURES=%s" % self.args.build_arch)
        cmd += self.args.cmake_arg or []
        ran = run(cmd, timeout=self.timeouts["configure"])
        if ran.rc != 0 or ran.timed_out:
            raise RuntimeError("the course's build could not be configured (cmake):\n"
                               + tail(ran.output, 4000))

    # -- one exercise ---------------------------------------------------------------------

    def grade(self, ex, files, problems):
        ex_id, title = ex["id"], ex["title"]
        tests = ex["tests"]

        def zero_all(reason, outcome):
            for t in tests:
                self.r.add(ex_id, "test", "%s | %s" % (title, t["title"]), t["points"], False,
                           reason, outcome, gtest=t["name"],
                           visibility=t.get("visibility", "visible"),
                           tags=["gpu" if is_gpu_test(t["name"]) else "cpu"])
            s = ex.get("sanitizer")
            if s:
                self.r.add(ex_id, "sanitizer",
                           "%s | memory safety (%s)" % (title, ", ".join(s["tools"])),
                           s["points"], False, reason, outcome)

        # 1. files
        if problems:
            self.r.add(ex_id, "files", "%s | files" % title, 0, False,
                       "\n".join(problems) + "\nThis exercise is not graded: 0 points.",
                       "missing_file")
            zero_all("not graded: a file of this exercise is missing (see '%s | files')" % title,
                     "not_run")
            return
        self.r.add(ex_id, "files", "%s | files" % title, 0, True,
                   "found: " + ", ".join("%s (from %s)" % (n, self.rel_sub(p))
                                         for n, (p, _) in files.items()),
                   "passed")

        # 2. build
        ran = run(["cmake", "--build", self.build, "--target", ex["target"], "-j", self.jobs],
                  timeout=self.timeouts["build"])
        if ran.rc != 0 or ran.timed_out:
            why = "compile error"
            if ran.timed_out:
                why = "the build timed out after %d s" % self.timeouts["build"]
            self.r.add(ex_id, "build", "%s | build" % title, 0, False,
                       "%s:\n%s" % (why, self.compiler_messages(ran.output)), "compile_error")
            zero_all("not graded: the exercise did not compile (see '%s | build')" % title,
                     "not_run")
            return
        self.r.add(ex_id, "build", "%s | build" % title, 0, True,
                   "compiled (%.0f s)" % ran.seconds, "passed", seconds=ran.seconds,
                   warnings=self.compiler_messages(ran.output) if "warning" in ran.output else "")

        # 3. static checks
        findings = self.static_checks(ex, files)
        check_titles = "; ".join(self.m["checks"][c]["title"] for c in ex["checks"])
        if findings:
            self.r.add(ex_id, "static", "%s | static checks" % title, 0, False,
                       "%s\nThis exercise is not graded: 0 points. Its rules: %s."
                       % ("\n".join(findings), check_titles), "static_check_failed")
            zero_all("not graded: the static checks failed (see '%s | static checks')" % title,
                     "not_run")
            return
        self.r.add(ex_id, "static", "%s | static checks" % title, 0, True,
                   "passed: " + check_titles, "passed")

        # 4. tests
        binary = self.build / "bin" / ex["target"]
        listed = self.list_tests(binary)
        passed_gpu = []
        for t in tests:
            ok = self.run_test(ex, t, binary, listed)
            if ok and is_gpu_test(t["name"]):
                passed_gpu.append(t["name"])
        if listed is not None:
            extra = sorted(set(listed) - {t["name"] for t in tests})
            if extra:
                self.r.extra.setdefault("unlisted_tests", {})[ex_id] = extra

        # 5. memory safety
        if ex.get("sanitizer"):
            self.run_sanitizers(ex, binary, passed_gpu)

        # 6. hidden tests
        if self.args.hidden and list((self.stage / "hidden" / ex_id).glob("*.cu")):
            self.run_hidden(ex)

    def rel_sub(self, path):
        try:
            return str(Path(path).relative_to(Path(self.args.submission).resolve()))
        except ValueError:
            return str(path)

    def compiler_messages(self, output):
        """The build output without progress lines, with paths relative to the course."""
        keep = [l for l in output.splitlines()
                if not re.match(r"^\[\d+/\d+\] ", l)                      # progress
                and not l.startswith(("ninja: build stopped", "FAILED: "))
                and not (" -c " in l and " -o " in l)]                    # the command line
        text = "\n".join(keep).replace(str(self.stage / "course") + "/", "")
        text = text.replace(str(self.build) + "/", "build/").replace(str(self.stage) + "/", "")
        return head(text)

    def static_checks(self, ex, files):
        findings = []
        objects = (self.build / "exercises" / (ex["objects"] + ".objects")).read_text().split()
        ns = "ex" + ex["id"][:2]
        symbols = {o: nm_symbols(o) for o in objects}
        for check in ex["checks"]:
            if check == "own_names":
                for o, syms in symbols.items():
                    findings += own_names_findings(Path(o).name, syms, ns)
                continue
            rules = self.m["checks"][check]
            for name, (_, data) in files.items():
                findings += source_findings(name, data.decode("utf-8", errors="replace"),
                                            rules.get("source", []))
            for o, syms in symbols.items():
                findings += symbol_findings(Path(o).name, syms, rules.get("undefined_symbols", []))
                if "max_static_bytes" in rules:
                    findings += static_size_findings(Path(o).name, syms, rules["max_static_bytes"])
                if rules.get("device_calls"):
                    findings += device_call_findings(Path(o).name, o, rules["device_calls"])
        return findings

    def list_tests(self, binary):
        ran = run([binary, "--gtest_list_tests"], cwd=self.workdir(), timeout=self.timeouts["list"])
        if ran.rc != 0 or ran.timed_out:
            self.r.notes.append("%s --gtest_list_tests failed: %s"
                                % (binary.name, tail(ran.output, 500)))
            return None
        return parse_gtest_list(ran.output)

    def workdir(self):
        d = self.stage / "run"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def no_gpu_reason(self):
        return "not graded: no CUDA device" + (" (--no-gpu)" if self.args.no_gpu else "")

    def run_test(self, ex, t, binary, listed, kind="test", visibility=None, title=None):
        """Runs one GoogleTest test in its own process and records its entry; True if passed."""
        ex_id, name = ex["id"], t["name"]
        gpu = is_gpu_test(name)
        entry_name = "%s | %s" % (ex["title"], title or t["title"])
        vis = visibility or t.get("visibility", "visible")
        tags = ["gpu" if gpu else "cpu"]
        common = dict(gtest=name, visibility=vis, tags=tags)

        if gpu and self.gpu is False:
            self.r.add(ex_id, kind, entry_name, t["points"], False, self.no_gpu_reason(),
                       "not_graded", reason="no CUDA device", **common)
            return False
        if listed is not None and name not in listed:
            self.r.add(ex_id, kind, entry_name, t["points"], False,
                       "the test binary has no test named %s (a course error: tell the instructor)"
                       % name, "missing_test", **common)
            return False

        # A fresh, unguessable report name: the report must come from this run of the test.
        report = self.workdir() / ("%s.%s.json" % (re.sub(r"[^A-Za-z0-9_.-]", "_", name),
                                                   secrets.token_hex(8)))
        ran = run([binary, "--gtest_filter=%s" % name, "--gtest_output=json:%s" % report,
                   "--gtest_color=no"], cwd=self.workdir(), timeout=self.timeouts["test"])
        common["seconds"] = ran.seconds

        if ran.timed_out:
            self.r.add(ex_id, kind, entry_name, t["points"], False,
                       "timed out after %d s: the test never finished (an endless loop or a hang "
                       "in the kernel or the launcher?); the process was killed.\nlast output:\n%s"
                       % (self.timeouts["test"], tail(ran.output, 1500)), "timeout", **common)
            return False
        results = None
        if report.exists():
            try:
                results = read_gtest_json(report)
            except (ValueError, OSError):
                results = None
        if not results or name not in results:
            sig = ran.signal_name()
            why = ("the test process was killed by %s" % sig) if sig else \
                  ("the test process exited with code %s" % ran.rc)
            self.r.add(ex_id, kind, entry_name, t["points"], False,
                       "%s before writing its report (a crash?).\nlast output:\n%s"
                       % (why, tail(ran.output, 3000)), "crashed", **common)
            return False

        result, status, failures = results[name]
        if result == "SKIPPED":
            msg = skip_message(ran.output)
            if gpu and "no CUDA device" in msg:
                self.gpu = False
                self.r.add(ex_id, kind, entry_name, t["points"], False, self.no_gpu_reason(),
                           "not_graded", reason=msg, **common)
            else:
                self.r.add(ex_id, kind, entry_name, t["points"], False, "skipped: " + msg,
                           "skipped", **common)
            return False
        if gpu:
            self.gpu = True
        if failures or ran.rc != 0:
            text = "\n\n".join(clean_failure(f, self.stage / "course") for f in failures)
            if not text:
                text = "the test failed (exit code %s):\n%s" % (ran.rc, tail(ran.output, 3000))
            outcome = "cuda_error" if "CUDA error" in text else "failed"
            self.r.add(ex_id, kind, entry_name, t["points"], False, tail(text), outcome, **common)
            return False
        self.r.add(ex_id, kind, entry_name, t["points"], True,
                   "passed (%.1f s)" % ran.seconds, "passed", **common)
        return True

    def run_sanitizers(self, ex, binary, passed_gpu):
        s = ex["sanitizer"]
        name = "%s | memory safety (%s)" % (ex["title"], ", ".join(s["tools"]))
        if self.gpu is False:
            self.r.add(ex["id"], "sanitizer", name, s["points"], False, self.no_gpu_reason(),
                       "not_graded", reason="no CUDA device")
            return
        if self.args.no_sanitizer:
            self.r.add(ex["id"], "sanitizer", name, s["points"], False,
                       "not graded: the sanitizers were turned off (--no-sanitizer)", "not_graded",
                       reason="--no-sanitizer")
            return
        if not passed_gpu:
            self.r.add(ex["id"], "sanitizer", name, s["points"], False,
                       "not run: no GPU test of this exercise passed, so there is nothing to check",
                       "not_run")
            return
        if not self.sanitizer:
            self.r.add(ex["id"], "sanitizer", name, s["points"], False,
                       "not graded: compute-sanitizer was not found (it comes with the CUDA "
                       "toolkit)",
                       "not_graded", reason="no compute-sanitizer")
            return
        lines, ok, seconds = [], True, 0.0
        for tool in s["tools"]:
            ran = run([self.sanitizer, "--tool", tool, "--error-exitcode", "86",
                       "--print-limit", "12", binary, "--gtest_filter=" + ":".join(passed_gpu),
                       "--gtest_color=no", "--gtest_brief=1"],
                      cwd=self.workdir(), timeout=self.timeouts["sanitizer"])
            seconds += ran.seconds
            summary = [l for l in ran.output.splitlines() if "SUMMARY" in l]
            if ran.timed_out:
                ok = False
                lines.append("%s: timed out after %d s" % (tool, self.timeouts["sanitizer"]))
            elif ran.rc == 0:
                lines.append("%s: clean (%s)"
                             % (tool, summary[-1].strip("= ") if summary else "ok"))
            else:
                ok = False
                reports = [l for l in ran.output.splitlines() if l.startswith("=========")]
                what = "reported errors" if ran.rc == 86 else \
                       "the tests failed under the tool (exit code %s)" % ran.rc
                lines.append("%s: %s\n%s" % (tool, what,
                                             tail("\n".join(reports) or ran.output, 2500)))
        self.r.add(ex["id"], "sanitizer", name, s["points"], ok,
                   "tests rerun under compute-sanitizer: %s\n%s"
                   % (", ".join(passed_gpu), "\n".join(lines)),
                   "passed" if ok else "sanitizer_error", seconds=seconds)

    def run_hidden(self, ex):
        rules = self.m["hidden_tests"]
        title = ex["title"]
        vis = rules.get("visibility", "after_published")
        ran = run(["cmake", "--build", self.build, "--target", ex["hidden_target"],
                   "-j", self.jobs], timeout=self.timeouts["build"])
        if ran.rc != 0 or ran.timed_out:
            self.r.add(ex["id"], "hidden", "%s | hidden tests: build" % title, 0, False,
                       "the hidden tests did not compile against this submission:\n%s"
                       % self.compiler_messages(ran.output), "compile_error", visibility="hidden")
            return
        binary = self.build / "bin" / ex["hidden_target"]
        listed = self.list_tests(binary) or []
        for name in listed:
            points, visibility = rules.get("points", 1), vis
            for rule in rules.get("rules", []):
                if fnmatch.fnmatchcase(name, rule["match"]):
                    points = rule.get("points", points)
                    visibility = rule.get("visibility", visibility)
            t = {"name": name, "title": "hidden: " + name, "points": points}
            self.run_test(ex, t, binary, listed, kind="hidden", visibility=visibility)


def load_manifest(path):
    m = json.loads(Path(path).read_text())
    for ex in m["exercises"]:
        for key in ("id", "title", "files", "objects", "target", "tests", "checks"):
            if key not in ex:
                raise ValueError("manifest: exercise %s has no '%s'" % (ex.get("id"), key))
    return m


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--submission", required=True, help="folder with the student's files")
    ap.add_argument("--out", default="build-grade/results",
                    help="where results.json and junit.xml go (default: build-grade/results)")
    ap.add_argument("--hidden", default="", help="instructor folder of hidden tests: <id>/*.cu")
    ap.add_argument("--build-arch", default="",
                    help="CUDA architectures (e.g. 90); empty: the course default")
    ap.add_argument("--manifest", default=str(GRADER_DIR / "manifest.json"))
    ap.add_argument("--stage", default="",
                    help="reuse this folder for the staged course and its build (trusted batches "
                         "and the self-test); default: a fresh temporary folder")
    ap.add_argument("--keep-stage", action="store_true", help="keep the temporary stage")
    ap.add_argument("--exercises", default="", help="comma-separated exercise ids (default: all)")
    ap.add_argument("--no-gpu", action="store_true", help="grade as if there were no CUDA device")
    ap.add_argument("--no-sanitizer", action="store_true", help="skip compute-sanitizer")
    ap.add_argument("--test-timeout", type=int, default=0,
                    help="seconds per test (default: the manifest's)")
    ap.add_argument("--jobs", type=int, default=0,
                    help="parallel compile jobs (default: all cores)")
    ap.add_argument("--cmake-arg", action="append",
                    help="extra argument for cmake's configure step (repeatable)")
    ap.add_argument("--quiet", action="store_true", help="do not print the summary table")
    args = ap.parse_args(argv)

    start = time.monotonic()
    out_dir = Path(args.out).resolve()
    results = Results()
    results.extra = {"grader": "transpose-course", "arch": args.build_arch or "course default"}
    temp = None
    try:
        manifest = load_manifest(args.manifest)
        grader = Grader(args, manifest, results)
        wanted = [e for e in args.exercises.split(",") if e]
        exercises = [e for e in manifest["exercises"] if not wanted or e["id"] in wanted]
        if args.stage:
            grader.stage = Path(args.stage).resolve()
            grader.stage.mkdir(parents=True, exist_ok=True)
        else:
            temp = tempfile.mkdtemp(prefix="transpose-grade-")
            grader.stage = Path(temp)
        grader.build = grader.stage / "build"
        submission = Path(args.submission).resolve()
        if not submission.is_dir():
            results.notes.append("the submission folder %s does not exist" % args.submission)
        found = grader.stage_submission(submission, exercises)
        grader.configure()
        for ex in exercises:
            files, problems = found[ex["id"]]
            grader.grade(ex, files, problems)
        results.extra["gpu"] = {True: "used", False: "none", None: "not needed"}[grader.gpu]
        if grader.gpu is False:
            results.notes.append("No CUDA device: the GPU tests are not graded (0 points) until "
                                 "the submission is graded on a machine with one.")
    except Exception:  # the grader's own failure is reported, never raised
        results.add("grader", "grader", "grader error", 0, False,
                    "The grader itself failed; this is not a verdict on the submission. Please "
                    "tell the instructor.\n" + tail(traceback.format_exc(), 4000), "grader_error")
    finally:
        if temp and not args.keep_stage:
            shutil.rmtree(temp, ignore_errors=True)
        elif temp:
            results.notes.append("stage kept in %s" % temp)
    try:
        results.write(out_dir, time.monotonic() - start)
    except Exception:
        traceback.print_exc()
    if not args.quiet:
        print(results.summary())
        for n in results.notes:
            print(n)
        print("results: %s" % (out_dir / "results.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
