#!/usr/bin/env python3
"""What `make test` prints: a line per part of the course, a line per failure, and one last line
that says how many GPU tests ran and how many were skipped and why, and the same for the CPU
tests (the docs, plots and mpirun tests skip without Doxygen, matplotlib or MPI). CTest's own
"100% tests passed" counts a skipped test as passed; these lines do not.

    python3 scripts/test_summary.py --run BUILD_DIR -- CTEST_ARGS...   (make test)
    python3 scripts/test_summary.py --self-test

It runs ctest in BUILD_DIR and writes its whole output (some 950 lines, a failed test's output
included) to BUILD_DIR/Testing/ctest.log, whose path it prints first. On a terminal, while it
runs: the test that just finished, on one line that is rewritten, and each failure as it
happens. Then one line per part of the course (a step, its lab's tests apart, an exercise, the
docs, ...) with its counts, one line per failed test with the first line of its failure, and
the summary line last; the exit code is ctest's.

A test is a GPU test when one of its labels has `gpu` in it: gpu, gpu-large, lab-gpu,
lab-gpu-large. The last line is, for example (on one line):

    GPU tests: 0 ran, 251 skipped (no CUDA device: no NVIDIA driver is installed); CPU tests:
    180 passed, 2 skipped (docs_build: doxygen is not installed; ...)
"""

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter


def labels_by_test(build):
    """{test name: [labels]} from ctest's JSON listing of the build folder."""
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True,
                         text=True, check=True).stdout
    labels = {}
    for test in json.loads(out).get("tests", []):
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                labels[test["name"]] = prop.get("value", [])
    return labels


def skip_reason(output):
    """Why a test skipped itself, shortened to its first clause, from the test's output."""
    m = re.search(r"no CUDA device, GPU test not run: (.*)", output)
    if m:
        return "no CUDA device: " + shorten(m.group(1))
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    for i, line in enumerate(lines):  # GoogleTest: "file:line: Skipped" then the message
        if line.endswith("Skipped") and i + 1 < len(lines):
            return shorten(lines[i + 1])
    for line in lines:  # a script's "NAME skipped: REASON"
        m = re.search(r"skipped: (.*)", line, re.I)
        if m:
            return shorten(m.group(1))
    for line in lines:  # "tool: matplotlib is missing: python3 -m pip install matplotlib"
        if re.search(r"missing|not installed|not found", line, re.I):
            return shorten(re.sub(r"^[\w.-]+: ", "", line))
    return shorten(lines[-1]) if lines else "no reason given"


def shorten(text):
    """The first clause: up to a ';', an opening parenthesis or a ': '."""
    return re.split(r";| \(|: ", text.strip(), maxsplit=1)[0].strip()


def tally(cases, key, reason=lambda name, output: skip_reason(output)):
    """({key: Counter of passed, failed, skipped}, {key: Counter of skip reasons}) of
    [(name, status, output)], each test counted under key(name)."""
    counts, reasons = {}, {}
    for name, status, output in cases:
        k = key(name)
        c = counts.setdefault(k, Counter())
        c["skipped" if status == "notrun" else "failed" if status == "fail" else "passed"] += 1
        if status == "notrun":
            reasons.setdefault(k, Counter())[reason(name, output)] += 1
    return counts, reasons


def summarize(cases, labels):
    """The summary line for [(name, status, output)] and {name: [labels]}."""
    def kind(name):
        return "gpu" if any("gpu" in label for label in labels.get(name, [])) else "cpu"

    def reason(name, output):  # CPU skips are few, each its own tool: name the test
        return ("%s: %s" % (name, skip_reason(output)) if kind(name) == "cpu"
                else skip_reason(output))
    counts, reasons = tally(cases, kind, reason)

    def why(kind):
        if kind not in reasons:
            return ""
        several = len(reasons[kind]) > 1 and kind == "gpu"  # then say how many had each
        parts = ["%d: %s" % (n, r) if several else r for r, n in reasons[kind].most_common()]
        most = 4 if kind == "gpu" else 8  # each CPU skip is a tool to install: name them all
        if len(parts) > most:
            parts = parts[:most] + ["..."]
        return " (%s)" % "; ".join(parts)

    g, c = counts.get("gpu", Counter()), counts.get("cpu", Counter())
    gpu = "GPU tests: %d ran" % (g["passed"] + g["failed"])
    if g["failed"]:
        gpu += " (%d failed)" % g["failed"]
    gpu += ", %d skipped%s" % (g["skipped"], why("gpu"))
    cpu = "CPU tests: %d passed" % c["passed"]
    if c["failed"]:
        cpu += ", %d failed" % c["failed"]
    cpu += ", %d skipped%s" % (c["skipped"], why("cpu"))
    return gpu + "; " + cpu


def read_junit(path):
    """[(name, status, output)] of every test in ctest's JUnit file."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        out = case.find("system-out")
        cases.append((case.get("name"), case.get("status"),
                      out.text if out is not None and out.text else ""))
    return cases


def self_test():
    """Checks summarize() on made-up results (`test_summary.py --self-test`, a CPU test)."""
    gpu_out = "test.cu:9: Skipped\nno CUDA device, GPU test not run: no NVIDIA driver is " \
              "installed (libcuda.so.1 was not found); the kernels need ...\n"
    cases = [("a.Gpu1", "notrun", gpu_out), ("a.Gpu2", "notrun", gpu_out),
             ("a.CpuX", "run", ""), ("docs_build", "notrun",
                                     "docs_build skipped: doxygen is not installed (make deps)\n"),
             ("a.CpuY", "fail", ""),
             ("plots_figures", "notrun", "data: 12 rows\nmake_plots: matplotlib is missing: "
                                         "python3 -m pip install matplotlib\n")]
    labels = {"a.Gpu1": ["gpu"], "a.Gpu2": ["lab-gpu-large"], "a.CpuX": ["cpu"],
              "docs_build": ["cpu"], "a.CpuY": ["cpu"], "plots_figures": ["cpu"]}
    want = ("GPU tests: 0 ran, 2 skipped (no CUDA device: no NVIDIA driver is installed); "
            "CPU tests: 1 passed, 1 failed, 2 skipped (docs_build: doxygen is not installed; "
            "plots_figures: matplotlib is missing)")
    got = summarize(cases, labels)
    if got != want:
        sys.exit("test_summary: got\n  %s\nwanted\n  %s" % (got, want))
    mixed = summarize([("g", "run", ""), ("h", "fail", ""), ("k", "notrun", "Skipped\nneeds 40 GiB\n"),
                       ("m", "notrun", gpu_out)], {n: ["gpu"] for n in "ghkm"})
    if not mixed.startswith("GPU tests: 2 ran (1 failed), 2 skipped (1: needs 40 GiB; 1: no CUDA"):
        sys.exit("test_summary: got " + mixed)
    # group(), group_lines(), failure_reason() and progress()
    names = {"step02_test.CpuStep02.X": "step02", "step02.cli.Help": "step02",
             "facts_step02": "step02", "step04-lab.cli.Help": "step04 lab",
             "facts_step04-lab": "step04 lab", "test_ex01_solution.Ex01.Y": "exercise 01",
             "bench_ex03_solution.cli.Help": "exercise 03", "docs_build": "docs",
             "CpuBankmap.HelpExitsZero": "bankmap", "common_test.CpuOptions.Z": "common",
             "step08_patterns.cli.Help": "step08", "test_summary_self_test": "test summary",
             "lesson_pages_check": "pages", "page_commands": "pages", "labs_copies": "labs"}
    for name, want in names.items():
        if group(name) != want:
            sys.exit("test_summary: group(%r) gave %r, wanted %r" % (name, group(name), want))
    lines = group_lines([("docs_build", "notrun", "docs_build skipped: doxygen is not installed"),
                         ("step10.cli.Help", "run", ""), ("step02_test.A", "fail", ""),
                         ("step02_test.B", "notrun", "x.cu:3: Skipped\nneeds 40 GiB\n"),
                         ("test_ex01_solution.C", "run", "")])
    want = ["  step02       1 failed, 1 skipped (needs 40 GiB)", "  step10       1 passed",
            "  exercise 01  1 passed", "  docs         1 skipped (doxygen is not installed)"]
    if lines != want:
        sys.exit("test_summary: group_lines gave %r" % lines)
    reason = failure_reason("[ RUN ] X\ntest.cu:12: Failure\nExpected equality of these values:\n"
                            "[  FAILED  ] X\n")
    if reason != "Expected equality of these values:":
        sys.exit("test_summary: failure_reason gave %r" % reason)
    import io
    out = io.StringIO()
    progress(["      Start  1: a.X\n",
              " 1/3 Test  #1: a.X ..................   Passed    0.01 sec\n",
              " 2/3 Test  #2: a.Gpu ................***Skipped   0.02 sec\n",
              " 3/3 Test  #3: b.Y ..................***Failed    1.50 sec\n",
              "100% tests passed\n"], out, tty=True)
    if "\r\033[KFAILED b.Y (failed)\n" not in out.getvalue() or \
            not out.getvalue().endswith("\r\033[K"):
        sys.exit("test_summary: progress gave %r" % out.getvalue())
    print("test_summary: ok")


def group(name):
    """The part of the course a test belongs to, from its name: "step02" for step02_test.*,
    step02.cli.* and facts_step02, "step02 lab" for step02-lab*, "exercise 01" for
    test_ex01_solution.* and bench_ex01_*, "pages" for the checks of the pages, else the name's
    first word (docs_build: "docs", CpuBankmap.*: "bankmap")."""
    first = name.split(".")[0]
    m = re.search(r"step(\d\d)(-lab)?", first)
    if m:
        return "step%s%s" % (m.group(1), " lab" if m.group(2) else "")
    m = re.search(r"(?:^|_)ex(\d\d)(?:_|$)", first)
    if m:
        return "exercise " + m.group(1)
    words = re.split(r"[_-]", first)
    if words[0] == "test" and len(words) > 1:  # test_summary_self_test
        return "test " + words[1]
    if words[0] in ("lesson", "page", "readme"):  # the checks of the pages' text and commands
        return "pages"
    if words[:2] == ["gpu", "check"]:  # make gpu-check's planner, which needs no GPU
        return "gpu-check"
    return re.sub(r"^(Cpu|Gpu)(?=[A-Z])", "", words[0]).lower()


def group_lines(cases):
    """One line per part of the course: its tests passed, failed and skipped; steps first, in
    order, then the exercises, then the rest by name."""
    counts, why = tally(cases, group)

    def order(g):
        return (0 if g.startswith("step") else 1 if g.startswith("exercise") else 2, g)

    width = max((len(g) for g in counts), default=0)
    lines = []
    for g in sorted(counts, key=order):
        c = counts[g]
        parts = ["%d %s" % (c[k], k) for k in ("passed", "failed", "skipped") if c[k]]
        line = "  %-*s  %s" % (width, g, ", ".join(parts))
        if g in why:  # the most common reason; the last line has them all
            line += " (%s%s)" % (why[g].most_common(1)[0][0], ", ..." if len(why[g]) > 1 else "")
        lines.append(fit(line))
    return lines


def failure_reason(output):
    """The first line that says what went wrong in a failed test's output: GoogleTest's line
    after "file:line: Failure", else a line with "error" or "failed" in it, else the last."""
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    for i, line in enumerate(lines):
        if line.endswith("Failure") and i + 1 < len(lines):
            return lines[i + 1]
    for line in lines:
        if re.search(r"error|failed|exception", line, re.I) and not line.startswith("["):
            return line
    return lines[-1] if lines else "no output"


def fit(text, width=100):
    return text if len(text) <= width else text[: width - 3] + "..."


# A test's result line in ctest's output: "  12/954 Test  #12: step02_test.X ....   Passed  0.1 sec".
RESULT = re.compile(r"^\s*(\d+)/(\d+) Test\s+#\d+: (\S+) \.*\s*(\*\*\*)?(\w[\w ]*?)\s+[\d.]+ sec")


def progress(lines, out, tty):
    """On a terminal, the test of ctest's @p lines that just finished, on one line that is
    rewritten, and each failure on a line of its own; elsewhere (a log, CI) nothing."""
    shown = False
    for line in lines:
        m = RESULT.match(line)
        if not m:
            continue
        done, total, name, status = m.group(1), m.group(2), m.group(3), m.group(5)
        failed = status not in ("Passed", "Skipped", "Not Run", "Disabled")
        if tty:
            columns = shutil.get_terminal_size((80, 24)).columns
            out.write("\r\033[K" + fit("[%s/%s] %s" % (done, total, name), columns - 1))
            shown = True
            if failed:  # kept on the screen; the list at the end says why
                out.write("\r\033[KFAILED %s (%s)\n" % (name, status.lower()))
            out.flush()
    if shown:
        out.write("\r\033[K")
        out.flush()


def run(build, ctest_args):
    """Runs ctest with its whole output in BUILD/Testing/ctest.log; prints what the module's
    docstring says; ctest's exit code."""
    testing = os.path.join(build, "Testing")
    os.makedirs(testing, exist_ok=True)
    junit = os.path.join(os.path.abspath(testing), "results.xml")
    log_path = os.path.join(testing, "ctest.log")
    if os.path.exists(junit):
        os.remove(junit)  # a result of an earlier run must not pass for this one's
    print("ctest: its whole output goes to %s" % log_path, flush=True)
    with open(log_path, "w") as log:
        ctest = subprocess.Popen(["ctest", "--output-junit", junit, *ctest_args], cwd=build,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

        def logged():
            for line in ctest.stdout:
                log.write(line)
                yield line
        try:
            progress(logged(), sys.stdout, sys.stdout.isatty())
            code = ctest.wait()
        except KeyboardInterrupt:  # ctest got the Ctrl-C too; what ran is in the log
            ctest.wait()
            print("\nctest: interrupted; %s has the output so far" % log_path)
            return 130
    cases = read_junit(junit) if os.path.exists(junit) else []
    if not cases:  # ctest ran no test: its own words say why
        with open(log_path) as log:
            sys.stdout.write("".join(log.readlines()[-15:]))
    for line in group_lines(cases):
        print(line)
    for name, status, output in cases:
        if status == "fail":
            print(fit("FAILED %s: %s" % (name, failure_reason(output))))
    if code:
        print("ctest: exit code %d; %s has every test's output" % (code, log_path))
    print(summarize(cases, labels_by_test(build)))
    return code


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if sys.argv[1:2] == ["--run"] and len(sys.argv) >= 4 and sys.argv[3] == "--":
        sys.exit(run(sys.argv[2], sys.argv[4:]))
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
