"""What the plots' tests share: bench rows to build a CSV from, and a small repository in a
temporary folder (facts of a few steps, plots/data, plots/figures, pages) to run make_plots on."""

import contextlib
import csv
import io
import sys
import tempfile
import textwrap
from pathlib import Path

PLOTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PLOTS))

import make_plots  # noqa: E402

HEADER = ("step,id,kernel,block,tile,type,rows,cols,batch,median_ms,min_ms,gbps,pct_copy,"
          "pct_peak,verified,device,driver,cuda,date").split(",")
PROFILE_HEADER = "step,id,kernel,type,rows,cols,metric,value,unit,device,driver,date".split(",")


def bench_row(step, kid, kernel, pct, gbps=None, ms=None, shape=(8192, 8192), type_="f32",
              batch=1, verified="yes", block="32x8", min_ms=None, date="2026-01-01",
              device="Test GPU"):
    gbps = gbps if gbps is not None else pct * 30
    ms = ms if ms is not None else 537.0 / gbps
    return [step, kid, kernel, block, "-", type_, str(shape[0]), str(shape[1]), str(batch),
            str(ms), str(min_ms if min_ms is not None else ms * 0.95), f"{gbps:.1f}",
            f"{pct:.1f}", f"{pct * 0.87:.1f}", verified, device, "1.0", "13.0", date]


# Three runs of two step07 kernels, one run of step05's, and step 01's two naive kernels.
ROWS = [
    bench_row("step07", "copy-float4", "copy: float4 kernel", 100.0, gbps=2940, block="256",
              verified="-"),
    bench_row("step07", "columns", "tile64, down the columns", 95.6, gbps=2811),
    bench_row("step07", "columns", "tile64, down the columns", 96.1, gbps=2825,
              verified="skipped"),
    bench_row("step07", "columns", "tile64, down the columns", 95.2, gbps=2799,
              verified="skipped"),
    bench_row("step07", "swizzled", "tile64, swizzled", 93.0, gbps=2734),
    bench_row("step07", "swizzled", "tile64, swizzled", 93.4, gbps=2746, verified="skipped"),
    bench_row("step07", "swizzled", "tile64, swizzled", 92.8, gbps=2728, verified="skipped"),
    bench_row("step05", "block-32x4", "coarsened 32x4", 92.9, gbps=2721, ms=0.197310),
    bench_row("step01", "read-32x32", "naive, coalesced read 32x32", 16.1, gbps=472,
              block="32x32"),
    bench_row("step01", "write-8x32", "naive, coalesced write 8x32", 65.9, gbps=1931,
              block="8x32"),
    bench_row("step07-lab", "lab", "lab kernel", 99.0, gbps=2911),
]

FACTS = {
    "steps/course.toml": 'headline_shapes = ["8192x8192", "32768x32768"]\n',
    "steps/01_naive/step.toml": """\
        title = "naive"
        idea = "one thread per element"
        headline = "read-32x32"
        types = ["f32"]
        [twice]
        label = "classic"
        what = "the kernel of every tutorial"
        best = "best block shape"
        note = "the classic kernel and its best block shape"
        [kernels]
        read-32x32 = "reads coalesced"
        write-8x32 = "writes coalesced"
        [[sweep]]
        shapes = ["1024", "8192"]
        """,
    "steps/05_coarsened/step.toml": """\
        title = "coarsened"
        idea = "several elements per thread"
        headline = "block-32x4"
        types = ["f32"]
        [kernels]
        block-32x4 = "32 x 4 threads"
        [[sweep]]
        shapes = ["8192"]
        """,
    "steps/07_tile64/step.toml": """\
        title = "tile64"
        idea = "64 x 64 tiles"
        headline = "columns"
        types = ["f32"]
        [kernels]
        columns = "down the columns"
        swizzled = "plain order"
        tiled = "an older one, in no data"
        [[sweep]]
        shapes = ["8192"]
        """,
    "steps/07_tile64/lab/lab.toml": """\
        types = ["f32"]
        [kernels]
        lab = "the lab's kernel"
        """,
}


class Repo:
    """A small repository in a temporary folder: the facts above, plots/data, plots/figures and
    the pages given."""

    def __init__(self, rows, files, profile=None, facts=None):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        data = self.root / "plots" / "data"
        data.mkdir(parents=True)
        (self.root / "plots" / "figures").mkdir()
        self.write_csv(data / "bench.csv", HEADER, rows)
        if profile:
            self.write_csv(data / "profile.csv", PROFILE_HEADER, profile)
        for name, text in {**FACTS, **(facts or {}), **files}.items():
            self.write(name, text)

    def write(self, name, text):
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))

    @staticmethod
    def write_csv(path, header, rows):
        with open(path, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)

    def run(self, *args):
        """make_plots' exit code, stdout and stderr."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = make_plots.main(["--root", str(self.root), "--no-figures", *args])
        return code, out.getvalue(), err.getvalue()

    def read(self, name):
        return (self.root / name).read_text()

    def close(self):
        self.tmp.cleanup()
