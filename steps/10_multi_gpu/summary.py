#!/usr/bin/env python3
"""The summary of a step 10 GPU run (make gpu-check's bench-10 parts): per number of GPUs, element
type and shape, the medians over the separate runs (min-max) of NCCL's all-to-all, the lesson's
methods, its lab's and PyTorch's programs; then the step's and the lab's best against the best
copy of the same bytes (NCCL's all-to-alls, plain and on symmetric windows, and the lab's link
copies) and the best PyTorch program.

    python3 steps/10_multi_gpu/summary.py OUT/bench.csv [OUT/peers.csv ...]
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plots"))
from rows import load_bench  # noqa: E402  (the runs of one kernel on one problem as one Row)


def main(paths):
    runs = {}  # (gpus, type, shape, step, id) -> the Row of its runs
    for path in paths:
        rows = load_bench(path)
        if not rows:
            print(f"summary: no rows in {path}")
        for r in rows:
            m = re.search(r"-(\d+)gpus?$", r.id)
            if not m or r.verified == "refused":
                continue
            if r.verified == "FAILED":
                print(f"FAILED: {r.step} {r.id} {r.type} {r.rows}x{r.cols}")
            runs[(int(m.group(1)), r.type, f"{r.rows}x{r.cols}", r.step, r.id[: m.start()])] = r
    if not runs:
        return 0
    stat = runs.get

    def fmt(s):
        if s is None:
            return "-"
        ms = [run.median_ms for run in s.members]
        return f"{s.median_ms:.3f} ({min(ms):.3f}-{max(ms):.3f}, {s.runs})"

    problems = sorted({k[:3] for k in runs})
    print("\nmedian ms over the runs (min-max, runs); % a2a = all-to-all ms / ms; % bound = bound ms / ms")
    for g, t, shape in problems:
        a2a = stat((g, t, shape, "step10", "a2a")) or stat((g, t, shape, "step10-lab", "a2a"))
        print(f"\n{g} GPUs, {t} {shape}: NCCL all-to-all {fmt(a2a)}")
        best = {}  # "step10", "step10-lab", "reference", "pytorch" -> (ms, id)
        ids = sorted({k[3:] for k in runs if k[:3] == (g, t, shape) and k[3] != "pytorch-nccl" and k[4] != "a2a"},
                     key=lambda k: (k[0] != "step10", k[1]))
        for step, kid in ids:
            s = stat((g, t, shape, step, kid))
            pa = f"{100 * a2a.median_ms / s.median_ms:.1f}" if a2a else "-"
            print(f"  {step:10} {kid:28} {fmt(s):34} {pa:>6} % a2a {s.pct_peak:6.1f} % bound")
            # Copies of the bytes (NCCL's all-to-alls, the link copies) are references, not transposes.
            group = "reference" if kid.startswith(("a2a", "link-copy")) else step
            if group not in best or s.median_ms < best[group][0]:
                best[group] = (s.median_ms, kid)
        ta = stat((g, t, shape, "pytorch-nccl", "a2a"))
        for kid in sorted({k[4] for k in runs if k[:4] == (g, t, shape, "pytorch-nccl") and k[4] != "a2a"}):
            s = stat((g, t, shape, "pytorch-nccl", kid))
            pa = f"{100 * ta.median_ms / s.median_ms:.1f}" if ta else "-"
            print(f"  {'pytorch':10} {kid:28} {fmt(s):34} {pa:>6} % of its all_to_all_single")
            if "pytorch" not in best or s.median_ms < best["pytorch"][0]:
                best["pytorch"] = (s.median_ms, kid)
        for mine in ("step10", "step10-lab"):
            if mine not in best:
                continue
            ms, kid = best[mine]
            line = f"  {mine}'s best, {kid}:"
            if "reference" in best:
                line += f" {100 * best['reference'][0] / ms:.1f}% of the best copy ({best['reference'][1]});"
            if "pytorch" in best:
                line += f" {best['pytorch'][0] / ms:.2f}x PyTorch's best ({best['pytorch'][1]})"
            print(line.rstrip(";"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["step10.csv"]))
