"""Step 05's figure: bandwidth against rows per thread (32 / BLOCK_ROWS) at the headline shapes,
with the copy ceiling, step 04 and step 01's best naive kernel for scale.

Drawn by plots/make_plots.py (figures(data, mp); mp is make_plots itself).
"""

import re

SHAPE_STYLES = ["o", "s"]


def rows_per_thread(r):
    """"coarsened 32x8" -> 4 tile rows per thread; None for any other kernel."""
    m = re.fullmatch(r"coarsened 32x(\d+)", r.kernel)
    return 32 // int(m.group(1)) if m else None


def sweep(data, mp, shape):
    """{rows per thread: row} of step 05 at one shape."""
    found = {}
    for r in mp.select(data, step="step05", shape=shape, type_="f32"):
        n = rows_per_thread(r)
        if n and r.ran:
            found[n] = r
    return found


def shapes_measured(data, mp):
    return [s for s in mp.HEADLINE_SHAPES if sweep(data, mp, s)]


def draw(data, mp, path):
    plt = mp.pyplot()
    shapes = shapes_measured(data, mp)
    fig, axes = plt.subplots(1, len(shapes), figsize=(6.5 * len(shapes), 5), squeeze=False,
                             sharey=True)
    shown = []
    for ax, shape in zip(axes[0], shapes):
        points = sweep(data, mp, shape)
        xs = sorted(points)
        ax.errorbar(xs, [points[n].gbps for n in xs],
                    yerr=mp.error_bars([points[n] for n in xs]),
                    marker="o", color=mp.step_color("step05"), capsize=3, label="step 05")
        for n in xs:
            ax.annotate(f"{points[n].pct_copy:.0f}%", (n, points[n].gbps),
                        textcoords="offset points", xytext=(0, -14), ha="center", fontsize=8)
        shown += points.values()
        here = mp.select(data, shape=shape, type_="f32")
        refs = [("copy ceiling", "black", "--",
                 mp.best([r for r in here if r.step == "step05" and r.is_copy])),
                ("step 04 (1 row per thread, 32x32 threads)", mp.step_color("step04"), ":",
                 mp.best([r for r in here if r.step == "step04" and not r.is_reference])),
                ("step 01, best naive kernel", mp.step_color("step01"), "-.",
                 mp.best([r for r in here if r.step == "step01" and not r.is_reference]))]
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
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    mp.save(fig, path, shown)


def figures(data, mp):
    return [("rows_per_thread", "Step 05: bandwidth against tile rows per thread",
             bool(shapes_measured(data, mp)), lambda path: draw(data, mp, path))]
