"""Step 07's figures.

littles_law    bandwidth against the loads each SM can have in flight, for the kernels of steps
               05, 06 and 07 (and the lab's plain-order rows), with Little's law drawn as a curve:
               bandwidth = 2 x loads in flight per SM x SMs / latency (the loads carry half the
               bytes a transpose moves), for the idle DRAM latency that step07-latency measured
               (plots/data/latency.csv), and for twice and four times that latency.
dram_latency   step07-latency's table: the time of one load against the footprint of the chain,
               for the two walks (random lines within each page; random lines anywhere).

Loads in flight per SM = bytes each thread loads before its first store x threads resident on an
SM. The bytes per thread come from the kernel's name (its template parameters); the resident
threads from the achieved occupancy of plots/data/profile.csv where the kernel was profiled,
else from its theoretical occupancy (threads per block, the 32-blocks-per-SM limit, and the
register counts the compiler reports, below). It is an upper bound: a warp that has passed its
barrier has no load in flight.
"""

import re
import statistics

from plotting import error_bars, save, step_color, subplots
from rows import best, select

SHAPES = [(32768, 32768), (16384, 16384), (8192, 8192)]  # the first one measured is drawn
SMS_IF_UNMEASURED = 132  # an H100 SXM, when latency.csv does not say
LATENCY_RANGE_NS = [500, 1000, 2000]  # drawn when latency.csv has no DRAM row
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
THREADS_PER_SM = 2048

# Where registers, not threads or blocks, limit the blocks per SM (`nvcc -Xptxas -v`, sm_90):
# step 05's 32x4 block uses 36 registers (12 blocks of 128 threads), step 07's 128-thread
# kernels 56 (its launch bounds ask for 9 blocks).
REGISTER_LIMITED = {("step05", 128): 12 * 128, ("step07", 128): 9 * 128,
                    ("step07-lab", 128): 9 * 128}

IN_PAGE = "random lines within each page"


TILE64_BYTES = 64 * 64 * 4  # step 07's tile: each of its threads loads a share of it


def in_flight(step, kid):
    """(bytes of loads a thread has in flight, threads per block) from a kernel's id, or None
    for a kernel this figure does not place."""
    if step == "step05":
        m = re.fullmatch(r"block-32x(\d+)", kid)  # 32 x BLOCK_ROWS threads
        if m:
            block_rows = int(m.group(1))
            return 32 // block_rows * 4, 32 * block_rows
    if step == "step06":
        m = re.fullmatch(r"(float\d?)-(\d+)rows?(-padded)?", kid)  # vector, rows per thread
        if m:
            vec = int(m.group(1)[5:] or 1)
            rpt = int(m.group(2))
            return vec * rpt * 4, (32 // vec) * (32 // rpt)
    m = re.fullmatch(r"(\d+)-threads" if step == "step07" else r"(\d+)-plain", kid)
    if step in ("step07", "step07-lab") and m:  # the lab: the swizzled tile in plain order
        threads = int(m.group(1))
        return TILE64_BYTES // threads, threads
    return None


def theoretical_threads(step, threads):
    blocks = min(32, THREADS_PER_SM // threads)
    return REGISTER_LIMITED.get((step, threads), blocks * threads)


def occupancy_rows(data):
    return [p for p in data.profile if p.get("metric") == OCCUPANCY]


def achieved_threads(data):
    """{(step, id): resident threads per SM} from the achieved occupancy in profile.csv."""
    found = {}
    for p in occupancy_rows(data):
        try:
            found[(p["step"], p["id"])] = float(p["value"]) / 100 * THREADS_PER_SM
        except (KeyError, ValueError):
            continue
    return found


def points(data, shape):
    """[(row, loads in flight per SM in bytes, achieved: bool)] at one shape."""
    achieved = achieved_threads(data)
    found = []
    for r in select(data.bench, shape=shape, type_="f32"):
        if r.is_reference or not r.ran:
            continue
        spec = in_flight(r.step, r.id)
        if not spec:
            continue
        per_thread, threads = spec
        resident = achieved.get((r.step, r.id))
        found.append((r, per_thread * (resident or theoretical_threads(r.step, threads)),
                      resident is not None))
    return found


def chosen_shape(data):
    lesson = [s for s in SHAPES if any(r.step == "step07" for r, _, _ in points(data, s))]
    some = [s for s in SHAPES if points(data, s)]
    return (lesson or some or [None])[0]


def latency_rows(data):
    """latency.csv's rows, numbers parsed; the runs of one (device, pattern, footprint) are
    reduced to their median."""
    runs = {}
    for f in data.latency:
        try:
            key = (f["device"], f["pattern"], int(f["footprint_bytes"]))
            runs.setdefault(key, []).append((float(f["ns_per_load"]), float(f["cycles_per_load"]),
                                             int(f["sms"]), int(f["l2_bytes"]), f))
        except (KeyError, ValueError):
            continue
    rows = []
    for (device, pattern, footprint), got in sorted(runs.items()):
        ns = [g[0] for g in got]
        rows.append({"device": device, "pattern": pattern, "footprint": footprint,
                     "ns": statistics.median(ns), "lo": min(ns), "hi": max(ns),
                     "cycles": statistics.median(g[1] for g in got), "sms": got[-1][2],
                     "l2": got[-1][3], "runs": len(got), "fields": got[-1][4]})
    return rows


def dram_latency(data):
    """The latency Little's law uses: the in-page walk over the largest footprint, at least
    four times the L2 (every load misses the caches, few miss the TLBs). None if not measured."""
    rows = [r for r in latency_rows(data)
            if r["pattern"] == IN_PAGE and r["footprint"] >= 4 * r["l2"]]
    return max(rows, key=lambda r: r["footprint"]) if rows else None


def latency_note(rows):
    setups = sorted({f"{r['fields']['device']}, driver {r['fields']['driver']}, "
                     f"{r['fields']['date']}" for r in rows})
    return f"Latency: step07-latency on {'; '.join(setups)}."


def littles_law_rows(data):
    """What the figure is drawn from: the bench rows at its shape, the occupancies, the
    latencies."""
    shape = chosen_shape(data)
    if shape is None:
        return []
    return (select(data.bench, shape=shape, type_="f32") + occupancy_rows(data)
            + list(data.latency))


def draw_littles_law(data, path):
    import matplotlib
    shape = chosen_shape(data)
    found = points(data, shape)
    fig, ax = subplots(figsize=(10, 6))
    dram = dram_latency(data)
    sms = dram["sms"] if dram else SMS_IF_UNMEASURED
    xs = [2 ** (i / 8) * 1024 for i in range(0, 8 * 9 + 1)]  # 1 KB .. 512 KB
    if dram:
        curves = [(dram["ns"], "-", f"idle latency, measured: {dram['ns']:.0f} ns"),
                  (2 * dram["ns"], "--", "twice the idle latency"),
                  (4 * dram["ns"], ":", "four times the idle latency")]
    else:
        curves = [(ns, style, f"latency {ns} ns (assumed)")
                  for ns, style in zip(LATENCY_RANGE_NS, ["-", "--", ":"])]
    shown = []
    copy = best([r for r in select(data.bench, shape=shape, type_="f32") if r.is_copy])
    for ns, style, label in curves:
        # Past the copy ceiling more bytes in flight only wait longer in the memory's queues.
        curve = [(x / 1024, 2 * x * sms / ns) for x in xs]
        curve = [(x, y) for x, y in curve if not copy or y <= copy.gbps * 1.02]
        ax.plot([x for x, _ in curve], [y for _, y in curve], color="0.3", linestyle=style,
                linewidth=1.2, label=f"Little's law, {label}")
    if copy:
        ax.axhline(copy.gbps, color="black", linewidth=1.5, label="copy ceiling")
        shown.append(copy)
    styles = {"step05": "o", "step06": "s", "step07": "D", "step07-lab": "d"}
    labels = {"step05": "step 05 (one float per access)", "step06": "step 06 (vector accesses)",
              "step07": "step 07 (64 x 64, down the columns)",
              "step07-lab": "step 07's lab: plain order"}
    for step in styles:
        mine = [(r, x, a) for r, x, a in found if r.step == step]
        if not mine:
            continue
        color = step_color(step)
        ax.errorbar([x / 1024 for _, x, _ in mine], [r.gbps for r, _, _ in mine],
                    yerr=error_bars([r for r, _, _ in mine]), fmt=styles[step], capsize=2,
                    color=color, markerfacecolor="white" if step == "step07-lab" else color,
                    label=labels[step])
        for r, x, _ in mine:
            if step == "step07":  # "512 threads x 2 float4" -> "512 threads"
                ax.annotate(r.kernel.split(" x ")[0], (x / 1024, r.gbps),
                            textcoords="offset points", xytext=(4, 5), fontsize=7, color=color)
            elif copy and r.gbps < 0.9 * copy.gbps:
                ax.annotate(r.kernel, (x / 1024, r.gbps), textcoords="offset points",
                            xytext=(5, -3), fontsize=6.5, color=color)
        shown += [r for r, _, _ in mine]
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlim(1, 512)
    top = max([r.gbps for r in shown] or [1])
    ax.set_ylim(0, top * 1.15)
    ax.set_xlabel("loads in flight per SM, KB (bytes each thread loads before it stores x "
                  "resident threads; an upper bound)")
    ax.set_ylabel("bandwidth, GB/s")
    ax.set_title(f"Little's law: bytes in flight against bandwidth, {shape[0]} x {shape[1]} "
                 f"float32, {sms} SMs")
    ax.legend(fontsize=7.5, loc="lower right")
    if dram:
        fig.text(0.01, 0.005, latency_note([dram]), ha="left", va="bottom", fontsize=7,
                 color="0.35")
    save(fig, path, shown)


def draw_dram_latency(data, path):
    rows = latency_rows(data)
    fig, ax = subplots(figsize=(8.5, 5))
    for pattern, marker in [(IN_PAGE, "o"), ("random lines", "s")]:
        mine = sorted((r for r in rows if r["pattern"] == pattern), key=lambda r: r["footprint"])
        if mine:
            ax.errorbar([r["footprint"] / 2**20 for r in mine], [r["ns"] for r in mine],
                        yerr=[[r["ns"] - r["lo"] for r in mine], [r["hi"] - r["ns"] for r in mine]],
                        marker=marker, capsize=3, label=pattern)
            for r in mine:
                ax.annotate(f"{r['ns']:.0f}", (r["footprint"] / 2**20, r["ns"]),
                            textcoords="offset points", xytext=(4, 4), fontsize=7)
    l2 = rows[0]["l2"] if rows else 0
    if l2:
        ax.axvline(l2 / 2**20, color="0.5", linestyle="--", linewidth=1, label="L2 size")
    import matplotlib
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("footprint of the chain, MiB")
    ax.set_ylabel("time per dependent load, ns")
    ax.set_ylim(0, max(r["hi"] for r in rows) * 1.15)
    ax.set_title("One load at a time: the latency of L2 and of DRAM (step07-latency)")
    ax.legend(fontsize=8, loc="upper left")
    fig.text(0.99, 0.005, latency_note(rows), ha="right", va="bottom", fontsize=7, color="0.35")
    save(fig, path, [])


def littles_law_caption(data):
    shape = chosen_shape(data)
    dram = dram_latency(data)
    where = f"{shape[0]} x {shape[1]} float32" if shape else "float32"
    latency = (f"the idle DRAM latency that step07-latency measured, {dram['ns']:.0f} ns, "
               "and twice and four times it" if dram else
               f"latencies of {', '.join(str(n) for n in LATENCY_RANGE_NS)} ns (not yet measured)")
    return (f"Bandwidth against loads in flight per SM (achieved occupancy from Nsight Compute "
            f"where profiled, else theoretical), steps 05-07 at {where}; curves: Little's law, "
            f"2 x loads in flight x SMs / latency, for {latency}")


def figures(data):
    return [
        ("littles_law", littles_law_caption(data), littles_law_rows(data),
         lambda path: draw_littles_law(data, path)),
        ("dram_latency", "The latency of one load against the chain's footprint (step07-latency)",
         list(data.latency), lambda path: draw_dram_latency(data, path)),
    ]
