"""Step 10's figure: % of NCCL's all-to-all of the same run against the block each GPU holds,
for each way of transposing across GPUs (the lab's plain order, overlapped pipeline and peer
writes, and PyTorch's way against its own all_to_all_single). Lines join the float32 squares;
the float32 rectangles and the int8 and float64 problems, all of 2 GiB a GPU like the
32768 x 32768 square, are marked beside it. Whiskers: the slowest to the fastest run. The rows
are those of the device that measured step 10 (its marker says which).

Drawn by plots/make_plots.py through plots/figures.py (see plots/lessons/README.md).
"""

from facts import gpu_count
from plotting import pct_bars, pyplot, save, step_color
from rows import select
from text import fmt_bytes

SIZES = {"i8": 1, "f16": 2, "bf16": 2, "f32": 4, "f64": 8, "b128": 16}  # bytes per element
SQUARES = [(8192, 8192), (16384, 16384), (32768, 32768), (46341, 46341)]
# The other problems: (type, shape, marker, label, where beside the square of their size).
OTHERS = [("f32", (65536, 16384), "s", "float32 65536 x 16384", 0.80),
          ("f32", (16384, 65536), "D", "float32 16384 x 65536", 0.89),
          ("i8", (65536, 65536), "v", "int8 65536 x 65536", 1.12),
          ("f64", (32768, 16384), "^", "float64 32768 x 16384", 1.25)]
METHODS = [("plain order", "0.45", "step10-lab", "plain-2gpus"),
           ("overlapped (the lesson's pipeline)", step_color("step10"), "step10-lab",
            "overlapped-2gpus"),
           ("peer writes", "tab:purple", "step10-lab", "peer-2gpus"),
           ("PyTorch's way (of its own all-to-all)", "tab:orange", "pytorch-nccl", "torch-2gpus")]


def mb_per_gpu(r):
    return r.rows * r.cols * SIZES[r.type] / int(gpu_count(r.id)) / 1e6


def one(data, step, kid, type_, shape):
    found = [r for r in select(data.bench, step=step, shape=shape, type_=type_, id=kid) if r.ran]
    return found[0] if found else None


def rows_drawn(data):
    data = data.where("step10-lab")
    problems = [("f32", s) for s in SQUARES] + [(t, s) for t, s, *_ in OTHERS]
    return [r for _, _, step, kid in METHODS for t, s in problems
            for r in [one(data, step, kid, t, s)] if r]


def draw(data, path):
    data = data.where("step10-lab")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 5.8))
    shown = []
    for label, color, step, kid in METHODS:
        line = [r for r in (one(data, step, kid, "f32", s) for s in SQUARES) if r]
        ax.errorbar([mb_per_gpu(r) for r in line], [r.pct_copy for r in line],
                    yerr=pct_bars(line), color=color, marker="o", capsize=3, label=label)
        shown += line
        for type_, shape, marker, _, shift in OTHERS:
            r = one(data, step, kid, type_, shape)
            if r:
                ax.errorbar([mb_per_gpu(r) * shift], [r.pct_copy], yerr=pct_bars([r]),
                            color=color, marker=marker, markerfacecolor="white", capsize=2,
                            linestyle="none")
                shown.append(r)
    for _, _, marker, label, _ in OTHERS:  # the markers' legend, in black
        ax.plot([], [], marker=marker, color="black", markerfacecolor="white",
                linestyle="none", label=label)
    ax.axhline(100, color="black", linestyle="--", linewidth=1, label="NCCL's all-to-all")
    squares = sorted({(r.rows, r.cols) for r in shown if (r.rows, r.cols) in SQUARES})
    ax.set_xscale("log")
    ax.set_xticks([n * n * 4 / 2 / 1e6 for n, _ in squares],
                  [f"{n}²\n{fmt_bytes(n * n * 4 / 2)}" for n, _ in squares], fontsize=8)
    ax.minorticks_off()
    ax.set_xlabel("float32 N x N on 2 GPUs: the block each GPU holds (the other problems, 2 GiB "
                  "a GPU, beside 32768²)")
    ax.set_ylabel("% of NCCL's all-to-all of the same run")
    ax.set_ylim(0, 135)
    ax.set_title("Step 10 on 2 GPUs: each way against the all-to-all of the same bytes")
    ax.legend(fontsize=8, loc="upper right", ncol=2)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, path, shown)


def figures(data):
    return [("step10_methods",
             "Step 10 on 2 GPUs: % of NCCL's all-to-all against the block per GPU for the plain "
             "order, the overlapped pipeline, the peer writes and PyTorch's way",
             rows_drawn(data), lambda path: draw(data, path))]
