#!/usr/bin/env python3
"""The peer table of step 10: the transpose across GPUs written the way a PyTorch user writes it.

One process per GPU (this script starts them; torch.distributed on NCCL), each holding a block of
rows of the R x C matrix and ending with the same block of rows of its transpose, as in step 10:

    pieces = x.split(col_counts, dim=1)              # the columns each GPU will own
    send[...].view(rows_here, c).copy_(piece)        # split, made contiguous, packed by owner
    dist.all_to_all_single(recv, send, out_sizes, in_sizes)
    y = recv.view(R, cols_here).t().contiguous()      # the pieces are a column block: transpose

Measured the way step 10's harness measures: every repetition starts together on every GPU (an
all-reduce, untimed), CUDA events around it on each GPU, the slowest GPU's time per repetition,
then the median and minimum over repetitions; GB/s per GPU counts 2 x R x C x element size / G
bytes; the ceiling of the same run is all_to_all_single of the same bytes alone. Every GPU first
checks its own block bit for bit against the pattern its elements were made from.

Rows go to the terminal and, with --csv, to a CSV in the format of common/report.hpp (step
"pytorch-nccl", id "torch-2gpus", kernel "split, all_to_all_single, t().contiguous(), 2 GPUs"; the
ceiling as id "a2a-2gpus", kernel "copy: all_to_all_single, 2 GPUs"; % copy is % of that ceiling).

    python3 steps/10_multi_gpu/peers_pytorch.py --gpus 2 --csv plots/data/bench.csv
    python3 steps/10_multi_gpu/peers_pytorch.py --shapes 32768x32768 --types f32,i8

PyTorch is optional: without it the script says so and exits 0. Exit codes as the step binaries:
0 success, 1 a verification failure, 2 a bad argument, 3 no usable CUDA device or too few GPUs.
"""

import argparse
import csv
import datetime
import os
import statistics
import sys
import tempfile

TYPES = ("f32", "f64", "f16", "bf16", "i8")
DEFAULT_SHAPES = {
    "f32": "8192x8192,16384x16384,32768x32768,65536x16384,16384x65536",
    "i8": "65536x65536",
    "f64": "32768x16384",
}
HEADER = ("step,id,kernel,block,tile,type,rows,cols,batch,median_ms,min_ms,gbps,pct_copy,"
          "pct_peak,verified,device,driver,cuda,date").split(",")
ELEM_SIZE = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i8": 1}


def parse_args(argv):
    p = argparse.ArgumentParser(description="Time PyTorch's distributed transpose on G GPUs.")
    p.add_argument("--gpus", type=int, default=0, help="GPUs to use (default: every visible one)")
    p.add_argument("--shapes", default="", help="ROWSxCOLS list for every type (default: f32 %s; "
                   "i8 %s; f64 %s)" % (DEFAULT_SHAPES["f32"], DEFAULT_SHAPES["i8"],
                                       DEFAULT_SHAPES["f64"]))
    p.add_argument("--types", default="f32,i8,f64", help="among " + ",".join(TYPES))
    p.add_argument("--csv", default="", help="append CSV rows to this file (header if new)")
    p.add_argument("--reps", type=int, default=20, help="timed repetitions (default 20)")
    p.add_argument("--warmup", type=int, default=5, help="untimed runs first (default 5)")
    args = p.parse_args(argv)

    def shapes(text):
        out = []
        for item in text.split(","):
            try:
                r, c = (int(v) for v in item.lower().split("x"))
            except ValueError:
                p.error("--shapes: '%s' is not ROWSxCOLS" % item)
            if r < 1 or c < 1:
                p.error("--shapes: '%s' must have rows and cols >= 1" % item)
            out.append((r, c))
        return out

    types = [t for t in args.types.split(",") if t]
    for t in types:
        if t not in TYPES:
            p.error("--types: '%s' is not one of %s" % (t, ",".join(TYPES)))
    if args.reps < 1 or args.warmup < 0 or args.gpus < 0:
        p.error("--reps must be >= 1, --warmup and --gpus >= 0")
    plan = [(t, s) for t in types
            for s in (shapes(args.shapes) if args.shapes else shapes(DEFAULT_SHAPES.get(t, "8192x8192")))]
    return args, plan


def blocks(n, parts):
    """Step 10's split (blocks.hpp): the first n % parts blocks have one more item."""
    q, r = divmod(n, parts)
    counts = [q + (1 if p < r else 0) for p in range(parts)]
    firsts = [sum(counts[:p]) for p in range(parts)]
    return firsts, counts


def worker(rank, G, plan, args, init_file, results):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method="file://" + init_file, rank=rank, world_size=G,
                            device_id=dev)
    spec = {"f32": (torch.float32, torch.int32, 32), "f64": (torch.float64, torch.int64, 64),
            "f16": (torch.float16, torch.int16, 16), "bf16": (torch.bfloat16, torch.int16, 16),
            "i8": (torch.int8, torch.int8, 8)}
    tick = torch.zeros(1, device=dev)

    def pattern(index, ity, nbits):
        """An integer per global element index, its second-highest bit clear (no NaN or
        infinity for the float types, as the course's fill_pattern)."""
        v = (index * 0x5851F42D4C957F2D + 0x2545F491) ^ (index >> 7)
        v = v & ((1 << nbits) - 1) if nbits < 64 else v
        v = v & ~(1 << (nbits - 2))
        if nbits < 64:
            v = torch.where(v >= (1 << (nbits - 1)), v - (1 << nbits), v)
        return v.to(ity)

    def time_ms(fn):
        for _ in range(args.warmup):
            dist.all_reduce(tick)
            fn()
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(args.reps):
            dist.all_reduce(tick)  # every GPU starts together
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        t = torch.tensor(times, device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest GPU, repetition by repetition
        t = t.tolist()
        return statistics.median(t), min(t)

    out = []
    for type_name, (R, C) in plan:
        dtype, ity, nbits = spec[type_name]
        rfirst, rcount = blocks(R, G)
        cfirst, ccount = blocks(C, G)
        rows, cols = rcount[rank], ccount[rank]
        size = ELEM_SIZE[type_name]
        free, _ = torch.cuda.mem_get_info()
        need = (5 * rows * C + 2 * cols * R) * size + (256 << 20)
        ok_mem = torch.tensor([1 if need < free else 0], device=dev)
        dist.all_reduce(ok_mem, op=dist.ReduceOp.MIN)
        if not ok_mem.item():
            out.append((type_name, R, C, None))
            continue
        # This GPU's rows, made from their global indices, row block by row block.
        x = torch.empty(rows, C, dtype=dtype, device=dev)
        step = max(1, (1 << 26) // max(C, 1))
        for r0 in range(0, rows, step):
            r1 = min(rows, r0 + step)
            idx = (torch.arange(r0, r1, device=dev, dtype=torch.int64)[:, None] + rfirst[rank]) * C \
                + torch.arange(C, device=dev, dtype=torch.int64)[None, :]
            x[r0:r1].view(ity).copy_(pattern(idx, ity, nbits))
        in_sizes = [rows * c for c in ccount]
        out_sizes = [r * cols for r in rcount]
        send = torch.empty(rows * C, dtype=dtype, device=dev)
        recv = torch.empty(R * cols, dtype=dtype, device=dev)

        def transpose():
            offset = 0
            for piece, c in zip(x.split(ccount, dim=1), ccount):
                send[offset:offset + rows * c].view(rows, c).copy_(piece)
                offset += rows * c
            dist.all_to_all_single(recv, send, out_sizes, in_sizes)
            return recv.view(R, cols).t().contiguous()

        y = transpose()
        good = True
        for j0 in range(0, cols, max(1, (1 << 26) // max(R, 1))):
            j1 = min(cols, j0 + max(1, (1 << 26) // max(R, 1)))
            idx = torch.arange(R, device=dev, dtype=torch.int64)[None, :] * C \
                + (torch.arange(j0, j1, device=dev, dtype=torch.int64)[:, None] + cfirst[rank])
            good = good and torch.equal(y[j0:j1].view(ity), pattern(idx, ity, nbits))
        del y
        ok = torch.tensor([1 if good else 0], device=dev)
        dist.all_reduce(ok, op=dist.ReduceOp.MIN)
        a2a = time_ms(lambda: dist.all_to_all_single(recv, send, out_sizes, in_sizes))
        ours = time_ms(transpose)
        out.append((type_name, R, C, (a2a, ours, bool(ok.item()))))
        del x, send, recv
        torch.cuda.empty_cache()
    if rank == 0:
        results.put(out)
    dist.destroy_process_group()


def main(argv):
    args, plan = parse_args(argv)
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError:
        print("peers_pytorch.py: PyTorch is not installed, so there is no peer table to make "
              "(pip install torch); nothing was written.")
        return 0
    if not torch.cuda.is_available():
        print("peers_pytorch.py: PyTorch finds no usable CUDA device", file=sys.stderr)
        return 3
    count = torch.cuda.device_count()
    G = args.gpus or count
    if G > count:
        print("peers_pytorch.py: --gpus %d: only %d visible" % (G, count), file=sys.stderr)
        return 3
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # as step 10: no NVLink SHARP for an all-to-all

    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            mp.start_processes(worker, args=(G, plan, args, os.path.join(tmp, "init"), results),
                               nprocs=G, join=True, start_method="spawn")
    except Exception as e:  # a process failed: its traceback is above
        print("peers_pytorch.py: a process stopped: %s" % str(e).splitlines()[0], file=sys.stderr)
        return 3
    out = results.get()

    # What identifies the run, from the same sources as step 08's peer script (after the
    # processes are done, so that this one holds no GPU memory while they run).
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "08_general"))
    from peers_pytorch import driver_version, peak_gbps
    ident = {"device": torch.cuda.get_device_name(0), "driver": driver_version(),
             "cuda": torch.version.cuda or "unknown",
             "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")}
    peak = peak_gbps(0)

    gpus = "%d GPU%s" % (G, "" if G == 1 else "s")
    on = "-%dgpu%s" % (G, "" if G == 1 else "s")  # in the ids, as step 10's
    print("PyTorch %s, %s x %s, driver %s, CUDA %s" %
          (torch.__version__, G, ident["device"], ident["driver"], ident["cuda"]))
    print("%-5s %-12s %10s %10s %9s %8s  %s" %
          ("type", "shape", "a2a ms", "median ms", "GB/s/GPU", "% a2a", "verified"))
    rows, failed = [], False
    for type_name, R, C, res in out:
        if res is None:
            print("%-5s %-12s skipped: not enough device memory" % (type_name, "%dx%d" % (R, C)))
            continue
        (a_med, a_min), (med, mn), ok = res
        moved = 2.0 * R * C * ELEM_SIZE[type_name] / G
        a_gbps, gbps = moved / (a_med * 1e-3) / 1e9, moved / (med * 1e-3) / 1e9
        failed = failed or not ok
        for kid, kernel, m, n, g, pct, v in (
                ("a2a" + on, "copy: all_to_all_single, " + gpus, a_med, a_min, a_gbps, 100.0,
                 "-"),
                ("torch" + on, "split, all_to_all_single, t().contiguous(), " + gpus, med, mn,
                 gbps, 100.0 * a_med / med, "yes" if ok else "FAILED")):
            rows.append(["pytorch-nccl", kid, kernel, "-", "-", type_name, str(R), str(C), "1",
                         format(m, ".6g"), format(n, ".6g"), "%.1f" % g, "%.1f" % pct,
                         "%.1f" % (100.0 * g / peak if peak else 0.0), v, ident["device"],
                         ident["driver"], ident["cuda"], ident["date"]])
        print("%-5s %-12s %10.4f %10.4f %9.0f %8.1f  %s" %
              (type_name, "%dx%d" % (R, C), a_med, med, gbps, 100.0 * a_med / med,
               "yes" if ok else "FAILED"))
    if args.csv and rows:
        new = not os.path.exists(args.csv) or os.path.getsize(args.csv) == 0
        with open(args.csv, "a", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            if new:
                w.writerow(HEADER)
            w.writerows(rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
