"""Step 08's figure, in % of the copy ceiling. Top: float32 on aligned shapes and their
misaligned neighbours: the launcher ("auto", writes cut on sectors where output rows start off
them), the same scalar kernel with its writes cut at the tile's edges, cuBLAS, and step 07's best
kernel. Bottom: int8 and float16 on rows off 16 bytes: the scalar kernel (writes cut at the
tile's edges or on sectors), the shifted vectors and the launcher. Error bars: from the slowest
to the fastest run; a shape timed once is marked under its name.
"""

from plotting import error_bars, save, step_color, subplots
from rows import best, select

# Aligned shape, then a neighbour whose rows start off 32-byte sectors (rows of 4097, 6789 or
# 46341 floats); 12345 x 6789 has no aligned neighbour in the sweep.
SHAPES = [(4096, 4096), (4095, 4097), (12345, 6789), (46336, 46336), (46341, 46341)]


def step08(kid):
    """pick(rows of one shape): step 08's kernel of that id."""
    return lambda rows: best([r for r in rows if r.step == "step08" and r.id == kid])


def series():
    """(label, colour, pick(rows of one shape) -> row or None) for each bar of a shape."""
    return [
        ("step 08 launcher (auto)", step_color("step08"), step08("auto")),
        ("step 08 scalar, writes cut at tile edges", "#c5b0d5", step08("scalar-edges")),
        ("step 07, best kernel", step_color("step07"),
         lambda rows: best([r for r in rows if r.step == "step07" and not r.is_reference])),
        ("cuBLAS geam", "0.55",
         lambda rows: best([r for r in rows if r.step == "step08" and r.is_geam])),
    ]


def shapes_measured(data):
    return [s for s in SHAPES
            if any(r.step == "step08" and r.id == "auto" and r.ran
                   for r in select(data.bench, shape=s, type_="f32"))]


def tick(data, shape):
    """The shape, and under it how often the launcher was timed there when that is not the
    usual 3 runs (46341 x 46341 was timed once, a day before the other shapes)."""
    rows, cols = shape
    auto = best([r for r in select(data.bench, shape=shape, type_="f32")
                 if r.step == "step08" and r.id == "auto" and r.ran])
    label = f"{rows} x {cols}"
    if auto and getattr(auto, "runs", 1) == 1:
        label += f"\n(one run, {auto.date})"
    return label


# Bytes and halves on rows that do not start on 16 bytes (bfloat16 runs float16's code).
NARROW = [(t, s) for t in ("i8", "f16") for s in ((4095, 4097), (12345, 6789), (4096, 4097),
                                                    (4097, 4096))]
TYPE_NAMES = {"i8": "int8", "f16": "float16"}


def narrow_series():
    return [
        ("scalar, writes cut at tile edges", "#c5b0d5", step08("scalar-edges")),
        ("scalar, writes cut on sectors", "#9467bd", step08("scalar-cut")),
        ("shifted vectors", "#ff7f0e", step08("shifted")),
        ("launcher (auto)", step_color("step08"), step08("auto")),
    ]


def narrow_measured(data):
    return [(t, s) for t, s in NARROW
            if any(r.step == "step08" and r.id == "shifted" and r.ran
                   for r in select(data.bench, shape=s, type_=t))]


def rows_drawn(data):
    shapes = shapes_measured(data)
    wide = [r for r in select(data.bench, type_="f32")
            if r.step in ("step07", "step08") and r.shape in shapes]
    narrow = [r for t, s in narrow_measured(data)
              for r in select(data.bench, step="step08", shape=s, type_=t)]
    return wide + narrow if shapes else []


def bar_groups(ax, groups, bars, select, shown):
    """One group of bars per entry of groups; select(group) gives the rows to pick from."""
    width = 0.8 / len(bars)
    for k, (label, color, pick) in enumerate(bars):
        xs, rows = [], []
        for i, group in enumerate(groups):
            r = pick(select(group))
            if r and r.ran:
                xs.append(i + (k - (len(bars) - 1) / 2) * width)
                rows.append(r)
                shown.append(r)
        if xs:
            ax.bar(xs, [r.pct_copy for r in rows], width, color=color, label=label,
                   yerr=error_bars(rows, "pct_copy"), capsize=2)
    ax.axhline(100, color="black", linestyle="--", linewidth=1, label="copy ceiling")
    ax.set_ylabel("% of the copy ceiling of the same run")
    ax.set_ylim(0, 122)
    ax.set_yticks(range(0, 101, 20))
    ax.grid(axis="x", visible=False)


def draw(data, path):
    shapes = shapes_measured(data)
    narrow = narrow_measured(data)
    shown = []
    if narrow:
        fig, (ax, low) = subplots(2, 1, figsize=(10, 9.6))
    else:
        fig, ax = subplots(figsize=(10, 5.2))
    bar_groups(ax, shapes, series(), lambda s: select(data.bench, shape=s, type_="f32"), shown)
    ax.set_xticks(range(len(shapes)), [tick(data, s) for s in shapes])
    ax.set_xlabel("float32 shape (4095 x 4097, 12345 x 6789 and 46341 x 46341: rows off sectors; "
                  "step 07 not timed at the two largest)")
    ax.legend(fontsize=8, loc="upper center", ncol=3)
    ax.set_title("Step 08: cutting writes on sectors on misaligned rows")
    if narrow:
        bar_groups(low, narrow, narrow_series(),
                   lambda g: select(data.bench, shape=g[1], type_=g[0]), shown)
        low.set_xticks(range(len(narrow)),
                       [f"{TYPE_NAMES[t]}\n{r} x {c}" for t, (r, c) in narrow])
        low.set_xlabel("int8 and float16 on rows that do not start on 16 bytes (bfloat16 runs "
                       "float16's code)")
        low.legend(fontsize=8, loc="upper center", ncol=5)
        low.set_title("Bytes and halves on misaligned rows: scalar kernel or shifted vectors")
    save(fig, path, shown)


def figures(data):
    return [("misaligned_step08",
             "Step 08 on aligned and misaligned float32 shapes (writes cut on sectors or at tile "
             "edges, step 07, cuBLAS), and int8 and float16 on misaligned rows (scalar kernel, "
             "shifted vectors)",
             rows_drawn(data), lambda path: draw(data, path))]
