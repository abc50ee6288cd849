"""Step 06's figure: bandwidth by vector width (float, float2, float4) on the swizzled tile, one
bar per rows-per-thread count, at the headline shapes, with the copy ceiling, cuBLAS and step 05's
best kernel for scale.
"""

import re

from plotting import error_bars, save, step_color, subplots
from rows import best, select

WIDTHS = ["float", "float2", "float4"]
BYTES = {"float": 4, "float2": 8, "float4": 16}
# The swizzled kernels' ids: "float4-2rows" is float4, 2 rows per thread.
SWIZZLED = re.compile(r"(float\d?)-(\d+)rows?")


def sweep(data, shape):
    """{(vector, rows per thread): row} of step 06's swizzled kernels at one shape."""
    found = {}
    for r in select(data.bench, step="step06", shape=shape, type_="f32"):
        m = SWIZZLED.fullmatch(r.id)
        if m and r.ran:
            found[(m.group(1), int(m.group(2)))] = r
    return found


def shapes_measured(data):
    return [s for s in data.course.headline_shapes if sweep(data, s)]


def rows_drawn(data):
    shapes = shapes_measured(data)
    return [r for r in select(data.bench, type_="f32")
            if r.step in ("step05", "step06") and r.shape in shapes]


def draw(data, path):
    import matplotlib
    shapes = shapes_measured(data)
    fig, axes = subplots(1, len(shapes), figsize=(6.5 * len(shapes), 5.4), squeeze=False,
                         sharey=True)
    shown = []
    all_rpt = sorted({rpt for s in shapes for (_, rpt) in sweep(data, s)})
    colors = matplotlib.colormaps["viridis"]
    for ax, shape in zip(axes[0], shapes):
        points = sweep(data, shape)
        # One line per rows-per-thread count across the widths, a little apart so that equal
        # values stay visible; points, not bars: the differences are small next to the ceiling.
        for k, rpt in enumerate(all_rpt):
            found = [(i, points[(vec, rpt)]) for i, vec in enumerate(WIDTHS) if (vec, rpt) in points]
            if not found:
                continue
            dx = (k - (len(all_rpt) - 1) / 2) * 0.06
            ax.errorbar([i + dx for i, _ in found], [r.gbps for _, r in found],
                        yerr=error_bars([r for _, r in found]), marker="o", capsize=3,
                        color=colors(k / max(len(all_rpt) - 1, 1) * 0.85),
                        label=f"{rpt} row{'s' if rpt > 1 else ''} per thread")
            shown += [r for _, r in found]
        here = select(data.bench, shape=shape, type_="f32")
        refs = [("copy ceiling", "black", "--",
                 best([r for r in here if r.step == "step06" and r.is_copy])),
                ("cuBLAS geam", "0.55", ":",
                 best([r for r in here if r.step == "step06" and r.is_geam])),
                ("step 05, best kernel", step_color("step05"), "-.",
                 best([r for r in here if r.step == "step05" and not r.is_reference]))]
        for label, color, style, r in refs:
            if r:
                ax.axhline(r.gbps, color=color, linestyle=style, linewidth=1.3,
                           label=f"{label} ({r.pct_copy:.0f}% of copy)" if not r.is_copy
                           else label)
                shown.append(r)
        ax.set_xticks(range(len(WIDTHS)), [f"{w}\n{BYTES[w]} bytes per access" for w in WIDTHS])
        ax.set_xlim(-0.4, len(WIDTHS) - 0.6)
        ax.set_xlabel("vector width (swizzled tile)")
        ax.set_title(f"{shape[0]} x {shape[1]} float32")
        ax.legend(fontsize=7.5, loc="lower right")
    # The y axis starts well above 0 so that the gaps between the kernels can be seen at all.
    low = min(r.gbps for r in shown)
    axes[0][0].set_ylim(low * 0.85, max(r.gbps for r in shown) * 1.03)
    axes[0][0].set_ylabel("bandwidth, GB/s (axis does not start at 0)")
    fig.suptitle("Step 06: vector width and rows per thread")
    save(fig, path, shown)


def figures(data):
    return [("vector_width", "Step 06: bandwidth by vector width and rows per thread",
             rows_drawn(data), lambda path: draw(data, path))]
