"""The figures: those every lesson shares (the journey, the size sweeps, the element types, the
bank maps) and each lesson's own (plots/lessons/stepNN.py, see plots/lessons/README.md), in one
catalogue. Each figure knows the rows it is drawn from; its PNG records their hash (and the
drawing code's), so that a committed figure whose data changed is found stale without drawing.
"""

import hashlib
import importlib.util
from pathlib import Path

import bankmaps
from plotting import (error_bars, plot_references, plot_series, read_stamp, save, size_axis,
                      step_color, subplots)
from facts import gpu_count
from rows import NO_BENCH, best, digest, journey, select, step_number

HERE = Path(__file__).resolve().parent
NO_BANKMAP = ("_No bank map yet: write plots/data/bankmap.csv with `./bankmap --csv` "
              "(see plots/data/README.md), then run `make plots`._")


class Figure:
    """One figure: its name (the PNG's), its caption (the image's alt text), the rows it is drawn
    from (none: not ready, the marker says `missing` instead), draw(path), and the files whose
    code draws it."""

    def __init__(self, name, caption, rows, draw, missing=NO_BENCH, sources=()):
        self.name, self.caption, self.rows, self.draw = name, caption, list(rows), draw
        self.missing, self.sources = missing, [Path(s) for s in sources]

    @property
    def ready(self):
        return bool(self.rows)

    @property
    def source(self):
        path = self.sources[0]
        return f"{path.parent.name}/{path.name}"

    def stamp(self):
        """The hash of the rows and of the code: what the PNG records."""
        code = b"".join(s.read_bytes() for s in self.sources + [HERE / "plotting.py"])
        text = f"{self.name}\n{digest(self.rows)}\n{hashlib.sha256(code).hexdigest()}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def fresh(self, path):
        """True when the PNG at path was drawn from these rows by this code."""
        return read_stamp(path) == self.stamp()


# -- the journey ----------------------------------------------------------------------------------

def one_gpu_journey(data):
    """The course's journey without the steps across GPUs: their GB/s count the bytes a GPU sends
    and receives, against NCCL's all-to-all, not the copy these figures compare with."""
    return [stage for stage in journey(data)
            if not any(r and gpu_count(r.id) for r in stage[-1].values())]


def progression_rows(data):
    stages = one_gpu_journey(data)
    shapes = data.course.headline_shapes
    shown = [r for _, _, _, per in stages for r in per.values() if r]
    refs = [r for r in data.bench if r.is_reference and r.shape in shapes and r.type == "f32"
            and r.batch == 1 and step_number(r.step)]
    return shown + refs if shown else []


def draw_progression(data, path):
    stages = one_gpu_journey(data)
    lessons = data.course.lessons()
    shapes = [s for s in data.course.headline_shapes if any(per.get(s) for *_, per in stages)]
    fig, axes = subplots(1, len(shapes), figsize=(7.5 * len(shapes), 5.8), squeeze=False,
                         sharey=True)
    shown = [r for *_, per in stages for r in per.values() if r]
    shown += [r for r in data.bench if r.is_reference and r.shape in shapes and r.type == "f32"
              and r.batch == 1 and r.ran and step_number(r.step)]
    ylim = max(r.gbps_hi for r in shown) * 1.15
    twice = [(step_number(s), lessons[step_number(s)].twice) for s, role, *_ in stages
             if role == "headline"]
    for ax, shape in zip(axes[0], shapes):
        bars = [(step, role, label, per[shape]) for step, role, label, per in stages
                if per.get(shape)]
        x = list(range(len(bars)))
        rows = [r for *_, r in bars]
        drawn = ax.bar(x, [r.gbps for r in rows], color=[step_color(b[0]) for b in bars],
                       yerr=error_bars(rows),
                       error_kw={"elinewidth": 1, "capsize": 2, "ecolor": "0.25"})
        for bar, (_, role, _, _) in zip(drawn, bars):
            if role == "headline":  # the same colour, hatched and paler
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
        for step, role, label, r in bars:
            facts = lessons.get(step_number(step))
            name = (facts.title if facts else "").replace(" ", "\n")
            if role == "headline":
                name += f"\n{label}\n{r.block}"
            elif role == "best":
                name += "\n" + "\n".join(label.split()[:2])
            names.append(f"{step_number(step)}\n{name}")
        ax.set_xticks(x, names, fontsize=7.5)
        also = "".join(f"; {nn} also the {t['label']} kernel, hatched" for nn, t in twice)
        ax.set_xlabel(f"step (best kernel of each{also}; labels: GB/s and % of copy)",
                      fontsize=8.5)
        here = [r for r in select(data.bench, shape=shape, type_="f32") if step_number(r.step)]
        copy_row = best([r for r in here if r.is_copy])
        cublas = best([r for r in here if r.is_geam])
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
    save(fig, path, shown)


# -- bandwidth against size -----------------------------------------------------------------------

def size_plot_rows(data):
    return [r for r in data.bench if r.type == "f32" and r.batch == 1 and r.ran
            and not gpu_count(r.id)]


def draw_sizes(data, path):
    rows = size_plot_rows(data)
    lessons = data.course.lessons()
    fig, ax = subplots(figsize=(10, 5.8))
    shown = []
    for step in sorted({r.step for r in rows if step_number(r.step)}):
        nn = step_number(step)
        facts = lessons.get(nn)
        name = f"{nn} {facts.title if facts else ''}".strip()
        mine = [r for r in rows if r.step == step and not r.is_reference]
        tops = [best(select(mine, shape=s)) for s in dict.fromkeys(r.shape for r in mine)]
        if tops:
            plot_series(ax, tops, step_color(step), name)
            shown += tops
        if facts and facts.twice:  # and the headline kernel, dashed
            headline = [r for r in rows if r.step == step and r.id == facts.headline]
            if headline:
                plot_series(ax, headline, step_color(step),
                            f"{name}, {facts.twice['label']} {headline[0].block}",
                            linestyle="--")
                shown += headline
    shown += plot_references(ax, [r for r in data.bench if step_number(r.step)])
    size_axis(ax, rows)
    ax.set_ylim(0, max(r.gbps for r in shown) * 1.1)
    ax.set_title("Bandwidth against matrix size: the best kernel of each step, float32"
                 + (" (medians of runs)" if any(r.runs > 1 for r in shown) else ""))
    ax.legend(ncol=2, fontsize=8, loc="upper left")
    save(fig, path, shown)


def draw_step_sizes(data, step, path):
    rows = [r for r in size_plot_rows(data) if r.step == step]
    fig, ax = subplots(figsize=(10, 5.8))
    kernels = list(dict.fromkeys(r.id for r in rows if not r.is_reference))
    import matplotlib
    palette = matplotlib.colormaps["tab10" if len(kernels) <= 10 else "tab20"]
    for i, kid in enumerate(kernels):
        mine = [r for r in rows if r.id == kid]
        names = {r.kernel for r in mine}  # one name, or several (the launcher names its path)
        plot_series(ax, mine, palette(i % palette.N), names.pop() if len(names) == 1 else kid)
    shown = [r for r in rows if not r.is_reference]
    shown += plot_references(ax, [r for r in data.bench if r.step == step])
    size_axis(ax, rows)
    ax.set_ylim(0, max(r.gbps for r in shown) * 1.1)
    ax.set_title(f"{step}: every kernel against matrix size, float32")
    ax.legend(fontsize=8, loc="upper left", ncol=2 if len(kernels) > 6 else 1)
    save(fig, path, shown)


# -- element types --------------------------------------------------------------------------------

def types_step(data):
    """The step whose facts say types_figure, or None."""
    return next((f for f in data.course.lessons().values() if f.types_figure), None)


def type_shapes(data, step):
    """The shapes at which the step was measured in two element types or more (at most three,
    the largest)."""
    types_at = {}
    for r in data.bench:
        if r.step == step and r.batch == 1 and r.ran and not r.is_reference:
            types_at.setdefault(r.shape, set()).add(r.type)
    shapes = [s for s, t in types_at.items() if len(t) >= 2]
    return sorted(shapes, key=lambda s: (s[0] * s[1], s))[-3:]


def types_series(step):
    return [(f"step {step_number(step)}", step_color(step),
             lambda r: r.step == step and not r.is_reference),
            ("copy ceiling", "black", lambda r: r.is_copy),
            ("cuBLAS geam", "0.55", lambda r: r.is_geam),
            ("PyTorch", "tab:orange", lambda r: r.step == "pytorch" and not r.is_copy)]


def types_rows(data):
    facts = types_step(data)
    if facts is None:
        return []
    shapes = type_shapes(data, facts.binary)
    keep = [k for _, _, k in types_series(facts.binary)]
    return [r for r in data.bench if r.shape in shapes and r.batch == 1 and any(k(r) for k in keep)]


def draw_types(data, path):
    facts = types_step(data)
    step = facts.binary
    shapes = type_shapes(data, step)
    fig, axes = subplots(len(shapes), 1, figsize=(10, 3.8 * len(shapes)), squeeze=False)
    series = types_series(step)
    shown = []
    for ax, shape in zip(axes[:, 0], shapes):
        here = select(data.bench, shape=shape, type_=None)
        types = [t for t in facts.types if any(r.type == t for r in here)]
        types += sorted({r.type for r in here} - set(types))
        width = 0.8 / len(series)
        for k, (label, color, keep) in enumerate(series):
            xs, tops = [], []
            for i, t in enumerate(types):
                top = best([r for r in here if r.type == t and keep(r)])
                if top:
                    xs.append(i + (k - (len(series) - 1) / 2) * width)
                    tops.append(top)
            if not tops:
                continue
            ax.bar(xs, [r.gbps for r in tops], width, color=color, label=label,
                   yerr=error_bars(tops), error_kw={"elinewidth": 1, "capsize": 2,
                                                    "ecolor": "0.25"})
            if k == 0:
                for x, top in zip(xs, tops):
                    ax.annotate(f"{top.pct_copy:.0f}%", (x, top.gbps_hi),
                                textcoords="offset points", xytext=(0, 2), ha="center",
                                fontsize=7)
            shown += tops
        ax.set_xticks(range(len(types)), types)
        ax.set_ylabel("bandwidth, GB/s")
        ax.set_title(f"{shape[0]} x {shape[1]}: element types (% = step {step_number(step)} "
                     "against the copy ceiling; whiskers: slowest to fastest run)", fontsize=10)
        ax.grid(axis="x", visible=False)
        ax.set_ylim(0, max(r.gbps_hi for r in shown) * 1.15)
    axes[-1][0].set_xlabel("element type")
    # One legend for every panel, above them: the series are the same in each.
    handles = {}
    for ax in axes[:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="upper center", ncol=len(handles),
               fontsize=9, frameon=False)
    save(fig, path, shown, rect=(0, 0.03, 1, 0.96))


# -- the catalogue --------------------------------------------------------------------------------

def catalog(data, root, problems=None):
    """{name: Figure} of every figure this module, bankmaps.py and the lesson modules know. A
    lesson module that fails is reported in `problems` (a list), with its file name; without
    that list, its exception goes on up."""
    found = {}

    def add(figure):
        if figure.name in found:
            raise ValueError(f"figure '{figure.name}' is already drawn by "
                             f"{found[figure.name].source}")
        found[figure.name] = figure

    me = [HERE / "figures.py"]
    add(Figure("progression", "Best kernel of each step against the copy ceiling and cuBLAS",
               progression_rows(data), lambda path: draw_progression(data, path), sources=me))
    sized = size_plot_rows(data)
    add(Figure("sizes", "Bandwidth against matrix size, best kernel of each step",
               [r for r in sized if step_number(r.step)] if any(
                   step_number(r.step) and not r.is_reference for r in sized) else [],
               lambda path: draw_sizes(data, path), sources=me))
    numbers = set(data.course.lessons()) | {step_number(r.step) for r in sized
                                            if step_number(r.step)}
    for nn in sorted(numbers):
        step = f"step{nn}"
        mine = [r for r in data.bench if r.step == step and r.batch == 1 and r.type == "f32"
                and not gpu_count(r.id)]
        add(Figure(f"sizes_{step}", f"{step}: every kernel against matrix size",
                   mine if any(r.ran and not r.is_reference for r in mine) else [],
                   lambda path, step=step: draw_step_sizes(data, step, path), sources=me))
    facts = types_step(data)
    if facts:
        add(Figure("types", f"Step {facts.number} in every element type against the copy "
                   "ceiling, cuBLAS and PyTorch", types_rows(data),
                   lambda path: draw_types(data, path), sources=me))
    for figure in bankmaps.figures(data):
        add(Figure(*figure, missing=NO_BANKMAP, sources=[HERE / "bankmaps.py"]))
    for path in sorted((Path(root) / "plots" / "lessons").glob("step*.py")):
        try:
            module = load_module(path)
            for entry in module.figures(data):
                if not (isinstance(entry, tuple) and len(entry) == 4
                        and isinstance(entry[0], str)):
                    raise TypeError(f"figures() returned {entry!r}, not (name, caption, rows, "
                                    "draw)")
                add(Figure(*entry, sources=[path]))
        except Exception as e:
            if problems is None:
                raise
            problems.append(f"{path.relative_to(root).as_posix()}: {type(e).__name__}: {e}")
    return found


def load_module(path):
    """The lesson module at path, imported (and what it raises, raised)."""
    spec = importlib.util.spec_from_file_location(f"lesson_figures_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
