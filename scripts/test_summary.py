#!/usr/bin/env python3
"""One line after `make test`: how many GPU tests ran and how many were skipped and why, and the
same for the CPU tests (the docs, plots and mpirun tests skip without Doxygen, matplotlib or
MPI). CTest's own "100% tests passed" counts a skipped test as passed; this line does not.

    python3 scripts/test_summary.py BUILD_DIR RESULTS_XML
    python3 scripts/test_summary.py --run BUILD_DIR -- CTEST_ARGS...

--run runs ctest in BUILD_DIR itself and passes its output on, less the list of the tests that
did not run (some 200 "(Skipped)" lines without a GPU), which the summary line, printed last,
says in one; the exit code is ctest's.

RESULTS_XML is what `ctest --output-junit` wrote; a test is a GPU test when one of its labels
has `gpu` in it: gpu, gpu-large, lab-gpu, lab-gpu-large (`ctest --show-only=json-v1` gives the
labels). Prints, for example:

    GPU tests: 0 ran, 251 skipped (no CUDA device: no NVIDIA driver is installed); CPU tests:
    180 passed, 2 skipped (docs_build: doxygen is not installed; ...)

(on one line). Exits 0; the exit code of `make test` stays ctest's.
"""

import json
import os
import re
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


def summarize(cases, labels):
    """The summary line for [(name, status, output)] and {name: [labels]}."""
    counts = {kind: Counter() for kind in ("gpu", "cpu")}
    reasons = {kind: Counter() for kind in ("gpu", "cpu")}
    for name, status, output in cases:
        kind = "gpu" if any("gpu" in label for label in labels.get(name, [])) else "cpu"
        if status == "notrun":
            counts[kind]["skipped"] += 1
            reason = skip_reason(output)
            if kind == "cpu":  # few, and each its own tool: name the test
                reason = "%s: %s" % (name, reason)
            reasons[kind][reason] += 1
        elif status == "fail":
            counts[kind]["failed"] += 1
        else:
            counts[kind]["passed"] += 1

    def why(kind):
        if not reasons[kind]:
            return ""
        several = len(reasons[kind]) > 1 and kind == "gpu"  # then say how many had each
        parts = ["%d: %s" % (n, r) if several else r for r, n in reasons[kind].most_common()]
        if len(parts) > 4:
            parts = parts[:4] + ["..."]
        return " (%s)" % "; ".join(parts)

    g, c = counts["gpu"], counts["cpu"]
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
    out = list(condense(["100% tests passed\n", "The following tests did not run:\n",
                         "\t 12 - a.Gpu1 (Skipped)\n", "\t 13 - a.Gpu2 (Disabled)\n",
                         "Errors while running CTest\n"]))
    if out != ["100% tests passed\n", "Errors while running CTest\n"]:
        sys.exit("test_summary: condense gave %r" % out)
    print("test_summary: ok")


NOT_RUN = re.compile(r"^\s*\d+ - .* \((Skipped|Disabled|Not Run)\)\s*$")


def condense(lines):
    """ctest's output without its "The following tests did not run:" list."""
    skipping = False
    for line in lines:
        if line.strip() == "The following tests did not run:":
            skipping = True
            continue
        if skipping and NOT_RUN.match(line):
            continue
        skipping = False
        yield line


def run(build, ctest_args):
    """Runs ctest, passes its output on condensed, prints the summary line; ctest's exit code."""
    junit = os.path.join(os.path.abspath(build), "Testing", "results.xml")
    ctest = subprocess.Popen(["ctest", "--output-junit", junit, *ctest_args], cwd=build,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in condense(ctest.stdout):
        sys.stdout.write(line)
        sys.stdout.flush()
    code = ctest.wait()
    if os.path.exists(junit):
        print(summarize(read_junit(junit), labels_by_test(build)))
    return code


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if sys.argv[1:2] == ["--run"] and len(sys.argv) >= 4 and sys.argv[3] == "--":
        sys.exit(run(sys.argv[2], sys.argv[4:]))
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build, junit = sys.argv[1], sys.argv[2]
    print(summarize(read_junit(junit), labels_by_test(build)))


if __name__ == "__main__":
    main()
