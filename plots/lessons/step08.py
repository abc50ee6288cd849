"""Step 08's figure: float32 on aligned shapes and their misaligned neighbours, in % of the copy
ceiling: the launcher ("auto", writes cut on sectors where output rows start off them), the same
scalar kernel with its writes cut at the tile's edges, cuBLAS, and step 07's best kernel. Error
bars: the spread over the runs; a shape timed once is marked under its name.

Drawn by plots/make_plots.py (figures(data, mp); mp is make_plots itself).
"""

# Aligned shape, then a neighbour whose rows start off 32-byte sectors (rows of 4097, 6789 or
# 46341 floats); 12345 x 6789 has no aligned neighbour in the sweep.
SHAPES = [(4096, 4096), (4095, 4097), (12345, 6789), (46336, 46336), (46341, 46341)]


def series(mp):
    """(label, colour, pick(rows of one shape) -> row or None) for each bar of a shape."""
    def step08(text):
        return lambda rows: mp.best([r for r in rows if r.step == "step08" and text in r.kernel])
    return [
        ("step 08 launcher (auto)", mp.step_color("step08"), step08("auto")),
        ("step 08 scalar, writes cut at tile edges", "#c5b0d5", step08("cut at tile edges")),
        ("step 07, best kernel", mp.step_color("step07"),
         lambda rows: mp.best([r for r in rows if r.step == "step07" and not r.is_reference])),
        ("cuBLAS geam", "0.55",
         lambda rows: mp.best([r for r in rows if r.step == "step08" and r.is_cublas])),
    ]


def shapes_measured(data, mp):
    return [s for s in SHAPES
            if any(r.step == "step08" and "auto" in r.kernel and r.ran
                   for r in mp.select(data, shape=s, type_="f32"))]


def tick(data, mp, shape):
    """The shape, and under it how often the launcher was timed there when that is not the
    usual 3 runs (46341 x 46341 was timed once, a day before the other shapes)."""
    rows, cols = shape
    auto = mp.best([r for r in mp.select(data, shape=shape, type_="f32")
                    if r.step == "step08" and "auto" in r.kernel and r.ran])
    label = f"{rows} x {cols}"
    if auto and getattr(auto, "runs", 1) == 1:
        label += f"\n(one run, {auto.date})"
    return label


def draw(data, mp, path):
    plt = mp.pyplot()
    shapes = shapes_measured(data, mp)
    bars = series(mp)
    fig, ax = plt.subplots(figsize=(10, 5.2))
    width, shown = 0.8 / len(bars), []
    for k, (label, color, pick) in enumerate(bars):
        xs, ys, errs = [], [], []
        for i, shape in enumerate(shapes):
            r = pick(mp.select(data, shape=shape, type_="f32"))
            if r and r.ran:
                xs.append(i + (k - (len(bars) - 1) / 2) * width)
                ys.append(r.pct_copy)
                errs.append(getattr(r, "spread", 0) or 0)
                shown.append(r)
        if xs:
            ax.bar(xs, ys, width, color=color, label=label,
                   yerr=errs if any(errs) else None, capsize=2)
    ax.axhline(100, color="black", linestyle="--", linewidth=1, label="copy ceiling")
    ax.set_xticks(range(len(shapes)), [tick(data, mp, s) for s in shapes])
    ax.set_xlabel("float32 shape (4095 x 4097, 12345 x 6789 and 46341 x 46341: rows off sectors; "
                  "step 07 not timed at the two largest)")
    ax.set_ylabel("% of the copy ceiling of the same run")
    ax.set_ylim(0, 122)
    ax.set_yticks(range(0, 101, 20))
    ax.grid(axis="x", visible=False)
    ax.legend(fontsize=8, loc="upper center", ncol=3)
    ax.set_title("Step 08: cutting writes on sectors on misaligned rows")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    mp.save(fig, path, shown)


def figures(data, mp):
    return [("misaligned_step08",
             "Step 08 on aligned and misaligned float32 shapes: writes cut on sectors or at tile "
             "edges, step 07 and cuBLAS",
             bool(shapes_measured(data, mp)), lambda path: draw(data, mp, path))]
