#!/usr/bin/env python3
"""The course's PyTorch peers, and the pieces every peers script shares.

As a script it times, for each problem, what a PyTorch user writes, in one process:

    eager      x.t().contiguous()                 (a batch: x.transpose(-1, -2).contiguous())
    compiled   the same under torch.compile(dynamic=False), compiled once per problem, timed
               after its warm-up (Inductor's tiled Triton kernel)
    copy-torch dst.copy_(x), the copy ceiling of the same run

The problems are the [[peers]] groups of the steps' facts (steps/NN_name/step.toml), or
--problems. cuBLAS geam and cuBLASLt's transform are not here: they are C++ (common/peers.cu),
rows of each step's own run.

    python3 plots/peers.py --csv plots/data/bench.csv          every step's [[peers]] problems
    python3 plots/peers.py --problems f16:16384x16384,f32:64x64x16384

As a module, step 10's multi-GPU peers (peers_pytorch.py) take from it the types, identify(),
csv_row() and append_csv(): their rows in the same columns.

Measured as common/harness.cu measures: CUDA events around each run, warm-up runs first, the
median and minimum of many repetitions, bytes moved = 2 x elements x element size, GB = 1e9
bytes. Each transpose is checked bit for bit against the transposed view of its input first.
PyTorch is optional: without it the script says so in one line and exits 0. Exit codes as the
step binaries: 0 success, 1 a verification failure, 2 a bad argument, 3 no usable CUDA device.
"""

import argparse
import csv
import ctypes
import dataclasses
import datetime
import os
import statistics
import sys
from pathlib import Path

TYPES = ("f32", "f64", "f16", "bf16", "i8", "b128")
ELEM_SIZE = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i8": 1, "b128": 16}
HEADER = ("step,id,kernel,block,tile,type,rows,cols,batch,median_ms,min_ms,gbps,pct_copy,"
          "pct_peak,verified,device,driver,cuda,date").split(",")
# The dtype of each type, the integer dtype of its bits, and their width (a 16-byte element is
# a complex128: two 64-bit halves).
DTYPES = {"f32": ("float32", "int32", 32), "f64": ("float64", "int64", 64),
          "f16": ("float16", "int16", 16), "bf16": ("bfloat16", "int16", 16),
          "i8": ("int8", "int8", 8), "b128": ("complex128", "int64", 64)}


@dataclasses.dataclass(frozen=True)
class Problem:
    """One transpose: an element type, rows x cols, and a batch of such matrices."""

    type: str
    rows: int
    cols: int
    batch: int = 1

    @property
    def nbytes(self):
        return self.rows * self.cols * self.batch * ELEM_SIZE[self.type]

    def __str__(self):
        batch = f"x{self.batch}" if self.batch != 1 else ""
        return f"{self.type}:{self.rows}x{self.cols}{batch}"


def parse_problems(text):
    """"f32:8192x8192,i8:64x64x16384" (TYPE:ROWSxCOLS[xBATCH]; a bare N is N x N, no type is
    f32) -> [Problem]; ValueError saying which item is wrong."""
    out = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        type_, _, shape = item.rpartition(":")
        type_ = type_ or "f32"
        if type_ not in TYPES:
            raise ValueError(f"'{item}': type '{type_}' is not one of {','.join(TYPES)}")
        dims = shape.lower().split("x")
        if not 1 <= len(dims) <= 3 or not all(d.isdigit() and int(d) > 0 for d in dims):
            raise ValueError(f"'{item}' is not TYPE:ROWSxCOLS[xBATCH] with sizes >= 1")
        dims = [int(d) for d in dims]
        rows, cols = dims[0], dims[1] if len(dims) > 1 else dims[0]
        out.append(Problem(type_, rows, cols, dims[2] if len(dims) == 3 else 1))
    return out


def facts_problems(course=None):
    """Every [[peers]] problem of the steps' facts (a facts.Course; default this repository's),
    each once, in the steps' order: what plan.py gives this script, and its default."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from facts import Course
    seen = []
    for facts in (course or Course()).lessons().values():
        for group in facts.peer_groups:
            for _, shape, type_, batch in group.problems():
                p = Problem(type_, shape[0], shape[1], batch)
                if p not in seen:
                    seen.append(p)
    return seen


# ---- what identifies the run (the same sources as common/device_info.cu) -----------------------

def import_torch(script):
    """PyTorch, or None after one line that says the rows are skipped (peers_pytorch.py too)."""
    try:
        import torch
        return torch
    except ImportError:
        print(f"{script}: PyTorch is not installed, so its rows are skipped (pip install torch)")
        return None


def driver_version():
    """The driver's version string from NVML, else 'CUDA x.y' from the driver API."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        if nvml.nvmlInit_v2() == 0:
            buf = ctypes.create_string_buffer(96)
            ok = nvml.nvmlSystemGetDriverVersion(buf, ctypes.c_uint(96)) == 0
            nvml.nvmlShutdown()
            if ok:
                return buf.value.decode()
    except (OSError, AttributeError):
        pass
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int(0)
        if cuda.cuDriverGetVersion(ctypes.byref(v)) == 0:
            return "CUDA %d.%d" % (v.value // 1000, (v.value % 1000) // 10)
    except (OSError, AttributeError):
        pass
    return "unknown"


def peak_gbps(device_index):
    """Theoretical DRAM bandwidth: 2 x memory clock x bus width / 8 (0 when unknown)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        dev, clock_khz, bus_bits = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)
        if cuda.cuInit(0) != 0 or cuda.cuDeviceGet(ctypes.byref(dev), device_index) != 0:
            return 0.0
        # CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36 (kHz), GLOBAL_MEMORY_BUS_WIDTH = 37 (bits)
        if cuda.cuDeviceGetAttribute(ctypes.byref(clock_khz), 36, dev) != 0:
            return 0.0
        if cuda.cuDeviceGetAttribute(ctypes.byref(bus_bits), 37, dev) != 0:
            return 0.0
        return 2.0 * clock_khz.value * 1e3 * bus_bits.value / 8.0 / 1e9
    except (OSError, AttributeError):
        return 0.0


def identify(torch):
    """The device, driver, CUDA and date columns of this process's rows."""
    index = torch.cuda.current_device()
    return {"device": torch.cuda.get_device_name(index), "driver": driver_version(),
            "cuda": torch.version.cuda or "unknown",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")}


# ---- one CSV row, formatted as common/report.cpp formats it ------------------------------------

def csv_row(step, kernel_id, kernel, type_name, rows, cols, median_ms, min_ms, gbps, pct_copy,
            pct_peak, verified, ident, batch=1):
    return [step, kernel_id, kernel, "-", "-", type_name, str(rows), str(cols), str(batch),
            format(median_ms, ".6g"), format(min_ms, ".6g"), "%.1f" % gbps, "%.1f" % pct_copy,
            "%.1f" % pct_peak, verified, ident["device"], ident["driver"], ident["cuda"],
            ident["date"]]


def append_csv(path, rows):
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        if new:
            w.writerow(HEADER)
        w.writerows(rows)


# ---- measuring -------------------------------------------------------------------------------

def random_bits(torch, type_, shape, device):
    """Random bits with the second-highest bit of each integer clear, as the harness's
    fill_pattern: for the float types that is the top exponent bit, so no NaN or infinity
    (whose bits a copy might not keep). 64-bit integers are drawn as pairs of 32-bit ones."""
    dtype, ity, nbits = (getattr(torch, n) if isinstance(n, str) else n for n in DTYPES[type_])
    size = ELEM_SIZE[type_]
    width = shape[-1] * size * 8 // min(nbits, 32)
    small = torch.int32 if nbits > 32 else ity
    lo, hi = -(2 ** (min(nbits, 32) - 1)), 2 ** (min(nbits, 32) - 1) - 1
    raw = torch.randint(lo, hi, (*shape[:-1], width), dtype=small, device=device).view(ity)
    raw &= ~(1 << (nbits - 2))
    return raw.view(dtype)


def bits(torch, type_, t):
    """t's bits as integers of its width; a 16-byte element becomes a pair (a last dim of 2)."""
    b = t.view(getattr(torch, DTYPES[type_][1]))
    return b.view(*t.shape, 2) if ELEM_SIZE[type_] == 16 else b


def is_transpose(torch, type_, y, x):
    """y holds, bit for bit, every matrix of x transposed (the last two dims swapped)."""
    want = bits(torch, type_, x)
    want = want.transpose(-2, -3) if ELEM_SIZE[type_] == 16 else want.transpose(-1, -2)
    got = bits(torch, type_, y)
    return got.shape == want.shape and torch.equal(got, want)


def time_ms(torch, fn, warmup, reps):
    """(median, min) of reps runs of fn(), each between two CUDA events, after warmup runs."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times), min(times)


def compile_once(torch, fn):
    """torch.compile(fn) for one fixed shape (dynamic=False: the kernel Inductor writes for
    exactly this shape, as a user compiling a known shape gets). The compile caches are reset
    first, so no earlier problem's graph (or the recompile limit) decides this one's."""
    torch._dynamo.reset()
    return torch.compile(fn, dynamic=False)


# ---- the script -------------------------------------------------------------------------------

def arguments(argv):
    p = argparse.ArgumentParser(description="Time PyTorch's transposes (eager and "
                                "torch.compile) on the steps' [[peers]] problems.")
    p.add_argument("--problems", default="",
                   help="TYPE:ROWSxCOLS[xBATCH],... (default: every step's [[peers]] groups)")
    # The options of the step binaries, spelled as they spell them.
    p.add_argument("--csv", default="", help="append CSV rows to this file (header if new)")
    p.add_argument("--reps", type=int, default=50, help="timed repetitions (default 50)")
    p.add_argument("--warmup", type=int, default=5, help="untimed runs first (default 5)")
    p.add_argument("--no-verify", dest="verify", action="store_false",
                   help="skip the bit-for-bit check (timing only)")
    args = p.parse_args(argv)
    if args.reps < 1 or args.warmup < 0:
        p.error("--reps must be >= 1 and --warmup >= 0")
    try:
        args.problems = parse_problems(args.problems) if args.problems else facts_problems()
    except ValueError as e:
        p.error(f"--problems: {e}")
    return args


def measure(torch, problem, args, ident, peak):
    """The rows of one problem, and whether every transpose was right."""
    shape = (problem.rows, problem.cols) if problem.batch == 1 else \
        (problem.batch, problem.rows, problem.cols)
    x = random_bits(torch, problem.type, shape, torch.device("cuda"))
    if problem.batch == 1:
        name, eager = "x.t().contiguous()", lambda t: t.t().contiguous()
    else:
        name, eager = "x.transpose(-1, -2).contiguous()", lambda t: t.transpose(-1, -2).contiguous()
    peers = [("contiguous", name, eager),
             ("compiled", "torch.compile: " + name, compile_once(torch, eager))]
    dst = torch.empty_like(x)
    copy_med, copy_min = time_ms(torch, lambda: dst.copy_(x), args.warmup, args.reps)
    del dst
    moved = 2.0 * problem.nbytes
    rate = lambda ms: moved / (ms * 1e-3) / 1e9
    copy_gbps = rate(copy_med)
    out = [("copy-torch", "copy: torch copy_", copy_med, copy_min, "-")]
    ok = True
    for kid, kernel, fn in peers:
        y = fn(x)  # the compile happens here, before the timing
        verified = "skipped"
        if args.verify:
            right = is_transpose(torch, problem.type, y, x)
            verified, ok = ("yes" if right else "FAILED"), ok and right
        del y
        med, mn = time_ms(torch, lambda: fn(x), args.warmup, args.reps)
        out.append((kid, kernel, med, mn, verified))
    rows = []
    for kid, kernel, med, mn, verified in out:
        g = rate(med)
        rows.append(csv_row("pytorch", kid, kernel, problem.type, problem.rows, problem.cols,
                            med, mn, g, 100.0 * g / copy_gbps, 100.0 * g / peak if peak else 0.0,
                            verified, ident, problem.batch))
        print("%-22s %-36s %9.4f %9.4f %7.0f %7.1f  %s" %
              (problem, kernel, med, mn, g, 100.0 * g / copy_gbps, verified), flush=True)
    return rows, ok


def main(argv):
    args = arguments(argv)
    torch = import_torch("peers.py")
    if torch is None:
        return 0
    if not torch.cuda.is_available():
        print("peers.py: PyTorch finds no usable CUDA device", file=sys.stderr)
        return 3
    ident, peak = identify(torch), peak_gbps(torch.cuda.current_device())
    print("PyTorch %s, %s, driver %s, CUDA %s, peak %.0f GB/s" %
          (torch.__version__, ident["device"], ident["driver"], ident["cuda"], peak))
    print("%-22s %-36s %9s %9s %7s %7s  %s" %
          ("problem", "kernel", "median ms", "min ms", "GB/s", "% copy", "verified"))
    failed = False
    for problem in args.problems:
        free, _ = torch.cuda.mem_get_info()
        # input, two outputs, the copy's destination, and the check's temporaries
        if 5 * problem.nbytes + (256 << 20) > free:
            print(f"{problem}: skipped: needs {5 * problem.nbytes / 2**30:.1f} GiB of device "
                  f"memory, {free / 2**30:.1f} GiB is free")
            continue
        rows, ok = measure(torch, problem, args, ident, peak)
        failed = failed or not ok
        if args.csv:
            append_csv(args.csv, rows)  # after every problem: a run stopped half way keeps them
        torch.cuda.empty_cache()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
