#!/usr/bin/env python3
"""Redraws every figure and every measured table of the course from the data in plots/data/.

    python3 plots/make_plots.py           figures into plots/figures/, tables into the Markdown
    python3 plots/make_plots.py --check   exit 1, with a diff, if any Markdown block is stale

Inputs, each optional (a missing one gives "no measurements yet", never an error):
  plots/data/bench.csv     `make bench`: one row per kernel per run, the columns of
                           common/report.hpp (step,kernel,block,tile,type,rows,cols,batch,...)
  plots/data/profile.csv   `make profile STEP=NN`: one row per Nsight Compute metric
  plots/data/bankmap.csv   `./bankmap --csv`: the bank of every element of a plain, a padded and
                           a swizzled tile
  plots/data/patterns.csv  `./step08_patterns --csv`: step 08's read and write patterns, timed
                           apart against linear streams

Outputs:
  plots/figures/*.png      the figures listed in figure_catalog()
  the text between markers in README.md, steps/*/README.md and the exercises' Markdown:

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

  A marker must start its line; markers inside ``` fences are examples and are left alone.

Only the standard library, and matplotlib (Agg backend) for the figures. Sizes are in
GB = 1e9 bytes, as in the step binaries' own tables.
"""

import argparse
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
    "07": "64 x 64 tiles: more bytes in flight",
    "08": "any shape, any element type",
    "09": "in place, and many small matrices at once",
}

NO_BENCH = "_No measurements yet: run `make bench` on a GPU, then `make plots`._"
NO_PROFILE = ("_No profiler counters yet: run `make profile STEP=NN` on a GPU, "
              "then `make plots`._")
NO_BANKMAP = ("_No bank map yet: write plots/data/bankmap.csv with `./bankmap --csv` "
              "(see plots/data/README.md), then run `make plots`._")


# --------------------------------------------------------------------------------------------
# Reading the data
# --------------------------------------------------------------------------------------------

class Row:
    """One row of bench.csv, with its numbers parsed."""

    NUMBERS = ("median_ms", "min_ms", "gbps", "pct_copy", "pct_peak")
    INTEGERS = ("rows", "cols", "batch")

    def __init__(self, fields):
        self.__dict__.update(fields)
        for name in self.INTEGERS:
            setattr(self, name, int(fields[name]))
        for name in self.NUMBERS:
            setattr(self, name, float(fields[name] or 0))

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


def load_bench(path):
    """bench.csv as Rows. A kernel measured twice on the same problem keeps its last row, so a
    re-run appended to the file replaces the old numbers."""
    latest = {}
    for i, fields in enumerate(read_csv(path), start=2):
        if fields.get("step") in (None, "", "step"):  # a repeated header from a concatenation
            continue
        try:
            row = Row(fields)
        except (KeyError, TypeError, ValueError) as e:
            print(f"{path}:{i}: skipped a malformed row ({e})", file=sys.stderr)
            continue
        latest[(row.step, row.kernel, row.type, row.rows, row.cols, row.batch)] = row
    return list(latest.values())


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


def normalize_step(name):
    """Accepts "step05", "05" or "5" in a marker; other names ("pytorch") pass unchanged."""
    return f"step{int(name):02d}" if name.isdigit() else name


def measured_on(rows):
    """"Measured on <device>, driver <d>, CUDA <c>, <date>": one clause per device setup."""
    setups = {}
    for r in rows:
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


def bench_row_cells(r, with_step):
    """kernel | shape | median ms | GB/s | % of copy | % of peak (| step first when asked)."""
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
        numbers = ["refused", "-", "-", "-"]
    else:
        numbers = [fmt_ms(r.median_ms), f"{r.gbps:.0f}", f"{r.pct_copy:.1f}",
                   f"{r.pct_peak:.1f}"]
    first = [("" if r.is_reference else r.step)] if with_step else []
    return first + [name, shape] + numbers


def render_bench_table(attrs, data, md_path):
    check_attrs("bench-table", attrs, ("steps", "shapes", "type", "kernels", "batch"),
                required=("steps", "shapes"))
    steps = [normalize_step(s) for s in attrs["steps"].split(",")]
    shapes = parse_shapes(attrs["shapes"])
    types = attrs.get("type", "f32").split(",")
    batch = int(attrs.get("batch", "1"))
    only = attrs.get("kernels", "")
    with_step = len(steps) > 1

    body, shown = [], []
    for type_ in types:
        for shape in shapes:
            here = select(data, shape=shape, type_=type_, batch=batch)
            per_step = [[r for r in here if r.step == s] for s in steps]
            # The copy ceiling of the first listed step that ran here: the rows below it are
            # percentages of that same kind of run.
            ran_steps = [rows for rows in per_step if rows]
            refs = []
            if ran_steps:
                copy = best([r for r in ran_steps[0] if r.is_copy])
                refs += [copy] if copy else []
            cublas = next((c for c in (best([r for r in rows if r.is_cublas]) for rows in per_step)
                           if c), None)
            refs += [cublas] if cublas else []
            kernels = [r for rows in per_step for r in rows
                       if not r.is_reference and only in r.kernel]
            if not kernels:
                continue
            for r in refs + kernels:
                cells = bench_row_cells(r, with_step)
                if len(types) > 1:  # the type goes into the shape column
                    cells[-5] += f" {type_}"
                body.append(cells)
                shown.append(r)
    if not body:
        return [NO_BENCH]
    header = (["step"] if with_step else []) + ["kernel", "shape", "median ms", "GB/s",
                                                 "% of copy", "% of peak"]
    return table(header, body) + ["", f"Measured on {measured_on(shown)} (`make bench`). "
                                  "Each row's % of copy is against the copy ceiling timed in the "
                                  "same run as that row; the copy row shown is one of those runs'."]


# Nsight Compute metric names (and scripts/profile.sh's derived ones) -> short column headers,
# in the order the columns appear. Byte counts are shown in MB (1e6 bytes).
METRICS = {
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
        runs = ", ".join(f"`make profile STEP={step_number(s)}`" for s in steps if step_number(s))
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
    nn = ", ".join(f"`make profile STEP={step_number(s)}`" for s in steps if step_number(s))
    return (table((["step"] if with_step else []) + ["kernel", "shape"] + [cell(h) for h in headers],
                  body)
            + ["", f"Nsight Compute on {'; '.join(setups)} ({nn or 'scripts/profile.sh'})."])


NO_PATTERNS = ("_No pattern timings yet: run `./step08_patterns --csv plots/data/patterns.csv` "
               "on a GPU, then `make plots`._")


def render_pattern_table(attrs, patterns, md_path):
    """step08_patterns' lines for one element type at the shapes listed, latest run of each."""
    check_attrs("pattern-table", attrs, ("type", "shapes"), required=("type", "shapes"))
    shapes = parse_shapes(attrs["shapes"])
    latest = {}  # a line measured again replaces the old one
    for p in patterns:
        shape = (int(p["rows"]), int(p["cols"]))
        if p["type"] == attrs["type"] and shape in shapes:
            latest[(shape, p["pattern"], p["group_rows"])] = p
    if not latest:
        return [NO_PATTERNS]
    body = []
    for (shape, pattern, group), p in sorted(latest.items(), key=lambda kv: shapes.index(kv[0][0])):
        body.append([cell(pattern), fmt_shape(shape), group, fmt_ms(float(p["median_ms"])),
                     f"{float(p['gbps']):.0f}", f"{float(p['pct_stream']):.1f}"])
    setups = sorted({f"{p['device']}, driver {p['driver']}, CUDA {p['cuda']}, {p['date']}"
                     for p in latest.values()})
    return (table(["pattern", "shape", "group", "median ms", "GB/s", "% of stream"], body)
            + ["", f"Measured on {'; '.join(setups)} (`./step08_patterns --type {attrs['type']}`). "
                   "group: tile rows per group of the tile order, '-' for a linear stream; "
                   "% of stream: against the linear stream of the same kind (reads, writes, or "
                   "the copy for the transpose)."])


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


def render_results_table(attrs, data, md_path, root):
    check_attrs("results-table", attrs, ())
    lessons = lesson_dirs(root)
    numbers = sorted(set(lessons) | {n for n in (step_number(r.step) for r in data) if n})
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
        cells = [link, cell(lesson_idea(nn, folder))]
        for shape in HEADLINE_SHAPES:
            top = best([r for r in select(data, step=f"step{nn}", shape=shape, type_="f32")
                        if not r.is_reference])
            cells += numbers_of(top)
            shown += [top] if top else []
        body.append(cells)
    # References: the best copy ceiling and cuBLAS any run measured at the headline shapes, and
    # PyTorch where it was measured.
    references = [("copy ceiling", "cudaMemcpy or a float4 copy kernel", lambda r: r.is_copy),
                  ("cuBLAS geam", "the library's transpose", lambda r: r.is_cublas),
                  ("PyTorch", "the fastest PyTorch call measured",
                   lambda r: r.step == "pytorch" and not r.is_copy)]
    for label, idea, keep in references:
        cells, any_found = [f"*{label}*", idea], False
        for shape in HEADLINE_SHAPES:
            top = best([r for r in select(data, shape=shape, type_="f32") if keep(r)])
            if top and label == "copy ceiling":  # the ceiling is 100% of itself
                cells += [f"{top.gbps:.0f}", "100.0"]
            else:
                cells += numbers_of(top)
            any_found = any_found or top is not None
            shown += [top] if top else []
        if any_found or label == "copy ceiling":
            body.append(cells)
    lines = table(header, body)
    if shown:
        return lines + ["", f"Best kernel of each step, float32. Measured on {measured_on(shown)} "
                            "(`make bench`)."]
    return lines + ["", NO_BENCH]


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
        caption, draw, missing = entry
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


def parse_attrs(text):
    attrs = {}
    for item in text.split():
        if "=" not in item:
            raise MarkerError(f"'{item}' is not name=value")
        key, value = item.split("=", 1)
        attrs[key] = value
    return attrs


def rewrite(text, render):
    """The text with every marker block re-rendered by render(kind, attrs), and the errors."""
    lines = text.split("\n")
    out, errors, i, fence = [], [], 0, None
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        stripped = line.lstrip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
            continue
        m = None if fence else OPEN.match(line)
        if not m:
            if not fence and ALMOST.match(line):
                errors.append(f"line {i}: a marker must start the line and end with '-->' on it")
            continue
        kind = m.group(1)
        close = f"<!-- /{kind} -->"
        end = next((j for j in range(i, len(lines)) if lines[j].strip() == close), None)
        if end is None:
            errors.append(f"line {i}: {kind} has no closing '{close}'")
            continue
        try:
            body = render(kind, parse_attrs(m.group(2)))
            out += [""] + body + [""]
        except MarkerError as e:
            errors.append(f"line {i}: {e}")
            out += lines[i:end]  # leave a block it cannot render as it is
        out.append(lines[end])
        i = end + 1
    return "\n".join(out), errors


def markdown_files(root):
    files = [root / "README.md"]
    files += sorted((root / "steps").glob("*/README.md"))
    files += sorted((root / "exercises").glob("*.md"))
    files += sorted((root / "exercises").glob("*/README.md"))
    return [f for f in files if f.exists()]


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


def draw_progression(data, path, lessons):
    plt = pyplot()
    shapes = [s for s in HEADLINE_SHAPES if headline_bests(data, s)]
    fig, axes = plt.subplots(1, len(shapes), figsize=(7.5 * len(shapes), 5.6), squeeze=False,
                             sharey=True)
    shown = [r for s in shapes for r in headline_bests(data, s).values()]
    shown += [r for r in data if r.is_reference and r.shape in shapes and r.type == "f32"
              and r.batch == 1 and r.ran]
    ylim = max(r.gbps for r in shown) * 1.15
    for ax, shape in zip(axes[0], shapes):
        bests = headline_bests(data, shape)
        steps = sorted(bests)
        x = range(len(steps))
        ax.bar(x, [bests[s].gbps for s in steps], color=[step_color(s) for s in steps])
        for i, s in enumerate(steps):
            # GB/s and % of copy on each bar: inside a tall bar, above a short one.
            inside = bests[s].gbps > 0.15 * ylim
            ax.annotate(f"{bests[s].gbps:.0f}\n{bests[s].pct_copy:.0f}%", (i, bests[s].gbps),
                        textcoords="offset points", xytext=(0, -4 if inside else 3),
                        ha="center", va="top" if inside else "bottom", fontsize=8,
                        color="white" if inside else "black",
                        fontweight="bold" if inside else "normal")
        names = [lessons.get(step_number(s), "").replace(" ", "\n") for s in steps]
        ax.set_xticks(list(x), [f"{step_number(s)}\n{n}" for s, n in zip(steps, names)],
                      fontsize=7.5)
        ax.set_xlabel("step (best kernel of each; labels: GB/s and % of copy)")
        copy = best([r for r in select(data, shape=shape, type_="f32") if r.is_copy])
        cublas = best([r for r in select(data, shape=shape, type_="f32") if r.is_cublas])
        if copy:
            ax.axhline(copy.gbps, color="black", linestyle="--", linewidth=1.2,
                       label=f"copy ceiling {copy.gbps:.0f} GB/s")
            # A second axis in % of the copy ceiling, so the bars read both ways.
            ax.secondary_yaxis("right", functions=(lambda g, c=copy.gbps: 100 * g / c,
                                                   lambda p, c=copy.gbps: p * c / 100)
                               ).set_ylabel("% of copy ceiling")
            shown.append(copy)
        if cublas:
            ax.axhline(cublas.gbps, color="tab:gray", linestyle=":", linewidth=1.5,
                       label=f"cuBLAS geam {cublas.gbps:.0f} GB/s")
            shown.append(cublas)
        ax.set_title(f"{shape[0]} x {shape[1]} float32")
        ax.grid(axis="x", visible=False)
        if copy or cublas:
            ax.legend(loc="upper left", fontsize=8)
    axes[0][0].set_ylabel("bandwidth, GB/s (2 x matrix bytes / median time)")
    axes[0][0].set_ylim(0, ylim)
    fig.suptitle("The journey: each step's best kernel against the copy ceiling")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, path, shown)


def fmt_bytes(n):
    return f"{n / 1e9:.3g} GB" if n >= 1e9 else f"{n / 1e6:.3g} MB"


def size_axis(ax, data_rows):
    """Log-scale x axis of matrix size in MB, ticks at the square sizes measured."""
    squares = sorted({r.rows for r in data_rows if r.rows == r.cols})
    ax.set_xscale("log")
    ax.set_xticks([n * n * 4 / 1e6 for n in squares],
                  [f"{n}²\n{fmt_bytes(n * n * 4)}" for n in squares], fontsize=8)
    ax.minorticks_off()
    ax.set_xlabel("matrix size (N x N float32; hollow markers: rectangular shapes)")
    ax.set_ylabel("bandwidth, GB/s")


def plot_series(ax, rows, color, label, marker="o"):
    """One line through the square shapes, hollow markers at the rectangular ones."""
    squares = sorted((r for r in rows if r.rows == r.cols), key=lambda r: r.rows)
    others = [r for r in rows if r.rows != r.cols]
    mb = lambda r: r.rows * r.cols * 4 / 1e6
    ax.plot([mb(r) for r in squares], [r.gbps for r in squares], marker=marker, color=color,
            label=label, markersize=4)
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
    copies, cublas = reference_series(data)
    if copies:
        plot_series(ax, copies, "black", "copy ceiling", marker="s")
    if cublas:
        plot_series(ax, cublas, "0.55", "cuBLAS geam", marker="^")
    shown += copies + cublas
    size_axis(ax, rows)
    ax.set_ylim(0, max(r.gbps for r in shown) * 1.1)
    ax.set_title("Bandwidth against matrix size: the best kernel of each step, float32")
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


def draw_bank_panel(ax, layout, cells, every_number=True):
    import matplotlib
    n_rows = 1 + max(r for r, _ in cells)
    n_cols = 1 + max(c for _, c in cells)
    grid = [[math.nan] * n_cols for _ in range(n_rows)]
    for (r, c), (_, bank) in cells.items():
        grid[r][c] = bank
    # 32 banks, 32 hues from red through magenta (stopping short of red again, so that bank 31
    # does not look like bank 0): neighbouring banks get neighbouring hues.
    ax.imshow(grid, cmap=matplotlib.colormaps["hsv"], vmin=-0.5, vmax=36.5,
              interpolation="nearest", alpha=0.55)
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

def figure_catalog(data, maps, root):
    """{name: (caption, draw(path) or None, text when there is nothing to draw)} for every figure
    this script knows. The Markdown links a figure only when its data is there."""
    catalog = {}
    lessons = {nn: d.name[3:].replace("_", " ") for nn, d in lesson_dirs(root).items()}

    def add(name, caption, ready, draw, missing=NO_BENCH):
        catalog[name] = (caption, draw if ready else None, missing)

    add("progression", "Best kernel of each step against the copy ceiling and cuBLAS",
        any(headline_bests(data, s) for s in HEADLINE_SHAPES),
        lambda path: draw_progression(data, path, lessons))
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
    for module in lesson_figure_modules(root):
        for name, caption, ready, draw in module.figures(data, sys.modules[__name__]):
            add(name, caption, ready, draw)
    return catalog


def lesson_figure_modules(root):
    """The modules of plots/lessons/*.py, in file-name order."""
    import importlib.util
    modules = []
    for path in sorted((root / "plots" / "lessons").glob("step*.py")):
        spec = importlib.util.spec_from_file_location(f"lesson_figures_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules.append(module)
    return modules


# --------------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the repository (default: the one holding this script)")
    parser.add_argument("--data", type=Path, help="folder of the CSV files (default: ROOT/plots/data)")
    parser.add_argument("--figures-dir", type=Path,
                        help="where the PNG files go (default: ROOT/plots/figures)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 with a diff if a Markdown block is stale")
    parser.add_argument("--no-figures", action="store_true", help="only the Markdown blocks")
    parser.add_argument("--no-markdown", action="store_true", help="only the figures")
    parser.add_argument("--skip-code", type=int, default=None,
                        help="exit with this code (a test's 'skipped') when matplotlib is missing")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    data_dir = args.data or root / "plots" / "data"
    figures_dir = args.figures_dir or root / "plots" / "figures"

    data = load_bench(data_dir / "bench.csv")
    profile = [p for p in read_csv(data_dir / "profile.csv") if p.get("step") not in (None, "step")]
    maps = load_bankmaps(data_dir / "bankmap.csv")
    patterns = [p for p in read_csv(data_dir / "patterns.csv")
                if p.get("type") not in (None, "type")]
    catalog = figure_catalog(data, maps, root)
    print(f"data: {len(data)} benchmark rows, {len(profile)} profiler rows, "
          f"{len(maps)} bank maps")
    failed = False

    if not args.check and not args.no_figures:
        try:
            pyplot()
        except ImportError:
            print("make_plots: matplotlib is missing: python3 -m pip install matplotlib",
                  file=sys.stderr)
            return args.skip_code if args.skip_code is not None else 1
        figures_dir.mkdir(parents=True, exist_ok=True)
        for name, (caption, draw, _) in catalog.items():
            if draw is None:
                continue
            draw(figures_dir / f"{name}.png")
            print(f"figure: {figures_dir / (name + '.png')}")

    if not args.no_markdown:
        # Links in the Markdown always point at the committed figures, wherever --figures-dir
        # sent this run's PNG files.
        committed = root / "plots" / "figures"

        for md in markdown_files(root):
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
            new, errors = rewrite(old, render)
            shown = md.relative_to(root).as_posix()
            for e in errors:
                print(f"{shown}: {e}", file=sys.stderr)
            failed = failed or bool(errors)
            if new == old:
                continue
            if args.check:
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(True), new.splitlines(True), f"{shown} (committed)",
                    f"{shown} (from plots/data)"))
                print(f"{shown}: stale: run `make plots` and commit the result", file=sys.stderr)
                failed = True
            else:
                md.write_text(new)
                print(f"updated: {shown}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
