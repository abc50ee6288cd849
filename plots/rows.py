"""The measured data of plots/data/, read: bench.csv's runs aggregated into one Row per
measurement (plots/README.md, "Runs and spread"), and the profiler, latency, pattern and bank-map
files as they are. The files may hold rows of several devices; Data shows the course's reference
device (steps/course.toml) unless data.on("H200") picks another. Standard library only.
"""

import copy
import csv
import hashlib
import re
import sys
from pathlib import Path
from statistics import median

from facts import Course, gpu_count


NO_BENCH = "_No measurements yet: run `make bench` on a GPU, then `make plots`._"


class Row:
    """One row of bench.csv with its numbers parsed; after load_bench, the aggregate of the runs
    of one measurement."""

    NUMBERS = ("median_ms", "min_ms", "gbps", "pct_copy", "pct_peak")
    INTEGERS = ("rows", "cols", "batch")

    def __init__(self, fields):
        self.fields = dict(fields)  # the CSV's text, for the figures' record of their data
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
        return (self.step, self.id, self.type, self.rows, self.cols, self.batch, self.device)

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
    def is_geam(self):
        """cuBLAS geam's row (the figures' "cuBLAS geam" series); cuBLASLt's is "cublaslt"."""
        return self.id == "cublas"

    @property
    def is_reference(self):
        return self.is_copy or self.is_cublas

    @property
    def ran(self):
        """Measured and not wrong: refused shapes and failed verifications have no speed."""
        return self.verified not in ("refused", "FAILED") and self.gbps > 0


def read_csv(path):
    """The rows of a CSV file as dicts, a repeated header skipped; [] when it does not exist."""
    if not Path(path).exists():
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    first = next(iter(rows[0]), None) if rows else None
    return [r for r in rows if first is None or r.get(first) != first]


def aggregate(runs):
    """One Row for the runs of one measurement (one kernel, problem and device): the median
    over the runs of the median time, GB/s, % of copy and % of peak, the fastest min_ms, .spread
    (max - min of pct_copy), .runs, .gbps_lo and .gbps_hi (the slowest and fastest run), and one
    verdict: FAILED if any run failed, yes if any verified, else what the runs say."""
    if len(runs) == 1:
        return runs[0]
    row = copy.copy(runs[-1])  # the text fields (kernel, device, date, ...) of the latest run
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
    """bench.csv as Rows, one per measurement, in the order each first appears."""
    runs = {}
    for i, fields in enumerate(read_csv(path), start=2):
        try:
            row = Row(fields)
            row.key
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            print(f"{path}:{i}: skipped a malformed row ({e})", file=sys.stderr)
            continue
        runs.setdefault(row.key, []).append(row)
    return [aggregate(r) for r in runs.values()]


def best(rows):
    """The fastest row that ran, or None."""
    ran = [r for r in rows if r.ran]
    return max(ran, key=lambda r: r.gbps) if ran else None


def select(rows, step=None, shape=None, type_=None, batch=1, id=None):
    """The rows of one problem (and one step, one kernel id, when given); None is any."""
    return [r for r in rows
            if (step is None or r.step == step) and (shape is None or r.shape == shape)
            and (type_ is None or r.type == type_) and (batch is None or r.batch == batch)
            and (id is None or r.id == id)]


def step_number(step):
    """"step05" -> "05"; labs, exercises and "pytorch" -> None."""
    m = re.fullmatch(r"step(\d\d)", step)
    return m.group(1) if m else None


def measured_on(rows):
    """"<device>, driver <d>, CUDA <c>, <date>": one clause per device setup of the rows."""
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


def digest(rows):
    """A hash of the rows a figure is drawn from (bench Rows with all their runs, or the dict
    rows of the other files), whatever their order: what a figure records of its data."""
    lines = set()
    for r in rows:
        for m in getattr(r, "members", [r]):
            fields = m.fields if hasattr(m, "fields") else m
            lines.add(repr(sorted(fields.items())))
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()[:16]


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


class DeviceError(ValueError):
    """A device= that names no device of the data, or several."""


class Data:
    """Everything plots/data/ holds, read once, and the course's facts: what the tables, the
    numbers and the figures (the lesson modules' too) are made from. .bench and .profile are the
    rows of one device, .device: the course's reference device (every row when the course names
    none), or the one on() picked; .all_bench and .all_profile keep every device's."""

    def __init__(self, folder, course=None):
        folder = Path(folder)
        self.folder = folder
        self.course = course or Course()
        self.all_bench = load_bench(folder / "bench.csv")
        self.all_profile = read_csv(folder / "profile.csv")
        self.latency = read_csv(folder / "latency.csv")
        self.patterns = read_csv(folder / "patterns.csv")
        self.bankmap_rows = read_csv(folder / "bankmap.csv")
        self.bankmaps = load_bankmaps(folder / "bankmap.csv")
        self.reference_device = self.course.reference_device
        self._show(self.reference_device)

    def _show(self, device):
        self.device = device
        self.bench = [r for r in self.all_bench if device is None or r.device == device]
        self.profile = [p for p in self.all_profile
                        if device is None or p.get("device") == device]

    def devices(self):
        """Every device of bench.csv and profile.csv, sorted."""
        return sorted({r.device for r in self.all_bench}
                      | {p.get("device", "") for p in self.all_profile} - {""})

    def device_named(self, text):
        """The one device whose name is `text` or holds it (any case); DeviceError else."""
        devices = self.devices()
        found = [d for d in devices if d == text] or \
                [d for d in devices if text.lower() in d.lower()]
        if len(found) != 1:
            what = "no device" if not found else f"{len(found)} devices"
            raise DeviceError(f"'{text}' matches {what} of plots/data "
                              f"({'; '.join(found or devices) or 'no rows'})")
        return found[0]

    def on(self, text):
        """The same data showing the rows of the device `text` names (see device_named)."""
        view = copy.copy(self)
        view._show(self.device_named(text))
        return view

    def where(self, *steps, kid=None):
        """The data showing the device that measured one of `steps` (its kernel `kid`, when
        given): the reference device when it did, else the first other one (by name) that did;
        self when no device did."""
        devices = sorted({r.device for r in self.all_bench
                          if r.step in steps and kid in (None, r.id)})
        if not devices or self.device is None or self.device in devices:
            return self
        return self.on(devices[0])

    def hint(self, device):
        """What device= may say for a device: the shortest word of its name that names it alone,
        else its whole name (quoted when it has spaces)."""
        others = [d for d in self.devices() if d != device]
        words = sorted(device.split(), key=len)
        return next((w for w in words if not any(w.lower() in d.lower() for d in others)),
                    f'"{device}"' if " " in device else device)


def journey(data, shapes=None):
    """The README's rows of the journey: [(step, role, label, {shape: row or None})], one per
    numbered step (labs, exercises and peers aside) with its fastest float32 kernel (role "", on
    as many GPUs as its headline kernel); a step whose facts say [twice] first shows its
    headline kernel (role "headline", labelled twice.label), then its fastest (role "best",
    labelled twice.best)."""
    shapes = shapes or data.course.headline_shapes
    out = []
    for step in sorted({r.step for r in data.bench if step_number(r.step)}):
        facts = data.course.of(step)
        # Kernels on as many GPUs as the headline's (step 10's ids say how many) compete.
        gpus = gpu_count(facts.headline) if facts else ""
        here = {s: [r for r in select(data.bench, step=step, shape=s, type_="f32")
                    if not r.is_reference and gpu_count(r.id) == gpus] for s in shapes}
        bests = {s: best(rows) for s, rows in here.items()}
        if facts and facts.twice:
            headline = {s: next((r for r in rows if r.id == facts.headline and r.ran), None)
                        for s, rows in here.items()}
            out.append((step, "headline", facts.twice["label"], headline))
            out.append((step, "best", facts.twice["best"], bests))
        else:
            out.append((step, "", "", bests))
    return [j for j in out if any(j[3].values())]
