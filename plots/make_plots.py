#!/usr/bin/env python3
"""Redraws every figure and every measured table and number of the course from plots/data/.

    python3 plots/make_plots.py           figures into plots/figures/, tables and numbers into
                                          the Markdown
    python3 plots/make_plots.py --check   change nothing; exit 1, saying file:line and why, if a
                                          table or number is stale, a marker does not resolve,
                                          prose types a measured number, or a figure is unlinked

Inputs, each optional (a missing one gives "no measurements yet", never an error):
  plots/data/bench.csv     `make bench`: one row per kernel per run, the columns of
                           common/report.hpp (step,kernel,block,tile,type,rows,cols,batch,...).
                           The rows of one (step, kernel, block, tile, type, rows, cols, batch)
                           are the runs of one measurement; they are read as one row: the median
                           over the runs of median_ms, gbps, pct_copy and pct_peak, the minimum
                           of min_ms, .spread (max - min of pct_copy over the runs, 0 for one
                           run), .runs (how many), and verified FAILED if any run failed, yes if
                           any run verified, else what the runs say (skipped, refused, -).
  plots/data/profile.csv   `make profile STEP=NN`: one row per Nsight Compute metric
  plots/data/bankmap.csv   `./bankmap --csv`: the bank of every element of a plain, a padded and
                           a swizzled tile
  plots/data/patterns.csv  `./step08_patterns --csv`: step 08's read and write patterns, timed
                           apart against linear streams

Outputs:
  plots/figures/*.png      the figures listed in figure_catalog(), with those of
                           plots/lessons/stepNN.py (see plots/lessons/README.md)
  README.md, steps/*/*.md (lessons), steps/*/lab/*.md (lab notebooks) and the exercises'
  Markdown: the text between markers.

Block markers, each on a line of its own, closed by the same name with a slash:

    <!-- bench-table steps=step04,step05 shapes=8192x8192,32768x32768 type=f32 [kernels=text] [batch=N] -->
    <!-- /bench-table -->
    <!-- profile-table steps=step02,step03 [kernels=text] [shapes=...] [type=...] -->
    <!-- /profile-table -->
    <!-- figure name=progression -->
    <!-- /figure -->
    <!-- results-table -->
    <!-- /results-table -->
    <!-- pattern-table type=f64 shapes=16384x16384 -->
    <!-- /pattern-table -->

Inline number markers, anywhere in a line, opened and closed on the same line (several per line
are fine); the text between them is the value, rewritten from the data:

    <!-- num step=step07 kernel="down the columns" shape=8192x8192 -->95.6<!-- /num -->%
    <!-- num diff step=step06 kernel=float4 shape=8192x8192 vs.step=step05 vs.kernel=32x4 -->0.9<!-- /num -->
    <!-- num ratio step=step05 kernel=32x4 shape=8192x8192 vs.step=step02 vs.kernel=tiled -->2.8<!-- /num -->
    <!-- num profile step=step03 kernel=padded shape=8192x8192 metric="smem st conflicts" -->0<!-- /num -->

  step=    the binary: step05, step07-lab, pytorch, bench_ex01_solution (05 means step05)
  kernel=  a piece of the kernel's name that picks exactly one kernel of that step on that
           problem (its whole name always does); quote it when it has spaces. Two words are
           kept: kernel=best (the step's fastest kernel, copies and cuBLAS aside) and
           kernel=ceiling (the faster of the step's two copies)
  shape=   ROWSxCOLS (required); type= (default f32); batch= (default 1)
  col=     pct_copy (default), gbps, median_ms, min_ms, pct_peak, spread, runs
  diff, ratio: the first selection minus, or divided by, a second one given by vs.-prefixed
           attributes (vs.step=, vs.kernel=, vs.shape=, vs.type=, vs.batch=); what vs. does not
           give is the first selection's; col= applies to both
  profile: a value of profile.csv; metric= is Nsight Compute's name or the profile table's
           column header ("DRAM read MB"); no col=
  latency: the nanoseconds of one load in plots/data/latency.csv (step07-latency), the median
           of the runs: <!-- num latency pattern="within each page" footprint=1073741824 -->
           (pattern= a piece of the pattern's name that picks one; footprint= in bytes)

  Formats: pct_copy, pct_peak and spread 1 decimal; gbps 0 decimals; median_ms and min_ms 3
  significant digits; runs an integer; diff 1 decimal; ratio 2 significant digits (2.5, 10);
  profile values as the profile tables print them; latency 0 decimals. A selection that matches no kernel or
  several, an unknown attribute, a value that is not the data's (under --check) are errors,
  reported as file:line.

Markers inside ``` fences and inside `inline code` are examples and are left alone.

Checks on the Markdown (both modes; --check changes nothing):
  - prose lint: outside generated blocks, num markers, HTML comments, fences and inline code, a
    number with a decimal point followed by % (95.6%) or any number followed by GB/s
    (2800 GB/s) is an error: a measured number goes through a num marker;
  - every PNG in plots/figures is linked from some Markdown page of the repository, or it is an
    error (link it with a figure marker, or delete it).

Only the standard library, and matplotlib (Agg backend) for the figures. Sizes are in
GB = 1e9 bytes, as in the step binaries' own tables.
"""

import argparse
import copy
import csv
import difflib
import math
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The headline shapes: the README and the progression figure compare every step at these.
HEADLINE_SHAPES = [(8192, 8192), (32768, 32768)]

# The idea of each step in a few words, for the README's results table.
STEP_IDEAS = {
    "01": "one thread per element: one side of the copy is strided",
    "02": "a shared-memory tile: both sides coalesced",
    "03": "one column of padding: no bank conflicts",
    "04": "an XOR swizzle: no conflicts, no wasted memory",
    "05": "several elements per thread",
    "06": "vector loads and stores",
    "07": "64 x 64 tiles, enough bytes in flight, the tiles walked down the columns",
    "08": "any shape, any element type",
    "09": "in place, and many small matrices at once",
}

# Step 01 is shown twice in the README's table and the progression figure: the classic naive
# kernel of every tutorial (32 x 32 threads, reads coalesced), and the best block shape of the
# same kernel, the step's fastest row.
CLASSIC_NAIVE = ("step01", "naive, coalesced read 32x32")

NO_BENCH = "_No measurements yet: run `make bench` on a GPU, then `make plots`._"
NO_PROFILE = ("_No profiler counters yet: run `make profile STEP=NN` on a GPU, "
              "then `make plots`._")
NO_BANKMAP = ("_No bank map yet: write plots/data/bankmap.csv with `./bankmap --csv` "
              "(see plots/data/README.md), then run `make plots`._")


# --------------------------------------------------------------------------------------------
# Reading the data
# --------------------------------------------------------------------------------------------

class Row:
    """One row of bench.csv, with its numbers parsed; after load_bench, the aggregate of the runs
    of one measurement (see aggregate())."""

    NUMBERS = ("median_ms", "min_ms", "gbps", "pct_copy", "pct_peak")
    INTEGERS = ("rows", "cols", "batch")

    def __init__(self, fields):
        self.__dict__.update(fields)
        for name in self.INTEGERS:
            setattr(self, name, int(fields[name]))
        for name in self.NUMBERS:
            setattr(self, name, float(fields[name] or 0))
        self.spread, self.runs = 0.0, 1
        self.gbps_lo = self.gbps_hi = self.gbps
        self.members = [self]

    @property
    def key(self):
        """What identifies one measurement; the rows with the same key are its runs."""
        return (self.step, self.kernel, self.block, self.tile, self.type, self.rows, self.cols,
                self.batch)

    @property
    def shape(self):
        return (self.rows, self.cols)

    @property
    def is_copy(self):
        return self.kernel.startswith("copy:")

    @property
    def is_cublas(self):
        return self.kernel.lower().startswith("cublas")

    @property
    def is_reference(self):
        return self.is_copy or self.is_cublas

    @property
    def ran(self):
        """Measured and not wrong: refused shapes and failed verifications have no speed."""
        return self.verified not in ("refused", "FAILED") and self.gbps > 0


def read_csv(path):
    """The rows of a CSV file as dicts; [] when the file does not exist."""
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def aggregate(runs):
    """One Row for the runs of one measurement: medians over the runs, the fastest min_ms, the
    spread of pct_copy, the count, and one verdict (FAILED if any run failed, yes if any
    verified, else the runs' own word: skipped, refused or -)."""
    if len(runs) == 1:
        return runs[0]
    row = copy.copy(runs[-1])  # the text fields (device, date, ...) of the latest run
    for name in ("median_ms", "gbps", "pct_copy", "pct_peak"):
        setattr(row, name, median(getattr(r, name) for r in runs))
    row.min_ms = min(r.min_ms for r in runs)
    row.spread = max(r.pct_copy for r in runs) - min(r.pct_copy for r in runs)
    row.runs = len(runs)
    row.gbps_lo, row.gbps_hi = min(r.gbps for r in runs), max(r.gbps for r in runs)
    verdicts = [r.verified for r in runs]
    if "FAILED" in verdicts:
        row.verified = "FAILED"
    elif "yes" in verdicts:
        row.verified = "yes"
    elif len(set(verdicts)) == 1:
        row.verified = verdicts[0]
    else:
        row.verified = "skipped"
    row.members = list(runs)
    return row


def load_bench(path):
    """bench.csv as Rows, one per measurement: the runs of the same (step, kernel, block, tile,
    type, rows, cols, batch) aggregated, in the order each first appears."""
    runs = {}
    for i, fields in enumerate(read_csv(path), start=2):
        if fields.get("step") in (None, "", "step"):  # a repeated header from a concatenation
            continue
        try:
            row = Row(fields)
        except (KeyError, TypeError, ValueError) as e:
            print(f"{path}:{i}: skipped a malformed row ({e})", file=sys.stderr)
            continue
        runs.setdefault(row.key, []).append(row)
    return [aggregate(r) for r in runs.values()]


def best(rows):
    """The fastest row that ran, or None."""
    ran = [r for r in rows if r.ran]
    return max(ran, key=lambda r: r.gbps) if ran else None


def select(rows, step=None, shape=None, type_=None, batch=1):
    """Rows of one problem (and one step, when given)."""
    return [r for r in rows
            if (step is None or r.step == step) and (shape is None or r.shape == shape)
            and (type_ is None or r.type == type_) and (batch is None or r.batch == batch)]


def step_number(step):
    """"step05" -> "05"; "pytorch" -> None."""
    m = re.fullmatch(r"step(\d\d)", step)
    return m.group(1) if m else None


def profile_step(step):
    """What `make profile STEP=` takes: "step05" -> "05", "step07-lab" -> "07-lab"; else None."""
    m = re.fullmatch(r"step(\d\d(-lab)?)", step)
    return m.group(1) if m else None


def normalize_step(name):
    """Accepts "step05", "05" or "5" in a marker; other names ("pytorch") pass unchanged."""
    return f"step{int(name):02d}" if name.isdigit() else name


def measured_on(rows):
    """"Measured on <device>, driver <d>, CUDA <c>, <date>": one clause per device setup."""
    setups = {}
    for r in (m for row in rows for m in getattr(row, "members", [row])):
        setups.setdefault((r.device, r.driver, r.cuda), set()).add(r.date)
    clauses = []
    for (device, driver, cuda), dates in sorted(setups.items()):
        clause = f"{device}, driver {driver}"
        if cuda:
            clause += f", CUDA {cuda}"
        clauses.append(clause + ", " + " and ".join(sorted(dates)))
    return "; ".join(clauses)


# --------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------

def fmt_shape(shape, batch=1, type_=None):
    text = f"{shape[0]}x{shape[1]}"
    if batch != 1:
        text += f", batch {batch}"
    if type_:
        text += f" {type_}"
    return text


def fmt_ms(ms):
    """About three significant digits, without scientific notation."""
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3g}" if ms >= 0.001 else f"{ms:.4f}"


def fmt_value(v):
    if v == int(v) or abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def cell(text):
    """Escapes what would break a Markdown table cell or read as an HTML tag."""
    return (str(text).replace("\\", "\\\\").replace("|", "\\|")
            .replace("<", "&lt;").replace(">", "&gt;"))


# Left-aligned columns; numbers are right-aligned.
TEXT_COLUMNS = ("step", "kernel", "shape", "idea", "pattern")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(":---" if i == 0 or h in TEXT_COLUMNS else "---:"
                            for i, h in enumerate(header)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


# --------------------------------------------------------------------------------------------
# Marker blocks: each renderer returns the lines that go between the opening and closing marker
# --------------------------------------------------------------------------------------------

class MarkerError(Exception):
    """A marker the script cannot render (an unknown attribute, a malformed value)."""


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        m = re.fullmatch(r"(\d+)(?:x(\d+))?", item.strip())
        if not m:
            raise MarkerError(f"shapes: '{item}' is not ROWSxCOLS")
        shapes.append((int(m.group(1)), int(m.group(2) or m.group(1))))
    return shapes


def check_attrs(kind, attrs, allowed, required=()):
    for name in attrs:
        if name not in allowed:
            raise MarkerError(f"{kind}: unknown attribute '{name}' (allowed: {', '.join(allowed)})")
    for name in required:
        if name not in attrs:
            raise MarkerError(f"{kind}: attribute '{name}' is required")


def bench_row_cells(r, with_step, with_spread=False):
    """kernel | shape | median ms | GB/s | % of copy | (spread |) % of peak (| step first when
    asked)."""
    name = r.kernel
    if r.verified == "FAILED":
        name += " (wrong result)"
    elif r.verified == "skipped":
        name += " (not verified)"
    name = cell(name)
    if r.is_reference:
        name = f"*{name}*"
    shape = fmt_shape(r.shape, r.batch)
    if r.verified == "refused":
        numbers = ["refused", "-", "-"] + (["-"] if with_spread else []) + ["-"]
    else:
        numbers = [fmt_ms(r.median_ms), f"{r.gbps:.0f}", f"{r.pct_copy:.1f}"]
        if with_spread:
            numbers.append(fmt_spread(r))
        numbers.append(f"{r.pct_peak:.1f}")
    first = [("" if r.is_reference else r.step)] if with_step else []
    return first + [name, shape] + numbers


def fmt_spread(r):
    """A row's spread in points of % of copy; '-' for a single run."""
    return f"{r.spread:.1f}" if r.runs > 1 else "-"


def runs_note(rows):
    """The sentence that says over how many runs the numbers are medians, '' for single runs."""
    counts = sorted({r.runs for r in rows})
    if not counts or counts == [1]:
        return ""
    many = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    return (f"Each row is the median of {many} separate runs (each the median of its "
            "repetitions); spread: the largest minus the smallest % of copy over those runs, in "
            "points. Two kernels closer than their spreads are level.")


def render_bench_table(attrs, data, md_path):
    check_attrs("bench-table", attrs, ("steps", "shapes", "type", "kernels", "batch"),
                required=("steps", "shapes"))
    steps = [normalize_step(s) for s in attrs["steps"].split(",")]
    shapes = parse_shapes(attrs["shapes"])
    types = attrs.get("type", "f32").split(",")
    try:
        batch = int(attrs.get("batch", "1"))
    except ValueError:
        raise MarkerError(f"batch: '{attrs['batch']}' is not a whole number")
    only = attrs.get("kernels", "")
    with_step = len(steps) > 1

    picked = []
    for type_ in types:
        for shape in shapes:
            here = select(data, shape=shape, type_=type_, batch=batch)
            per_step = [[r for r in here if r.step == s] for s in steps]
            # The copy ceiling of the first listed step that ran here: the rows below it are
            # percentages of that same kind of run.
            ran_steps = [rows for rows in per_step if rows]
            refs = []
            if ran_steps:
                copy_row = best([r for r in ran_steps[0] if r.is_copy])
                refs += [copy_row] if copy_row else []
            cublas = next((c for c in (best([r for r in rows if r.is_cublas]) for rows in per_step)
                           if c), None)
            refs += [cublas] if cublas else []
            kernels = [r for rows in per_step for r in rows
                       if not r.is_reference and only in r.kernel]
            if kernels:
                picked += [(type_, r) for r in refs + kernels]
    if not picked:
        return [NO_BENCH]
    shown = [r for _, r in picked]
    with_spread = any(r.runs > 1 for r in shown)
    body = []
    for type_, r in picked:
        cells = bench_row_cells(r, with_step, with_spread)
        if len(types) > 1:  # the type goes into the shape column
            cells[(1 if with_step else 0) + 1] += f" {type_}"
        body.append(cells)
    header = (["step"] if with_step else []) + ["kernel", "shape", "median ms", "GB/s",
                                                 "% of copy"]
    header += (["spread"] if with_spread else []) + ["% of peak"]
    note = runs_note(shown)
    return table(header, body) + ["", f"Measured on {measured_on(shown)} (`make bench`). "
                                  "Each row's % of copy is against the copy ceiling timed in the "
                                  "same run as that row; the copy row shown is one of those runs'."
                                  + (f" {note}" if note else "")]


# Nsight Compute metric names (and scripts/profile.sh's derived ones) -> short column headers,
# in the order the columns appear. Byte counts are shown in MB (1e6 bytes).
METRICS = {
    "gpu__time_duration.sum": "time us",
    "dram__bytes_read.sum": "DRAM read MB",
    "dram__bytes_write.sum": "DRAM write MB",
    "global_ld_sectors_per_request": "ld sectors/req",
    "global_st_sectors_per_request": "st sectors/req",
    "lts__t_sectors_srcunit_tex_op_read.sum": "L2 sectors read (M)",
    "lts__t_sectors_srcunit_tex_op_write.sum": "L2 sectors written (M)",
    "smsp__inst_executed.sum": "instructions (M)",
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio": "ld sectors/req",
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio": "st sectors/req",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "ld sectors",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "st sectors",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "ld requests",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": "st requests",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "smem ld conflicts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "smem st conflicts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "smem ld wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "smem st wavefronts",
    "smsp__sass_inst_executed_op_shared_ld.sum": "smem ld instructions",
    "smsp__sass_inst_executed_op_shared_st.sum": "smem st instructions",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy %",
    "sm__maximum_warps_per_active_cycle_pct": "theoretical occupancy %",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM % of peak",
    "launch__registers_per_thread": "registers/thread",
}
# Raw counts that the ratios above already say; shown only with `metrics=all` in the marker.
HIDDEN_METRICS = {"ld sectors", "st sectors", "ld requests", "st requests"}
BYTE_UNITS = {"byte": 1, "b": 1, "kbyte": 1e3, "kb": 1e3, "mbyte": 1e6, "mb": 1e6,
              "gbyte": 1e9, "gb": 1e9, "tbyte": 1e12, "kib": 1024, "mib": 1 << 20,
              "gib": 1 << 30}


def metric_column(metric, unit):
    """The header of a metric and the factor that converts its values for that header."""
    unit_key = (unit or "").strip().lower()
    label = METRICS.get(metric)
    if label and label.endswith(" MB"):
        return label, BYTE_UNITS.get(unit_key, 1) / 1e6  # ncu's bytes, in any prefix
    if label and label.endswith(" (M)"):
        return label, 1e-6  # counts in millions
    if label:
        return label, 1.0
    return (f"{metric} ({unit})" if unit else metric), 1.0


def render_profile_table(attrs, profile, md_path):
    check_attrs("profile-table", attrs, ("steps", "kernels", "shapes", "type", "metrics"),
                required=("steps",))
    steps = [normalize_step(s) for s in attrs["steps"].split(",")]
    only = attrs.get("kernels", "")
    shapes = parse_shapes(attrs["shapes"]) if "shapes" in attrs else None
    type_ = attrs.get("type")

    picked = [p for p in profile if p["step"] in steps and only in p["kernel"]
              and (shapes is None or (int(p["rows"]), int(p["cols"])) in shapes)
              and (type_ is None or p["type"] == type_)]
    if not picked:
        runs = ", ".join(f"`make profile STEP={profile_step(s)}`" for s in steps if profile_step(s))
        return [NO_PROFILE.replace("`make profile STEP=NN`", runs)] if runs else [NO_PROFILE]
    # One table row per (step, kernel, problem) in the order of the steps listed; one column
    # per metric, known metrics in METRICS' order, unknown ones after, in order of appearance.
    order = list(METRICS)
    columns, values, keys = {}, {}, []
    for p in sorted(picked, key=lambda p: steps.index(p["step"])):
        key = (p["step"], p["kernel"], p["type"], int(p["rows"]), int(p["cols"]))
        if key not in values:
            keys.append(key)
            values[key] = {}
        header, factor = metric_column(p["metric"], p.get("unit", ""))
        if header in HIDDEN_METRICS and attrs.get("metrics") != "all":
            continue
        rank = order.index(p["metric"]) if p["metric"] in order else len(order) + len(columns)
        columns.setdefault(header, rank)
        try:
            values[key][header] = fmt_value(float(p["value"].replace(",", "")) * factor)
        except ValueError:
            values[key][header] = cell(p["value"])
    headers = sorted(columns, key=columns.get)
    with_step = len(steps) > 1
    body = []
    for key in keys:
        step, kernel, t, rows, cols = key
        body.append(([step] if with_step else []) + [cell(kernel), fmt_shape((rows, cols), 1, t)]
                    + [values[key].get(h, "-") for h in headers])
    setups = sorted({f"{p['device']}, driver {p['driver']}, {p['date']}" for p in picked})
    nn = ", ".join(f"`make profile STEP={profile_step(s)}`" for s in steps if profile_step(s))
    columns = (["step"] if with_step else []) + ["kernel", "shape"] + [cell(h) for h in headers]
    return (table(columns, body)
            + ["", f"Nsight Compute on {'; '.join(setups)} ({nn or 'scripts/profile.sh'})."])


NO_PATTERNS = ("_No pattern timings yet: run `./step08_patterns --csv plots/data/patterns.csv` "
               "on a GPU, then `make plots`._")


def render_pattern_table(attrs, patterns, md_path):
    """step08_patterns' lines for one element type at the shapes listed: the median of the runs
    of each line (every row of the same shape, pattern and group is one run), with the spread."""
    check_attrs("pattern-table", attrs, ("type", "shapes"), required=("type", "shapes"))
    shapes = parse_shapes(attrs["shapes"])
    runs = {}
    for p in patterns:
        shape = (int(p["rows"]), int(p["cols"]))
        if p["type"] == attrs["type"] and shape in shapes:
            runs.setdefault((shape, p["pattern"], p["group_rows"]), []).append(p)
    if not runs:
        return [NO_PATTERNS]
    body = []
    for (shape, pattern, group), got in sorted(runs.items(),
                                               key=lambda kv: shapes.index(kv[0][0])):
        pct = [float(p["pct_stream"]) for p in got]
        body.append([cell(pattern), fmt_shape(shape), group,
                     fmt_ms(median(float(p["median_ms"]) for p in got)),
                     f"{median(float(p['gbps']) for p in got):.0f}", f"{median(pct):.1f}",
                     f"{max(pct) - min(pct):.1f}"])
    every = [p for got in runs.values() for p in got]
    setups = sorted({f"{p['device']}, driver {p['driver']}, CUDA {p['cuda']}, {p['date']}"
                     for p in every})
    counts = sorted({len(got) for got in runs.values()})
    over = (f"{counts[0]} runs" if len(counts) == 1 else f"{counts[0]} to {counts[-1]} runs")
    return (table(["pattern", "shape", "group", "median ms", "GB/s", "% of stream", "spread"],
                  body)
            + ["", f"Measured on {'; '.join(setups)} (`./step08_patterns --type {attrs['type']}`, "
                   f"the median of {over}). group: tile rows per group of the tile order, '-' for "
                   "a linear stream; % of stream: against the linear stream of the same kind "
                   "(reads, writes, or the copy for the transpose); spread: the largest minus the "
                   "smallest % of stream over the runs, in points."])


def lesson_dirs(root):
    """{"01": Path("steps/01_naive"), ...} for every lesson folder."""
    found = {}
    for d in sorted((root / "steps").glob("[0-9][0-9]_*")):
        if d.is_dir():
            found[d.name[:2]] = d
    return found


def lesson_idea(nn, folder):
    if nn in STEP_IDEAS or folder is None:
        return STEP_IDEAS.get(nn, "")
    readme = folder / "README.md"  # a step this script does not know: its lesson's title
    if readme.exists():
        for line in readme.read_text().splitlines():
            if line.startswith("# "):
                return re.sub(r"\s*\{#.*\}$", "", line[2:]).strip()
    return ""


def classic_naive(data, shape):
    """Step 01's classic kernel at a headline shape (float32), or None."""
    step, kernel = CLASSIC_NAIVE
    return next((r for r in select(data, step=step, shape=shape, type_="f32")
                 if r.kernel == kernel and r.ran), None)


def journey(data, shapes=HEADLINE_SHAPES):
    """The README's rows of the journey: [(step, label, {shape: row or None})], one per numbered
    step (labs, exercises and peers aside) with its fastest kernel, and for step 01 first the
    classic kernel (label "classic"), then the best block shape (label "best block shape")."""
    out = []
    for step in sorted({r.step for r in data if step_number(r.step)}):
        bests = {s: best([r for r in select(data, step=step, shape=s, type_="f32")
                          if not r.is_reference]) for s in shapes}
        if step == CLASSIC_NAIVE[0]:
            out.append((step, "classic", {s: classic_naive(data, s) for s in shapes}))
            out.append((step, "best block shape", bests))
        else:
            out.append((step, "", bests))
    return [j for j in out if any(j[2].values())]


def render_results_table(attrs, data, md_path, root):
    check_attrs("results-table", attrs, ())
    lessons = lesson_dirs(root)
    rows_of = {}
    for step, label, per_shape in journey(data):
        rows_of.setdefault(step_number(step), []).append((label, per_shape))
    numbers = sorted(set(lessons) | set(rows_of))
    here = md_path.parent
    header = ["step", "idea"]
    for shape in HEADLINE_SHAPES:
        header += [f"GB/s {shape[0]}x{shape[1]}", "% of copy"]

    def numbers_of(row):
        return [f"{row.gbps:.0f}", f"{row.pct_copy:.1f}"] if row else ["-", "-"]

    body, shown = [], []
    for nn in numbers:
        folder = lessons.get(nn)
        name = folder.name[3:].replace("_", " ") if folder else ""
        lesson = folder / "README.md" if folder else None
        if lesson and lesson.exists():
            link = f"[{nn} {name}]({Path(os.path.relpath(lesson, here)).as_posix()})"
        else:  # a lesson still to be written
            link = f"{nn} {name}" if folder else f"step{nn}"
        idea = lesson_idea(nn, folder)
        for label, per_shape in rows_of.get(nn, [("", {})]):
            kernels = list(dict.fromkeys(r.kernel for r in per_shape.values() if r))
            if label == "classic":
                text = f"{idea}; the kernel of every tutorial ({CLASSIC_NAIVE[1]})"
            elif label:
                text = f"the same kernel, the {label} measured ({' / '.join(kernels) or '-'})"
            else:
                text = idea
            cells = [f"{link}, {label}" if label else link, cell(text)]
            for shape in HEADLINE_SHAPES:
                top = per_shape.get(shape)
                cells += numbers_of(top)
                shown += [top] if top else []
            body.append(cells)
    # References: the best copy ceiling and cuBLAS any step measured at the headline shapes,
    # and PyTorch where it was measured.
    references = [("copy ceiling", "cudaMemcpy or a float4 copy kernel", lambda r: r.is_copy),
                  ("cuBLAS geam", "the library's transpose", lambda r: r.is_cublas),
                  ("PyTorch", "the fastest PyTorch call measured",
                   lambda r: r.step == "pytorch" and not r.is_copy)]
    for label, idea, keep in references:
        cells, any_found = [f"*{label}*", idea], False
        for shape in HEADLINE_SHAPES:
            top = best([r for r in select(data, shape=shape, type_="f32")
                        if keep(r) and (step_number(r.step) or r.step == "pytorch")])
            if top and label == "copy ceiling":  # the ceiling is 100% of itself
                cells += [f"{top.gbps:.0f}", "100.0"]
            else:
                cells += numbers_of(top)
            any_found = any_found or top is not None
            shown += [top] if top else []
        if any_found or label == "copy ceiling":
            body.append(cells)
    lines = table(header, body)
    if not shown:
        return lines + ["", NO_BENCH]
    note = (f"Best kernel of each step, float32; step 01 twice: the classic 32 x 32 kernel and "
            f"its best block shape. Measured on {measured_on(shown)} (`make bench`).")
    if any(r.runs > 1 for r in shown):
        many = sorted({r.runs for r in shown})
        runs = str(many[0]) if len(many) == 1 else f"{many[0]} to {many[-1]}"
        note += (f" Each number is the median of {runs} separate runs; over those runs % of copy "
                 f"moved by at most {max(r.spread for r in shown):.1f} points.")
    return lines + ["", note]


def render_figure(attrs, catalog, md_path, figures_dir):
    check_attrs("figure", attrs, ("name",), required=("name",))
    name = attrs["name"]
    entry = catalog.get(name)
    path = figures_dir / f"{name}.png"
    if entry is None:
        if not path.exists():  # neither drawn here nor a picture kept in plots/figures
            raise MarkerError(f"figure: no figure named '{name}' (known: {', '.join(catalog)})")
        caption = name.replace("_", " ")
    else:
        caption, draw, missing, _ = entry
        if draw is None:
            return [missing]
        if not path.exists():  # the data is there, the picture is not: the link would be broken
            raise MarkerError(f"figure: {name}.png is not in plots/figures: run `make plots`")
    link = Path(os.path.relpath(path, md_path.parent)).as_posix()
    return [f"![{cell(caption)}]({link})"]


# --------------------------------------------------------------------------------------------
# Rewriting the Markdown files
# --------------------------------------------------------------------------------------------

KINDS = r"(bench-table|profile-table|figure|results-table|pattern-table)"
OPEN = re.compile(r"^<!--\s*" + KINDS + r"\b(.*?)-->\s*$")
ALMOST = re.compile(r"^\s*<!--\s*" + KINDS + r"\b")  # to report a marker OPEN cannot read
ATTR = re.compile(r"""\s*(?:([\w.-]+)=(?:"([^"]*)"|'([^']*)'|([^\s"']+))|([^\s=]+))""")


def parse_tokens(text):
    """'diff step=05 kernel="a b"' -> [("diff", None), ("step", "05"), ("kernel", "a b")]."""
    tokens, pos = [], 0
    while text[pos:].strip():
        m = ATTR.match(text, pos)
        if not m or m.end() == pos:
            raise MarkerError(f"cannot read '{text[pos:].strip()}' (name=value, quote a value "
                              "with spaces)")
        if m.group(5) is not None:
            tokens.append((m.group(5), None))
        else:
            value = next(v for v in m.group(2, 3, 4) if v is not None)
            tokens.append((m.group(1), value))
        pos = m.end()
    return tokens


def parse_attrs(text):
    attrs = {}
    for key, value in parse_tokens(text):
        if value is None:
            raise MarkerError(f"'{key}' is not name=value")
        if key in attrs:
            raise MarkerError(f"'{key}' is given twice")
        attrs[key] = value
    return attrs


# -- inline number markers ---------------------------------------------------------------------

NUM_TAG = re.compile(r"<!--\s*(/?)num\b(.*?)-->")
NUM_START = re.compile(r"<!--\s*/?num\b")
NUM_COLUMNS = ("pct_copy", "gbps", "median_ms", "min_ms", "pct_peak", "spread", "runs")
NUM_SELECT = ("step", "kernel", "shape", "type", "batch")


def fmt_sig(v, digits):
    """v to `digits` significant digits, trailing zeros kept, never in scientific notation:
    fmt_sig(0.189792, 3) == "0.190", fmt_sig(10.4, 2) == "10", fmt_sig(123, 2) == "120"."""
    if v == 0 or not math.isfinite(v):
        return f"{v:.{max(digits - 1, 0)}f}" if v == 0 else str(v)
    exponent = math.floor(math.log10(abs(v)))
    decimals = digits - 1 - exponent
    rounded = round(v, decimals)
    if rounded and math.floor(math.log10(abs(rounded))) > exponent:  # 9.96 -> 10.0
        decimals -= 1
    return f"{round(v, decimals):.{max(decimals, 0)}f}"


def fmt_column(col, v):
    if col in ("pct_copy", "pct_peak", "spread"):
        return fmt_fixed(v, 1)
    if col == "gbps":
        return fmt_fixed(v, 0)
    if col in ("median_ms", "min_ms"):
        return fmt_sig(v, 3)
    return str(int(v))  # runs


def fmt_fixed(v, decimals):
    text = f"{v:.{decimals}f}"
    return text[1:] if re.fullmatch(r"-0(\.0*)?", text) else text  # no "-0.0"


def pick_row(data, sel):
    """The one row a num marker's selection names, or MarkerError saying why not."""
    step, kernel, shape, type_, batch = (sel[k] for k in NUM_SELECT)
    problem = f"{fmt_shape(shape, batch)} {type_}"
    here = [r for r in select(data, step=step, shape=shape, type_=type_, batch=batch)]
    if not here:
        return None, f"no rows of {step} at {problem} in plots/data/bench.csv"
    if kernel == "best":
        row = best([r for r in here if not r.is_reference])
        return (row, None) if row else (None, f"no kernel of {step} ran at {problem}")
    if kernel == "ceiling":
        row = best([r for r in here if r.is_copy])
        return (row, None) if row else (None, f"no copy of {step} at {problem}")
    found = [r for r in here if r.kernel == kernel] or [r for r in here if kernel in r.kernel]
    if not found:
        ordered = [r for r in here if not r.is_reference] + [r for r in here if r.is_reference]
        names = some(list(dict.fromkeys(r.kernel for r in ordered)))
        return None, f"kernel '{kernel}' matches no kernel of {step} at {problem} (there: {names})"
    if len(found) > 1:
        names = "; ".join(f"{r.kernel} [{r.block}]" for r in found)
        return None, (f"kernel '{kernel}' matches {len(found)} kernels of {step} at {problem}: "
                      f"{names}; give more of the name")
    return found[0], None


def some(names, most=6):
    """'a; b; c' for a short list, 'a; b; ... and 9 more' for a long one."""
    if len(names) <= most:
        return "; ".join(names)
    return "; ".join(names[:most]) + f"; ... and {len(names) - most} more"


def selection(attrs, prefix, base=None):
    """The (step, kernel, shape, type, batch) of a num marker, its vs. one when prefix="vs."."""
    sel = dict(base or {})
    for name in NUM_SELECT:
        value = attrs.get(prefix + name)
        if value is None:
            continue
        if name == "step":
            sel[name] = normalize_step(value)
        elif name == "shape":
            shapes = parse_shapes(value)
            if len(shapes) != 1:
                raise MarkerError(f"{prefix}shape: one shape, ROWSxCOLS")
            sel[name] = shapes[0]
        elif name == "batch":
            if not value.isdigit() or int(value) < 1:
                raise MarkerError(f"{prefix}batch: '{value}' is not a whole number")
            sel[name] = int(value)
        else:
            sel[name] = value
    sel.setdefault("type", "f32")
    sel.setdefault("batch", 1)
    for name in ("step", "kernel", "shape"):
        if name not in sel:
            raise MarkerError(f"attribute '{prefix}{name}' is required")
    return sel


def render_num(text, data, profile, latency=()):
    """The value of an inline marker whose opening tag holds `text` (what follows "num")."""
    tokens = parse_tokens(text)
    form = "value"
    if tokens and tokens[0][1] is None:
        form = tokens.pop(0)[0]
        if form not in ("diff", "ratio", "profile", "latency"):
            raise MarkerError(f"unknown form '{form}' (num, num diff, num ratio, num profile, "
                              "num latency)")
    attrs = {}
    for key, value in tokens:
        if value is None:
            raise MarkerError(f"'{key}' is not name=value")
        if key in attrs:
            raise MarkerError(f"'{key}' is given twice")
        attrs[key] = value
    if form == "latency":
        return render_num_latency(attrs, latency)
    allowed = set(NUM_SELECT) | ({"metric"} if form == "profile" else {"col"})
    if form in ("diff", "ratio"):
        allowed |= {"vs." + n for n in NUM_SELECT}
    for key in attrs:
        if key not in allowed:
            raise MarkerError(f"num{'' if form == 'value' else ' ' + form}: unknown attribute "
                              f"'{key}' (allowed: {', '.join(sorted(allowed))})")
    if form == "profile":
        return render_num_profile(attrs, profile)
    col = attrs.get("col", "pct_copy")
    if col not in NUM_COLUMNS:
        raise MarkerError(f"col: '{col}' is not one of {', '.join(NUM_COLUMNS)}")
    first = selection(attrs, "")
    row, why = pick_row(data, first)
    if row is None:
        raise MarkerError(why)
    if col not in ("runs", "spread") and not row.ran:
        raise MarkerError(f"{row.step} '{row.kernel}' at {fmt_shape(row.shape, row.batch)} has "
                          f"no speed ({row.verified})")
    if form == "value":
        return fmt_column(col, getattr(row, col))
    if not any(k.startswith("vs.") for k in attrs):
        raise MarkerError(f"num {form}: give the second selection with vs. attributes "
                          "(vs.step=, vs.kernel=, ...)")
    other, why = pick_row(data, selection(attrs, "vs.", first))
    if other is None:
        raise MarkerError(f"vs.: {why}")
    if col not in ("runs", "spread") and not other.ran:
        raise MarkerError(f"vs.: {other.step} '{other.kernel}' has no speed ({other.verified})")
    a, b = getattr(row, col), getattr(other, col)
    if form == "diff":
        return fmt_fixed(a - b, 1)
    if b == 0:
        raise MarkerError("num ratio: the vs. value is 0")
    return fmt_sig(a / b, 2)


def render_num_latency(attrs, latency):
    """The median ns_per_load of latency.csv's runs of one pattern at one footprint."""
    for name in attrs:
        if name not in ("pattern", "footprint"):
            raise MarkerError(f"num latency: unknown attribute '{name}' (allowed: footprint, "
                              "pattern)")
    if set(attrs) != {"pattern", "footprint"}:
        raise MarkerError("num latency: attributes 'pattern' and 'footprint' are required")
    patterns = sorted({r["pattern"] for r in latency})
    found = [p for p in patterns if p == attrs["pattern"]] or \
            [p for p in patterns if attrs["pattern"] in p]
    if len(found) != 1:
        what = "no pattern" if not found else f"{len(found)} patterns"
        raise MarkerError(f"pattern '{attrs['pattern']}' matches {what} of "
                          f"plots/data/latency.csv ({some(found or patterns)})")
    try:
        ns = [float(r["ns_per_load"]) for r in latency
              if r["pattern"] == found[0] and int(r["footprint_bytes"]) == int(attrs["footprint"])]
    except ValueError as e:
        raise MarkerError(f"num latency: {e}")
    if not ns:
        raise MarkerError(f"no latency.csv run of '{found[0]}' at footprint {attrs['footprint']}")
    return fmt_fixed(median(ns), 0)


def render_num_profile(attrs, profile):
    for name in ("step", "kernel", "shape", "metric"):
        if name not in attrs:
            raise MarkerError(f"num profile: attribute '{name}' is required")
    sel = selection(attrs, "")
    step, kernel, shape, type_ = sel["step"], sel["kernel"], sel["shape"], sel["type"]
    metric = attrs["metric"]
    here = [p for p in profile if p["step"] == step and p["type"] == type_
            and (int(p["rows"]), int(p["cols"])) == shape]
    problem = f"{fmt_shape(shape)} {type_}"
    if not here:
        raise MarkerError(f"no profiler rows of {step} at {problem} in plots/data/profile.csv")
    names = list(dict.fromkeys(p["kernel"] for p in here))
    found = [n for n in names if n == kernel] or [n for n in names if kernel in n]
    if len(found) != 1:
        what = "no kernel" if not found else f"{len(found)} kernels"
        raise MarkerError(f"kernel '{kernel}' matches {what} of {step}'s profile at {problem} "
                          f"({some(found or names)})")
    named = lambda p: metric in (p["metric"], metric_column(p["metric"], p.get("unit", ""))[0])
    rows = [p for p in here if p["kernel"] == found[0] and named(p)]
    if not rows:
        known = sorted({metric_column(p["metric"], p.get("unit", ""))[0] for p in here
                        if p["kernel"] == found[0]})
        raise MarkerError(f"metric '{metric}' not profiled for {step} '{found[0]}' at {problem} "
                          f"(there: {some(known, 10)})")
    p = rows[-1]  # a metric profiled again: the latest
    factor = metric_column(p["metric"], p.get("unit", ""))[1]
    try:
        return fmt_value(float(p["value"].replace(",", "")) * factor)
    except ValueError:
        return p["value"]


# -- reading a line: code spans, comments, markers -----------------------------------------------

def code_spans(line):
    """[(start, end)] of the `inline code` spans of a line (a run of n backticks closed by the
    next run of exactly n)."""
    spans, i = [], 0
    while i < len(line):
        if line[i] != "`":
            i += 1
            continue
        j = i
        while j < len(line) and line[j] == "`":
            j += 1
        k, closed = j, None
        while k < len(line):
            if line[k] == "`":
                m = k
                while m < len(line) and line[m] == "`":
                    m += 1
                if m - k == j - i:
                    closed = m
                    break
                k = m
            else:
                k += 1
        if closed is None:
            i = j  # unmatched backticks are literal
        else:
            spans.append((i, closed))
            i = closed
    return spans


def inside(pos, spans):
    return any(a <= pos < b for a, b in spans)


def rewrite_nums(line, render):
    """The line with each num marker's value re-rendered by render(text); the errors; and the
    spans (start, end) the markers cover in the new line."""
    spans = code_spans(line)
    out, errors, covered, pos = [], [], [], 0
    tags = [m for m in NUM_TAG.finditer(line) if not inside(m.start(), spans)]
    starts = [m for m in NUM_START.finditer(line) if not inside(m.start(), spans)]
    if len(starts) > len(tags):
        errors.append("a num marker's tag must end with '-->' on the same line")
    k = 0
    while k < len(tags):
        tag = tags[k]
        if tag.group(1):  # a closing tag with no opening one before it
            errors.append("a '<!-- /num -->' without its opening '<!-- num ... -->'")
            k += 1
            continue
        if k + 1 >= len(tags) or not tags[k + 1].group(1):
            errors.append("a num marker must be closed by '<!-- /num -->' on the same line")
            k += 1
            continue
        close = tags[k + 1]
        old = line[tag.end():close.start()]
        try:
            value = render(tag.group(2))
        except MarkerError as e:
            errors.append(f"num: {e}")
            value = old
        start = sum(len(t) for t in out) + (tag.start() - pos)
        out.append(line[pos:tag.end()] + value + close.group(0))
        covered.append((start, start + len(tag.group(0)) + len(value) + len(close.group(0))))
        pos = close.end()
        k += 2
    out.append(line[pos:])
    return "".join(out), errors, covered


# -- the prose lint ----------------------------------------------------------------------------

LINT_PERCENT = re.compile(r"(?<![\w.])\d[\d,]*\.\d+\s*%")
LINT_GBPS = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s*GB/s")
COMMENT = re.compile(r"<!--.*?-->")


def lint_line(line, covered):
    """The measured-looking numbers typed in a line's prose: a decimal followed by % or a number
    followed by GB/s, outside inline code, HTML comments and num markers."""
    masked = list(line)
    hidden = code_spans(line) + covered + [m.span() for m in COMMENT.finditer(line)]
    for a, b in hidden:
        masked[a:b] = " " * (b - a)
    text = "".join(masked)
    return [m.group(0) for pattern in (LINT_PERCENT, LINT_GBPS) for m in pattern.finditer(text)]


# -- one Markdown file -------------------------------------------------------------------------

class Finding:
    """Something wrong in a Markdown file, at a line; lint findings are counted apart."""

    def __init__(self, line, message, lint=False):
        self.line, self.message, self.lint = line, message, lint


def rewrite(text, render, render_num=None):
    """The text with every marker block re-rendered by render(kind, attrs) and every num marker
    by render_num(text); the Findings (errors and lint); and the num values that changed, as
    (line, old, new)."""
    lines = text.split("\n")
    out, findings, changed, i, fence = [], [], [], 0, None

    def prose(line, number):
        new = line
        covered = []
        if render_num is not None:
            new, errors, covered = rewrite_nums(line, render_num)
            findings.extend(Finding(number, e) for e in errors)
            if new != line:
                changed.append((number, line, new))
        for found in lint_line(new, covered):
            findings.append(Finding(number, f"'{found}' typed in prose: type measured numbers "
                                            "through a num marker (plots/README.md)", lint=True))
        return new

    while i < len(lines):
        line = lines[i]
        i += 1
        stripped = line.lstrip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
            out.append(line)
            continue
        if fence:
            out.append(line)
            continue
        m = OPEN.match(line)
        if not m:
            if ALMOST.match(line):
                findings.append(Finding(i, "a marker must start the line and end with '-->' "
                                           "on it"))
            out.append(prose(line, i))
            continue
        out.append(line)
        kind = m.group(1)
        close = f"<!-- /{kind} -->"
        end = next((j for j in range(i, len(lines)) if lines[j].strip() == close), None)
        if end is None:
            findings.append(Finding(i, f"{kind} has no closing '{close}'"))
            continue
        try:
            body = render(kind, parse_attrs(m.group(2)))
            out += [""] + body + [""]
        except MarkerError as e:
            findings.append(Finding(i, str(e)))
            out += lines[i:end]  # leave a block it cannot render as it is
        out.append(lines[end])
        i = end + 1
    return "\n".join(out), findings, changed


def markdown_files(root):
    """The Markdown the markers and the lint cover: the README, the lessons (every
    steps/*/*.md), the lab notebooks (steps/*/lab/*.md) and the exercises' pages."""
    files = [root / "README.md"]
    files += sorted((root / "steps").glob("*/*.md"))
    files += sorted((root / "steps").glob("*/lab/*.md"))
    files += sorted((root / "exercises").glob("*.md"))
    files += sorted((root / "exercises").glob("*/*.md"))
    return [f for f in files if f.exists()]


# -- figures linked from a page ----------------------------------------------------------------

LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def linked_pngs(texts, figures_dir):
    """The names of the PNG files of figures_dir that the Markdown texts ({path: text}) link."""
    linked = set()
    figures_dir = figures_dir.resolve()
    for path, text in texts.items():
        for m in LINK.finditer(text):
            target = m.group(1).split("#")[0]
            if not target.endswith(".png") or "://" in target:
                continue
            resolved = (path.parent / target).resolve()
            if resolved.parent == figures_dir:
                linked.add(resolved.name)
    return linked


def all_markdown(root):
    """Every Markdown page of the repository (build folders and hidden ones aside)."""
    found = []
    for path in sorted(root.rglob("*.md")):
        parts = path.relative_to(root).parts
        if any(p.startswith(".") or p.startswith("build") for p in parts[:-1]):
            continue
        found.append(path)
    return found


# --------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------

def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "font.size": 10,
                         "axes.grid": True, "grid.alpha": 0.3, "axes.axisbelow": True})
    return plt


def step_color(step):
    """The same colour for a step in every figure: tab10 without its grey, which is cuBLAS's."""
    import matplotlib
    nn = step_number(step)
    colors = [c for i, c in enumerate(matplotlib.colormaps["tab10"].colors) if i != 7]
    return colors[(int(nn) - 1) % len(colors)] if nn else "tab:gray"


def save(fig, path, rows):
    """Adds the measurement footnote and writes a PNG whose bytes depend only on the data."""
    if rows:
        fig.text(0.99, 0.005, f"Measured on {measured_on(rows)}. GB = 1e9 bytes.", ha="right",
                 va="bottom", fontsize=7, color="0.35")
    fig.savefig(path, metadata={"Software": None})
    import matplotlib.pyplot as plt
    plt.close(fig)


def headline_bests(data, shape):
    """{step: best row} at a headline shape, f32, for every numbered step."""
    found = {}
    for step in sorted({r.step for r in data if step_number(r.step)}):
        top = best([r for r in select(data, step=step, shape=shape, type_="f32")
                    if not r.is_reference])
        if top:
            found[step] = top
    return found


def error_bars(rows):
    """matplotlib's yerr at rows' median GB/s: down to the slowest run, up to the fastest; None
    when no row has several runs (no whiskers to draw). The lesson figures use it too."""
    bars = [[max(r.gbps - r.gbps_lo, 0.0) for r in rows], [max(r.gbps_hi - r.gbps, 0.0)
                                                          for r in rows]]
    return bars if any(bars[0] + bars[1]) else None


def draw_progression(data, path, lessons):
    plt = pyplot()
    stages = journey(data)
    shapes = [s for s in HEADLINE_SHAPES if any(per.get(s) for _, _, per in stages)]
    fig, axes = plt.subplots(1, len(shapes), figsize=(7.5 * len(shapes), 5.8), squeeze=False,
                             sharey=True)
    shown = [r for _, _, per in stages for r in per.values() if r]
    shown += [r for r in data if r.is_reference and r.shape in shapes and r.type == "f32"
              and r.batch == 1 and r.ran and step_number(r.step)]
    ylim = max(r.gbps_hi for r in shown) * 1.15
    for ax, shape in zip(axes[0], shapes):
        bars = [(step, label, per[shape]) for step, label, per in stages if per.get(shape)]
        x = list(range(len(bars)))
        rows = [r for _, _, r in bars]
        colors = [step_color(step) for step, _, _ in bars]
        drawn = ax.bar(x, [r.gbps for r in rows], color=colors,
                       yerr=error_bars(rows),
                       error_kw={"elinewidth": 1, "capsize": 2, "ecolor": "0.25"})
        for bar, (_, label, _) in zip(drawn, bars):
            if label == "classic":  # the tutorial's kernel: the same colour, hatched and paler
                bar.set_hatch("///")
                bar.set_alpha(0.55)
                bar.set_edgecolor("white")
        for i, r in enumerate(rows):
            # GB/s and % of copy on each bar: inside a tall bar, above a short one.
            inside = r.gbps > 0.15 * ylim
            ax.annotate(f"{r.gbps:.0f}\n{r.pct_copy:.0f}%", (i, r.gbps),
                        textcoords="offset points", xytext=(0, -4 if inside else 3),
                        ha="center", va="top" if inside else "bottom", fontsize=8,
                        color="white" if inside else "black",
                        fontweight="bold" if inside else "normal")
        names = []
        for step, label, _ in bars:
            name = lessons.get(step_number(step), "").replace(" ", "\n")
            if label:
                name += "\n" + ("classic\n32x32" if label == "classic" else "best\nblock")
            names.append(f"{step_number(step)}\n{name}")
        ax.set_xticks(x, names, fontsize=7.5)
        ax.set_xlabel("step (best kernel of each; 01 also the classic 32 x 32 kernel, hatched; "
                      "labels: GB/s and % of copy)", fontsize=8.5)
        here = [r for r in select(data, shape=shape, type_="f32") if step_number(r.step)]
        copy_row = best([r for r in here if r.is_copy])
        cublas = best([r for r in here if r.is_cublas])
        if copy_row:
            ax.axhline(copy_row.gbps, color="black", linestyle="--", linewidth=1.2,
                       label=f"copy ceiling {copy_row.gbps:.0f} GB/s")
            # A second axis in % of the copy ceiling, so the bars read both ways.
            ax.secondary_yaxis("right", functions=(lambda g, c=copy_row.gbps: 100 * g / c,
                                                   lambda p, c=copy_row.gbps: p * c / 100)
                               ).set_ylabel("% of copy ceiling")
            shown.append(copy_row)
        if cublas:
            ax.axhline(cublas.gbps, color="tab:gray", linestyle=":", linewidth=1.5,
                       label=f"cuBLAS geam {cublas.gbps:.0f} GB/s")
            shown.append(cublas)
        ax.set_title(f"{shape[0]} x {shape[1]} float32")
        ax.grid(axis="x", visible=False)
        if copy_row or cublas:
            ax.legend(loc="upper left", fontsize=8)
    axes[0][0].set_ylabel("bandwidth, GB/s (2 x matrix bytes / median time)")
    axes[0][0].set_ylim(0, ylim)
    title = "The journey: each step's best kernel against the copy ceiling"
    if any(r.runs > 1 for r in shown):
        title += " (medians of runs; whiskers: slowest to fastest run)"
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, path, shown)


def fmt_bytes(n):
    return f"{n / 1e9:.3g} GB" if n >= 1e9 else f"{n / 1e6:.3g} MB"


def size_axis(ax, data_rows):
    """Log-scale x axis of matrix size in MB, ticks at the square sizes measured."""
    squares = sorted({r.rows for r in data_rows if on_size_line(r)})
    ax.set_xscale("log")
    ax.set_xticks([n * n * 4 / 1e6 for n in squares],
                  [f"{n}²\n{fmt_bytes(n * n * 4)}" for n in squares], fontsize=8)
    ax.minorticks_off()
    ax.set_xlabel("matrix size (N x N float32; hollow markers: rectangles and odd squares)")
    ax.set_ylabel("bandwidth, GB/s")


def on_size_line(r):
    """The sweep's squares (sides a power of two) make the lines of the size figures; the other
    shapes (rectangles, odd squares such as 8191 x 8191) are hollow markers."""
    return r.rows == r.cols and r.rows & (r.rows - 1) == 0


def plot_series(ax, rows, color, label, marker="o", linestyle="-"):
    """One line through the square shapes, hollow markers at the other ones."""
    squares = sorted((r for r in rows if on_size_line(r)), key=lambda r: r.rows)
    others = [r for r in rows if not on_size_line(r)]
    mb = lambda r: r.rows * r.cols * 4 / 1e6
    ax.plot([mb(r) for r in squares], [r.gbps for r in squares], marker=marker, color=color,
            label=label, markersize=4, linestyle=linestyle)
    if others:
        ax.scatter([mb(r) for r in others], [r.gbps for r in others], facecolors="none",
                   edgecolors=[color], marker=marker, s=30)


def reference_series(data):
    """The best copy row and the best cuBLAS row at every f32 batch-1 shape."""
    shapes = sorted({r.shape for r in data if r.type == "f32" and r.batch == 1})
    copies, cublas = [], []
    for shape in shapes:
        here = select(data, shape=shape, type_="f32")
        for found, keep in ((copies, lambda r: r.is_copy), (cublas, lambda r: r.is_cublas)):
            top = best([r for r in here if keep(r)])
            if top:
                found.append(top)
    return copies, cublas


def size_plot_rows(data):
    return [r for r in data if r.type == "f32" and r.batch == 1 and r.ran]


def draw_sizes(data, path, lessons):
    plt = pyplot()
    rows = size_plot_rows(data)
    fig, ax = plt.subplots(figsize=(10, 5.8))
    shown = []
    for step in sorted({r.step for r in rows if step_number(r.step)}):
        per_shape = {}
        for r in rows:
            if r.step == step and not r.is_reference:
                if r.shape not in per_shape or r.gbps > per_shape[r.shape].gbps:
                    per_shape[r.shape] = r
        if per_shape:
            nn = step_number(step)
            plot_series(ax, list(per_shape.values()), step_color(step),
                        f"{nn} {lessons.get(nn, '')}".strip())
            shown += per_shape.values()
        if step == CLASSIC_NAIVE[0]:  # and the tutorial's kernel, dashed
            classic = [r for r in rows if r.step == step and r.kernel == CLASSIC_NAIVE[1]]
            if classic:
                plot_series(ax, classic, step_color(step), f"{step_number(step)} "
                            f"{lessons.get(step_number(step), '')}, classic 32x32".strip(),
                            linestyle="--")
                shown += classic
    copies, cublas = reference_series([r for r in data if step_number(r.step)])
    if copies:
        plot_series(ax, copies, "black", "copy ceiling", marker="s")
    if cublas:
        plot_series(ax, cublas, "0.55", "cuBLAS geam", marker="^")
    shown += copies + cublas
    size_axis(ax, rows)
    ax.set_ylim(0, max(r.gbps for r in shown) * 1.1)
    ax.set_title("Bandwidth against matrix size: the best kernel of each step, float32"
                 + (" (medians of runs)" if any(r.runs > 1 for r in shown) else ""))
    ax.legend(ncol=2, fontsize=8, loc="upper left")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, path, shown)


def draw_step_sizes(data, step, path):
    plt = pyplot()
    rows = [r for r in size_plot_rows(data) if r.step == step]
    fig, ax = plt.subplots(figsize=(10, 5.8))
    kernels = list(dict.fromkeys(r.kernel for r in rows if not r.is_reference))
    import matplotlib
    palette = matplotlib.colormaps["tab10" if len(kernels) <= 10 else "tab20"]
    for i, kernel in enumerate(kernels):
        plot_series(ax, [r for r in rows if r.kernel == kernel], palette(i % palette.N), kernel)
    copies, cublas = reference_series([r for r in data if r.step == step])
    if copies:
        plot_series(ax, copies, "black", "copy ceiling", marker="s")
    if cublas:
        plot_series(ax, cublas, "0.55", "cuBLAS geam", marker="^")
    shown = [r for r in rows if not r.is_reference] + copies + cublas
    size_axis(ax, rows)
    ax.set_ylim(0, max(r.gbps for r in shown) * 1.1)
    ax.set_title(f"{step}: every kernel against matrix size, float32")
    ax.legend(fontsize=8, loc="upper left", ncol=2 if len(kernels) > 6 else 1)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, path, shown)


TYPE_ORDER = ["i8", "f16", "bf16", "f32", "f64", "b128"]


def type_shapes(data):
    """The shapes at which step 08 was measured in two element types or more (at most three,
    the largest)."""
    types_at = {}
    for r in data:
        if r.step == "step08" and r.batch == 1 and r.ran and not r.is_reference:
            types_at.setdefault(r.shape, set()).add(r.type)
    shapes = [s for s, t in types_at.items() if len(t) >= 2]
    return sorted(shapes, key=lambda s: (s[0] * s[1], s))[-3:]


def draw_types(data, path):
    plt = pyplot()
    shapes = type_shapes(data)
    fig, axes = plt.subplots(len(shapes), 1, figsize=(10, 3.8 * len(shapes)), squeeze=False)
    series = [("step 08", step_color("step08"),
               lambda r: r.step == "step08" and not r.is_reference),
              ("copy ceiling", "black", lambda r: r.is_copy),
              ("cuBLAS geam", "0.55", lambda r: r.is_cublas),
              ("PyTorch", "tab:orange", lambda r: r.step == "pytorch" and not r.is_copy)]
    shown = []
    for ax, shape in zip(axes[:, 0], shapes):
        here = select(data, shape=shape)
        types = [t for t in TYPE_ORDER if any(r.type == t for r in here)]
        types += sorted({r.type for r in here} - set(types))
        width = 0.8 / len(series)
        for k, (label, color, keep) in enumerate(series):
            xs, ys, tops = [], [], []
            for i, t in enumerate(types):
                top = best([r for r in here if r.type == t and keep(r)])
                if top:
                    xs.append(i + (k - (len(series) - 1) / 2) * width)
                    ys.append(top.gbps)
                    tops.append(top)
            if not tops:
                continue
            ax.bar(xs, ys, width, color=color, label=label)
            if label == "step 08":
                for x, top in zip(xs, tops):
                    ax.annotate(f"{top.pct_copy:.0f}%", (x, top.gbps), textcoords="offset points",
                                xytext=(0, 2), ha="center", fontsize=7)
            shown += tops
        ax.set_xticks(range(len(types)), types)
        ax.set_ylabel("bandwidth, GB/s")
        ax.set_title(f"{shape[0]} x {shape[1]}: element types (% = step 08 against the copy "
                     "ceiling)", fontsize=10)
        ax.grid(axis="x", visible=False)
        ax.set_ylim(0, max(r.gbps for r in shown) * 1.15)
    axes[-1][0].set_xlabel("element type")
    # One legend for every panel, above them: the series are the same in each.
    handles = {}
    for ax in axes[:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="upper center", ncol=len(handles),
               fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.03, 1, 0.96))
    save(fig, path, shown)


# -- bank maps ---------------------------------------------------------------------------------

LAYOUT_TITLES = {"plain": "plain: float tile[32][32]",
                 "padded": "padded: float tile[32][33]",
                 "swizzled": "swizzled: tile[r][c ^ r]"}


BANKMAP_TILE = 32  # the course's tile: one warp per tile row


def load_bankmaps(path):
    """{layout: {(row, col): (word, bank)}} of the 32 x 32 tile of each layout in the CSV (or of
    its smallest tile, when it has no 32 x 32 one)."""
    by_tile = {}
    for i, f in enumerate(read_csv(path), start=2):
        try:
            layout, tile = f["layout"], int(f["tile"])
            entry = ((int(f["row"]), int(f["col"])), (int(f["word"]), int(f["bank"])))
        except (KeyError, TypeError, ValueError) as e:
            print(f"{path}:{i}: skipped a malformed row ({e})", file=sys.stderr)
            continue
        by_tile.setdefault(layout, {}).setdefault(tile, {})[entry[0]] = entry[1]
    return {layout: tiles.get(BANKMAP_TILE, tiles[min(tiles)])
            for layout, tiles in by_tile.items()}


def column_degree(cells, col=0):
    """A warp reading column `col`: the most distinct words any one bank is asked for."""
    words_per_bank = {}
    for (r, c), (word, bank) in cells.items():
        if c == col and r < 32:
            words_per_bank.setdefault(bank, set()).add(word)
    return max((len(w) for w in words_per_bank.values()), default=0)


BANKS = 32


def bank_colormap():
    """32 pale colours, one per bank: a rainbow that does not wrap (bank 0 blue, bank 31 red, so
    banks 0 and 31 never look alike), with even banks paler than odd ones, so that two
    neighbouring banks differ in lightness as well as in hue. The numbers in the cells say
    the rest."""
    import matplotlib
    from matplotlib.colors import ListedColormap
    rainbow = matplotlib.colormaps["turbo"]
    colors = []
    for bank in range(BANKS):
        r, g, b, _ = rainbow(0.08 + 0.84 * bank / (BANKS - 1))
        white = 0.62 if bank % 2 == 0 else 0.28  # the share of white mixed in
        colors.append(tuple(c + (1 - c) * white for c in (r, g, b)))
    return ListedColormap(colors, name="banks")


def draw_bank_panel(ax, layout, cells, every_number=True):
    import matplotlib
    n_rows = 1 + max(r for r, _ in cells)
    n_cols = 1 + max(c for _, c in cells)
    grid = [[math.nan] * n_cols for _ in range(n_rows)]
    for (r, c), (_, bank) in cells.items():
        grid[r][c] = bank
    ax.imshow(grid, cmap=bank_colormap(), vmin=-0.5, vmax=BANKS - 0.5, interpolation="nearest")
    # Thin white lines between the cells.
    ax.set_xticks([c - 0.5 for c in range(1, n_cols)], minor=True)
    ax.set_yticks([r - 0.5 for r in range(1, n_rows)], minor=True)
    ax.grid(which="minor", color="white", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    small = max(n_rows, n_cols) > 16
    for (r, c), (_, bank) in cells.items():
        if every_number or c == 0:  # else only the column the warp reads
            ax.text(c, r, str(bank), ha="center", va="center",
                    fontsize=8 if not small else 5 if every_number else 6.5)
    # The column a warp reads in the transpose's second half: thread t reads (t, 0).
    ax.add_patch(matplotlib.patches.Rectangle((-0.5, -0.5), 1, min(n_rows, 32), fill=False,
                                              edgecolor="black", linewidth=2.5))
    degree = column_degree(cells)
    ways = "no conflict" if degree == 1 else f"{degree}-way conflict"
    ax.set_title(f"{LAYOUT_TITLES.get(layout, layout)}\ncolumn 0 read by a warp: {ways}",
                 fontsize=10)
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.grid(which="major", visible=False)
    ticks = list(range(0, max(n_rows, n_cols), 4))
    ax.set_xticks([t for t in ticks if t < n_cols])
    ax.set_yticks([t for t in ticks if t < n_rows])


def layout_order(maps):
    known = [name for name in LAYOUT_TITLES if name in maps]
    return known + sorted(set(maps) - set(known))


def draw_bankmap(maps, layout, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 7.4))
    draw_bank_panel(ax, layout, maps[layout])
    fig.suptitle("Shared-memory bank of each tile element (4-byte words, 32 banks)",
                 fontsize=11)
    fig.tight_layout()
    save(fig, path, [])


def draw_bankmaps(maps, path):
    plt = pyplot()
    layouts = layout_order(maps)
    fig, axes = plt.subplots(1, len(layouts), figsize=(6.5 * len(layouts), 7), squeeze=False)
    for ax, layout in zip(axes[0], layouts):
        draw_bank_panel(ax, layout, maps[layout], every_number=False)
    fig.suptitle("Shared-memory bank of each tile element; the outlined column is what one warp "
                 "reads", fontsize=12)
    fig.tight_layout()
    save(fig, path, [])


# -- the catalogue -----------------------------------------------------------------------------

def figure_catalog(data, maps, root, problems=None):
    """{name: (caption, draw(path) or None, text when there is nothing to draw, source)} for
    every figure this script and the lesson modules know. The Markdown links a figure only when
    its data is there. A lesson module that fails is reported in `problems` (a list), with its
    file name; without that list, its exception goes on up."""
    catalog = {}
    lessons = {nn: d.name[3:].replace("_", " ") for nn, d in lesson_dirs(root).items()}

    def add(name, caption, ready, draw, missing=NO_BENCH, source="plots/make_plots.py"):
        catalog[name] = (caption, draw if ready else None, missing, source)

    add("progression", "Best kernel of each step against the copy ceiling and cuBLAS",
        bool(journey(data)), lambda path: draw_progression(data, path, lessons))
    sized = size_plot_rows(data)
    add("sizes", "Bandwidth against matrix size, best kernel of each step",
        any(step_number(r.step) and not r.is_reference for r in sized),
        lambda path: draw_sizes(data, path, lessons))
    for nn in sorted(set(lesson_dirs(root)) | {step_number(r.step) for r in sized
                                                if step_number(r.step)}):
        step = f"step{nn}"
        add(f"sizes_{step}", f"{step}: every kernel against matrix size",
            any(r.step == step and not r.is_reference for r in sized),
            lambda path, step=step: draw_step_sizes(data, step, path))
    add("types", "Step 08 in every element type against the copy ceiling, cuBLAS and PyTorch",
        bool(type_shapes(data)), lambda path: draw_types(data, path))
    add("bankmaps", "Bank of each element: plain, padded and swizzled tiles", bool(maps),
        lambda path: draw_bankmaps(maps, path), NO_BANKMAP)
    for layout in sorted(set(maps) | set(LAYOUT_TITLES)):
        add(f"bankmap_{layout}", f"Bank of each element of the {layout} tile", layout in maps,
            lambda path, layout=layout: draw_bankmap(maps, layout, path), NO_BANKMAP)
    # A lesson's own figures: plots/lessons/stepNN.py defines figures(data, mp), which returns
    # (name, caption, ready, draw) tuples; mp is this module (pyplot, save, select, best, ...).
    # See plots/lessons/README.md.
    for source, load in lesson_figure_modules(root):
        try:
            entries = list(load().figures(data, sys.modules[__name__]))
            for entry in entries:
                if not (isinstance(entry, tuple) and len(entry) == 4 and isinstance(entry[0], str)):
                    raise TypeError(f"figures() returned {entry!r}, not (name, caption, ready, "
                                    "draw)")
                if entry[0] in catalog:
                    raise ValueError(f"figure '{entry[0]}' is already drawn by "
                                     f"{catalog[entry[0]][3]}")
                name, caption, ready, draw = entry
                add(name, caption, ready, draw, source=source)
        except Exception as e:
            if problems is None:
                raise
            problems.append(f"{source}: {type(e).__name__}: {e}")
    return catalog


def lesson_figure_modules(root):
    """[(file name, load())] for plots/lessons/step*.py, in file-name order; load() imports
    the module (and raises what the module raises)."""
    import importlib.util

    def loader(path):
        def load():
            spec = importlib.util.spec_from_file_location(f"lesson_figures_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
        return load
    return [(path.relative_to(root).as_posix(), loader(path))
            for path in sorted((root / "plots" / "lessons").glob("step*.py"))]


# --------------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the repository (default: the one holding this script)")
    parser.add_argument("--data", type=Path,
                        help="folder of the CSV files (default: ROOT/plots/data)")
    parser.add_argument("--figures-dir", type=Path,
                        help="where the PNG files go (default: ROOT/plots/figures)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1, with file:line and the reason, if a table "
                             "or number is stale, a marker does not resolve, prose types a "
                             "measured number or a figure is linked from no page")
    parser.add_argument("--no-figures", action="store_true", help="only the Markdown")
    parser.add_argument("--no-markdown", action="store_true", help="only the figures")
    parser.add_argument("--files", nargs="+", type=Path, metavar="MD",
                        help="rewrite or check only these Markdown files (the check that every "
                             "figure is linked still reads every page)")
    parser.add_argument("--skip-code", type=int, default=None,
                        help="exit with this code (a test's 'skipped') when matplotlib is missing")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    data_dir = args.data or root / "plots" / "data"
    figures_dir = args.figures_dir or root / "plots" / "figures"

    data = load_bench(data_dir / "bench.csv")
    profile = [p for p in read_csv(data_dir / "profile.csv") if p.get("step") not in (None, "step")]
    latency = [r for r in read_csv(data_dir / "latency.csv")
               if r.get("pattern") not in (None, "pattern")]
    maps = load_bankmaps(data_dir / "bankmap.csv")
    patterns = [p for p in read_csv(data_dir / "patterns.csv")
                if p.get("type") not in (None, "type")]
    problems = []
    catalog = figure_catalog(data, maps, root, problems)
    runs = sum(r.runs for r in data)
    print(f"data: {len(data)} benchmark measurements ({runs} rows), {len(profile)} profiler "
          f"rows, {len(maps)} bank maps")
    for p in problems:
        print(p, file=sys.stderr)
    failed = bool(problems)

    if not args.check and not args.no_figures:
        try:
            pyplot()
        except ImportError:
            print("make_plots: matplotlib is missing: python3 -m pip install matplotlib",
                  file=sys.stderr)
            return args.skip_code if args.skip_code is not None else 1
        figures_dir.mkdir(parents=True, exist_ok=True)
        for name, (caption, draw, _, source) in catalog.items():
            if draw is None:
                continue
            try:
                draw(figures_dir / f"{name}.png")
            except Exception as e:
                print(f"{source}: figure {name}: {type(e).__name__}: {e}", file=sys.stderr)
                failed = True
                continue
            print(f"figure: {figures_dir / (name + '.png')}")

    if not args.no_markdown:
        only = {f.resolve() for f in args.files} if args.files else None
        failed = check_markdown(root, args.check, data, profile, patterns, catalog,
                                only, latency) or failed
    return 1 if failed else 0


def check_markdown(root, check, data, profile, patterns, catalog, only=None, latency=()):
    """Rewrites (or, with check, compares) every Markdown file; reports what is wrong as
    file:line: reason; checks that every committed PNG is linked. True if anything failed."""
    # Links in the Markdown always point at the committed figures, wherever --figures-dir sent
    # this run's PNG files.
    committed = root / "plots" / "figures"
    failed, lint_counts, texts = False, {}, {}
    for md in markdown_files(root):
        if only is not None and md.resolve() not in only:
            continue

        def render(kind, attrs, md=md):
            if kind == "bench-table":
                return render_bench_table(attrs, data, md)
            if kind == "profile-table":
                return render_profile_table(attrs, profile, md)
            if kind == "results-table":
                return render_results_table(attrs, data, md, root)
            if kind == "pattern-table":
                return render_pattern_table(attrs, patterns, md)
            return render_figure(attrs, catalog, md, committed)

        old = md.read_text()
        new, findings, changed = rewrite(old, render,
                                         lambda text: render_num(text, data, profile, latency))
        texts[md] = new
        shown = md.relative_to(root).as_posix()
        for f in findings:
            print(f"{shown}:{f.line}: {f.message}", file=sys.stderr)
            if f.lint:
                lint_counts[shown] = lint_counts.get(shown, 0) + 1
        failed = failed or bool(findings)
        if new == old:
            continue
        if check:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), f"{shown} (committed)",
                f"{shown} (from plots/data)"))
            for line, before, after in changed:
                print(f"{shown}:{line}: stale number: the line reads\n    {before.strip()}\n"
                      f"  and the data gives\n    {after.strip()}", file=sys.stderr)
            print(f"{shown}: stale: run `make plots` and commit the result", file=sys.stderr)
            failed = True
        else:
            md.write_text(new)
            print(f"updated: {shown}")

    # Every PNG of plots/figures is shown on some page.
    for md in all_markdown(root):
        texts.setdefault(md, md.read_text(errors="replace"))
    linked = linked_pngs(texts, committed)
    for png in sorted(committed.glob("*.png")):
        if png.name not in linked:
            print(f"plots/figures/{png.name}: linked from no Markdown page: show it with "
                  f"<!-- figure name={png.stem} --> on a page, or delete it", file=sys.stderr)
            failed = True
    if lint_counts:
        total = sum(lint_counts.values())
        print(f"lint: {total} measured number(s) typed in prose, to put through num markers: "
              + ", ".join(f"{f} {n}" for f, n in sorted(lint_counts.items())), file=sys.stderr)
    return failed


if __name__ == "__main__":
    sys.exit(main())
