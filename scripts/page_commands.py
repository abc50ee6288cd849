#!/usr/bin/env python3
"""Every command a page gives in a fenced `sh` block, run as written from the repository root
where it needs no GPU (a CPU test, `page_commands`):

    python3 scripts/page_commands.py BUILD_DIR     run the GPU-free ones, list the rest

Each command line of a ```sh block of every .md page is sorted by RULES, first match wins: `run`
(no GPU, seconds: run it, it must exit 0), or skipped with the reason (a GPU, a long build, a
student's unfinished answer). A command that no rule knows fails the test: a new page command
gets a rule. The pages name the build folder build/; here it is BUILD_DIR (the tests' build).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plots"))
from markdown import all_pages, code_blocks  # noqa: E402  (the course's one Markdown reader)

RULES = [  # (pattern of the command, None to run it, or why it is not run)
    (r"^python3 plots/make_plots\.py --check$", None),
    (r"^python3 plots/bench\.py (--build build )?--dry-run$", None),
    (r"^python3 exercises/grader/grade(_class)?\.py --help$", None),
    (r"^python3 exercises/grader/selftest\.py --unit$", None),
    (r"^cmake --build build --target step08_test && \(cd build && ctest -R step08_test\)$", None),
    (r"^(make step\d\d|make step\d\d-lab|make step07-latency|make step08_patterns) && \./", "needs a GPU"),
    (r"^(\./|mpirun |OUT=\S+ bash |bash steps/|python3 steps/10_multi_gpu/peers)", "needs a GPU"),
    (r"^(make gpu-check|python3 scripts/gpu_check\.py --merge)", "needs a GPU, or its archive"),
    (r"^(make bench|python3 plots/bench\.py (--build build )?(--part|--steps))", "needs a GPU"),
    (r"^(bash exercises/grader/(check_on_gpu|gpu_acceptance)|python3 exercises/grader/selftest\.py --gpu)",
     "needs a GPU"),
    (r"^(build/bin/bench_ex)", "needs a GPU"),
    (r"^(make ex\d\d|make grade|(EXERCISE_SEED=\d+ )?build/bin/test_ex)",
     "grades the exercises as handed out: unfinished by design, they fail"),
    (r"^(make step\d\d$|make test$|make plots$|python3 exercises/grader/selftest\.py( --quick)?$|"
     r"cmake --build build --target step08-lab_test)",
     "builds or runs what make test already does (its own tests)"),
]


def commands():
    """[(page, command)] of every ```sh block line, comments dropped."""
    found = []
    for page in all_pages(ROOT):
        rel = page.relative_to(ROOT).as_posix()
        for info, block in code_blocks(page.read_text()):
            if info != "sh":
                continue
            for line in block:
                command = re.split(r"\s+#\s", line)[0].strip()
                if command:
                    found.append((rel, command))
    return found


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build = Path(sys.argv[1]).resolve()
    failed, ran, skipped = [], 0, {}
    for page, command in commands():
        rule = next((why for pattern, why in RULES if re.search(pattern, command)), "unknown")
        if rule == "unknown":
            failed.append(f"{page}: `{command}`: no rule says whether it needs a GPU "
                          "(scripts/page_commands.py)")
            continue
        if rule is not None:
            skipped[rule] = skipped.get(rule, 0) + 1
            continue
        here = re.sub(r"(?<![\w/-])build(?=[ /)])", str(build), command)
        env = dict(os.environ, BUILD=str(build))
        try:
            run = subprocess.run(["bash", "-c", here], cwd=ROOT, env=env, capture_output=True,
                                 text=True, timeout=300)
            code, out = run.returncode, run.stdout + run.stderr
        except subprocess.TimeoutExpired:
            code, out = "timeout", ""
        ran += 1
        print(f"{page}: `{command}`: exit {code}")
        if code != 0:
            failed.append(f"{page}: `{command}` exits {code}:\n{out[-2000:]}")
    for line in failed:
        print(f"page_commands: {line}")
    print(f"page_commands: {ran} commands run, " + ", ".join(
        f"{n} not run ({why})" for why, n in skipped.items()) + (", FAILED" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
