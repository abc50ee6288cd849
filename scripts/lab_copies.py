#!/usr/bin/env python3
"""A lab variant is the taught kernel with a template parameter, a policy or a hook, never a copy
(issue #47). This check fails on any run of RUN or more identical lines shared by a lab file
(steps/*/lab/) and a lesson file (the other files of steps/*, and common/), and prints each as

    lab file:lines ~ lesson file:lines

Lines are compared with their whitespace stripped; blank lines, comments, lines of punctuation
alone ({, }, };, ), ...) and #include/#pragma lines are left out, so a run is real code. Lesson
files are not compared with each other: steps 02, 03 and 04 repeat their predecessor on purpose.

    python3 scripts/lab_copies.py [ROOT]     exit 1 when a lab copies a lesson
    python3 scripts/lab_copies.py --self-test
"""

import os
import re
import sys
import tempfile

RUN = 6
SOURCES = (".cu", ".cuh", ".cpp", ".hpp", ".h", ".py")


def code_lines(path):
    """[(line number, stripped text)] of the lines that count."""
    kept = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            text = re.sub(r"\s+", " ", line.strip())
            if (not text or text.startswith(("//", "/*", "*", "#include", "#pragma"))
                    or re.fullmatch(r"[{}()\[\];,. ]*", text)):
                continue
            kept.append((number, text))
    return kept


def shared_runs(lab, lesson):
    """Each maximal run of RUN or more equal code lines: (lab first, last, lesson first, last)."""
    a, b = code_lines(lab), code_lines(lesson)
    where = {}
    for j, (_, text) in enumerate(b):
        where.setdefault(text, []).append(j)
    runs = []
    for i, (_, text) in enumerate(a):
        for j in where.get(text, []):
            if i and j and a[i - 1][1] == b[j - 1][1]:
                continue  # inside a run that started earlier
            n = 0
            while i + n < len(a) and j + n < len(b) and a[i + n][1] == b[j + n][1]:
                n += 1
            if n >= RUN:
                runs.append((a[i][0], a[i + n - 1][0], b[j][0], b[j + n - 1][0]))
    return runs


def sources(folder):
    for here, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCES):
                yield os.path.join(here, name)


def check(root):
    """The offending pairs under ROOT, as printable lines."""
    labs, lessons = [], list(sources(os.path.join(root, "common")))
    for path in sources(os.path.join(root, "steps")):
        (labs if "/lab/" in path.replace(os.sep, "/") else lessons).append(path)
    found = []
    for lab in labs:
        for lesson in lessons:
            pair = (os.path.relpath(lab, root), os.path.relpath(lesson, root))
            for a0, a1, b0, b1 in shared_runs(lab, lesson):
                found.append("%s:%d-%d ~ %s:%d-%d" % (pair[0], a0, a1, pair[1], b0, b1))
    return found


def self_test():
    """A lab that copies six lines of a lesson is caught; five, or comments, are not."""
    body = ["int a = 1;", "int b = a + 1;", "// a comment", "{", "int c = b * 2;",
            "#pragma unroll", "for (int k = 0; k < 4; ++k) c += k;", "  int d = c - a;",
            "}", "return a + b + c + d;"]
    with tempfile.TemporaryDirectory() as root:
        for folder in ("steps/01_x/lab", "common"):
            os.makedirs(os.path.join(root, folder))

        def write(path, lines):
            with open(os.path.join(root, path), "w") as f:
                f.write("\n".join(lines) + "\n")

        write("steps/01_x/kernel.cuh", ["// lesson"] + body)
        write("steps/01_x/lab/copy.cuh", ["int z = 0;", ""] + [l.strip() for l in body])
        write("steps/01_x/lab/short.cuh", body[:7])  # five code lines: allowed
        write("common/other.hpp", ["int q = 0;"])
        found = check(root)
    want = ["steps/01_x/lab/copy.cuh:3-12 ~ steps/01_x/kernel.cuh:2-11"]
    if found != want:
        sys.exit("lab_copies: self-test found %r, wanted %r" % (found, want))
    print("lab_copies: self-test ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    found = check(os.path.abspath(root))
    for line in found:
        print(line)
    if found:
        sys.exit("lab_copies: %d run(s) of %d or more lines copied from a lesson into a lab; "
                 "reuse the lesson's code (a template parameter, a policy, a hook)" % (len(found), RUN))
    print("lab_copies: no lab copies %d or more lines of a lesson" % RUN)


if __name__ == "__main__":
    main()
