#!/usr/bin/env python3
"""The shape of every lesson page: short, small tables, and the code it teaches named and short.

    python3 scripts/check_pages.py     # check the course (exit 1 on a finding)

(plots/tests/test_pages.py checks the checker on planted pages.)

A lesson page is each step's steps/NN_name/README.md and each part page of a step: any other
steps/NN_name/*.md whose name starts with a capital letter (NARROW.md, RECTANGLES.md). The lab
notebooks (steps/NN_name/lab/LAB.md) are not lesson pages. For every page:

- words: at most 2,500, counted as `wc -w` does (runs of characters between ASCII whitespace)
  after removing HTML comments, so a marker's tag is not counted and what it renders is: a
  generated table's rows and its "Measured on ..." note are words of the page. The median over
  all pages is at most 2,000.
- tables: at most 12 body rows each. A table is a run of consecutive lines that start with `|`,
  outside code fences; its body rows are its lines less the header and the `|---|` line.
- code: exactly one line that starts with `**Code:**`, followed by Markdown links
  `[name](path)` to the files the page teaches, relative to the page (at least one). Each file
  exists, and together (each counted once) they are at most 250 lines (`wc -l`). What a reader
  does not need to read whole may NOT be listed, rather than listed and not counted: files
  under a `lab/` or `common/` folder, tests (a name starting with `test`) and the harness glue
  of a step (`variants.cuh`, `main.cu`). A page may still link them elsewhere in its text.

Each finding is one line, `file:line: why`; the last line counts them. Exit 0 when there are
none, 1 when there are.
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "plots"))
from markdown import COMMENT, count_words, lesson_pages, links, tables  # noqa: E402  (the reader)

MAX_WORDS = 2500
MAX_MEDIAN_WORDS = 2000
MAX_TABLE_ROWS = 12
MAX_CODE_LINES = 250
CODE_PREFIX = "**Code:**"
FORBIDDEN_DIRS = ("lab", "common")
FORBIDDEN_NAMES = ("variants.cuh", "main.cu")


def forbidden(path, root):
    """Why a linked file may not be listed as taught code, or None."""
    rel = os.path.relpath(path, root)
    parts = rel.split(os.sep)
    name = parts[-1]
    for folder in FORBIDDEN_DIRS:
        if folder in parts[:-1]:
            return f"it is under a {folder}/ folder"
    if name.startswith("test"):
        return "it is a test"
    if name in FORBIDDEN_NAMES:
        return "it is the step's harness glue"
    return None


def check_code_line(page, lines, root, findings):
    """The **Code:** line: its links, their files, their lines. Returns the line count."""
    rel = os.path.relpath(page, root)
    at = [i for i, line in enumerate(lines) if line.startswith(CODE_PREFIX)]
    if not at:
        findings.append(f"{rel}:1: no line starts with `{CODE_PREFIX}` (the code files the page "
                        "teaches, as Markdown links)")
        return 0
    if len(at) > 1:
        findings.append(f"{rel}:{at[1] + 1}: a second `{CODE_PREFIX}` line (the first is line "
                        f"{at[0] + 1}); a page has one")
    number, line = at[0] + 1, lines[at[0]]
    targets = [target for target, _ in links(COMMENT.sub("", line))]
    if not targets:
        findings.append(f"{rel}:{number}: `{CODE_PREFIX}` is followed by no Markdown link")
        return 0
    total, seen = 0, set()
    for target in targets:
        target = target.split("#")[0]
        path = os.path.normpath(os.path.join(os.path.dirname(page), target))
        if "://" in target or not os.path.isfile(path):
            findings.append(f"{rel}:{number}: `{target}` is not a file of the course")
            continue
        why = forbidden(path, root)
        if why:
            findings.append(f"{rel}:{number}: `{target}` may not be listed as taught code: {why}")
            continue
        if path in seen:
            continue
        seen.add(path)
        with open(path, "rb") as f:
            total += f.read().count(b"\n")
    if total > MAX_CODE_LINES:
        findings.append(f"{rel}:{number}: the taught code is {total} lines; at most "
                        f"{MAX_CODE_LINES}")
    return total


def check(root):
    """(findings, [(page, words, largest table, code lines)]) for the course under root."""
    findings, rows = [], []
    pages = lesson_pages(root)
    if not pages:
        return [f"{os.path.join(root, 'steps')}: no lesson page found"], rows
    words_of = []
    for page in pages:
        rel = os.path.relpath(page, root)
        with open(page, encoding="utf-8") as f:
            text = f.read()
        lines = text.split("\n")
        words = count_words(text)
        words_of.append(words)
        if words > MAX_WORDS:
            findings.append(f"{rel}:1: {words} words; at most {MAX_WORDS}")
        largest = 0
        for first, body in tables(lines):
            largest = max(largest, body)
            if body > MAX_TABLE_ROWS:
                findings.append(f"{rel}:{first}: a table of {body} rows; at most "
                                f"{MAX_TABLE_ROWS} (longer sweeps go to the lab)")
        code = check_code_line(page, lines, root, findings)
        rows.append((rel, words, largest, code))
    median = statistics.median(words_of)
    if median > MAX_MEDIAN_WORDS:
        findings.append(f"steps: the median page has {median:g} words; at most "
                        f"{MAX_MEDIAN_WORDS}")
    return findings, rows


def main():
    findings, rows = check(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for finding in findings:
        print(finding)
    print(f"check_pages: {len(rows)} lesson pages, {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
