#!/usr/bin/env python3
"""The summary of a step 10 GPU run (make gpu-check's bench-10 parts): per number of GPUs, element
type and shape, the medians over the separate runs (min-max) of NCCL's all-to-all, the lesson's
methods, its lab's and PyTorch's programs; then the step's and the lab's best against the best
NCCL copy (the all-to-alls, plain and on symmetric windows) and the best PyTorch program.

    python3 steps/10_multi_gpu/summary.py OUT/bench.csv [OUT/peers.csv ...]
"""

import csv
import re
import statistics
import sys
from collections import defaultdict


def main(paths):
    rows = []
    for path in paths:
        try:
            rows += list(csv.DictReader(open(path)))
        except OSError:
            print(f"summary: no rows in {path}")
    if not rows:
        return 0
    runs = defaultdict(list)  # (gpus, type, shape, step, id) -> median ms of each run
    for r in rows:
        m = re.search(r"-(\d+)gpus?$", r["id"])
        if not m or r["verified"] == "refused":
            continue
        if r["verified"] == "FAILED":
            print(f"FAILED: {r['step']} {r['id']} {r['type']} {r['rows']}x{r['cols']}")
        base = r["id"][: m.start()]
        runs[(int(m.group(1)), r["type"], f"{r['rows']}x{r['cols']}", r["step"], base)].append(
            (float(r["median_ms"]), float(r["pct_peak"])))

    def stat(key):
        v = runs.get(key)
        if not v:
            return None
        ms = [x for x, _ in v]
        return statistics.median(ms), min(ms), max(ms), len(ms), statistics.median(p for _, p in v)

    def fmt(s):
        return "-" if s is None else f"{s[0]:.3f} ({s[1]:.3f}-{s[2]:.3f}, {s[3]})"

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
            pa = f"{100 * a2a[0] / s[0]:.1f}" if a2a else "-"
            print(f"  {step:10} {kid:28} {fmt(s):34} {pa:>6} % a2a {s[4]:6.1f} % bound")
            # Copies of the bytes (NCCL's all-to-alls, the link copies) are references, not transposes.
            group = "reference" if kid.startswith(("a2a", "link-copy")) else step
            if group not in best or s[0] < best[group][0]:
                best[group] = (s[0], kid)
        ta = stat((g, t, shape, "pytorch-nccl", "a2a"))
        for kid in sorted({k[4] for k in runs if k[:4] == (g, t, shape, "pytorch-nccl") and k[4] != "a2a"}):
            s = stat((g, t, shape, "pytorch-nccl", kid))
            pa = f"{100 * ta[0] / s[0]:.1f}" if ta else "-"
            print(f"  {'pytorch':10} {kid:28} {fmt(s):34} {pa:>6} % of its all_to_all_single")
            if "pytorch" not in best or s[0] < best["pytorch"][0]:
                best["pytorch"] = (s[0], kid)
        for mine in ("step10", "step10-lab"):
            if mine not in best:
                continue
            ms, kid = best[mine]
            line = f"  {mine}'s best, {kid}:"
            if "reference" in best:
                line += f" {100 * best['reference'][0] / ms:.1f}% of the best NCCL copy ({best['reference'][1]});"
            if "pytorch" in best:
                line += f" {best['pytorch'][0] / ms:.2f}x PyTorch's best ({best['pytorch'][1]})"
            print(line.rstrip(";"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["step10.csv"]))
