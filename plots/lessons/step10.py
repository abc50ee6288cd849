"""Step 10's figures, one on 2 GPUs and one on 4: each way of transposing across GPUs as % of
NCCL's all-to-all of the same bytes, on the problems of 2 GiB a GPU and more: the lesson's direct
placement, pipeline and peer writes, NCCL's all-to-all on symmetric windows (its best
form) and PyTorch's fastest program, symmetric memory included (against the plain all-to-all of
step 10's run of the same problem). A tick marks the bound on the same scale. Whiskers: the
slowest to the fastest run. Each figure's rows are those of the device that measured step 10 on
that many GPUs (its marker says which).
"""

from plotting import save, step_color, subplots
from rows import select

PROBLEMS = [("f32", (32768, 32768), "float32\n32768²"), ("f32", (65536, 16384), "float32\n65536 x 16384"),
            ("i8", (65536, 65536), "int8\n65536²"), ("f64", (32768, 16384), "float64\n32768 x 16384")]
# (label, colour, step, ids): a bar is the fastest of its ids on that problem.
METHODS = [("direct (part 2; beyond 2 GPUs in step)", step_color("step10"), "step10",
            ("direct",)),
           ("pipeline (part 1)", "0.55", "step10", ("overlapped",)),
           ("peer writes (part 3)", "tab:green", "step10", ("peer",)),
           ("NCCL's all-to-all, symmetric windows", "tab:purple", "step10",
            ("a2a-symmetric", "a2a-symmetric-ce")),
           ("PyTorch, its fastest program", "tab:orange", "pytorch-nccl",
            ("torch-short", "torch-compiled", "torch", "torch-symm", "torch-symm-compiled"))]


def one(data, step, kid, type_, shape):
    """The row of step's kid on that problem; the lab's where the step itself did not run it (the
    lab times the lesson's methods in the same run)."""
    for where in (step, "step10-lab") if step == "step10" else (step,):
        found = [r for r in select(data.bench, step=where, shape=shape, type_=type_, id=kid)
                 if r.ran]
        if found:
            return found[0]
    return None


def panel_data(data, g):
    """The data of the device that measured step 10 on g GPUs (the page's device first)."""
    return data.where("step10").where("step10", "step10-lab", kid=f"a2a-{g}gpus")


def picked(data, g, type_, shape):
    """(a2a row, {method label: row}) of one problem on g GPUs."""
    on = f"-{g}gpus"
    a2a = one(data, "step10", "a2a" + on, type_, shape)
    rows = {}
    for label, _, step, ids in METHODS:
        found = [r for r in (one(data, step, kid + on, type_, shape) for kid in ids) if r]
        if found:
            rows[label] = min(found, key=lambda r: r.median_ms)
    return a2a, rows


def rows_drawn(data, g):
    here = panel_data(data, g)
    out = []
    for type_, shape, _ in PROBLEMS:
        a2a, rows = picked(here, g, type_, shape)
        if a2a and rows:
            out += [a2a] + list(rows.values())
    return out


def draw(data, path, g):
    here = panel_data(data, g)
    fig, ax = subplots(figsize=(9, 5))
    shown = []
    width = 0.8 / len(METHODS)
    ticks = []
    for x, (type_, shape, label) in enumerate(PROBLEMS):
        a2a, rows = picked(here, g, type_, shape)
        if not a2a:
            continue
        ticks.append((x, label))
        shown.append(a2a)
        for i, (name, color, _, _) in enumerate(METHODS):
            r = rows.get(name)
            if not r:
                continue
            runs = [m.median_ms for m in getattr(r, "members", [r])]
            pct = 100 * a2a.median_ms / r.median_ms
            lo, hi = 100 * a2a.median_ms / max(runs), 100 * a2a.median_ms / min(runs)
            ax.bar(x + (i - (len(METHODS) - 1) / 2) * width, pct, width, color=color,
                   label=name if x == 0 else None, yerr=[[pct - lo], [hi - pct]], capsize=2)
            shown.append(r)
        if a2a.pct_peak > 0:  # the bound on the same scale: 100 x a2a / bound
            bound = 100 * 100 / a2a.pct_peak
            ax.plot([x - 0.45, x + 0.45], [bound, bound], color="black", linewidth=2,
                    label="bound (link bytes / rate)" if x == 0 else None)
    ax.axhline(100, color="black", linestyle="--", linewidth=1, label="NCCL's all-to-all")
    ax.set_xticks([t for t, _ in ticks], [lbl for _, lbl in ticks], fontsize=8)
    ax.set_ylim(0, 175)
    ax.set_ylabel("% of NCCL's all-to-all of the same bytes (higher is faster)")
    ax.legend(fontsize=7, loc="upper right", ncol=3)
    ax.set_title(f"Step 10 on {g} GPUs: each way against the all-to-all and the bound")
    save(fig, path, shown, rect=None)


def figures(data):
    return [("step10_methods",
             "Step 10 on 2 GPUs: the direct placement, the pipeline, the peer writes, NCCL's "
             "best form and PyTorch's fastest program as % of NCCL's all-to-all of the same "
             "bytes, with the bound, on the problems of 2 GiB a GPU and more", rows_drawn(data, 2),
             lambda path: draw(data, path, 2)),
            ("step10_four_gpus",
             "Step 10 on 4 GPUs: the direct placement, the pipeline, the peer writes, NCCL's "
             "best form and PyTorch's fastest program as % of NCCL's all-to-all of the same "
             "bytes, with the bound", rows_drawn(data, 4),
             lambda path: draw(data, path, 4))]
