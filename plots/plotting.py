"""What every figure shares: matplotlib set up the same way each time (Agg, fixed fonts, no
timestamp), the footnote naming where the rows were measured, a colour per step, error bars from
the slowest to the fastest run, the size axis, and the record a PNG keeps of its data.

A figure module imports what it uses from here and from rows (select, best, ...).
"""

import struct
import zlib
from pathlib import Path

from rows import best, measured_on, select, step_number

STAMP_KEY = b"Drawn-from"  # the PNG text chunk that records the hash of a figure's data


def subplots(*args, **kwargs):
    """pyplot's subplots(), on the Agg backend, in the course's style. The font is the one
    matplotlib ships (DejaVu Sans), so a figure is drawn the same on every machine."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "font.size": 10,
                         "font.family": "DejaVu Sans", "axes.grid": True, "grid.alpha": 0.3,
                         "axes.axisbelow": True})
    return plt.subplots(*args, **kwargs)


# matplotlib's tab10 palette without its grey (#7f7f7f), which is cuBLAS's; written out so that
# the figures' catalogue (and `make_plots.py --check`) needs no matplotlib.
STEP_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
               "#bcbd22", "#17becf")


def fmt_bytes(n):
    """A matrix's size on an axis: "67.1 MB", "4.29 GB"."""
    return f"{n / 1e9:.3g} GB" if n >= 1e9 else f"{n / 1e6:.3g} MB"


def step_color(step):
    """The same colour for a step in every figure."""
    nn = step_number(step.removesuffix("-lab"))
    return STEP_COLORS[(int(nn) - 1) % len(STEP_COLORS)] if nn else "tab:gray"


def save(fig, path, rows, rect=(0, 0.03, 1, 1)):
    """Lays the figure out (tight, within rect: the bottom strip left for the footnote), adds the
    measurement footnote and writes a PNG whose bytes depend only on the data (no software
    version, no time), then closes the figure."""
    fig.tight_layout(rect=rect)
    if rows:
        fig.text(0.99, 0.005, f"Measured on {measured_on(rows)}. GB = 1e9 bytes.", ha="right",
                 va="bottom", fontsize=7, color="0.35")
    fig.savefig(path, metadata={"Software": None})
    import matplotlib.pyplot as plt
    plt.close(fig)


def error_bars(rows, col="gbps"):
    """matplotlib's yerr at the rows' medians of col (GB/s, or "pct_copy" on a % of copy axis):
    down to the slowest run, up to the fastest; None when no row has several runs."""
    lo = [max(getattr(r, col) - min(getattr(m, col) for m in r.members), 0.0) for r in rows]
    hi = [max(max(getattr(m, col) for m in r.members) - getattr(r, col), 0.0) for r in rows]
    return [lo, hi] if any(lo + hi) else None


# -- size figures ---------------------------------------------------------------------------------

def on_size_line(r):
    """The sweep's squares (sides a power of two) make the lines of the size figures; the other
    shapes (rectangles, odd squares such as 8191 x 8191) are hollow markers."""
    return r.rows == r.cols and r.rows & (r.rows - 1) == 0


def size_axis(ax, data_rows):
    """Log-scale x axis of matrix size in MB, ticks at the square sizes measured."""
    squares = sorted({r.rows for r in data_rows if on_size_line(r)})
    ax.set_xscale("log")
    ax.set_xticks([n * n * 4 / 1e6 for n in squares],
                  [f"{n}²\n{fmt_bytes(n * n * 4)}" for n in squares], fontsize=8)
    ax.minorticks_off()
    ax.set_xlabel("matrix size (N x N float32; hollow markers: rectangles and odd squares)")
    ax.set_ylabel("bandwidth, GB/s")


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


def plot_references(ax, rows):
    """The lines of the best copy row (black squares) and the cuBLAS geam row (grey triangles)
    of `rows` at every float32 one-matrix shape; returns the rows drawn."""
    shapes = sorted({r.shape for r in rows if r.type == "f32" and r.batch == 1})
    copies, cublas = [], []
    for shape in shapes:
        here = select(rows, shape=shape, type_="f32")
        for found, keep in ((copies, lambda r: r.is_copy), (cublas, lambda r: r.is_geam)):
            top = best([r for r in here if keep(r)])
            if top:
                found.append(top)
    if copies:
        plot_series(ax, copies, "black", "copy ceiling", marker="s")
    if cublas:
        plot_series(ax, cublas, "0.55", "cuBLAS geam", marker="^")
    return copies + cublas


# -- the record of a figure's data ----------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n"


def png_chunks(data):
    """[(type, body)] of a PNG file's bytes; ValueError for something that is not a PNG."""
    if not data.startswith(PNG):
        raise ValueError("not a PNG file")
    chunks, pos = [], len(PNG)
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunks.append((kind, data[pos + 8:pos + 8 + length]))
        pos += 12 + length
    return chunks


def stamp(path, value):
    """Writes `value` into the PNG at path as its text chunk Drawn-from (replacing an old one)."""
    path = Path(path)
    out = [PNG]
    for kind, body in png_chunks(path.read_bytes()):
        if kind == b"tEXt" and body.split(b"\0", 1)[0] == STAMP_KEY:
            continue
        if kind == b"IEND":
            text = STAMP_KEY + b"\0" + value.encode()
            out.append(struct.pack(">I4s", len(text), b"tEXt") + text
                       + struct.pack(">I", zlib.crc32(b"tEXt" + text)))
        out.append(struct.pack(">I4s", len(body), kind) + body
                   + struct.pack(">I", zlib.crc32(kind + body)))
    path.write_bytes(b"".join(out))


def read_stamp(path):
    """The Drawn-from value of the PNG at path, None when it has none or is no PNG."""
    try:
        chunks = png_chunks(Path(path).read_bytes())
    except (OSError, ValueError):
        return None
    for kind, body in chunks:
        key, _, value = body.partition(b"\0")
        if kind == b"tEXt" and key == STAMP_KEY:
            return value.decode()
    return None
