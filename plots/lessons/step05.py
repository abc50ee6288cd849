"""Step 05's figure: bandwidth against rows per thread (32 / BLOCK_ROWS) at the headline shapes,
with the copy ceiling, step 04 and step 01's best naive kernel for scale.
"""

from plotting import error_bars, save, step_color, subplots
from rows import best, select

# Step 05's kernels by id, and the tile rows each thread moves (32 / BLOCK_ROWS).
ROWS_PER_THREAD = {"block-32x32": 1, "block-32x16": 2, "block-32x8": 4, "block-32x4": 8}


def sweep(data, shape):
    """{rows per thread: row} of step 05 at one shape."""
    found = {}
    for r in select(data.bench, step="step05", shape=shape, type_="f32"):
        if r.id in ROWS_PER_THREAD and r.ran:
            found[ROWS_PER_THREAD[r.id]] = r
    return found


def shapes_measured(data):
    return [s for s in data.course.headline_shapes if sweep(data, s)]


def rows_drawn(data):
    shapes = shapes_measured(data)
    return [r for r in select(data.bench, type_="f32")
            if r.step in ("step01", "step04", "step05") and r.shape in shapes]


def draw(data, path):
    shapes = shapes_measured(data)
    fig, axes = subplots(1, len(shapes), figsize=(6.5 * len(shapes), 5), squeeze=False,
                         sharey=True)
    shown = []
    for ax, shape in zip(axes[0], shapes):
        points = sweep(data, shape)
        xs = sorted(points)
        ax.errorbar(xs, [points[n].gbps for n in xs],
                    yerr=error_bars([points[n] for n in xs]),
                    marker="o", color=step_color("step05"), capsize=3, label="step 05")
        for n in xs:
            ax.annotate(f"{points[n].pct_copy:.0f}%", (n, points[n].gbps),
                        textcoords="offset points", xytext=(0, -14), ha="center", fontsize=8)
        shown += points.values()
        here = select(data.bench, shape=shape, type_="f32")
        refs = [("copy ceiling", "black", "--",
                 best([r for r in here if r.step == "step05" and r.is_copy])),
                ("step 04 (1 row per thread, 32x32 threads)", step_color("step04"), ":",
                 best([r for r in here if r.step == "step04" and not r.is_reference])),
                ("step 01, best naive kernel", step_color("step01"), "-.",
                 best([r for r in here if r.step == "step01" and not r.is_reference]))]
        for label, color, style, r in refs:
            if r:
                ax.axhline(r.gbps, color=color, linestyle=style, linewidth=1.3, label=label)
                shown.append(r)
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [f"{n}\n32x{32 // n}" for n in xs])
        ax.minorticks_off()
        ax.set_xlabel("tile rows per thread (block: 32 x BLOCK_ROWS threads; labels: % of copy)")
        ax.set_title(f"{shape[0]} x {shape[1]} float32")
        ax.legend(fontsize=8, loc="lower right")
    axes[0][0].set_ylabel("bandwidth, GB/s")
    axes[0][0].set_ylim(0, max(r.gbps for r in shown) * 1.12)
    fig.suptitle("Step 05: the same 32 x 32 tile moved by fewer threads, more rows each")
    save(fig, path, shown)


def figures(data):
    return [("rows_per_thread", "Step 05: bandwidth against tile rows per thread",
             rows_drawn(data), lambda path: draw(data, path))]
