"""What the markers hold, from the data: the blocks and the values of the num markers, and how
their numbers are written (plots/README.md, "Markers", gives the syntax of each). Finding the
markers in a page is markdown.py's job; this only says what goes between their tags.
Standard library only.
"""

import math
import os
import re
from pathlib import Path

from facts import gpu_count, kernel_of, normalize_step
from markdown import MarkerError, check_attrs, parse_attrs, parse_shapes
from rows import NO_BENCH, DeviceError, best, journey, measured_on, median, select, step_number


def renderers(data, figures, md, figures_dir):
    """(render(kind, text), render_num(text)): what markdown.rewrite() calls for the page md;
    figure links point at figures_dir, the committed figures."""
    blocks = {"bench-table": lambda text: render_bench_table(text, data),
              "profile-table": lambda text: render_profile_table(text, data),
              "results-table": lambda text: render_results_table(text, data, md),
              "pattern-table": lambda text: render_pattern_table(text, data),
              "figure": lambda text: render_figure(text, figures, md, figures_dir, data)}
    return (lambda kind, text: blocks[kind](text)), (lambda text: render_num(text, data))


# -- formats ------------------------------------------------------------------------------------

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
    """A profiler value as the profile tables print it."""
    if v == int(v) or abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


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


def fmt_fixed(v, decimals):
    text = f"{v:.{decimals}f}"
    return text[1:] if re.fullmatch(r"-0(\.0*)?", text) else text  # no "-0.0"



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


def how_many(counts):
    """"3" for runs that all count 3, "2 to 3" else: how many runs the medians are of."""
    counts = sorted(set(counts))
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"


def some(names, most=6):
    """'a; b; c' for a short list, 'a; b; ... and 9 more' for a long one."""
    if len(names) <= most:
        return "; ".join(names)
    return "; ".join(names[:most]) + f"; ... and {len(names) - most} more"


NO_PROFILE = ("_No profiler counters yet: run `make profile STEP=NN` on a GPU, "
              "then `make plots`._")
NO_PATTERNS = ("_No pattern timings yet: run `./TOOL --csv plots/data/patterns.csv` "
               "on a GPU, then `make plots`._")


def device_data(data, attrs, prefix=""):
    """The data a marker reads: the rows of the device its device= names, else the reference
    device's."""
    text = attrs.get(prefix + "device")
    if text is None:
        return data
    try:
        return data.on(text)
    except DeviceError as e:
        raise MarkerError(f"{prefix}device: {e}")


def device_of(row):
    return row.device if hasattr(row, "device") else row.get("device", "")


def only_elsewhere(data, what, elsewhere):
    """Raises MarkerError when rows of `elsewhere` (those the marker asks for, on any device)
    were measured on other devices than the one the marker reads, saying which device= shows
    them; returns when there are none."""
    others = sorted({device_of(r) for r in elsewhere} - {data.device, ""})
    if data.device is None or not others:
        return
    which = ("the reference device, steps/course.toml" if data.device == data.reference_device
             else "the device asked")
    hints = " or ".join(f"device={data.hint(d)}" for d in others)
    raise MarkerError(f"{what}: no rows on {data.device} ({which}); measured on "
                      f"{'; '.join(others)}: say {hints}")


def parse_ids(attrs):
    return [i.strip() for i in attrs["ids"].split(",") if i.strip()] if "ids" in attrs else None


# -- bench-table ----------------------------------------------------------------------------------

def bench_row_cells(r, with_step, with_spread=False):
    """(step |) kernel | shape | median ms | GB/s | % of copy | (spread |) % of peak."""
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
            numbers.append(f"{r.spread:.1f}" if r.runs > 1 else "-")
        numbers.append(f"{r.pct_peak:.1f}")
    first = [("" if r.is_reference else r.step)] if with_step else []
    return first + [name, shape] + numbers


def runs_note(rows):
    """The sentence that says over how many runs the numbers are medians, '' for single runs."""
    counts = sorted({r.runs for r in rows})
    if not counts or counts == [1]:
        return ""
    return (f"Each row is the median of {how_many(counts)} separate runs (each the median of its "
            "repetitions); spread: the largest minus the smallest % of copy over those runs, in "
            "points. Two kernels closer than their spreads are level.")


def render_bench_table(text, data):
    _, attrs = parse_attrs(text)
    check_attrs("bench-table", attrs, ("steps", "shapes", "type", "ids", "batch", "device"),
                required=("steps", "shapes"))
    data = device_data(data, attrs)
    steps = [normalize_step(s) for s in attrs["steps"].split(",")]
    shapes = parse_shapes(attrs["shapes"])
    types = attrs.get("type", "f32").split(",")
    try:
        batch = int(attrs.get("batch", "1"))
    except ValueError:
        raise MarkerError(f"batch: '{attrs['batch']}' is not a whole number")
    ids = parse_ids(attrs)
    with_step = len(steps) > 1

    picked = []
    for type_ in types:
        for shape in shapes:
            here = select(data.bench, shape=shape, type_=type_, batch=batch)
            per_step = [[r for r in here if r.step == s] for s in steps]
            kernels = [r for rows in per_step for r in rows
                       if not r.is_reference and (ids is None or r.id in ids)]
            # The copy ceiling of the first listed step that ran here (on as many GPUs as the
            # kernels shown): the rows below it are percentages of that same kind of run.
            gpus = {gpu_count(r.id) for r in kernels}
            ran_steps = [rows for rows in per_step if rows]
            refs = []
            if ran_steps:
                copy_row = best([r for r in ran_steps[0] if r.is_copy and gpu_count(r.id) in gpus])
                refs += [copy_row] if copy_row else []
            cublas = next((c for c in (best([r for r in rows if r.is_cublas]) for rows in per_step)
                           if c), None)
            refs += [cublas] if cublas else []
            if kernels:
                picked += [(type_, r) for r in refs + kernels]
    if not picked:
        only_elsewhere(data, "bench-table", [
            r for r in data.all_bench if r.step in steps and r.shape in shapes
            and r.type in types and r.batch == batch and not r.is_reference
            and (ids is None or r.id in ids)])
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


# -- profile-table --------------------------------------------------------------------------------

# Nsight Compute metric names (and scripts/profile.py's derived ones) -> short column headers,
# in the order the columns appear. Byte counts are shown in MB (1e6 bytes), times in us.
METRICS = {
    "gpu__time_duration.sum": "time us",
    "dram__bytes_read.sum": "DRAM read MB",
    "dram__bytes_write.sum": "DRAM write MB",
    "global_ld_sectors_per_request": "ld sectors/req",
    "global_st_sectors_per_request": "st sectors/req",
    "lts__t_sectors_srcunit_tex_op_read.sum": "L2 sectors read (M)",
    "lts__t_sectors_srcunit_tex_op_write.sum": "L2 sectors written (M)",
    "smsp__inst_executed.sum": "instructions (M)",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "ld sectors",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "st sectors",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "ld requests",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": "st requests",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "smem ld conflicts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "smem st conflicts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "smem ld wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "smem st wavefronts",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy %",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active %",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM % of peak",
    "launch__registers_per_thread": "registers/thread",
}
# Raw counts that the ratios above already say; shown only with `metrics=all` in the marker.
HIDDEN_METRICS = {"ld sectors", "st sectors", "ld requests", "st requests"}
BYTE_UNITS = {"byte": 1, "b": 1, "kbyte": 1e3, "kb": 1e3, "mbyte": 1e6, "mb": 1e6,
              "gbyte": 1e9, "gb": 1e9, "tbyte": 1e12, "kib": 1024, "mib": 1 << 20,
              "gib": 1 << 30}
MICROSECONDS = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3,
                "second": 1e6, "s": 1e6}


def metric_column(metric, unit):
    """The header of a metric and the factor that converts its values for that header."""
    unit_key = (unit or "").strip().lower()
    label = METRICS.get(metric)
    if label and label.endswith(" MB"):
        return label, BYTE_UNITS.get(unit_key, 1) / 1e6  # ncu's bytes, in any prefix
    if label and label.endswith(" us"):
        return label, MICROSECONDS.get(unit_key, 1)  # ncu's times, in any unit
    if label and label.endswith(" (M)"):
        return label, 1e-6  # counts in millions
    if label:
        return label, 1.0
    stall = re.fullmatch(r"smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio", metric)
    if stall:  # warps waiting for that reason per instruction issued
        return "stalled: " + stall.group(1).replace("_", " "), 1.0
    return (f"{metric} ({unit})" if unit else metric), 1.0


def profile_step(step):
    """What `make profile STEP=` takes: "step05" -> "05", "step07-lab" -> "07-lab"; else None."""
    nn = step_number(step.removesuffix("-lab"))
    return nn + ("-lab" if step.endswith("-lab") else "") if nn else None


def profile_value(p):
    """A profiler row's value as the tables print it in its column's unit; None when it is not a
    number."""
    try:
        return fmt_value(float(p["value"].replace(",", "")) * metric_column(p["metric"],
                                                                          p.get("unit", ""))[1])
    except ValueError:
        return None


def render_profile_table(text, data):
    _, attrs = parse_attrs(text)
    check_attrs("profile-table", attrs, ("steps", "ids", "shapes", "type", "metrics", "device"),
                required=("steps",))
    data = device_data(data, attrs)
    steps = [normalize_step(s) for s in attrs["steps"].split(",")]
    ids = parse_ids(attrs)
    shapes = parse_shapes(attrs["shapes"]) if "shapes" in attrs else None
    type_ = attrs.get("type")

    def wanted(p):
        return (p["step"] in steps and (ids is None or p["id"] in ids)
                and (shapes is None or (int(p["rows"]), int(p["cols"])) in shapes)
                and (type_ is None or p["type"] == type_))
    picked = [p for p in data.profile if wanted(p)]
    runs = ", ".join(f"`make profile STEP={profile_step(s)}`" for s in steps if profile_step(s))
    if not picked:
        only_elsewhere(data, "profile-table", [p for p in data.all_profile if wanted(p)])
        return [NO_PROFILE.replace("`make profile STEP=NN`", runs)] if runs else [NO_PROFILE]
    # One table row per (step, kernel, problem) in the order of the steps listed; one column
    # per metric, known metrics in METRICS' order, unknown ones after, in order of appearance.
    order = list(METRICS)
    columns, values, keys, names = {}, {}, [], {}
    for p in sorted(picked, key=lambda p: steps.index(p["step"])):
        key = (p["step"], p["id"], p["type"], int(p["rows"]), int(p["cols"]))
        if key not in values:
            keys.append(key)
            values[key] = {}
        names[key] = p["kernel"]
        header = metric_column(p["metric"], p.get("unit", ""))[0]
        if header in HIDDEN_METRICS and attrs.get("metrics") != "all":
            continue
        rank = order.index(p["metric"]) if p["metric"] in order else len(order) + len(columns)
        columns.setdefault(header, rank)
        values[key][header] = profile_value(p) or cell(p["value"])
    headers = sorted(columns, key=columns.get)
    with_step = len(steps) > 1
    body = []
    for key in keys:
        step, _, t, rows, cols = key
        body.append(([step] if with_step else []) + [cell(names[key]),
                                                     fmt_shape((rows, cols), 1, t)]
                    + [values[key].get(h, "-") for h in headers])
    setups = sorted({f"{p['device']}, driver {p['driver']}, {p['date']}" for p in picked})
    columns = (["step"] if with_step else []) + ["kernel", "shape"] + [cell(h) for h in headers]
    return (table(columns, body)
            + ["", f"Nsight Compute on {'; '.join(setups)} ({runs or 'scripts/profile.py'})."])


# -- pattern-table --------------------------------------------------------------------------------

def render_pattern_table(text, data):
    """The lines of the pattern tool (tool=, the binary that writes patterns.csv) for one element
    type at the shapes listed: the median of the runs of each line (every row of the same shape,
    pattern and group is one run), with the spread."""
    _, attrs = parse_attrs(text)
    check_attrs("pattern-table", attrs, ("tool", "type", "shapes"),
                required=("tool", "type", "shapes"))
    shapes = parse_shapes(attrs["shapes"])
    runs = {}
    for p in data.patterns:
        shape = (int(p["rows"]), int(p["cols"]))
        if p["type"] == attrs["type"] and shape in shapes:
            runs.setdefault((shape, p["pattern"], p["group_rows"]), []).append(p)
    if not runs:
        return [NO_PATTERNS.replace("TOOL", attrs["tool"])]
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
    over = f"{how_many(len(got) for got in runs.values())} runs"
    return (table(["pattern", "shape", "group", "median ms", "GB/s", "% of stream", "spread"],
                  body)
            + ["", f"Measured on {'; '.join(setups)} (`./{attrs['tool']} --type {attrs['type']}`, "
                   f"the median of {over}). group: tile rows per group of the tile order, '-' for "
                   "a linear stream; % of stream: against the linear stream of the same kind "
                   "(reads, writes, or the copy for the transpose); spread: the largest minus the "
                   "smallest % of stream over the runs, in points."])


# -- results-table --------------------------------------------------------------------------------

def is_peer(r):
    """A row of a library a user would pick instead: cuBLAS, cuBLASLt, PyTorch (not a copy)."""
    return r.is_cublas or (r.step == "pytorch" and not r.is_copy)


def render_results_table(text, data, md_path):
    """The README's table: each step's best kernel at the headline shapes (steps/course.toml),
    float32, a step with [twice] in its facts twice; then the copy ceiling, cuBLAS, PyTorch."""
    _, attrs = parse_attrs(text)
    check_attrs("results-table", attrs, ())
    lessons = data.course.lessons()
    shapes = data.course.headline_shapes
    rows_of = {}
    for step, role, label, per_shape in journey(data):
        rows_of.setdefault(step_number(step), []).append((role, label, per_shape))
    # A lesson with no row on this device: its rows from the device that measured it, named in
    # its row and in a note of its own.
    apart = {}
    others = sorted({r.device for r in data.all_bench} - {data.device}) if data.device else []
    for device in others:
        for step, role, label, per_shape in journey(data.on(device)):
            nn = step_number(step)
            if nn not in rows_of or apart.get(nn) == device:
                rows_of.setdefault(nn, []).append((role, label, per_shape))
                apart[nn] = device
    here = md_path.parent
    header = ["step", "idea"]
    for shape in shapes:
        header += [f"GB/s {shape[0]}x{shape[1]}", "% of copy", "vs best peer"]
    # The strongest peer a user would pick at each shape (cuBLAS geam, cuBLASLt's transform,
    # PyTorch eager or compiled): each row's margin over it, in points of % of copy.
    peer = {shape: best([r for r in select(data.bench, shape=shape, type_="f32")
                         if is_peer(r)]) for shape in shapes}

    def across_gpus_peer(row, shape):
        """Step 10's peer: PyTorch's fastest program on as many GPUs, as % of the all-to-all
        of step 10's own run (the row's % of copy is of that all-to-all)."""
        g = gpu_count(row.id)
        on = f"-{g}gpus" if g != "1" else "-1gpu"
        a2a = best([r for r in select(data.bench, step=row.step, shape=shape, type_="f32")
                    if r.id == "a2a" + on])
        torch = [r for r in select(data.bench, step="pytorch-nccl", shape=shape, type_="f32")
                 if r.id.endswith(on) and not r.id.startswith("a2a") and r.ran]
        # Only against what an expert writes: the symmetric-memory programs among them.
        if not a2a or not any(r.id.startswith("torch-symm") for r in torch):
            return None
        return 100.0 * a2a.median_ms / min(r.median_ms for r in torch)

    def numbers_of(row, shape, margin=True):
        if not row:
            return ["-", "-", "-"]
        top = peer[shape]
        vs = "-"
        if margin and gpu_count(row.id):
            theirs = across_gpus_peer(row, shape)
            vs = f"{row.pct_copy - theirs:+.1f}" if theirs is not None else "-"
        elif margin and top:
            vs = f"{row.pct_copy - top.pct_copy:+.1f}"
        return [f"{row.gbps:.0f}", f"{row.pct_copy:.1f}", vs]

    body, shown, twice_notes = [], [], []
    for nn in sorted(set(lessons) | set(rows_of)):
        facts = lessons.get(nn)
        lesson = facts.folder / "README.md" if facts else None
        if lesson and lesson.exists():
            link = f"[{facts.name}]({Path(os.path.relpath(lesson, here)).as_posix()})"
        else:  # a lesson still to be written
            link = facts.name if facts else f"step{nn}"
        idea = facts.idea if facts else ""
        for role, label, per_shape in rows_of.get(nn, [("", "", {})]):
            kernels = list(dict.fromkeys(r.kernel for r in per_shape.values() if r))
            if role == "headline":
                text = f"{idea}; {facts.twice['what']} ({' / '.join(kernels) or '-'})"
                twice_notes.append(f"step {nn} twice: {facts.twice['note']}")
            elif role == "best":
                text = f"the same kernel, the {label} measured ({' / '.join(kernels) or '-'})"
            else:
                text = idea
            if nn in apart:
                text += f"; on {apart[nn]}"
            cells = [f"{link}, {label}" if label else link, cell(text)]
            for shape in shapes:
                top = per_shape.get(shape)
                cells += numbers_of(top, shape, margin=nn not in apart)  # not another GPU's
                if nn not in apart:
                    shown += [top] if top else []
            body.append(cells)
    # References: the best copy ceiling and cuBLAS any step measured at the headline shapes,
    # and PyTorch where it was measured.
    references = [("copy ceiling", "cudaMemcpy or a float4 copy kernel", lambda r: r.is_copy),
                  ("cuBLAS geam", "the library's transpose", lambda r: r.id == "cublas"),
                  ("cuBLASLt transform", "cublasLtMatrixTransform, TRANSA = T, row-major",
                   lambda r: r.id == "cublaslt"),
                  ("PyTorch", "x.t().contiguous(), eager",
                   lambda r: r.step == "pytorch" and r.id == "contiguous"),
                  ("torch.compile", "the same, compiled",
                   lambda r: r.step == "pytorch" and r.id == "compiled")]
    for label, idea, keep in references:
        cells, any_found = [f"*{label}*", idea], False
        for shape in shapes:
            top = best([r for r in select(data.bench, shape=shape, type_="f32")
                        if keep(r) and (step_number(r.step) or r.step == "pytorch")])
            if top and label == "copy ceiling":  # the ceiling is 100% of itself
                cells += [f"{top.gbps:.0f}", "100.0", "-"]
            else:
                cells += numbers_of(top, shape, margin=False)
            any_found = any_found or top is not None
            shown += [top] if top else []
        if any_found or label == "copy ceiling":
            body.append(cells)
    lines = table(header, body)
    if not shown:
        return lines + ["", NO_BENCH]
    note = ("Best kernel of each step, float32; vs best peer: its % of copy minus that of the "
            "fastest peer at that shape (cuBLAS, cuBLASLt, PyTorch eager or compiled; PyTorch's "
            "% is of its own copy_), negative where the peer is ahead; across GPUs, the % of the "
            "all-to-all of PyTorch's fastest program on as many GPUs, symmetric memory included, "
            "timed against the same all-to-all (- where those programs were not measured on "
            "this GPU)")
    note += "".join(f"; {n}" for n in twice_notes)
    note += f". Measured on {measured_on(shown)} (`make bench`)."
    if any(r.runs > 1 for r in shown):
        note += (f" Each number is the median of {how_many(r.runs for r in shown)} separate runs; over those runs % of copy "
                 f"moved by at most {max(r.spread for r in shown):.1f} points.")
    for nn, device in apart.items():
        note += " " + apart_note(nn, data.on(device), rows_of[nn])
    return lines + ["", note]


def apart_note(nn, data, entries):
    """The sentence on a lesson measured on another device: where, and its copy ceiling (the
    copy its own runs timed, on as many GPUs as its kernel)."""
    rows = [r for _, _, per_shape in entries for r in per_shape.values() if r]
    copies = []
    for r in rows:
        copy_row = best([c for c in select(data.bench, step=r.step, shape=r.shape, type_="f32")
                         if c.is_copy and gpu_count(c.id) == gpu_count(r.id)])
        if copy_row:
            copies.append(copy_row.kernel.removeprefix("copy: "))
    against = f", against the copy its runs timed ({'; '.join(dict.fromkeys(copies))})"
    many = how_many(r.runs for r in rows)
    return (f"Step {nn}: on {measured_on(rows)}{against if copies else ''}; medians of {many} "
            f"runs, spread at most {max(r.spread for r in rows):.1f} points.")


# -- figure ---------------------------------------------------------------------------------------

def render_figure(text, catalog, md_path, figures_dir, data):
    """A link to plots/figures/NAME.png, relative to the page; the catalog ({name: Figure}) says
    whether its data is there, and the device its rows were measured on must be the one the
    marker names (device=), else the reference device."""
    _, attrs = parse_attrs(text)
    check_attrs("figure", attrs, ("name", "device"), required=("name",))
    name = attrs["name"]
    entry = catalog.get(name)
    if entry is not None and entry.ready and data.device:
        shows = device_data(data, attrs)
        drawn = sorted({device_of(r) for r in entry.rows} - {""})
        if drawn and drawn != [shows.device]:
            asked = (f"device={attrs['device']}" if "device" in attrs
                     else "the reference device, steps/course.toml")
            hints = " or ".join(f"device={data.hint(d)}" for d in drawn)
            raise MarkerError(f"figure: {name} is drawn from rows measured on {'; '.join(drawn)}, "
                              f"not on {shows.device} ({asked}): say {hints}")
    path = figures_dir / f"{name}.png"
    if entry is None:
        if not path.exists():  # neither drawn here nor a picture kept in plots/figures
            raise MarkerError(f"figure: no figure named '{name}' (known: {', '.join(catalog)})")
        caption = name.replace("_", " ")
    else:
        if not entry.ready:
            return [entry.missing]
        if not path.exists():  # the data is there, the picture is not: the link would be broken
            raise MarkerError(f"figure: {name}.png is not in plots/figures: run `make plots`")
        caption = entry.caption
    link = Path(os.path.relpath(path, md_path.parent)).as_posix()
    return [f"![{cell(caption)}]({link})"]


# -- num ----------------------------------------------------------------------------------------

COLUMNS = ("pct_copy", "gbps", "median_ms", "min_ms", "pct_peak", "spread", "runs")
SELECT = ("step", "id", "shape", "type", "batch")
FORMS = ("diff", "ratio", "profile", "latency")


def fmt_column(col, v):
    if col in ("pct_copy", "pct_peak", "spread"):
        return fmt_fixed(v, 1)
    if col == "gbps":
        return fmt_fixed(v, 0)
    if col in ("median_ms", "min_ms"):
        return fmt_sig(v, 3)
    return str(int(v))  # runs


def known_id(data, step, kid, here, passes=False):
    """Raises MarkerError when `kid` names no kernel of `step`: a binary with facts knows its
    kernels by id ([kernels] of its step.toml or lab.toml; its references, the copies and
    cuBLAS, by the data); `passes`: a profiled pass of one ("rect-pass2") counts too."""
    facts = data.course.of(step)
    if facts is None or kid in facts.kernels or kid in ("best", "ceiling"):
        return
    if any(r.is_reference for r in here if r.id == kid):
        return
    if passes and kernel_of(kid) in facts.kernels:
        return
    raise MarkerError(f"'{kid}' is not a kernel of {step} ({facts.shown}: "
                      f"{some(list(facts.kernels), 12)})")


def pick_row(data, sel):
    """The one row a num marker's selection names, or MarkerError saying why not."""
    step, kid, shape, type_, batch = (sel[k] for k in SELECT)
    problem = f"{fmt_shape(shape, batch)} {type_}"
    here = select(data.bench, step=step, shape=shape, type_=type_, batch=batch)
    if not here:
        only_elsewhere(data, f"{step} at {problem}",
                       select(data.all_bench, step=step, shape=shape, type_=type_, batch=batch))
        raise MarkerError(f"no rows of {step} at {problem} in plots/data/bench.csv")
    known_id(data, step, kid, here)
    if kid == "best":
        row = best([r for r in here if not r.is_reference])
        if not row:
            raise MarkerError(f"no kernel of {step} ran at {problem}")
        return row
    if kid == "ceiling":
        row = best([r for r in here if r.is_copy])
        if not row:
            raise MarkerError(f"no copy of {step} at {problem}")
        return row
    found = [r for r in here if r.id == kid]
    if not found:
        only_elsewhere(data, f"{step} '{kid}' at {problem}", [
            r for r in select(data.all_bench, step=step, shape=shape, type_=type_, batch=batch)
            if r.id == kid])
        ids = some(list(dict.fromkeys(r.id for r in here)), 12)
        raise MarkerError(f"no measurement of {step} '{kid}' at {problem} (there: {ids})")
    return found[0]


def selection(attrs, prefix, base=None):
    """The (step, id, shape, type, batch) of a num marker, its vs. one when prefix="vs."."""
    sel = dict(base or {})
    for name in SELECT:
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
    for name in ("step", "id", "shape"):
        if name not in sel:
            raise MarkerError(f"attribute '{prefix}{name}' is required")
    return sel


def render_num(text, data):
    """The value of an inline marker whose opening tag holds `text` (what follows "num")."""
    form, attrs = parse_attrs(text, FORMS)
    form = form or "value"
    if form == "latency":
        return render_latency(attrs, data.latency)
    allowed = set(SELECT) | {"device"} | ({"metric"} if form == "profile" else {"col"})
    if form in ("diff", "ratio"):
        allowed |= {"vs." + n for n in SELECT + ("device",)}
    check_attrs("num" + ("" if form == "value" else " " + form), attrs, sorted(allowed))
    first_data = device_data(data, attrs)
    if form == "profile":
        return render_profile(attrs, first_data)
    col = attrs.get("col", "pct_copy")
    if col not in COLUMNS:
        raise MarkerError(f"col: '{col}' is not one of {', '.join(COLUMNS)}")
    first = selection(attrs, "")
    row = pick_row(first_data, first)
    if col not in ("runs", "spread") and not row.ran:
        raise MarkerError(f"{row.step} '{row.id}' at {fmt_shape(row.shape, row.batch)} has "
                          f"no speed ({row.verified})")
    if form == "value":
        return fmt_column(col, getattr(row, col))
    if not any(k.startswith("vs.") for k in attrs):
        raise MarkerError(f"num {form}: give the second selection with vs. attributes "
                          "(vs.step=, vs.id=, ...)")
    try:
        other = pick_row(device_data(first_data, attrs, "vs."), selection(attrs, "vs.", first))
    except MarkerError as e:
        raise MarkerError(f"vs.: {e}")
    if col not in ("runs", "spread") and not other.ran:
        raise MarkerError(f"vs.: {other.step} '{other.id}' has no speed ({other.verified})")
    a, b = getattr(row, col), getattr(other, col)
    if form == "diff":
        return fmt_fixed(a - b, 1)
    if b == 0:
        raise MarkerError("num ratio: the vs. value is 0")
    return fmt_sig(a / b, 2)


def render_latency(attrs, latency):
    """The median ns_per_load of latency.csv's runs of one pattern at one footprint."""
    check_attrs("num latency", attrs, ("footprint", "pattern"))
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


def measured_names(metrics):
    """Every name a marker may give for these metrics: Nsight Compute's, their columns, and the
    sectors-per-request ratios scripts/profile.py derives from two of them."""
    names = set(metrics) | {metric_column(m, "")[0] for m in metrics}
    for kind in ("ld", "st"):
        pair = {f"l1tex__t_{n}_pipe_lsu_mem_global_op_{kind}.sum" for n in ("sectors", "requests")}
        if pair <= names:
            ratio = f"global_{kind}_sectors_per_request"
            names |= {ratio, metric_column(ratio, "")[0]}
    return names


def render_profile(attrs, data):
    if "metric" not in attrs:
        raise MarkerError("num profile: attribute 'metric' is required")
    sel = selection(attrs, "")  # it requires step=, id= and shape=
    step, kid, shape, type_ = sel["step"], sel["id"], sel["shape"], sel["type"]
    metric = attrs["metric"]
    known_id(data, step, kid, [], passes=True)
    def same(p):
        return (p["step"] == step and p["type"] == type_
                and (int(p["rows"]), int(p["cols"])) == shape)
    here = [p for p in data.profile if same(p)]
    problem = f"{fmt_shape(shape)} {type_}"
    facts = data.course.of(step)  # a new profile run keeps only what the facts ask for
    groups = facts.profile if facts else []
    if facts and not any(metric in measured_names(g.measures(kid, type_, shape)) for g in groups):
        raise MarkerError(f"metric '{metric}' of {step} '{kid}' at {problem}: no [[profile]] group "
                          f"of {facts.shown} measures it, so a new profile run would drop it")
    if not here:
        only_elsewhere(data, f"num profile: {step} at {problem}",
                       [p for p in data.all_profile if same(p)])
        raise MarkerError(f"no profiler rows of {step} at {problem} in plots/data/profile.csv")
    mine = [p for p in here if p["id"] == kid]
    if not mine:
        only_elsewhere(data, f"num profile: {step} '{kid}' at {problem}",
                       [p for p in data.all_profile if same(p) and p["id"] == kid])
        ids = some(list(dict.fromkeys(p["id"] for p in here)), 12)
        raise MarkerError(f"'{kid}' was not profiled for {step} at {problem} (there: {ids})")
    named = lambda p: metric in (p["metric"], metric_column(p["metric"], p.get("unit", ""))[0])
    rows = [p for p in mine if named(p)]
    if not rows:
        known = sorted({metric_column(p["metric"], p.get("unit", ""))[0] for p in mine})
        raise MarkerError(f"metric '{metric}' not profiled for {step} '{kid}' at {problem} "
                          f"(there: {some(known, 10)})")
    p = rows[-1]  # a metric profiled again: the latest
    return profile_value(p) or p["value"]
