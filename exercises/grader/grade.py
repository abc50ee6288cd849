#!/usr/bin/env python3
"""Grades a submission of the transpose course's exercises (Python standard library only).

    python3 exercises/grader/grade.py --submission DIR [--out DIR] [--hidden DIR] [--exercises IDS]
    make grade SUBMISSION=DIR [OUT=DIR] [HIDDEN=DIR] [EXERCISES=IDS] [ARCH=A]

A submission is hostile code, and nothing it can write decides its grade (exercises/INSTRUCTORS.md
has the threat model). Exercise by exercise:
  1. stages a clean copy of the course and copies in only the allowlisted files of the
     submission (manifest.json, "files");
  2. builds the exercise's worker (the course's worker.cu linked with the submission's objects)
     in a sandbox (sandbox.py): its own user, PID and mount namespaces, nothing of the course,
     the submission, the results or the hidden tests visible but what the build needs;
  3. static checks of the source and the objects (no library transpose, no allocation in place,
     nothing of the course redefined, the swizzle's tile unpadded);
  4. each entry runs the worker in a fresh sandbox on fresh random problems; the worker writes
     only data (matrices, return codes, the answers of the index functions), and the judge, built
     from the course alone and run after every process of the sandbox is gone, decides;
  5. what the exercise forbids is measured from outside: the time and the CPU time of a long
     chained run against the course's own kernel (host work), the device memory during it
     (exercise 3), the swizzle evaluated on the device against the host's (exercise 2);
  6. compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the worker, its report
     written where the submission cannot write; a memory error zeroes the GPU entries;
  7. hidden tests from an instructor's folder (--hidden);
  8. writes results.json (Gradescope's format) and junit.xml into --out after every process of
     the submission is gone, always, even when the grader itself fails, and exits 0 whatever the
     score.
Without a CUDA device it still builds, runs the static and CPU checks, and marks the GPU entries
"not graded: no CUDA device".
"""

import argparse
import ctypes
import fnmatch
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import xml.etree.ElementTree as ET
from pathlib import Path

GRADER_DIR = Path(__file__).resolve().parent
COURSE_DIR = GRADER_DIR.parent.parent
OUTPUT_LIMIT = 6000  # characters of output kept in one entry
sys.path.insert(0, str(GRADER_DIR))
sys.dont_write_bytecode = True  # no __pycache__ in the course's folders
import sandbox  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Trusted commands (the grader's own tools: nm, the compiler of the judge, the judge)


class Ran:
    """The outcome of one trusted command: exit status, combined output, and why it stopped."""

    def __init__(self, rc, output, seconds, timed_out):
        self.rc = rc
        self.output = output
        self.seconds = seconds
        self.timed_out = timed_out


def run(cmd, cwd=None, timeout=None, env=None):
    """Runs a trusted command (never the submission's code) and returns what it printed."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        out.seek(0)
        text = out.read().decode("utf-8", errors="replace")
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


def skip_message(output):
    m = re.search(r"Skipped\n(.*)", output)
    return m.group(1).strip() if m else "skipped"


def is_gpu_test(name):
    return "Cpu" not in name




# ---------------------------------------------------------------------------------------------
# Device code in an object: the shared memory each kernel declares


def elf_sections(data):
    """[(name, type, offset, size)] of a little-endian ELF64 file (raises ValueError)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize < 64 or shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
        raise ValueError("bad section table")
    raw = []
    for i in range(shnum):
        name, typ, _, _, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        raw.append((name, typ, off, size))
    str_off, str_size = raw[shstrndx][2], raw[shstrndx][3]
    names = data[str_off:str_off + str_size]
    out = []
    for name, typ, off, size in raw:
        end = names.find(b"\0", name)
        out.append((names[name:end if end >= 0 else None].decode("ascii", "replace"), typ, off,
                    size))
    return out


def device_images(obj_bytes):
    """[(arch, cubin bytes or None when compressed)] of the fat binaries in a host object."""
    images = []
    for name, _, off, size in elf_sections(obj_bytes):
        if name != ".nv_fatbin":
            continue
        blob = obj_bytes[off:off + size]
        p = 0
        while p + 16 <= len(blob):
            magic, _, hsize, fsize = struct.unpack_from("<IHHQ", blob, p)
            if magic != 0xBA55ED50:
                break
            q, end = p + hsize, p + hsize + fsize
            while q + 64 <= end:
                kind, _, ehsize, psize = struct.unpack_from("<HHIQ", blob, q)
                arch, = struct.unpack_from("<I", blob, q + 28)
                payload = blob[q + ehsize:q + ehsize + psize]
                if kind == 2:  # a cubin (1 is PTX)
                    images.append((arch, payload if payload[:4] == b"\x7fELF" else None))
                if ehsize == 0 or psize == 0 and ehsize < 64:
                    break
                q += ehsize + psize
            p = end
    return images


def kernel_shared_bytes(cubin):
    """{mangled kernel name: bytes of its .nv.shared section} of a cubin (static shared memory,
    plus what the architecture reserves for itself: see Grader.reserved_shared)."""
    sections = elf_sections(cubin)
    kernels = {n[len(".text."):] for n, _, _, _ in sections if n.startswith(".text.")}
    shared = {n[len(".nv.shared."):]: s for n, _, _, s in sections if n.startswith(".nv.shared.")}
    return {k: shared.get(k, 0) for k in kernels}


def demangle(names):
    tool = shutil.which("c++filt")
    if not tool or not names:
        return {n: n for n in names}
    r = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True)
    out = r.stdout.splitlines()
    return {n: (out[i] if i < len(out) else n) for i, n in enumerate(names)}


# ---------------------------------------------------------------------------------------------
# NVML, through ctypes (no package): the device memory in use, sampled from outside the sandbox


class Nvml:
    """The used memory of every device, summed (bytes)."""

    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                    ("used", ctypes.c_ulonglong)]

    def __init__(self):
        lib = ctypes.CDLL("libnvidia-ml.so.1")
        if lib.nvmlInit_v2() != 0:
            raise OSError("nvmlInit failed")
        count = ctypes.c_uint(0)
        if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0 or count.value == 0:
            raise OSError("NVML sees no device")
        self.lib = lib
        self.handles = []
        for i in range(count.value):
            h = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) == 0:
                self.handles.append(h)
        self.mem = Nvml.Memory()

    def used(self):
        total = 0
        for h in self.handles:
            if self.lib.nvmlDeviceGetMemoryInfo(h, ctypes.byref(self.mem)) == 0:
                total += self.mem.used
        return total


class MemoryMonitor:
    """Samples the device memory in use while a timed run runs: at its "ready" (everything it
    allocates for itself is allocated) and the peak after its "go"."""

    def __init__(self, nvml):
        self.nvml = nvml
        self.ready_used = None
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = None

    def mark_ready(self):
        self.ready_used = self.nvml.used()
        self.peak = self.ready_used

    def start(self):
        def loop():
            while not self._stop.is_set():
                if self.ready_used is not None:
                    self.peak = max(self.peak, self.nvml.used())
                    self.samples += 1
                time.sleep(0.0002)
        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join()


# ---------------------------------------------------------------------------------------------
# compute-sanitizer's report (a file only root can write)


def sanitizer_errors(log):
    """(errors, summary line) from a compute-sanitizer log; errors is None without a summary
    (the tool did not finish)."""
    m = re.findall(r"^=+ ERROR SUMMARY: (\d+) errors?", log, re.M)
    if m:
        return int(m[-1]), "ERROR SUMMARY: %s errors" % m[-1]
    m = re.findall(r"^=+ RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) "
                   r"warnings?\)", log, re.M)
    if m:
        return int(m[-1][1]), "RACECHECK SUMMARY: %s hazards (%s errors, %s warnings)" % m[-1]
    return None, ""


# ---------------------------------------------------------------------------------------------
# Results

NOT_GRADED = "not_graded"


class Results:
    """The graded entries, in Gradescope's results.json format, plus a JUnit report.

    An entry that was not graded (no CUDA device, a check turned off) says so everywhere: its
    outcome is "not_graded", its output starts with "not graded", results.json leaves its
    "status" out (Gradescope then shows 0 / max, and no pass or fail), JUnit marks it skipped and
    the table says "not graded"."""

    def __init__(self):
        self.tests = []
        self.notes = []
        self.extra = {}
        self.titles = {}  # exercise id -> title

    def add(self, exercise, kind, name, max_score, passed, output, outcome, visibility="visible",
            score=None, gtest=None, tags=(), seconds=None, **extra):
        if outcome == NOT_GRADED:
            passed, score = False, 0.0
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
            "output": output,
            "visibility": visibility,
            "tags": [exercise, kind] + list(tags),
            "extra_data": data,
        }
        if outcome != NOT_GRADED:
            entry["status"] = "passed" if passed else "failed"
        self.tests.append(entry)
        return entry

    @staticmethod
    def state(t):
        if t["extra_data"]["outcome"] == NOT_GRADED:
            return "not graded"
        return t["status"]

    def total(self):
        return round(sum(t["score"] for t in self.tests), 4)

    def max_total(self):
        return round(sum(t["max_score"] for t in self.tests), 4)

    def not_graded(self, tests=None):
        return round(sum(t["max_score"] for t in (tests if tests is not None else self.tests)
                         if t["extra_data"]["outcome"] == NOT_GRADED), 4)

    def subtotals(self):
        """One line per exercise: "Exercise 1 (rectangular): 16 of 35 points, 19 not graded"."""
        lines = []
        order = []
        for t in self.tests:
            ex = t["extra_data"]["exercise"]
            if ex not in order:
                order.append(ex)
        for ex in order:
            mine = [t for t in self.tests if t["extra_data"]["exercise"] == ex]
            got = round(sum(t["score"] for t in mine), 4)
            top = round(sum(t["max_score"] for t in mine), 4)
            ng = self.not_graded(mine)
            line = "%s: %g of %g points" % (self.titles.get(ex, ex), got, top)
            if ng:
                line += ", %g not graded" % ng
            lines.append(line)
        line = "Total: %g of %g points" % (self.total(), self.max_total())
        if self.not_graded():
            line += ", %g not graded" % self.not_graded()
        lines.append(line)
        return lines

    def summary(self):
        """The table printed on the terminal: every entry's full name, its points and state."""
        width = max([len(t["name"]) for t in self.tests] + [5])
        lines = ["%-*s  %9s  %s" % (width, "entry", "points", "status")]
        for t in self.tests:
            lines.append("%-*s  %9s  %s" % (width, t["name"], "%g/%g" % (t["score"],
                                                                        t["max_score"]),
                                            self.state(t)))
        return "\n".join(lines + [""] + self.subtotals())

    def write(self, out_dir, seconds):
        out_dir.mkdir(parents=True, exist_ok=True)
        text = "\n".join(self.subtotals()) + "\n"
        if self.notes:
            text += "\n" + "\n".join(self.notes) + "\n"
        doc = {
            "score": self.total(),
            "execution_time": int(seconds),
            "output": text,
            "visibility": "visible",
            "stdout_visibility": "hidden",
            "tests": self.tests,
            "extra_data": dict(self.extra, max_score=self.max_total(),
                               not_graded=self.not_graded()),
        }
        # Written to a new file, then renamed: a reader never sees half a report.
        for name, data in (("results.json", json.dumps(doc, indent=2) + "\n"),
                           ("junit.xml", self.junit())):
            tmp = out_dir / (".%s.%s" % (name, secrets.token_hex(4)))
            tmp.write_text(data)
            os.replace(tmp, out_dir / name)

    def junit(self):
        suites = ET.Element("testsuites", name="transpose exercises")
        by_exercise = {}
        for t in self.tests:
            ex = t["extra_data"]["exercise"]
            if ex not in by_exercise:
                by_exercise[ex] = ET.SubElement(suites, "testsuite", name=ex)
            case = ET.SubElement(by_exercise[ex], "testcase", classname=ex, name=t["name"],
                                 time=str(t["extra_data"].get("seconds", 0)))
            state = self.state(t)
            first = (t["output"].strip().splitlines() or [state])[0][:200]
            if state == "not graded":
                ET.SubElement(case, "skipped", message=first)
            elif state == "failed":
                f = ET.SubElement(case, "failure", message=first, type=t["extra_data"]["outcome"])
                f.text = t["output"]
            ET.SubElement(case, "system-out").text = "score %g / %g\n%s" % (
                t["score"], t["max_score"], t["output"])

        def count(tests, state):
            return str(sum(1 for t in tests if self.state(t) == state))

        for ex, suite in by_exercise.items():
            cases = [t for t in self.tests if t["extra_data"]["exercise"] == ex]
            suite.set("tests", str(len(cases)))
            suite.set("failures", count(cases, "failed"))
            suite.set("skipped", count(cases, "not graded"))
        suites.set("tests", str(len(self.tests)))
        suites.set("failures", count(self.tests, "failed"))
        suites.set("skipped", count(self.tests, "not graded"))
        return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


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


def sync_dir(src, dst, only=None):
    """Makes dst hold exactly the plain files of src (of its subfolders @p only, if given)."""
    roots = [src / o for o in only] if only else [src]
    wanted = {p.relative_to(src): p.read_bytes() for r in roots for p in r.rglob("*")
              if p.is_file() and not p.is_symlink() and "__pycache__" not in p.parts}
    dst.mkdir(parents=True, exist_ok=True)
    sync_stage(dst, wanted)



# ---------------------------------------------------------------------------------------------
# Grading


class Entry:
    """One entry of an exercise before the exercise's rules are applied: a measured violation
    (host work, extra memory, a memory error, the wrong technique) can still zero it."""

    def __init__(self, exercise, kind, name, points, outcome, output, gtest=None,
                 visibility="visible", gpu=False, seconds=None, **extra):
        self.exercise, self.kind, self.name, self.points = exercise, kind, name, points
        self.outcome, self.output, self.gtest = outcome, output, gtest
        self.visibility, self.gpu, self.seconds, self.extra = visibility, gpu, seconds, extra

    @property
    def passed(self):
        return self.outcome == "passed"

    def zero(self, reason):
        if self.outcome == NOT_GRADED:
            return
        if self.passed:
            self.output = "0 points: %s\n(what this entry checks on its own passed: %s)" % (
                reason, self.output)
            self.outcome = "zeroed"
        else:
            self.output += "\nAlso: %s" % reason


class Grader:
    def __init__(self, args, manifest, results):
        self.args = args
        self.m = manifest
        self.r = results
        self.timeouts = dict(manifest["timeouts_s"])
        if args.test_timeout:
            self.timeouts["entry"] = args.test_timeout
        self.gpu = False if args.no_gpu else None  # None: not known yet
        self.no_gpu_why = "no CUDA device (--no-gpu)" if args.no_gpu else ""
        self.jobs = args.jobs or os.cpu_count() or 2
        self.sanitizer = self.find_sanitizer()
        self.sanitizer_mode = None
        self.box = None
        self.stage = self.build = None
        self.counter = 0
        self.judge_bin = None
        self.nvml = None
        self.nvml_why = ""
        self.reserved = {}
        self.probe_cache = {}
        self.submission = None
        self.gpu_test_passed = False

    # -- setup ----------------------------------------------------------------------------

    @staticmethod
    def find_sanitizer():
        found = shutil.which("compute-sanitizer")
        if found:
            return found
        for d in [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""),
                  "/usr/local/cuda"]:
            if d and Path(d, "bin", "compute-sanitizer").is_file():
                return str(Path(d, "bin", "compute-sanitizer"))
        nvcc = shutil.which("nvcc")
        if nvcc and Path(nvcc).resolve().with_name("compute-sanitizer").is_file():
            return str(Path(nvcc).resolve().with_name("compute-sanitizer"))
        return None

    def set_up(self, stage, submission, out_dir):
        """The stage's folders, and the sandbox that hides the course, the submission, the
        results and the hidden tests from every run."""
        self.stage = stage
        self.submission = submission
        self.course_root = stage / "course"
        self.grader_root = stage / "grader"
        self.build = stage / "build"
        self.hidden_dir = stage / "hidden"
        self.private = stage / "private"
        self.runs = stage / "runs"
        self.scratch = stage / "scratch"
        hide = [COURSE_DIR, submission, out_dir] + [Path(p) for p in self.args.mask or []]
        if self.args.hidden:
            hide.append(Path(self.args.hidden))
        self.box = sandbox.Sandbox.create(want=not self.args.no_sandbox,
                                          user=self.args.sandbox_user, hide=hide)
        for d in (stage, self.course_root, self.grader_root, self.build, self.runs):
            d.mkdir(parents=True, exist_ok=True)
            os.chmod(d, 0o755)
        self.private.mkdir(exist_ok=True)
        os.chmod(self.private, 0o700)
        shutil.rmtree(self.scratch, ignore_errors=True)
        self.scratch.mkdir()
        self.box.chown(self.build)
        self.box.chown(self.scratch)
        self.r.extra["isolation"] = self.box.level
        self.r.notes.append("Isolation: " + self.box.note + ".")

    def next_id(self):
        self.counter += 1
        return "%d-%d" % (os.getpid(), self.counter)

    def base_env(self):
        env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "CUDA_HOME", "CUDA_PATH",
                                          "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")
               if k in os.environ}
        env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
        home = "/tmp" if self.box.level == sandbox.NAMESPACES else str(self.scratch)
        env.update(HOME=home, TMPDIR=home, CUDA_DEVICE_ORDER="PCI_BUS_ID")
        return env

    def hidden_artifacts(self):
        """The hidden tests' sources and binaries, hidden from every run but theirs."""
        found = [self.hidden_dir]
        found += list((self.build / "bin").glob("test_ex*_hidden_*"))
        found += list((self.build / "exercises" / "CMakeFiles").glob("test_ex*_hidden_*"))
        return found

    def boxed(self, argv, timeout, log, fds=None, rw=(), hide=(), network=False, as_root=False,
              handshake=None, monitor=None, env=None, show_hidden=False):
        """Runs a command built from the submission (or compiling it) in the sandbox."""
        ro = [self.course_root, self.grader_root, self.build]
        hide = list(hide) + [self.private, self.runs]
        if not show_hidden:
            hide += self.hidden_artifacts()
        elif self.hidden_dir.is_dir():
            ro.append(self.hidden_dir)
        cwd = "/tmp" if self.box.level == sandbox.NAMESPACES else str(self.scratch)
        ran = self.box.run(argv, timeout=timeout, log=log, cwd=cwd, env=env or self.base_env(),
                           fds=fds, ro=ro, rw=rw, hide=hide, network=network, as_root=as_root,
                           handshake=handshake, monitor=monitor, private=self.private)
        ran.limit = timeout
        return ran

    # -- staging and building -------------------------------------------------------------

    def stage_submission(self, submission, exercises):
        """Copies the course and the submission's allowlisted files into the stage. Returns
        {exercise id: (present files {name: (source path, bytes)}, problems [text])}."""
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
        sync_stage(self.course_root, wanted)
        sync_dir(GRADER_DIR, self.grader_root, only=("worker", "judge"))
        for root in (self.course_root, self.grader_root):
            for p in [root] + list(root.rglob("*")):
                os.chmod(p, 0o755 if p.is_dir() else 0o644)
        return found

    def configure(self):
        hidden = self.hidden_dir
        if self.args.hidden:
            sync_dir(Path(self.args.hidden).resolve(), hidden)
            for p in [hidden] + list(hidden.rglob("*")):
                os.chmod(p, 0o755 if p.is_dir() else 0o644)
        elif hidden.exists():
            shutil.rmtree(hidden)
        cmd = ["cmake", "-S", self.course_root, "-B", self.build, "-DCMAKE_BUILD_TYPE=Release",
               "-DCOURSE_GRADER_STAGE=ON",
               "-DCOURSE_HIDDEN_TESTS=%s" % (hidden if self.args.hidden else ""),
               "-DCMAKE_PROJECT_transpose_course_INCLUDE=%s"
               % (self.grader_root / "worker" / "project_hook.cmake")]
        if shutil.which("ninja") and not (self.build / "CMakeCache.txt").exists():
            cmd += ["-G", "Ninja"]
        if self.args.build_arch:
            cmd.append("-DCMAKE_CUDA_ARCHITECTURES=%s" % self.args.build_arch)
        if self.nvcc_has("--no-compress"):
            # Plain device code in the objects, so the grader can read each kernel's shared
            # memory (compressed code it could not).
            cmd.append("-DCMAKE_CUDA_FLAGS=--no-compress")
        cmd += self.args.cmake_arg or []
        ran = self.boxed(cmd, self.timeouts["configure"], self.private / "configure.log",
                         rw=[self.build], network=True)
        if ran.rc != 0 or ran.timed_out:
            raise RuntimeError("the course's build could not be configured (cmake):\n"
                               + tail(ran.output, 4000))
        # The probes (the course's own kernels: the device check and the timed runs'
        # yardsticks) only run on a GPU; --no-gpu grades without them.
        probes = [] if self.args.no_gpu else ["grader_probe", "grader_probe_inplace"]
        ran = self.build_targets(probes + ["grader_worker_main_ex%s" % ex["id"][:2]
                                           for ex in self.m["exercises"]])
        if ran.rc != 0 or ran.timed_out:
            raise RuntimeError("the grader's probe did not build:\n" + tail(ran.output, 4000))

    def nvcc_has(self, flag):
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        for a in self.args.cmake_arg or []:
            if a.startswith("-DCMAKE_CUDA_COMPILER="):
                nvcc = a.split("=", 1)[1]
        try:
            return flag in subprocess.run([nvcc, "--help"], capture_output=True, text=True,
                                          timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            return False

    def build_targets(self, targets, show_hidden=False):
        return self.boxed(["cmake", "--build", self.build, "--target"] + targets +
                          ["-j", str(self.jobs)], self.timeouts["build"],
                          self.private / "build.log", rw=[self.build], show_hidden=show_hidden)

    def build_judge(self):
        """The judge, compiled here from the course's own files (never from the stage, which a
        build of the submission wrote to)."""
        sources = [GRADER_DIR / "judge" / "judge.cpp"] + \
            [COURSE_DIR / "common" / f for f in ("host_data.cpp", "problem.cpp", "bank_model.cpp")]
        deps = sources + sorted((GRADER_DIR / "judge").glob("*.hpp")) + \
            sorted((COURSE_DIR / "common").glob("*.hpp")) + \
            [COURSE_DIR / "exercises" / "testing" / "index_checks.hpp"]
        digest = hashlib.sha256(b"".join(p.read_bytes() for p in deps)).hexdigest()[:16]
        target = self.private / ("judge-" + digest)
        if not target.is_file():
            cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or "c++"
            tmp = self.private / ("judge-" + secrets.token_hex(4))
            ran = run([cxx, "-O2", "-std=c++17", "-pthread", "-I", COURSE_DIR / "common",
                       "-I", COURSE_DIR / "exercises" / "testing", "-I", GRADER_DIR / "judge"]
                      + sources + ["-o", tmp], timeout=600)
            if ran.rc != 0:
                raise RuntimeError("the grader's judge did not compile:\n" + tail(ran.output))
            os.replace(tmp, target)
        self.judge_bin = target

    # -- the worker and the judge ---------------------------------------------------------

    def worker(self, ex):
        return self.build / "bin" / ex["worker"]

    def judge(self, number, plan, data, key=0):
        ran = run([self.judge_bin, "verify", "--exercise", number, "--plan", plan, "--data", data,
                   "--key", "%x" % key], timeout=self.timeouts["judge"])
        verdicts, note = [], ""
        for line in ran.output.splitlines():
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if "note" in doc:
                note = doc["note"]
            elif "item" in doc:
                verdicts.append(doc)
        if ran.rc != 0 or ran.timed_out:
            raise RuntimeError("the judge failed (%s):\n%s" % (
                "timed out" if ran.timed_out else "exit code %s" % ran.rc, tail(ran.output, 3000)))
        return verdicts, note

    def run_plan(self, binary, number, items, timeout, handshake=None, monitor=None, key=0):
        """Runs the worker on a plan in a fresh sandbox, then the judge on what it wrote.
        Returns (sandbox.Ran, verdicts, note)."""
        n = self.next_id()
        plan, data, log = (self.private / ("%s-%s" % (w, n)) for w in ("plan", "data", "log"))
        plan.write_text("plan 1\n" + "\n".join(items) + "\n")
        os.chmod(plan, 0o600)
        env = self.base_env()
        env["CUDA_MODULE_LOADING"] = "EAGER"  # every kernel loaded before the clock starts
        try:
            ran = self.boxed([binary], timeout, log, fds={3: plan, 4: data}, env=env,
                             handshake=handshake, monitor=monitor)
            verdicts, note = self.judge(number, plan, data, key)
        finally:
            for p in (plan, data, log):
                p.unlink(missing_ok=True)
        return ran, verdicts, note

    def describe_stop(self, ran, item_line):
        """Why a worker stopped before an item was done: a timeout, a crash, an exit."""
        last = tail(ran.output, 1500)
        during = " during \"%s\"" % item_line if item_line else ""
        if ran.timed_out:
            return ("timed out after %g s%s: the code never finished (an endless loop, or a "
                    "hang in the kernel or the launcher?); every process it started was killed."
                    "\nlast output:\n%s" % (ran.limit, during, last)), "timeout"
        sig = ran.signal_name()
        if sig:
            return ("the worker running your code was killed by %s%s (a crash?).\nlast output:"
                    "\n%s" % (sig, during, last)), "crashed"
        return ("the worker running your code stopped (exit code %s)%s before it finished.\n"
                "last output:\n%s" % (ran.rc, during, last)), "crashed"

    def outcome_of(self, ran, verdicts, note, items):
        """(outcome, output) of an entry from its items' verdicts: the first failure decides."""
        if verdicts and all(v.get("nodev") for v in verdicts):
            return NOT_GRADED, "not graded: no CUDA device"
        for v in verdicts:
            if v["ok"]:
                continue
            if v.get("missing"):
                text, outcome = self.describe_stop(ran, items[v["item"]])
                if not (ran.timed_out or ran.signal_no or ran.rc):
                    text = v["message"] + ("\n" + note if note else "")
                    outcome = "failed"
                return outcome, text
            msg = v["message"]
            if note:
                msg += "\n(%s)" % note
            outcome = "cuda_error" if "CUDA error" in msg else \
                "not_implemented" if v.get("todo") else "failed"
            return outcome, msg
        if len(verdicts) < len(items):
            return "failed", "the judge has no verdict for every problem (a grader error)"
        return "passed", "passed (%d %s, %.1f s)" % (
            len(items), "problem" if len(items) == 1 else "problems", ran.seconds)

    # -- one exercise ---------------------------------------------------------------------

    def build_exercise(self, ex, files, problems):
        """Steps 1 to 3 of an exercise: its files, its build, its static checks. Returns True
        when it can run; otherwise its entries are recorded, with the reason."""
        ex_id, title = ex["id"], ex["title"]
        self.r.titles[ex_id] = title
        pending = []

        def entry_name(t):
            return "%s | %s" % (title, t)

        def zero_all(reason, outcome):
            for e in ex["entries"]:
                pending.append(Entry(ex_id, self.kind_tag(e), entry_name(e["title"]),
                                     e["points"], outcome, reason, gtest=e["name"],
                                     gpu=self.is_gpu(e)))
            s = ex.get("sanitizer")
            if s:
                pending.append(Entry(ex_id, "sanitizer", self.sanitizer_title(ex), s["points"],
                                     outcome, reason, gpu=True))

        # 1. files
        if problems:
            self.r.add(ex_id, "files", entry_name("files"), 0, False,
                       "\n".join(problems) + "\nThis exercise is not graded: 0 points.",
                       "missing_file")
            zero_all("not graded: a file of this exercise is missing (see '%s')"
                     % entry_name("files"), "not_run")
            return self.finish(ex, pending, [])
        self.r.add(ex_id, "files", entry_name("files"), 0, True,
                   "found: " + ", ".join("%s (from %s)" % (n, self.rel_sub(p))
                                         for n, (p, _) in files.items()), "passed")

        # 2. build (in the sandbox: a compile can #include any file it can read): the
        # submission's objects first, checked before anything is linked with them
        def build_failed(ran, why):
            if ran.timed_out:
                why = "the build timed out after %d s" % self.timeouts["build"]
            self.r.add(ex_id, "build", entry_name("build"), 0, False,
                       "%s:\n%s" % (why, self.compiler_messages(ran.output)), "compile_error")
            zero_all("not graded: the exercise did not build (see '%s')" % entry_name("build"),
                     "not_run")
            return self.finish(ex, pending, [])

        ran = self.build_targets([ex["objects"]])
        if ran.rc != 0 or ran.timed_out:
            return build_failed(ran, "compile error")

        # 3. static checks
        findings = self.static_checks(ex, files)
        check_titles = "; ".join(self.m["checks"][c]["title"] for c in ex["checks"])
        if findings:
            self.r.add(ex_id, "build", entry_name("build"), 0, True,
                       "compiled (%.0f s)" % ran.seconds, "passed", seconds=ran.seconds)
            self.r.add(ex_id, "static", entry_name("static checks"), 0, False,
                       "%s\nThis exercise is not graded: 0 points. Its rules: %s."
                       % ("\n".join(findings), check_titles), "static_check_failed")
            zero_all("not graded: the static checks failed (see '%s')"
                     % entry_name("static checks"), "not_run")
            return self.finish(ex, pending, [])
        linked = self.build_targets([ex["worker"]])
        if linked.rc != 0 or linked.timed_out:
            return build_failed(linked, "the grader's worker did not link with your code")
        seconds = ran.seconds + linked.seconds
        output = ran.output + linked.output
        self.r.add(ex_id, "build", entry_name("build"), 0, True,
                   "compiled (%.0f s)" % seconds, "passed", seconds=seconds,
                   warnings=self.compiler_messages(output) if "warning" in output else "")
        self.r.add(ex_id, "static", entry_name("static checks"), 0, True,
                   "passed: " + check_titles, "passed")
        return True

    def run_exercise(self, ex):
        """Steps 4 to 6 of an exercise that built and passed its static checks."""
        number = int(ex["id"][:2])
        pending = []

        # 4. the entries, each in a fresh sandbox, judged from the outside
        gates = []
        binary = self.worker(ex)
        for e in ex["entries"]:
            if e["kind"] in ("speed", "memory"):
                continue  # below, from one timed run
            pending.append(self.run_entry(ex, number, e, binary, gates))
        self.gpu_test_passed = any(p.passed and p.kind == "test" and p.gpu for p in pending)

        # 5. memory safety
        if ex.get("sanitizer"):
            pending.append(self.run_sanitizers(ex, number, binary, gates))

        # 6. host work and extra memory, measured from outside during one long timed run
        timed = [e for e in ex["entries"] if e["kind"] in ("speed", "memory")]
        if timed:
            pending += self.run_timed(ex, number, binary, timed, gates)
        return self.finish(ex, pending, gates)

    def is_gpu(self, e):
        return e["kind"] in ("gpu", "same_swizzle", "speed", "memory")

    @staticmethod
    def kind_tag(e):
        """An entry's kind in results.json: test (the course's tests), technique, speed, memory."""
        return {"check": "test", "gpu": "test", "shared_memory": "technique",
                "same_swizzle": "technique"}.get(e["kind"], e["kind"])

    def sanitizer_title(self, ex):
        return "%s | memory safety (%s)" % (ex["title"], ", ".join(ex["sanitizer"]["tools"]))

    def not_graded_entry(self, ex, e, why):
        return Entry(ex["id"], self.kind_tag(e), "%s | %s" % (ex["title"], e["title"]),
                     e["points"], NOT_GRADED, "not graded: " + why, gtest=e["name"],
                     gpu=self.is_gpu(e), reason=why)

    def run_entry(self, ex, number, e, binary, gates):
        name = "%s | %s" % (ex["title"], e["title"])
        common = dict(gtest=e["name"], visibility=e.get("visibility", "visible"),
                      gpu=self.is_gpu(e))
        kind = e["kind"]
        if kind == "shared_memory":
            outcome, text = self.shared_memory(ex, e)
            if outcome == "failed":
                gates.append(("technique", "the kernel does not use the unpadded, swizzled tile "
                                           "(see '%s')" % name))
            return Entry(ex["id"], "technique", name, e["points"], outcome, text, **common)
        if self.is_gpu(e) and self.gpu is False:
            return self.not_graded_entry(ex, e, self.no_gpu_why or "no CUDA device")
        if kind == "check":
            items = ["check " + e["check"]]
        elif kind == "same_swizzle":
            items = ["swizzle"]
        else:
            items = self.problems(ex, e)
        ran, verdicts, note = self.run_plan(binary, number, items, self.timeouts["entry"])
        outcome, text = self.outcome_of(ran, verdicts, note, items)
        if outcome == NOT_GRADED:
            self.gpu = False
            self.no_gpu_why = "no CUDA device"
            return self.not_graded_entry(ex, e, "no CUDA device")
        if self.is_gpu(e) and outcome != NOT_GRADED:
            self.gpu = True
        if kind == "same_swizzle" and outcome != "passed":
            gates.append(("technique", "the kernel's swizzle is not the one the CPU tests check "
                                       "(see '%s')" % name))
        kind_tag = "technique" if kind == "same_swizzle" else "test"
        return Entry(ex["id"], kind_tag, name, e["points"], outcome, text, seconds=ran.seconds,
                     **common)

    def problems(self, ex, e):
        """The plan items of a GPU entry: its shapes with fresh seeds."""
        in_place = ex.get("in_place", False)
        shapes = []
        if "random" in e:
            rnd = secrets.SystemRandom()
            for _ in range(e["random"]["count"]):
                sides = []
                for _ in range(1 if in_place else 2):
                    n = 32
                    while n % 32 == 0:
                        n = rnd.randint(1, e["random"]["max_side"])
                    sides.append(n)
                shapes.append((sides[0], sides[-1]))
        else:
            spec = e["shapes"]
            if isinstance(spec, str):
                shapes = self.course_shapes(spec)
            else:
                shapes = [(s, s) if isinstance(s, int) else tuple(s) for s in spec]
        items = []
        for rows, cols in shapes:
            seed = secrets.randbits(62)
            items.append("inplace %d %d" % (rows, seed) if in_place
                         else "transpose %d %d %d" % (rows, cols, seed))
        return items

    def course_shapes(self, spec):
        which = spec.split(":", 1)[1]
        ran = run([self.judge_bin, "shapes", which], timeout=60)
        if ran.rc != 0:
            raise RuntimeError("the judge does not know the shape list %s" % spec)
        return [tuple(int(x) for x in line.split()) for line in ran.output.splitlines()
                if line.strip()]

    def shared_memory(self, ex, e):
        """(outcome, text): every kernel of the submission's objects that uses shared memory uses
        exactly e["bytes"] of it, read from the compiled device code."""
        want = e["bytes"]
        objects = (self.build / "exercises" / (ex["objects"] + ".objects")).read_text().split()
        seen = []
        try:
            for o in objects:
                for arch, cubin in device_images(Path(o).read_bytes()):
                    if cubin is None:
                        return NOT_GRADED, ("not graded: the device code of %s is compressed "
                                            "(nvcc without --no-compress)" % Path(o).name)
                    base = self.reserved_shared(arch)
                    for k, size in kernel_shared_bytes(cubin).items():
                        seen.append((k, max(0, size - base) if size else 0, arch))
        except (ValueError, struct.error, OSError) as err:
            return "failed", "the compiled device code could not be read: %s" % err
        if not seen:
            return "failed", "no kernel found in the compiled device code"
        names = demangle(sorted({k for k, _, _ in seen}))
        lines = ["%s: %d bytes of shared memory (sm_%d)" % (names[k], b, a) for k, b, a in seen]
        wrong = [(k, b) for k, b, _ in seen if b not in (0, want)]
        if wrong or not any(b == want for _, b, _ in seen):
            hint = ""
            if any(b == want + 128 for _, b in wrong):
                hint = " A 32 x 33 tile (4224 bytes) is the padding of step 03, not a swizzle."
            return "failed", ("the tile must be one unpadded 32 x 32 float tile, %d bytes of "
                              "shared memory in the kernel; the compiled kernels use:\n%s\n%s"
                              % (want, "\n".join(lines), hint.strip())).strip()
        return "passed", "passed: " + "; ".join(lines)

    def reserved_shared(self, arch):
        """Bytes of shared memory an architecture adds to the section of every kernel that uses
        any (1 KiB from sm_90 on): learned from a kernel with exactly 4 bytes, compiled here."""
        if arch in self.reserved:
            return self.reserved[arch]
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        for a in self.args.cmake_arg or []:
            if a.startswith("-DCMAKE_CUDA_COMPILER="):
                nvcc = a.split("=", 1)[1]
        self.reserved[arch] = 0
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "probe.cu"
            src.write_text("__global__ void grader_probe(float* p) {\n"
                           "  __shared__ float s[1];\n  s[0] = p[0];\n  __syncthreads();\n"
                           "  p[1] = s[0];\n}\n")
            run([nvcc, "-cubin", "-arch=sm_%d" % arch, src, "-o", Path(tmp) / "probe.cubin"],
                timeout=120)
            try:
                sizes = kernel_shared_bytes((Path(tmp) / "probe.cubin").read_bytes())
                if sizes:
                    self.reserved[arch] = max(0, max(sizes.values()) - 4)
            except (OSError, ValueError, struct.error):
                pass
        return self.reserved[arch]

    # -- sanitizers -----------------------------------------------------------------------

    def sanitizer_items(self, ex):
        s = ex["sanitizer"]
        in_place = ex.get("in_place", False)
        if in_place:
            return ["inplace %d %d" % (n, secrets.randbits(62)) for n in s["sizes"]]
        return ["transpose %d %d %d" % (r, c, secrets.randbits(62)) for r, c in s["shapes"]]

    def sanitize(self, binary, number, items, tool, mode, timeout=None):
        """One compute-sanitizer run of the worker. mode "root": the tool runs as root in the
        sandbox and only the worker drops to the sandbox user, the report goes where only root
        can write; mode "user": all of it runs as the sandbox user (its report is trusted only as
        far as the submission). Returns (sandbox.Ran, errors or None, summary, log, verdicts)."""
        n = self.next_id()
        rundir = self.runs / n
        logdir = self.private / ("sanitizer-" + n)
        rundir.mkdir(mode=0o755)
        logdir.mkdir(mode=0o700)
        plan, data = rundir / "plan", rundir / "data"
        plan.write_text("plan 1\n" + "\n".join(items) + "\n")
        os.chmod(plan, 0o644)
        data.touch(mode=0o600)
        if self.box.isolated:
            os.chown(data, self.box.uid, self.box.gid)
            if mode == "user":
                os.chown(rundir, self.box.uid, self.box.gid)
        log = (logdir if mode == "root" else rundir) / "sanitizer.log"
        env = self.base_env()
        env.update(GRADER_PLAN=str(plan), GRADER_DATA=str(data))
        cmd = [self.sanitizer, "--tool", tool, "--log-file", log, "--print-limit", "20",
               "--error-exitcode", "86"]
        if mode == "root":
            cmd += self.box.drop_prefix()
        try:
            ran = self.boxed(cmd + [binary], timeout or self.timeouts["sanitizer"],
                             self.private / ("out-" + n), rw=[rundir] +
                             ([logdir] if mode == "root" else []), env=env,
                             as_root=(mode == "root"))
            text = sandbox.read_tail(log, 400000) if log.is_file() else ""
            errors, summary = sanitizer_errors(text)
            if ran.rc not in (0, 86):  # the tool itself did not end normally: no verdict
                errors = None
            elif ran.rc == 86 and not errors:
                # The tool's exit status says it found errors, whatever the report says: in user
                # mode the submission can reach the report, never the tool's exit status.
                errors = 1
                summary = "the tool exited with its error code (%s)" % (summary or "no summary")
            verdicts, note = self.judge(number, plan, data)
            del note
        finally:
            shutil.rmtree(rundir, ignore_errors=True)
            shutil.rmtree(logdir, ignore_errors=True)
            (self.private / ("out-" + n)).unlink(missing_ok=True)
        return ran, errors, summary, text, verdicts

    def choose_sanitizer_mode(self):
        """Root mode if the tool works that way here (checked once on the course's own probe),
        else user mode, else None."""
        if self.sanitizer_mode is not None:
            return self.sanitizer_mode
        probe = self.build / "bin" / "grader_probe"
        item = ["transpose 33 65 %d" % secrets.randbits(62)]
        tried = []
        for mode in (["root", "user"] if self.box.isolated else ["user"]):
            ran, errors, summary, log, verdicts = self.sanitize(probe, 1, item, "memcheck", mode,
                                                                timeout=90)
            if errors == 0 and verdicts and all(v["ok"] for v in verdicts):
                self.sanitizer_mode = mode
                if mode == "user" and self.box.isolated:
                    self.r.notes.append("compute-sanitizer could not run as root with only the "
                                        "worker dropped to the sandbox user, so it ran as the "
                                        "sandbox user: its reports are trusted only as far as "
                                        "the submission's code.")
                return mode
            tried.append("%s mode: %s" % (mode, tail(log or ran.output, 600)))
        self.sanitizer_mode = ""
        self.sanitizer_failure = "\n".join(tried)
        return ""

    def run_sanitizers(self, ex, number, binary, gates):
        s = ex["sanitizer"]
        name = self.sanitizer_title(ex)

        def entry(outcome, text, **extra):
            return Entry(ex["id"], "sanitizer", name, s["points"], outcome, text, gpu=True,
                         **extra)

        if self.gpu is False:
            return entry(NOT_GRADED, "not graded: " + (self.no_gpu_why or "no CUDA device"),
                         reason="no CUDA device")
        if self.args.no_sanitizer:
            return entry(NOT_GRADED, "not graded: the sanitizers were turned off "
                                     "(--no-sanitizer)", reason="--no-sanitizer")
        if not self.gpu_test_passed:
            return entry("not_run", "not run: no GPU test of this exercise passed, so there is "
                                    "nothing to check")
        if not self.sanitizer:
            return entry(NOT_GRADED, "not graded: compute-sanitizer was not found (it comes "
                                     "with the CUDA toolkit)", reason="no compute-sanitizer")
        mode = self.choose_sanitizer_mode()
        if not mode:
            return entry(NOT_GRADED, "not graded: compute-sanitizer does not run here:\n"
                         + self.sanitizer_failure, reason="compute-sanitizer failed")
        items = self.sanitizer_items(ex)
        lines, ok, memory_error, seconds = [], True, False, 0.0
        tools = [t for t in (self.args.sanitizer_tools or ",".join(s["tools"])).split(",") if t]
        for tool in tools:
            ran, errors, summary, log, verdicts = self.sanitize(binary, number, items, tool, mode)
            seconds += ran.seconds
            bad = [v for v in verdicts if not v["ok"]]
            if errors is None:
                ok = False
                stop = "timed out after %g s" % ran.seconds if ran.timed_out else \
                    "did not finish (exit code %s)" % ran.rc
                lines.append("%s: %s\n%s" % (tool, stop, tail(log or ran.output, 1500)))
            elif errors:
                ok, memory_error = False, True
                reports = [l for l in log.splitlines() if l.startswith("=========")]
                lines.append("%s: %s\n%s" % (tool, summary, tail("\n".join(reports), 2500)))
            elif bad or len(verdicts) < len(items):
                ok = False
                lines.append("%s: %s, but the output under the tool is wrong: %s" % (
                    tool, summary, bad[0]["message"] if bad else "missing"))
            else:
                lines.append("%s: clean (%s)" % (tool, summary))
        if memory_error:
            gates.append(("gpu_tests", "compute-sanitizer found memory errors (see '%s')" % name))
        return entry("passed" if ok else "sanitizer_error",
                     "the worker rerun under compute-sanitizer on %d problems:\n%s"
                     % (len(items), "\n".join(lines)), seconds=seconds,
                     sanitizer_mode=mode)

    # -- timed runs: host work and extra memory -------------------------------------------

    def timed_run(self, binary, number, in_place, spec, monitor=None):
        rows, cols = (spec["size"], spec["size"]) if in_place else (spec["rows"], spec["cols"])
        item = "speed %d %d %d %d" % (rows, cols, secrets.randbits(62), spec["reps"])
        key = secrets.randbits(64)

        def handshake():
            if monitor:
                monitor.mark_ready()
            return "go %016x\n" % key

        ran, verdicts, note = self.run_plan(binary, number, [item], self.timeouts["speed"],
                                            handshake=handshake, monitor=monitor, key=key)
        v = verdicts[0] if verdicts else {"ok": False, "message": "no verdict", "item": 0}
        timing = dict(kv.split("=", 1) for kv in v.get("timing", "").split() if "=" in kv)
        wall = ran.exit_time - ran.go_time if ran.go_time and ran.exit_time else None
        return {"ran": ran, "verdict": v, "note": note, "item": item, "wall": wall,
                "cpu": ran.cpu, "timing": timing,
                "ready_used": monitor.ready_used if monitor else None,
                "peak": monitor.peak if monitor else None,
                "samples": monitor.samples if monitor else 0}

    def probe(self, in_place, spec, monitor):
        """The course's own kernel timed the same way: once per grading, per kind of run."""
        key = (in_place, json.dumps(spec, sort_keys=True), monitor is not None)
        if key not in self.probe_cache:
            binary = self.build / "bin" / ("grader_probe_inplace" if in_place else "grader_probe")
            result = self.timed_run(binary, 3 if in_place else 1, in_place, spec, monitor)
            if not result["verdict"].get("ok") or result["wall"] is None:
                raise RuntimeError("the course's own kernel failed its timed run: %s\n%s" % (
                    result["verdict"].get("message"), tail(result["ran"].output, 2000)))
            self.probe_cache[key] = result
        return self.probe_cache[key]

    def memory_monitor(self):
        if self.nvml is None and not self.nvml_why:
            try:
                self.nvml = Nvml()
            except (OSError, AttributeError) as err:
                self.nvml_why = "NVML (libnvidia-ml.so.1, part of the driver) is not usable: %s" \
                    % err
        return MemoryMonitor(self.nvml) if self.nvml else None

    def run_timed(self, ex, number, binary, timed, gates):
        spec = dict(self.m["speed"], **ex.get("speed", {}))
        in_place = ex.get("in_place", False)
        out = []
        if self.gpu is False or self.args.no_speed:
            why = (self.no_gpu_why or "no CUDA device") if self.gpu is False else \
                "the timed run was turned off (--no-speed)"
            return [self.not_graded_entry(ex, e, why) for e in timed]
        if not self.gpu_test_passed:
            return [Entry(ex["id"], self.kind_tag(e), "%s | %s" % (ex["title"], e["title"]),
                          e["points"], "not_run", "not run: no GPU test of this exercise passed",
                          gtest=e["name"], gpu=True) for e in timed]
        wants_memory = any(e["kind"] == "memory" for e in timed)
        monitor = self.memory_monitor() if wants_memory else None
        probe_monitor = self.memory_monitor() if wants_memory else None
        base = self.probe(in_place, spec, probe_monitor)
        sub = self.timed_run(binary, number, in_place, spec, monitor)
        ran, v = sub["ran"], sub["verdict"]
        reps = spec["reps"]
        probe_loop = float(base["timing"].get("loop_ms", "0") or 0) or 1e-3
        roundtrip = float(base["timing"].get("roundtrip_ms", "0") or 0)
        cpu_excess = sub["cpu"] - base["cpu"]
        host = cpu_excess > spec["host_cpu_s"]
        shape = "%d x %d" % ((spec["size"],) * 2 if in_place else (spec["rows"], spec["cols"]))
        if ran.timed_out or sub["wall"] is None:
            loop_ms, ratio = None, None
        else:
            loop_ms = max(probe_loop * 0.05, probe_loop + (sub["wall"] - base["wall"]) * 1000)
            ratio = loop_ms / probe_loop
        measured = ("%d chained calls on %s, each output masked before the next: about %s "
                    "(the course's tiled kernel: %.0f ms%s). CPU time of everything your code "
                    "ran: %.2f s (the course's kernel: %.2f s)."
                    % (reps, shape, "%.0f ms, %.1f times the course's kernel" % (loop_ms, ratio)
                       if loop_ms is not None else "no time: it did not finish",
                       probe_loop, ", a round trip of the matrix through the host %.0f ms"
                       % roundtrip if roundtrip else "", sub["cpu"], base["cpu"]))
        if host:
            gates.append(("exercise", "the timed run used %.1f s of CPU time more than the "
                                      "course's kernel doing the same work on the GPU: the "
                                      "transposes were done on the host, not by a kernel"
                          % cpu_excess))
        for e in timed:
            name = "%s | %s" % (ex["title"], e["title"])
            common = dict(gtest=e["name"], gpu=True, seconds=ran.seconds)
            if e["kind"] == "speed":
                if not v.get("ok"):
                    if not v.get("missing"):
                        text, outcome = v["message"], "failed"
                    else:
                        text, outcome = self.describe_stop(ran, sub["item"])
                    out.append(Entry(ex["id"], "speed", name, e["points"], outcome,
                                     text + "\n" + measured, **common))
                    continue
                fast = ratio is not None and ratio <= spec["max_ratio"]
                verdict = "passed" if fast and not host else "failed"
                why = "" if verdict == "passed" else (
                    "\nThe work was done on the host." if host else
                    "\nAt most %g times the course's kernel passes." % spec["max_ratio"])
                out.append(Entry(ex["id"], "speed", name, e["points"], verdict,
                                 measured + why, ratio=ratio, cpu_excess=round(cpu_excess, 3),
                                 **common))
            else:  # memory
                if not monitor or sub["ready_used"] is None or base["ready_used"] is None:
                    why = self.nvml_why or "the timed run did not start"
                    out.append(self.not_graded_entry(ex, e, why))
                    continue
                mib = 1 << 20
                before = (sub["ready_used"] - base["ready_used"]) / mib
                during = ((sub["peak"] - sub["ready_used"]) - (base["peak"] - base["ready_used"])
                          ) / mib
                slack = spec["memory_slack_mib"]
                text = ("device memory in use, sampled %d times during the timed run: %+.0f MiB "
                        "against the course's in-place kernel before the first call, %+.0f MiB "
                        "more while the calls ran (the matrix is %.0f MiB; at most %d MiB more "
                        "passes)." % (sub["samples"], before, during,
                                      spec["size"] ** 2 * 4 / mib, slack))
                if max(before, during) > slack:
                    gates.append(("exercise", "the in-place transpose used %.0f MiB of device "
                                              "memory beyond the matrix: a second buffer"
                                  % max(before, during)))
                    out.append(Entry(ex["id"], "memory", name, e["points"], "failed",
                                     text + "\nIn place means no second buffer.", **common))
                else:
                    out.append(Entry(ex["id"], "memory", name, e["points"], "passed", text,
                                     **common))
        return out

    # -- the rules, then the results ------------------------------------------------------

    def finish(self, ex, pending, gates):
        technique = ex.get("technique", [])
        for scope, reason in gates:
            for e in pending:
                if scope == "exercise" or \
                        (scope == "gpu_tests" and e.kind == "test" and e.gpu) or \
                        (scope == "technique" and (e.kind == "technique" or any(
                            fnmatch.fnmatchcase(e.gtest or "", p) for p in technique))):
                    e.zero(reason)
        for e in pending:
            extra = dict(e.extra)
            self.r.add(e.exercise, e.kind, e.name, e.points, e.passed, e.output, e.outcome,
                       visibility=e.visibility, gtest=e.gtest, tags=["gpu" if e.gpu else "cpu"],
                       seconds=e.seconds, **extra)
        # Hidden tests of this exercise are graded at the very end (run_hidden).

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
        text = "\n".join(keep).replace(str(self.course_root) + "/", "")
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

    # -- hidden tests (an instructor's GoogleTest files) -----------------------------------

    def run_hidden(self, ex):
        """Hidden tests are GoogleTest tests linked with the submission: their verdict comes
        from a report the test process writes, which a hostile submission could forge. They run
        in the sandbox all the same; INSTRUCTORS.md says what that means."""
        rules = self.m["hidden_tests"]
        vis = rules.get("visibility", "after_published")
        binary = self.build / "bin" / ex["hidden_target"]
        if not binary.is_file():
            return
        listed = self.hidden_list(binary) or []
        for name in listed:
            points, visibility = rules.get("points", 1), vis
            for rule in rules.get("rules", []):
                if fnmatch.fnmatchcase(name, rule["match"]):
                    points = rule.get("points", points)
                    visibility = rule.get("visibility", visibility)
            self.run_hidden_test(ex, name, "hidden: " + name, points, visibility, binary)

    def build_hidden(self, ex):
        target = ex["hidden_target"]
        (self.build / "bin" / target).unlink(missing_ok=True)
        ran = self.build_targets([target], show_hidden=True)
        if ran.rc != 0 or ran.timed_out:
            self.r.add(ex["id"], "hidden", "%s | hidden tests: build" % ex["title"], 0, False,
                       "the hidden tests did not compile against this submission:\n%s"
                       % self.compiler_messages(ran.output), "compile_error", visibility="hidden")

    def lock_build(self):
        """Without a mount namespace, the build folder goes back to root before anything of the
        submission runs (with one, the runs see it read-only)."""
        if self.box.level == sandbox.USER_ONLY:
            for root, dirs, files in os.walk(self.build):
                for name in [root] + [os.path.join(root, f) for f in dirs + files]:
                    try:
                        os.lchown(name, 0, 0)
                    except OSError:
                        pass

    def hidden_run(self, binary, args, timeout):
        n = self.next_id()
        rundir = self.runs / n
        rundir.mkdir(mode=0o755)
        if self.box.isolated:
            os.chown(rundir, self.box.uid, self.box.gid)
        log = self.private / ("hidden-" + n)
        try:
            ran = self.boxed([binary] + args(rundir), timeout, log, rw=[rundir],
                             show_hidden=True, hide=[self.hidden_dir])
            report = rundir / "report.json"
            data = report.read_bytes() if report.is_file() and \
                report.stat().st_size < (16 << 20) else None
        finally:
            shutil.rmtree(rundir, ignore_errors=True)
            log.unlink(missing_ok=True)
        return ran, data

    def hidden_list(self, binary):
        ran, _ = self.hidden_run(binary, lambda d: ["--gtest_list_tests"], self.timeouts["list"])
        if ran.rc != 0 or ran.timed_out:
            self.r.notes.append("%s --gtest_list_tests failed: %s"
                                % (binary.name, tail(ran.output, 500)))
            return None
        return parse_gtest_list(ran.output)

    def run_hidden_test(self, ex, name, title, points, visibility, binary):
        ex_id = ex["id"]
        gpu = is_gpu_test(name)
        entry_name = "%s | %s" % (ex["title"], title)
        common = dict(gtest=name, visibility=visibility, tags=["gpu" if gpu else "cpu"],
                      verdict_from="the test process's own GoogleTest report")
        if gpu and self.gpu is False:
            self.r.add(ex_id, "hidden", entry_name, points, False,
                       "not graded: " + (self.no_gpu_why or "no CUDA device"), NOT_GRADED,
                       reason="no CUDA device", **common)
            return
        ran, data = self.hidden_run(
            binary, lambda d: ["--gtest_filter=%s" % name, "--gtest_output=json:%s"
                               % (d / "report.json"), "--gtest_color=no"],
            self.timeouts["entry"])
        common["seconds"] = ran.seconds
        if ran.timed_out:
            self.r.add(ex_id, "hidden", entry_name, points, False,
                       "timed out after %g s: the test never finished; every process it started "
                       "was killed.\nlast output:\n%s" % (ran.limit, tail(ran.output, 1500)),
                       "timeout", **common)
            return
        results = None
        if data:
            try:
                results = read_gtest_json_bytes(data)
            except ValueError:
                results = None
        if not results or name not in results:
            sig = ran.signal_name()
            why = ("the test process was killed by %s" % sig) if sig else \
                  ("the test process exited with code %s" % ran.rc)
            self.r.add(ex_id, "hidden", entry_name, points, False,
                       "%s before writing its report (a crash?).\nlast output:\n%s"
                       % (why, tail(ran.output, 3000)), "crashed", **common)
            return
        result, _, failures = results[name]
        if result == "SKIPPED":
            msg = skip_message(ran.output)
            if gpu and "no CUDA device" in msg:
                self.r.add(ex_id, "hidden", entry_name, points, False, "not graded: " + msg,
                           NOT_GRADED, reason=msg, **common)
            else:
                self.r.add(ex_id, "hidden", entry_name, points, False, "skipped: " + msg,
                           "skipped", **common)
            return
        if failures or ran.rc != 0:
            text = "\n\n".join(clean_failure(f, self.course_root) for f in failures)
            if not text:
                text = "the test failed (exit code %s):\n%s" % (ran.rc, tail(ran.output, 3000))
            outcome = "cuda_error" if "CUDA error" in text else "failed"
            self.r.add(ex_id, "hidden", entry_name, points, False, tail(text), outcome, **common)
            return
        self.r.add(ex_id, "hidden", entry_name, points, True, "passed (%.1f s)" % ran.seconds,
                   "passed", **common)

    # -- the GPU ----------------------------------------------------------------------------

    def detect_gpu(self):
        """Whether the sandbox sees a CUDA device, asked of the course's probe."""
        if self.gpu is False:
            return
        # The unified-memory device file appears the first time CUDA runs as root (through the
        # setuid nvidia-modprobe, which the sandbox's "no new privileges" would refuse).
        modprobe = shutil.which("nvidia-modprobe")
        if modprobe and os.geteuid() == 0 and Path("/dev/nvidiactl").exists() and \
                not Path("/dev/nvidia-uvm").exists():
            run([modprobe, "-u", "-c=0"], timeout=60)
        probe = self.build / "bin" / "grader_probe"
        ran, verdicts, _ = self.run_plan(probe, 1, ["devices"], self.timeouts["entry"])
        v = verdicts[0] if verdicts else {}
        if v.get("ok"):
            self.gpu = True
            self.r.extra["device"] = v.get("message", "")
        else:
            self.gpu = False
            self.no_gpu_why = "no CUDA device"
            why = v.get("message") or tail(ran.output, 300)
            if Path("/dev/nvidiactl").exists():
                self.r.notes.append(
                    "A GPU driver is installed (/dev/nvidiactl), but the sandboxed worker could "
                    "not use a device (%s). Check that the sandbox user (%s) may open /dev/nvidia*"
                    " and that nothing else holds the GPU." % (why, self.args.sandbox_user))


def read_gtest_json_bytes(data):
    """{full name: (result, status, [failure messages])} from a --gtest_output=json report."""
    doc = json.loads(data.decode("utf-8", errors="replace"))
    results = {}
    for suite in doc.get("testsuites", []):
        for t in suite.get("testsuite", []):
            name = "%s.%s" % (suite.get("name"), t.get("name"))
            failures = [f.get("failure", "") for f in t.get("failures", [])]
            results[name] = (t.get("result", "COMPLETED"), t.get("status", "RUN"), failures)
    return results


def load_manifest(path):
    m = json.loads(Path(path).read_text())
    for ex in m["exercises"]:
        for key in ("id", "title", "files", "objects", "worker", "entries", "checks"):
            if key not in ex:
                raise ValueError("manifest: exercise %s has no '%s'" % (ex.get("id"), key))
        for e in ex["entries"]:
            if e.get("kind") not in ("check", "gpu", "shared_memory", "same_swizzle", "speed",
                                     "memory"):
                raise ValueError("manifest: entry %s has an unknown kind %s"
                                 % (e.get("name"), e.get("kind")))
    return m


GPU_NOTE = ("The GPU entries ({points:g} points) were not graded: {why}. They are graded on a "
            "machine with an NVIDIA GPU, by the same command (make grade SUBMISSION=<your folder>"
            ", or EXERCISES=01_rectangular,... for some of them): run it there, or hand in where "
            "your instructor grades on a GPU. The CPU entries are final.")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--submission", required=True, help="folder with the student's files")
    ap.add_argument("--out", default="build-grade/results",
                    help="where results.json and junit.xml go (default: build-grade/results)")
    ap.add_argument("--hidden", default="", help="instructor folder of hidden tests: <id>/*.cu")
    ap.add_argument("--exercises", default="",
                    help="comma-separated exercise ids to grade (default: all), e.g. "
                         "01_rectangular,03_inplace")
    ap.add_argument("--build-arch", default="",
                    help="CUDA architectures (e.g. 90); empty: the course default")
    ap.add_argument("--manifest", default=str(GRADER_DIR / "manifest.json"))
    ap.add_argument("--stage", default="",
                    help="reuse this folder for the staged course and its build (batches and the "
                         "self-test); default: a fresh temporary folder")
    ap.add_argument("--keep-stage", action="store_true", help="keep the temporary stage")
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
                         "%(default)s)")
    ap.add_argument("--mask", action="append",
                    help="one more folder the submission's code must not see (repeatable)")
    ap.add_argument("--test-timeout", type=int, default=0,
                    help="seconds per entry (default: the manifest's)")
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
    grader = None
    try:
        manifest = load_manifest(args.manifest)
        grader = Grader(args, manifest, results)
        wanted = [e for e in args.exercises.split(",") if e]
        known = [e["id"] for e in manifest["exercises"]]
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise ValueError("--exercises: no exercise %s (the exercises are %s)"
                             % (", ".join(unknown), ", ".join(known)))
        exercises = [e for e in manifest["exercises"] if not wanted or e["id"] in wanted]
        if args.stage:
            stage = Path(args.stage).resolve()
        else:
            temp = tempfile.mkdtemp(prefix="transpose-grade-")
            stage = Path(temp)
        submission = Path(args.submission).resolve()
        if not submission.is_dir():
            results.notes.append("the submission folder %s does not exist" % args.submission)
        grader.set_up(stage, submission, out_dir)
        found = grader.stage_submission(submission, exercises)
        grader.configure()
        grader.build_judge()
        # Every build first, then the runs: no process of the submission runs while its build
        # folder is writable.
        ready = [ex for ex in exercises if grader.build_exercise(ex, *found[ex["id"]])]
        hidden = [ex for ex in ready if args.hidden
                  and list((grader.hidden_dir / ex["id"]).glob("*.cu"))]
        for ex in hidden:
            grader.build_hidden(ex)
        grader.lock_build()
        grader.detect_gpu()
        for ex in ready:
            grader.run_exercise(ex)
        for ex in hidden:
            grader.run_hidden(ex)
        order = {ex["id"]: i for i, ex in enumerate(manifest["exercises"])}
        results.tests.sort(key=lambda t: order.get(t["extra_data"]["exercise"], len(order)))
        results.extra["gpu"] = {True: "used", False: "none", None: "not needed"}[grader.gpu]
        if results.not_graded():
            why = grader.no_gpu_why or "no CUDA device"
            gpu_points = sum(t["max_score"] for t in results.tests
                             if t["extra_data"]["outcome"] == NOT_GRADED and "gpu" in t["tags"])
            if gpu_points and grader.gpu is False:
                results.notes.insert(0, GPU_NOTE.format(points=gpu_points, why=why))
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
