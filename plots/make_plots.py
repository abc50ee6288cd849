#!/usr/bin/env python3
"""Redraws the course's figures and rewrites its measured tables and numbers from plots/data/.

    python3 plots/make_plots.py           the figures whose data changed, then the Markdown
    python3 plots/make_plots.py --check   change nothing; exit 1, saying where and why, if stale

What it checks and how the modules under it divide the work: plots/README.md ("Markers", "The
code"). Only the standard library, and matplotlib (Agg backend) to draw.
"""

import argparse
import difflib
import sys
from pathlib import Path

from facts import Course, FactsError
from figures import catalog
from markdown import all_pages, linked_pngs, marker_pages, rewrite
from render import renderers
from plotting import stamp
from rows import Data

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the repository (default: the one holding this script)")
    parser.add_argument("--figures-dir", type=Path,
                        help="where the PNG files go (default: ROOT/plots/figures)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1, with file:line and the reason, if a table, "
                             "number or figure is stale, a marker does not resolve, prose types "
                             "a measured number or a figure is linked from no page")
    parser.add_argument("--redraw", action="store_true",
                        help="draw every figure, also those already drawn from today's data")
    parser.add_argument("--no-figures", action="store_true", help="only the Markdown")
    parser.add_argument("--no-markdown", action="store_true", help="only the figures")
    parser.add_argument("--skip-code", type=int, default=None,
                        help="exit with this code (a test's 'skipped') when matplotlib is missing")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    # Links always point at the committed figures, wherever --figures-dir sends this run's PNGs.
    committed = root / "plots" / "figures"
    figures_dir = args.figures_dir or committed
    try:
        data = Data(root / "plots" / "data", Course(root))
    except FactsError as e:
        print(f"make_plots: {e}", file=sys.stderr)
        return 1
    problems = []
    figures = catalog(data, root, problems)
    devices = data.devices()
    print(f"data: {len(data.all_bench)} benchmark measurements "
          f"({sum(r.runs for r in data.all_bench)} rows), {len(data.all_profile)} profiler rows, "
          f"{len(data.bankmaps)} bank maps; {len(devices)} device(s), the pages show "
          f"{data.device or 'every one'} unless a marker says device=")
    for p in problems:
        print(p, file=sys.stderr)
    failed = bool(problems)

    if args.check:
        failed = check_figures(figures, committed) or failed
    elif not args.no_figures:
        drawn = draw_figures(figures, figures_dir, args.redraw)
        if drawn is None and args.skip_code is not None:
            return args.skip_code
        failed = drawn is None or drawn or failed  # without matplotlib the tables still update
    if not args.no_markdown:
        failed = check_markdown(root, committed, args.check, data, figures) or failed
    return 1 if failed else 0


def draw_figures(figures, folder, redraw):
    """Draws every figure whose PNG in `folder` was not drawn from today's data (every one with
    `redraw`). None when matplotlib is missing, else True if a figure failed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("make_plots: matplotlib is missing (`make deps` installs it, or python3 -m pip "
              "install matplotlib): no figure drawn", file=sys.stderr)
        return None
    folder.mkdir(parents=True, exist_ok=True)
    failed = False
    for figure in figures.values():
        path = folder / f"{figure.name}.png"
        if not figure.ready or (not redraw and figure.fresh(path)):
            continue
        try:
            figure.draw(path)
            stamp(path, figure.stamp())
        except Exception as e:
            print(f"{figure.source}: figure {figure.name}: {type(e).__name__}: {e}",
                  file=sys.stderr)
            failed = True
            continue
        print(f"figure: {path}")
    return failed


def check_figures(figures, folder):
    """True (and why, on stderr) when a committed figure was drawn from other rows or by other
    code than plots/ has now."""
    failed = False
    for figure in figures.values():
        path = folder / f"{figure.name}.png"
        if figure.ready and path.exists() and not figure.fresh(path):
            print(f"plots/figures/{figure.name}.png: stale: drawn from other data (or by other "
                  f"code in {figure.source}) than today's: run `make plots` and commit it",
                  file=sys.stderr)
            failed = True
    return failed


def check_markdown(root, committed, check, data, figures):
    """Rewrites (or, with check, compares) every Markdown file; reports what is wrong as
    file:line: reason; checks that every PNG of `committed` is linked. True if anything failed."""
    failed, lint_counts, texts = False, {}, {}
    for md in marker_pages(root):
        old = md.read_text()
        new, findings, changed = rewrite(old, *renderers(data, figures, md, committed))
        texts[md] = new
        shown = md.relative_to(root).as_posix()
        for f in findings:
            print(f"{shown}:{f.line}: {f.message}", file=sys.stderr)
            if f.lint:
                lint_counts[shown] = lint_counts.get(shown, 0) + 1
        failed = failed or bool(findings)
        if new == old:
            continue
        if check:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), f"{shown} (committed)",
                f"{shown} (from plots/data)"))
            for line, before, after in changed:
                print(f"{shown}:{line}: stale number: the line reads\n    {before.strip()}\n"
                      f"  and the data gives\n    {after.strip()}", file=sys.stderr)
            print(f"{shown}: stale: run `make plots` and commit the result", file=sys.stderr)
            failed = True
        else:
            md.write_text(new)
            print(f"updated: {shown}")

    # Every PNG of plots/figures is shown on some page.
    for md in all_pages(root):
        texts.setdefault(md, md.read_text(errors="replace"))
    linked = linked_pngs(texts, committed)
    for png in sorted(committed.glob("*.png")):
        if png.name not in linked:
            print(f"plots/figures/{png.name}: linked from no Markdown page: show it with "
                  f"<!-- figure name={png.stem} --> on a page, or delete it", file=sys.stderr)
            failed = True
    if lint_counts:
        total = sum(lint_counts.values())
        print(f"lint: {total} measured number(s) typed in prose, to put through num markers: "
              + ", ".join(f"{f} {n}" for f, n in sorted(lint_counts.items())), file=sys.stderr)
    return failed


if __name__ == "__main__":
    sys.exit(main())
