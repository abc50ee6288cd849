"""CPU tests of the page tools that read Markdown through plots/markdown.py: the lesson pages'
checker (scripts/check_pages.py) on planted courses, and the docs site's filter
(docs/md_filter.py) on links to files of the course that do not move. Run by ctest as
lesson_pages_self_test and docs_links_rewrite, and with the rest of plots/tests."""

import os
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "docs"), str(ROOT / "plots")]

import check_pages  # noqa: E402
import md_filter  # noqa: E402


def check_pages_failures():
    """Plant a course with one good page and one page per defect; each defect must be found and
    the good page must pass. The failures of the checker, [] when it behaves."""
    table13 = "| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 13
    table12 = "| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 12
    good = ("# Step\n\n**Code:** [transpose.cuh](transpose.cuh)\n\n<!-- " + "hidden " * 3000
            + "-->\n" + "word " * 100 + "\n\n" + table12 + "\n```\n" + table13 + "```\n")
    cases = {  # folder: (pages {name: text}, files {name: lines}, the finding expected)
        "01_good": ({"README.md": good, "NOTES_lower.txt": "x"}, {"transpose.cuh": 10}, None),
        "02_long": ({"README.md": good.replace("word ", "word " * 26)},
                    {"transpose.cuh": 10}, "2743 words; at most 2500"),
        "03_table": ({"README.md": good + "\n" + table13}, {"transpose.cuh": 10},
                     "a table of 13 rows"),
        "04_nocode": ({"README.md": good.replace("**Code:**", "Code:")}, {"transpose.cuh": 10},
                      "no line starts with"),
        "05_missing": ({"README.md": good.replace("(transpose.cuh)", "(gone.cuh)")},
                       {"transpose.cuh": 10}, "`gone.cuh` is not a file"),
        "06_big": ({"README.md": good}, {"transpose.cuh": 251}, "the taught code is 251 lines"),
        "07_glue": ({"README.md": good.replace("[transpose.cuh](transpose.cuh)",
                                               "[t](transpose.cuh), [v](variants.cuh)")},
                    {"transpose.cuh": 10, "variants.cuh": 5}, "harness glue"),
        "08_lab": ({"README.md": good.replace("(transpose.cuh)", "(lab/k.cuh)")},
                   {"lab/k.cuh": 5}, "under a lab/ folder"),
        "09_test": ({"README.md": good.replace("(transpose.cuh)", "(test.cu)")},
                    {"test.cu": 5}, "it is a test"),
        "10_part": ({"README.md": good, "PART.md": good + "\n" + table13},
                    {"transpose.cuh": 10}, "PART.md:"),
        "11_twice": ({"README.md": good + "\n" + check_pages.CODE_PREFIX + " [t](transpose.cuh)\n"},
                     {"transpose.cuh": 10}, "a second"),
    }
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for folder, (pages, files, expected) in cases.items():
            root = os.path.join(tmp, folder)
            step = os.path.join(root, "steps", folder)
            for name, text in pages.items():
                os.makedirs(step, exist_ok=True)
                with open(os.path.join(step, name), "w", encoding="utf-8") as f:
                    f.write(text)
            for name, count in files.items():
                path = os.path.join(step, name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write("x\n" * count)
            findings, rows = check_pages.check(root)
            if expected is None and findings:
                failures.append(f"{folder}: a good page was refused: {findings}")
            if expected is not None and not any(expected in f for f in findings):
                failures.append(f"{folder}: expected a finding with '{expected}', got {findings}")
            if folder == "01_good" and rows != [(f"steps/{folder}/README.md", 243, 12, 10)]:
                # 243 = `wc -w` of the page with its comment removed: 4 words of title and
                # code line, 100 words, 66 in the table, 73 in the fence.
                failures.append(f"{folder}: counted {rows}, expected 243 words, a 12-row "
                                "table (the fenced one is not a table) and 10 lines")
        # The median: three pages of 1,900, 2,100 and 2,200 words, each under the page limit.
        root = os.path.join(tmp, "median")
        for i, words in enumerate((1900, 2100, 2200)):
            step = os.path.join(root, "steps", f"0{i + 1}_m")
            os.makedirs(step)
            with open(os.path.join(step, "README.md"), "w") as f:
                f.write("**Code:** [k](k.cuh)\n" + "w " * (words - 2) + "\n")
            with open(os.path.join(step, "k.cuh"), "w") as f:
                f.write("x\n")
        findings, _ = check_pages.check(root)
        if findings != ["steps: the median page has 2100 words; at most 2000"]:
            failures.append(f"median: expected only the median finding, got {findings}")
    return failures


def md_filter_failures():
    """The rewriting on links to files of the course that do not move (no doxygen needed): the
    failures, [] when md_filter behaves."""
    page = os.path.join(md_filter.ROOT, "exercises", "01_rectangular")  # a page in this folder
    cases = [
        ("../README.md#how-to-work", "@ref exercises_readme-how-to-work"),
        ("../../README.md", "@ref index"),
        ("#the-task", "@ref p-the-task"),
        ("../../common/harness.cu#L10", "src/common/harness.cu.html#L10"),
        ("../../docs/", "src/docs/index.html"),
        ("../../exercises/", "@ref exercises_readme"),
        ("../../plots/figures/progression.png", "src/plots/figures/progression.png"),
        ("https://example.com/a.md", "https://example.com/a.md"),
        ("no-such-file.cu", "no-such-file.cu"),
    ]
    failed = [(url, md_filter.rewrite_url(url, page, "p"), want) for url, want in cases
              if md_filter.rewrite_url(url, page, "p") != want]
    anchors = [("Step 01 — the naive `transpose`", "step-01--the-naive-transpose"),
               ("1. 32x32 against 64x64: [bytes](x.md) in flight?", "1-32x32-against-64x64-bytes-in-flight"),
               ("What_to try, (now)", "what_to-try-now")]
    failed += [(h, md_filter.github_anchor(h), want) for h, want in anchors if md_filter.github_anchor(h) != want]
    text = md_filter.filter_page(os.path.join(page, "x.md"),
                       "# Title\n\n## Try it\n`[a](b.cu)` [c](../../README.md)\n"
                       "![f](../../plots/figures/progression.png)\n```\n"
                       "## not a heading [d](e.cu)\n```\n## Try it\n")
    want = ("# Title {#exercises_01_rectangular_x}\n\n## Try it {#exercises_01_rectangular_x-try-it}\n"
            "`[a](b.cu)` [c](@ref index)\n![f](plots/figures/progression.png)\n```\n"
            "## not a heading [d](e.cu)\n```\n"
            "## Try it {#exercises_01_rectangular_x-try-it-1}\n")
    if text != want:
        failed.append(("a whole page", text, want))
    text = md_filter.filter_page(os.path.join(page, "x.md"),
                       "A [Step\n  05](../../README.md) test, <!-- num a -->4.1<!-- /num -->\n"
                       "times; `<!-- kept -->` [c](../../README.md).\n")
    want = ("A [Step 05](@ref index)\n   test, 4.1\ntimes; `<!-- kept -->` [c](@ref index).\n")
    if text != want:
        failed.append(("a link over a line break, a number marker", text, want))
    text = md_filter.filter_page(os.path.join(page, "x.md"),
                       "See [`../solutions/`](../../solutions/) and [`x`](../README.md#how-to-work),"
                       " **`make test`** and **bold**,\n`--gtest_filter='Cpu*'` then `y`; run"
                       " ./step01 --rows 8 -- `--cols 8`, a--b.\n")
    want = ("See [`../solutions/`](solutions_readme.html) and "
            "[`x`](exercises_readme.html#exercises_readme-how-to-work), <b>`make test`</b> and "
            "**bold**,\n`` --gtest_filter='Cpu*' `` then `y`; run ./step01 `--rows` 8 -- "
            "`--cols 8`, a--b.\n")
    if text != want:
        failed.append(("code in a link, bold code, a closing quote, options", text, want))
    text = md_filter.filter_page(os.path.join(page, "x.md"),
                       "<details><summary>Hint 1: the grid</summary>\n\nThe `grid`.\n\n"
                       "More.\n</details>\n")
    want = ("\\htmlonly[block]<details><summary>Hint 1: the grid</summary>\\endhtmlonly\n\n"
            "The `grid`.\n\nMore.\n\\htmlonly[block]</details>\\endhtmlonly\n")
    if text != want:
        failed.append(("a folded hint", text, want))
    text = md_filter.filter_comments("int a;  // --x\n  bool h;  ///< --help was given, `--rows 8`\n")
    want = "int a;  // --x\n  bool h;  ///< `--help` was given, `--rows 8`\n"
    if text != want:
        failed.append(("a header's comments", text, want))
    return ["%r gave %r, wanted %r" % f for f in failed]


class CheckPages(unittest.TestCase):
    def test_planted_courses(self):
        self.assertEqual(check_pages_failures(), [])


class MdFilter(unittest.TestCase):
    def test_links_headings_and_spans(self):
        self.assertEqual(md_filter_failures(), [])


if __name__ == "__main__":
    unittest.main()
