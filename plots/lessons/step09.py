"""Step 09's figures: in place against out of place by matrix size, batched throughput by
matrix size, and rectangles in place (RECTANGLES.md, COPRIME.md) by shape and pass by pass, on
the device that measured them.

The rectangles' pass-by-pass panel reads plots/data/profile.csv (gpu__time_duration.sum of the
passes of the rectangle, ids "rect-passP", named "..., pass P of N: kind"); without it, it is
left out.
"""

import re
from math import gcd

from plotting import error_bars, fmt_bytes, save, step_color, subplots
from render import metric_column
from rows import best, select

# The lesson's in-place kernels by id (the lab's variants are not drawn here): label, colour,
# marker.
INPLACE = {"pairs-32x32": ("tile pairs 32x32", "tab:orange", "s"),
           "pairs-64x64": ("tile pairs 64x64", "tab:red", "o")}
# The batched kernels by id, in the order their bars stand in a group, with a colour each.
BATCHED = [("tiles", "tab:blue"), ("whole", "tab:cyan"), ("batch-pairs-32x32", "tab:orange"),
           ("batch-pairs-64x64", "tab:red"), ("batch-whole", "tab:pink")]


def top_pct(r):
    """The fastest run's % of copy."""
    return max(m.pct_copy for m in r.members)


def runs_note(rows):
    runs = sorted({int(getattr(r, "runs", 1) or 1) for r in rows})
    if not runs or runs[-1] <= 1:
        return "one run per point"
    n = str(runs[0]) if runs[0] == runs[-1] else f"{runs[0]}-{runs[-1]}"
    return f"median of {n} runs, bars: slowest to fastest"


# -- in place against out of place --------------------------------------------------------------

def squares(data, steps):
    """The rows of those steps on float32 square matrices, one at a time."""
    return [r for r in data.bench if r.step in steps and r.type == "f32" and r.batch == 1
            and r.rows == r.cols]


def inplace_rows(data):
    return [r for r in squares(data, ["step09"]) if r.ran and r.id in INPLACE]


def out_of_place_rows(data):
    """Step 08's best kernel at each square size the in-place kernels ran (float32, one
    matrix)."""
    found = []
    for n in sorted({r.rows for r in inplace_rows(data)}):
        top = best([r for r in select(data.bench, step="step08", shape=(n, n), type_="f32")
                    if not r.is_reference])
        if top:
            found.append(top)
    return found


def cublas_rows(data):
    """cuBLAS geam timed in step 09's own runs, at the same sizes as the in-place kernels."""
    return [r for r in squares(data, ["step09"]) if r.is_geam and r.ran]


def inplace_drawn(data):
    sizes = {r.rows for r in inplace_rows(data)}
    return [r for r in squares(data, ["step08", "step09"]) if r.rows in sizes]


def draw_inplace(data, path):
    fig, ax = subplots(figsize=(10, 5.6))
    series = [(f"step 09 {label}, in place", color, marker,
               [r for r in inplace_rows(data) if r.id == kid])
              for kid, (label, color, marker) in INPLACE.items()]
    series += [("step 08, out of place (best kernel)", step_color("step08"), "D",
                out_of_place_rows(data)),
               ("cuBLAS geam, out of place", "0.55", "^", cublas_rows(data))]
    shown, sizes = [], set()
    for label, color, marker, rows in series:
        if not rows:
            continue
        shown += rows
        # A line through the sizes whose rows start on a 32-byte sector; hollow markers at the
        # others (8191, 16383), which hang below their aligned neighbours.
        aligned = sorted((r for r in rows if r.rows % 8 == 0), key=lambda r: r.rows)
        odd = [r for r in rows if r.rows % 8 != 0]
        ax.errorbar([r.rows for r in aligned], [r.pct_copy for r in aligned],
                    yerr=error_bars(aligned, "pct_copy"), color=color, marker=marker,
                    markersize=5, capsize=2, label=label)
        if odd:
            ax.errorbar([r.rows for r in odd], [r.pct_copy for r in odd],
                        yerr=error_bars(odd, "pct_copy"), color=color, marker=marker,
                        markersize=7, capsize=2, linestyle="none", markerfacecolor="none")
        sizes |= {r.rows for r in rows}
    ax.axhline(100, color="black", linestyle="--", linewidth=1.2, label="copy ceiling (100%)")
    for n in sorted(s for s in sizes if s % 8 != 0):
        low = min(r.pct_copy for r in shown if r.rows == n)
        ax.annotate(f"{n}²\n(rows not on\n32 bytes)", (n, low), textcoords="offset points",
                    xytext=(0, -10), ha="center", va="top", fontsize=7, color="0.3")
    ticks = sorted(s for s in sizes if s % 8 == 0)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks, [f"{n}²\n{fmt_bytes(n * n * 4)}" for n in ticks], fontsize=8)
    ax.minorticks_off()
    low = min([r.pct_copy for r in shown] + [100])
    high = max([top_pct(r) for r in shown] + [100])
    ax.set_ylim(max(0, low - 15), high + 4)
    ax.set_xlabel("matrix size (N x N float32; hollow markers: N not a multiple of 8)")
    ax.set_ylabel("% of the copy ceiling of the same run")
    ax.set_title("In place against out of place, float32 squares (" + runs_note(shown) + ")")
    ax.legend(fontsize=8, loc="lower left")
    save(fig, path, shown)


# -- batched throughput by matrix size ----------------------------------------------------------

def batch_problems(data):
    """(rows, cols, batch) of step 09's batched problems, smallest matrix first."""
    found = {(r.rows, r.cols, r.batch) for r in data.bench
             if r.step == "step09" and r.type == "f32" and r.batch > 1}
    return sorted(found, key=lambda p: (p[0] * p[1], p))


def batched_drawn(data):
    return [r for r in data.bench if r.step == "step09" and r.type == "f32" and r.batch > 1]


def family(kid):
    """The BATCHED entry of a kernel id, or None."""
    return next((i for i, (k, _) in enumerate(BATCHED) if k == kid), None)


def kilobytes(n):
    return f"{n / 1e3:.3g} kB" if n < 1e6 else f"{n / 1e6:.3g} MB"


def slot_count(data, problem):
    rows, cols, batch = problem
    here = select(data.bench, step="step09", shape=(rows, cols), type_="f32", batch=batch)
    kernels = [r for r in here if not r.is_reference and family(r.id) is not None]
    return len(kernels) + (1 if any(r.is_cublas for r in here) else 0)


def draw_batched(data, path):
    problems = batch_problems(data)
    fig, ax = subplots(figsize=(11, 5.8))
    shown, labelled = [], set()
    top = max([r.gbps for r in data.bench if r.step == "step09" and r.batch > 1 and r.ran] + [1])
    # One slot per kernel of a problem and one for cuBLAS, as wide as the fullest group allows.
    width = 0.8 / max([slot_count(data, p) for p in problems] + [1])
    for x, (rows, cols, batch) in enumerate(problems):
        here = select(data.bench, step="step09", shape=(rows, cols), type_="f32", batch=batch)
        copy = best([r for r in here if r.is_copy])
        if copy:
            ax.hlines(copy.gbps, x - 0.45, x + 0.45, color="black", linestyle="--", linewidth=1.2,
                      label=None if "copy" in labelled else "copy ceiling of the same run")
            labelled.add("copy")
            shown.append(copy)
        bars = sorted((r for r in here if not r.is_reference and family(r.id) is not None),
                      key=lambda r: family(r.id))
        cublas = best([r for r in here if r.is_cublas])
        slots = len(bars) + (1 if cublas else 0)
        for k, r in enumerate(bars + ([cublas] if cublas else [])):
            at = x + (k - (slots - 1) / 2) * width
            if r.is_geam:
                color, label = "0.55", "cuBLAS geam, one call per matrix"
            elif r.is_cublas:
                color, label = "0.3", "cuBLASLt transform, one strided-batch call"
            else:
                color, label = BATCHED[family(r.id)][1], r.kernel
            if not r.ran:
                ax.annotate("refused", (at, 0), textcoords="offset points", xytext=(0, 3),
                            rotation=90, ha="center", va="bottom", fontsize=7, color="0.4")
                continue
            ax.bar(at, r.gbps, width * 0.95, color=color, yerr=error_bars([r]), capsize=2,
                   label=None if label in labelled else label)
            labelled.add(label)
            pct = f"{r.pct_copy:.0f}%" if r.pct_copy >= 10 else f"{r.pct_copy:.1f}%"
            inside = r.gbps > 0.25 * top  # inside a tall bar, clear of the copy line
            ax.annotate(pct, (at, r.gbps), textcoords="offset points",
                        xytext=(0, -3 if inside else 2), ha="center",
                        va="top" if inside else "bottom", fontsize=7,
                        color="white" if inside else "black")
            shown.append(r)
    names = [f"{r}x{c} ({kilobytes(r * c * 4)} each)\nbatch {b}" for r, c, b in problems]
    ax.set_xticks(range(len(problems)), names, fontsize=8)
    ax.grid(axis="x", visible=False)
    ax.set_ylim(0, top * 1.35)
    ax.set_xlabel("matrices per launch (float32), smallest matrix first; labels: % of copy")
    ax.set_ylabel("bandwidth, GB/s (2 x bytes of the batch / median time)")
    ax.set_title("Many matrices in one launch (" + runs_note(shown) + ")")
    ax.legend(fontsize=8, loc="upper left", ncol=3)
    save(fig, path, shown)


# -- rectangles in place -------------------------------------------------------------------------

# What RECTANGLES.md predicted before any run, in % of copy, for the lesson's float32 passes:
# The lesson's rectangle (RECTANGLES.md, COPRIME.md) by route: (passes, predicted low and high %
# of the copy, written before any run in lab/THREE_PASS.md, colour).
ROUTES = {"blocks": (2, (38, 46), "tab:olive"), "gcd1": (3, (22, 28), "tab:purple")}
# The kinds of pass, by the kernel name at the end of a profiled pass's name, with a colour each.
PASS_KINDS = [("transpose_inplace_pairs", "tab:olive"), ("shuffle_rows_gcd1", "tab:blue"),
              ("reflect_columns_gcd1", "tab:red"), ("permute_pieces", "tab:green")]
TIME = "gpu__time_duration.sum"


def rect_data(data):
    """The data of the device that measured the lesson's rectangle (the reference device when it
    did)."""
    return data.where("step09", kid="rect")


def rect_rows(data):
    """The rectangle kernel of step 09, one row per (shape, type), float32 first, then by size."""
    rows = [r for r in data.bench if r.step == "step09" and r.batch == 1 and r.rows != r.cols
            and r.id == "rect" and r.ran]
    return sorted(rows, key=lambda r: (r.type != "f32", r.type, r.rows * r.cols, r.shape))


def route(rows, cols):
    """The route the lesson takes (rect_routes.cuh's choose_route for the course's shapes):
    blocks where gcd >= 32 and one side at most twice it, gcd1 where gcd = 1, else general."""
    c = gcd(rows, cols)
    if c >= 32 and min(rows, cols) // c <= 2:
        return "blocks"
    return "gcd1" if c == 1 else "general"


def baseline(data, r):
    """The lab's row of the general passes (the course's first rectangle) for r's problem."""
    return best(select(data.bench, step="step09-lab", id="rect-general", shape=(r.rows, r.cols),
                       type_=r.type))


def pass_rows(data):
    """profile.csv's times of the rectangle's passes (ids rect-pass1, rect-pass2, ...)."""
    return [p for p in data.profile if p.get("step") == "step09" and p.get("metric") == TIME
            and re.fullmatch(r"rect-pass\d+", p.get("id", ""))]


def pass_times(data):
    """{(type, rows, cols): [(pass number, kind, microseconds)]} of the profiled passes of one
    in-place rectangle; the kind is the kernel's name after the colon ("...: permute_pieces")."""
    found = {}
    for p in pass_rows(data):
        try:
            us = float(p["value"]) * metric_column(TIME, p.get("unit"))[1]
            key = (p["type"], int(p["rows"]), int(p["cols"]))
        except (KeyError, ValueError):
            continue
        kind = p["kernel"].rsplit(": ", 1)[-1]
        found.setdefault(key, []).append((int(p["id"][len("rect-pass"):]), kind, us))
    return {k: sorted(v) for k, v in found.items()}


def draw_shapes_panel(ax, data, rows):
    xs = list(range(len(rows)))
    shown = []
    for x, r in zip(xs, rows):
        n, (low, high), color = ROUTES.get(route(r.rows, r.cols), (4, (0, 0), "0.5"))
        ax.hlines(100 / n, x - 0.4, x + 0.4, color="black", linewidth=1.2, linestyle=":",
                  label="copy speed / passes (the bound)" if x == 0 else None)
        if high:
            ax.bar(x, high - low, 0.8, bottom=low, color="0.85", edgecolor="0.6", hatch="//",
                   linewidth=0.5, label=None if x else "predicted before any run")
        ax.bar(x - 0.13, r.pct_copy, 0.5, color=color, yerr=error_bars([r], "pct_copy"),
               capsize=2)
        ax.annotate(f"{r.pct_copy:.1f}%", (x - 0.13, top_pct(r)), textcoords="offset points",
                    xytext=(0, 2), ha="center", va="bottom", fontsize=8)
        base = baseline(data, r)
        if base:
            ax.bar(x + 0.27, base.pct_copy, 0.25, color="0.45",
                   label="the general passes (the lab's baseline)" if not shown else None)
            shown.append(base)
    ax.set_xticks(xs, [f"{r.rows}x{r.cols}\n{r.type}, {ROUTES.get(route(r.rows, r.cols), (4,))[0]}"
                       " passes" for r in rows], fontsize=7)
    ax.set_ylim(0, max([r.pct_copy * 1.15 for r in rows] + [55]))
    ax.set_ylabel("% of the copy ceiling of the same run")
    ax.set_xlabel("shape (olive: c x c squares then pieces, gcd >= 32; purple: gcd 1)")
    ax.set_title("Measured by shape (" + runs_note(rows) + ")", fontsize=10)
    ax.legend(fontsize=7, loc="upper right")
    return shown


def draw_passes_panel(ax, data, times):
    """One horizontal bar per profiled shape, its passes stacked in order, and under it the time
    of as many copies of the same bytes (the bound)."""
    shown, ticks, labels, y = [], [], [], 0
    labelled = set()
    for (type_, rows, cols), parts in sorted(times.items(), key=lambda kv: kv[0][1:]):
        copy = best([r for r in select(data.bench, step="step09", shape=(rows, cols),
                                       type_=type_) if r.is_copy])
        left = 0.0
        for number, kind, us in parts:
            color = dict(PASS_KINDS).get(kind, "0.5")
            ax.barh(y, us, 0.6, left=left, color=color, edgecolor="white",
                    label=None if kind in labelled else kind)
            labelled.add(kind)
            ax.annotate(str(number), (left + us / 2, y), ha="center", va="center", fontsize=7,
                        color="white")
            left += us
        ticks.append(y)
        labels.append(f"{rows}x{cols} {type_}\npasses, one transpose")
        if copy:
            ax.barh(y - 0.7, copy.median_ms * 1e3 * len(parts), 0.6, color="0.55",
                    label=None if "copy" in labelled else "the same passes at copy speed")
            labelled.add("copy")
            ticks.append(y - 0.7)
            labels.append(f"{len(parts)} copies\n(the copy of make bench)")
            shown.append(copy)
        y -= 2
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("microseconds (Nsight Compute, one profiled transpose)")
    ax.set_title("Where the time goes, pass by pass", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    return shown


def rectangles_drawn(data):
    data = rect_data(data)
    rows = rect_rows(data)
    bases = [b for b in (baseline(data, r) for r in rows) if b]
    copies = [r for p in pass_rows(data)
              for r in select(data.bench, step="step09", shape=(int(p["rows"]), int(p["cols"])),
                              type_=p["type"]) if r.is_copy]
    return rows + bases + pass_rows(data) + copies if rows else []


def draw_rectangles(data, path):
    data = rect_data(data)
    rows = rect_rows(data)
    times = pass_times(data)
    if times:
        fig, (left, right) = subplots(1, 2, figsize=(13, 5.4),
                                      gridspec_kw={"width_ratios": [3, 2]})
    else:
        fig, left = subplots(figsize=(10, 5.4))
    shown = list(rows) + draw_shapes_panel(left, data, rows)
    shown += draw_passes_panel(right, data, times) if times else []
    fig.suptitle("A rectangle in place: by shape, and pass by pass")
    save(fig, path, shown)


def figures(data):
    return [
        ("step09_inplace", "In place against out of place: step 09's tile pairs, step 08 and "
         "cuBLAS by matrix size, in % of the copy ceiling",
         inplace_drawn(data) if inplace_rows(data) else [],
         lambda path: draw_inplace(data, path)),
        ("step09_batched", "Batched transposes: GB/s of each kernel by matrix size, against the "
         "copy ceiling of the same run",
         batched_drawn(data), lambda path: draw_batched(data, path)),
        ("step09_rectangles", "A rectangle in place: % of the copy ceiling of step 09's routes "
         "by shape, against the prediction, the bound of one copy per pass and the general "
         "passes; the time of each pass against a copy",
         rectangles_drawn(data), lambda path: draw_rectangles(data, path)),
    ]
