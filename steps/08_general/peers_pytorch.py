#!/usr/bin/env python3
"""The peer table of step 08: the same transposes timed with PyTorch, `x.t().contiguous()`.

Measured the way the course's harness measures (common/timer.cu, common/harness.cu): CUDA
events around each run, warm-up runs first, the median and the minimum of many repetitions,
bytes moved = 2 x rows x cols x element size, GB = 1e9 bytes; the copy ceiling of the same run
is a device-to-device copy of the same tensor (`dst.copy_(x)`). Every transpose is first checked
bit for bit against the transposed view of its input (torch.equal on integer views).

Rows go to the terminal and, with --csv, to a CSV file in the format of common/report.hpp
(step "pytorch", kernel "x.t().contiguous()"; the copy as kernel "copy: torch copy_"), so
`python3 plots/make_plots.py` can put them next to step 08 in the lesson's tables.

    python3 steps/08_general/peers_pytorch.py --csv plots/data/bench.csv
    python3 steps/08_general/peers_pytorch.py --types f16,i8 --shapes 16384x16384,32768x8192

PyTorch is optional: without it the script says so and exits 0. Exit codes as the step binaries:
0 success, 1 a verification failure, 2 a bad argument, 3 no usable CUDA device.
"""

import argparse
import csv
import ctypes
import datetime
import os
import statistics
import sys

TYPES = ("f32", "f64", "f16", "bf16", "i8", "b128")
# The shapes of the lesson's tables: float32 on a rectangle, an odd size and past 2^31 elements,
# and the README's two headline squares; the other types on a large square and a rectangle.
# --shapes replaces them for every type.
DEFAULT_SHAPES = {
    "f32": "8192x8192,32768x32768,8192x2048,4095x4097,46341x46341",
    "other": "16384x16384,32768x8192",
}
HEADER = ("step,id,kernel,block,tile,type,rows,cols,batch,median_ms,min_ms,gbps,pct_copy,"
          "pct_peak,verified,device,driver,cuda,date").split(",")
ELEM_SIZE = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i8": 1, "b128": 16}


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Time x.t().contiguous() with PyTorch on the shapes and types of step 08.")
    p.add_argument("--shapes", default="",
                   help="comma-separated ROWSxCOLS list for every type (default: f32 %s; the "
                   "other types %s)" % (DEFAULT_SHAPES["f32"], DEFAULT_SHAPES["other"]))
    p.add_argument("--types", default=",".join(TYPES),
                   help="comma-separated element types among " + ",".join(TYPES) +
                   " (default: all; b128 is a 16-byte complex128)")
    p.add_argument("--csv", default="", help="append CSV rows to this file (header if new)")
    p.add_argument("--reps", type=int, default=50, help="timed repetitions (default 50)")
    p.add_argument("--warmup", type=int, default=5, help="untimed runs first (default 5)")
    args = p.parse_args(argv)

    def shape_list(text, option):
        shapes = []
        for item in text.split(","):
            try:
                r, c = (int(v) for v in item.lower().split("x"))
            except ValueError:
                p.error("%s: '%s' is not ROWSxCOLS" % (option, item))
            if r < 1 or c < 1:
                p.error("%s: '%s' must have rows and cols >= 1" % (option, item))
            shapes.append((r, c))
        return shapes

    types = [t for t in args.types.split(",") if t]
    for t in types:
        if t not in TYPES:
            p.error("--types: '%s' is not one of %s" % (t, ",".join(TYPES)))
    if args.reps < 1 or args.warmup < 0:
        p.error("--reps must be >= 1 and --warmup >= 0")
    given = shape_list(args.shapes, "--shapes") if args.shapes else None
    plan = [(t, s) for t in types
            for s in (given or shape_list(DEFAULT_SHAPES["f32" if t == "f32" else "other"], "shapes"))]
    return args, plan


# ---- what identifies the run (the same sources as common/device_info.cu) -----------------------

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


# ---- one CSV row, formatted as common/report.cpp formats it ------------------------------------

def csv_row(step, kernel_id, kernel, type_name, rows, cols, median_ms, min_ms, gbps, pct_copy,
            pct_peak, verified, ident):
    return [step, kernel_id, kernel, "-", "-", type_name, str(rows), str(cols), "1",
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

def main(argv):
    args, plan = parse_args(argv)
    try:
        import torch
    except ImportError:
        print("peers_pytorch.py: PyTorch is not installed, so there is no peer table to make "
              "(pip install torch); nothing was written.")
        return 0
    if not torch.cuda.is_available():
        print("peers_pytorch.py: PyTorch finds no usable CUDA device", file=sys.stderr)
        return 3

    dev = torch.device("cuda")
    index = torch.cuda.current_device()
    ident = {
        "device": torch.cuda.get_device_name(index),
        "driver": driver_version(),
        "cuda": torch.version.cuda or "unknown",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
    }
    peak = peak_gbps(index)
    # Integer types of the same width, to fill with random bits and compare bit for bit.
    spec = {  # name: (dtype, integer view dtype, bits per integer)
        "f32": (torch.float32, torch.int32, 32),
        "f64": (torch.float64, torch.int64, 64),
        "f16": (torch.float16, torch.int16, 16),
        "bf16": (torch.bfloat16, torch.int16, 16),
        "i8": (torch.int8, torch.int8, 8),
        "b128": (torch.complex128, torch.int64, 64),  # a 16-byte element: two 64-bit halves
    }

    def bits(t, ity):
        """The tensor's bits as integers; a 16-byte element becomes a pair (last dim of 2)."""
        b = t.view(ity)
        return b.view(*t.shape, 2) if t.element_size() == 16 else b

    def time_ms(fn, arg):
        for _ in range(args.warmup):
            fn(arg)
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(args.reps):
            start.record()
            fn(arg)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        return statistics.median(times), min(times)

    print("PyTorch %s, %s, driver %s, CUDA %s, peak %.0f GB/s" %
          (torch.__version__, ident["device"], ident["driver"], ident["cuda"], peak))
    print("%-6s %-13s %10s %9s %8s %8s %8s  %s" %
          ("type", "shape", "median ms", "min ms", "GB/s", "% copy", "% peak", "verified"))
    out_rows, failed = [], False
    for type_name, (rows, cols) in plan:
        dtype, ity, nbits = spec[type_name]
        size = ELEM_SIZE[type_name]
        nbytes = rows * cols * size
        free, _ = torch.cuda.mem_get_info()
        # input, output, copy destination, and torch.equal's temporaries
        if 4 * nbytes + (256 << 20) > free:
            print("%-6s %-13s skipped: needs %.1f GiB of device memory, %.1f GiB is free" %
                  (type_name, "%dx%d" % (rows, cols), 4 * nbytes / 2**30, free / 2**30))
            continue
        # Random bits with the second-highest bit of each integer clear, as the harness's
        # fill_pattern: for the float types that is the top exponent bit, so no NaN or
        # infinity (whose bits a copy might not keep), for every type the same rule.
        # 64-bit integers are drawn as pairs of 32-bit ones (randint's range is an int64).
        width = cols * size * 8 // min(nbits, 32)
        small = torch.int32 if nbits > 32 else ity
        lo, hi = -(2 ** (min(nbits, 32) - 1)), 2 ** (min(nbits, 32) - 1) - 1
        raw = torch.randint(lo, hi, (rows, width), dtype=small, device=dev).view(ity)
        raw &= ~(1 << (nbits - 2))
        x = raw.view(dtype)
        del raw
        y = x.t().contiguous()
        ok = torch.equal(bits(y, ity), bits(x, ity).transpose(0, 1))
        del y
        dst = torch.empty_like(x)
        copy_med, copy_min = time_ms(dst.copy_, x)
        del dst
        med, mn = time_ms(lambda t: t.t().contiguous(), x)
        moved = 2.0 * nbytes
        copy_gbps = moved / (copy_med * 1e-3) / 1e9
        gbps = moved / (med * 1e-3) / 1e9
        pct = lambda g: 100.0 * g / copy_gbps
        ppk = lambda g: 100.0 * g / peak if peak > 0 else 0.0
        verified = "yes" if ok else "FAILED"
        failed = failed or not ok
        for kid, kernel, m, n, g, v in (
                ("copy-torch", "copy: torch copy_", copy_med, copy_min, copy_gbps, "-"),
                ("contiguous", "x.t().contiguous()", med, mn, gbps, verified)):
            out_rows.append(csv_row("pytorch", kid, kernel, type_name, rows, cols, m, n, g,
                                    pct(g), ppk(g), v, ident))
        print("%-6s %-13s %10.4f %9.4f %8.0f %8.1f %8.1f  %s   (copy_ %.0f GB/s)" %
              (type_name, "%dx%d" % (rows, cols), med, mn, gbps, pct(gbps), ppk(gbps),
               verified, copy_gbps))
        del x
        torch.cuda.empty_cache()
    if args.csv and out_rows:
        append_csv(args.csv, out_rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
