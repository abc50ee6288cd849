"""The value of an inline num marker, from the data (plots/README.md, "Numbers in a sentence"):

    <!-- num step=step07 id=512-threads shape=8192x8192 -->           % of copy (col= for others)
    <!-- num diff step=step06 id=float4-4rows shape=8192x8192 vs.step=step05 vs.id=block-32x4 -->
    <!-- num ratio ... -->                                             first over second
    <!-- num profile step=step03 id=padded shape=4096x4096 metric="smem st conflicts" -->
    <!-- num latency pattern="within each page" footprint=1073741824 -->

A kernel is named by its id (`./stepNN --list`, or the step's step.toml); `id=best` is the
step's fastest kernel (copies and cuBLAS aside) and `id=ceiling` the faster of its copies. The
rows are the course's reference device's (steps/course.toml) unless `device=H200` (a piece of
another device's name; `vs.device=` for the second selection) names another.
"""

import re

from markers import MarkerError, parse_attrs, parse_shapes
from rows import best, median, normalize_step, select
from tables import device_data, metric_column, only_elsewhere
from text import fmt_fixed, fmt_shape, fmt_sig, fmt_value, some

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
    if passes and re.sub(r"-pass\d+$", "", kid) in facts.kernels:
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
    for key in attrs:
        if key not in allowed:
            raise MarkerError(f"num{'' if form == 'value' else ' ' + form}: unknown attribute "
                              f"'{key}' (allowed: {', '.join(sorted(allowed))})")
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


def render_profile(attrs, data):
    for name in ("step", "id", "shape", "metric"):
        if name not in attrs:
            raise MarkerError(f"num profile: attribute '{name}' is required")
    sel = selection(attrs, "")
    step, kid, shape, type_ = sel["step"], sel["id"], sel["shape"], sel["type"]
    metric = attrs["metric"]
    known_id(data, step, kid, [], passes=True)
    def same(p):
        return (p["step"] == step and p["type"] == type_
                and (int(p["rows"]), int(p["cols"])) == shape)
    here = [p for p in data.profile if same(p)]
    problem = f"{fmt_shape(shape)} {type_}"
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
    factor = metric_column(p["metric"], p.get("unit", ""))[1]
    try:
        return fmt_value(float(p["value"].replace(",", "")) * factor)
    except ValueError:
        return p["value"]
