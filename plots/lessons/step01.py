"""Step 01's figure: the naive kernel's bandwidth by block shape, coalesced read against coalesced
write, at the headline shapes, with the copy ceiling and step 02's tile for scale.
"""

from plotting import error_bars, save, step_color, subplots
from rows import best, select

BLOCKS = ["32x32", "16x16", "32x8", "8x32"]
# Step 01's colour: light for the coalesced reads, full for the coalesced writes.
SIDES = [("read", "#9ecae1"), ("write", "tab:blue")]


def naive(data, shape, side, block):
    """Step 01's kernel coalesced on one side ("read", "write") with one block shape."""
    return best(select(data.bench, step="step01", shape=shape, type_="f32",
                       id=f"{side}-{block}"))


def shapes_measured(data):
    return [s for s in data.course.headline_shapes
            if any(naive(data, s, side, b) for side, _ in SIDES for b in BLOCKS)]


def rows_drawn(data):
    shapes = shapes_measured(data)
    return [r for r in select(data.bench, type_="f32")
            if r.step in ("step01", "step02") and r.shape in shapes]


def draw(data, path):
    shapes = shapes_measured(data)
    fig, axes = subplots(1, len(shapes), figsize=(7 * len(shapes), 5.2), squeeze=False,
                         sharey=True)
    shown, width = [], 0.38
    for ax, shape in zip(axes[0], shapes):
        for k, (side, color) in enumerate(SIDES):
            label = f"naive, coalesced {side}"
            for i, block in enumerate(BLOCKS):
                r = naive(data, shape, side, block)
                if not r:
                    continue
                x = i + (k - 0.5) * width
                ax.bar(x, r.gbps, width, color=color, yerr=error_bars([r]), capsize=3,
                       label=label)
                label = None  # one legend entry per side
                ax.annotate(f"{r.pct_copy:.0f}%", (x, r.gbps), textcoords="offset points",
                            xytext=(0, 3), ha="center", fontsize=8)
                shown.append(r)
        here = select(data.bench, shape=shape, type_="f32")
        copy = best([r for r in here if r.step == "step01" and r.is_copy])
        tile = best([r for r in here if r.step == "step02" and not r.is_reference])
        if copy:
            ax.axhline(copy.gbps, color="black", linestyle="--", linewidth=1.2,
                       label="copy ceiling")
            shown.append(copy)
        if tile:
            ax.axhline(tile.gbps, color=step_color("step02"), linestyle=":", linewidth=1.8,
                       label=f"step 02, {tile.kernel}")
            shown.append(tile)
        ax.set_xticks(range(len(BLOCKS)), BLOCKS)
        ax.set_xlabel("block shape (threads in x by y; labels: % of copy)")
        ax.set_title(f"{shape[0]} x {shape[1]} float32")
        ax.grid(axis="x", visible=False)
        ax.legend(fontsize=8, loc="upper left")
    axes[0][0].set_ylabel("bandwidth, GB/s")
    axes[0][0].set_ylim(0, max(r.gbps for r in shown) * 1.18)
    fig.suptitle("Step 01: the naive kernel by block shape and coalesced side")
    save(fig, path, shown)


def figures(data):
    return [("naive_blocks",
             "Naive kernel by block shape: coalesced read against coalesced write",
             rows_drawn(data), lambda path: draw(data, path))]
