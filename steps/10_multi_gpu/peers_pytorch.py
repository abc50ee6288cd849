#!/usr/bin/env python3
"""The peer table of step 10: the transpose across GPUs written the way PyTorch users write it.

One process per GPU (this script starts them; torch.distributed on NCCL). GPU r holds rows
rfirst[r] .. rfirst[r] + rcount[r] of the R x C matrix and ends with rows cfirst[r] ..
cfirst[r] + ccount[r] of its C x R transpose, as in step 10 (blocks(), step 10's split). The
programs (PROGRAMS; each function below says how it works):

  short          what a PyTorch user writes: one pack copy, all_to_all_single, one permute
                 (short_program)
  compiled       the same pack and unpack under torch.compile (the all-to-all stays eager)
  piece          the course's first peer: x.split(...) per owner, all_to_all_single,
                 t().contiguous()
  symm           each GPU copies its transposed blocks straight into the owners' outputs,
                 buffers of torch.distributed._symmetric_memory (symmetric_outputs)
  symm-compiled  the same copies under torch.compile (the barriers stay eager)
Where symmetric memory or torch.compile cannot run here, the program is skipped, the error printed.

Measured the way step 10's harness measures: every repetition starts together on every GPU (an
all-reduce, untimed), the slowest GPU's time per repetition, median and minimum; GB/s per GPU
and the bound as step 10's (the link's rate from step 10's own binary, link_gbps); the ceiling
of the same run is all_to_all_single of the same bytes. Every GPU checks its own block bit for
bit, for every program, in every run. --runs N times everything N times (a CSV row per run).
With --csv, rows in common/report.hpp's format, step "pytorch-nccl", ids "a2a-2gpus" (the
ceiling; % copy is % of it) and "<prefix>-2gpus" for each program (PROGRAMS) on 2 GPUs.

    python3 steps/10_multi_gpu/peers_pytorch.py --gpus 2 --csv plots/data/bench.csv
    python3 steps/10_multi_gpu/peers_pytorch.py --shapes 32768x32768 --types f32,i8 --runs 3

PyTorch is optional: without it the script says so and exits 0. Exit codes as the step binaries:
0 success, 1 a verification failure, 2 a bad argument, 3 no usable CUDA device or too few GPUs.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

# The course's peers module (plots/peers.py): the element types, the CSV rows, the run's identity.
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "plots"))
import peers  # noqa: E402

TYPES = tuple(t for t in peers.TYPES if t != "b128")
DEFAULT_SHAPES = {
    "f32": "8192x8192,16384x16384,32768x32768,65536x16384,16384x65536",
    "i8": "65536x65536",
    "f64": "32768x16384",
}
ELEM_SIZE = peers.ELEM_SIZE
# The programs, in the order they run and print: (name, id prefix, kernel text before "G GPUs").
PROGRAMS = (
    ("short", "torch-short", "eager: one pack copy, all_to_all_single, one permute, "),
    ("compiled", "torch-compiled", "torch.compile'd pack and unpack around all_to_all_single, "),
    ("piece", "torch", "eager, per piece: split, all_to_all_single, t().contiguous(), "),
    ("symm", "torch-symm", "symmetric memory: transposed blocks copied into the owners' outputs, "),
    ("symm-compiled", "torch-symm-compiled",
     "symmetric memory, the copies under torch.compile, "),
)


def parse_args(argv):
    p = argparse.ArgumentParser(description="Time PyTorch's distributed transpose on G GPUs.")
    p.add_argument("--gpus", type=int, default=0, help="GPUs to use (default: every visible one)")
    p.add_argument("--shapes", default="", help="ROWSxCOLS list for every type (default: f32 %s; "
                   "i8 %s; f64 %s)" % (DEFAULT_SHAPES["f32"], DEFAULT_SHAPES["i8"],
                                       DEFAULT_SHAPES["f64"]))
    p.add_argument("--types", default="f32,i8,f64", help="among " + ",".join(TYPES))
    p.add_argument("--programs", default="short,compiled,piece,symm,symm-compiled",
                   help="among short,compiled,piece,symm,symm-compiled (default: all)")
    p.add_argument("--csv", default="", help="append CSV rows to this file (header if new)")
    p.add_argument("--reps", type=int, default=20, help="timed repetitions (default 20)")
    p.add_argument("--warmup", type=int, default=5, help="untimed runs first (default 5)")
    p.add_argument("--runs", type=int, default=1,
                   help="time everything this many times, a CSV row each (default 1)")
    args = p.parse_args(argv)

    def shapes(text):
        try:
            problems = peers.parse_problems(text)
        except ValueError as e:
            p.error("--shapes: %s" % e)
        if any(":" in text or q.batch != 1 for q in problems):
            p.error("--shapes: '%s' is not a list of ROWSxCOLS" % text)
        return [(q.rows, q.cols) for q in problems]

    types = [t for t in args.types.split(",") if t]
    for t in types:
        if t not in TYPES:
            p.error("--types: '%s' is not one of %s" % (t, ",".join(TYPES)))
    names = [name for name, _, _ in PROGRAMS]
    wanted = [w for w in args.programs.split(",") if w]
    for w in wanted:
        if w not in names:
            p.error("--programs: '%s' is not one of %s" % (w, ",".join(names)))
    if not wanted:
        p.error("--programs: name at least one of %s" % ",".join(names))
    args.programs = [n for n in names if n in wanted]
    if args.reps < 1 or args.runs < 1 or args.warmup < 0 or args.gpus < 0:
        p.error("--reps and --runs must be >= 1, --warmup and --gpus >= 0")
    plan = [(t, s) for t in types
            for s in (shapes(args.shapes) if args.shapes else shapes(DEFAULT_SHAPES.get(t, "8192x8192")))]
    return args, plan


def blocks(n, parts):
    """Step 10's split (blocks.hpp): the first n % parts blocks have one more item."""
    q, r = divmod(n, parts)
    counts = [q + (1 if p < r else 0) for p in range(parts)]
    firsts = [sum(counts[:p]) for p in range(parts)]
    return firsts, counts


def block_groups(n, parts):
    """blocks(n, parts) as runs of equal blocks: (first item, number of blocks, block size), at
    most two (n % parts blocks of q + 1 items, then parts - n % parts of q), empty ones left out.
    A run of k blocks of w items starting at item f is items f .. f + k * w, block p of the run
    at f + p * w: one strided view (k, w) of them, so one copy moves a whole run."""
    q, r = divmod(n, parts)
    runs = [(0, r, q + 1), (r * (q + 1), parts - r, q)]
    return [(f, k, w) for f, k, w in runs if k > 0 and w > 0]


def short_program(R, C, G, me):
    """The short program's pack and unpack for GPU me, and the split sizes of its all-to-all
    (None, None when every piece is the same size). Pure tensor methods, so the same functions
    run eagerly and under torch.compile.

    send holds GPU p's piece x[:, cfirst[p]:+ccount[p]] row-major, p = 0 .. G-1; recv after the
    all-to-all holds GPU q's piece of A[rfirst[q]:+rcount[q], cfirst[me]:+cols], q = 0 .. G-1.
    Even split (R = G br, C = G bc): the pack is one copy of whole rows of bc elements; the
    unpack's reshape copies nothing (its permuted strides merge: it is recv.view(R, bc).t(), a
    strided view), so its .contiguous() is the one 2-D transpose of the program (DIRECT.md).
    Uneven split: each move is one copy per run of equal blocks (block_groups), at most two,
    each a strided view (k, rows, w) or (cols, k, h) of k consecutive pieces. The CPU test
    (plots/tests/test_peers10.py) checks both on numpy arrays.
    """
    rfirst, rcount = blocks(R, G)
    cfirst, ccount = blocks(C, G)
    rows, cols = rcount[me], ccount[me]
    if R % G == 0 and C % G == 0:
        br, bc = R // G, C // G

        def pack(x):
            return x.view(br, G, bc).transpose(0, 1).contiguous()

        def unpack(recv):
            # reshape alone would return a view (see above): .contiguous() is the copy
            return recv.view(G, br, bc).permute(2, 0, 1).reshape(bc, R).contiguous()

        return pack, unpack, None, None
    col_runs, row_runs = block_groups(C, G), block_groups(R, G)

    def pack(x):
        send = x.new_empty(rows * C)
        at = 0
        for f, k, w in col_runs:
            n = k * rows * w
            send[at:at + n].view(k, rows, w).copy_(x[:, f:f + k * w].view(rows, k, w)
                                                   .transpose(0, 1))
            at += n
        return send

    def unpack(recv):
        y = recv.new_empty(cols, R)
        at = 0
        for f, k, h in row_runs:
            n = k * h * cols
            y[:, f:f + k * h].view(cols, k, h).copy_(recv[at:at + n].view(k, h, cols)
                                                     .permute(2, 0, 1))
            at += n
        return y

    return pack, unpack, [r * cols for r in rcount], [rows * c for c in ccount]


def symmetric_outputs(R, C, G, me, x, dev):
    """The symm program for GPU me: (eager program, a function that returns it compiled).

    Every GPU's output block is one symmetric-memory buffer of the same size (the largest
    block), so that every GPU can address every other's: get_buffer(g, ...) is GPU g's block
    as a tensor on this GPU. GPU me's rows rfirst[me].. of the input are columns rfirst[me]..
    of every output row; the rows that GPU j owns are input columns cfirst[j]..: the block
    x[:, cfirst[j]:+ccount[j]] transposed. Each GPU starts with the next GPU's block, as step
    10's direct placement. The handle's barrier before the copies makes sure no GPU is still
    reading its output; the one after, that every block has landed."""
    import torch
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem

    rfirst, rcount = blocks(R, G)
    cfirst, ccount = blocks(C, G)
    rows = rcount[me]
    group = dist.group.WORLD
    if hasattr(symm_mem, "enable_symm_mem_for_group"):  # needed before PyTorch 2.9, a no-op after
        symm_mem.enable_symm_mem_for_group(group.group_name)
    buf = symm_mem.empty(max(ccount) * R, dtype=x.dtype, device=dev)
    handle = symm_mem.rendezvous(buf, group)
    outs = [handle.get_buffer(g, (ccount[g], R), x.dtype) for g in range(G)]
    order = [(me + i) % G for i in range(1, G + 1)]  # the others first, mine last
    order = [j for j in order if ccount[j] > 0 and rows > 0]

    def copies(x):
        for j in order:
            outs[j][:, rfirst[me]:rfirst[me] + rows].copy_(
                x[:, cfirst[j]:cfirst[j] + ccount[j]].t())

    def around(move):
        def program():
            handle.barrier(channel=0)
            move(x)
            handle.barrier(channel=0)
            return outs[me]
        return program

    def compiled():
        import torch._dynamo
        torch._dynamo.reset()  # each shape its own compile, no recompile limit
        cmove = torch.compile(copies, dynamic=False, fullgraph=True)
        cmove(x)  # compiled here, on the shapes the timing will use (no GPU reads its output yet)
        return around(cmove)

    def poison():
        """Every byte of my output wrong before a verified run, so that a block that never
        arrives shows (the program's first barrier keeps the others' copies after this)."""
        buf.view(torch.uint8).fill_(0xFF)

    return around(copies), compiled, poison


def link_gbps(G):
    """The link's rate each way that step 10's bound takes (link_rate.hpp: NVML's NVLinks, else
    PCIe), read from the bound line of step 10's own binary ($BUILD/bin/step10, BUILD as
    plots/bench.py takes it) on a 1 x 1 matrix; 0 (the bound is then the copy's) without it."""
    exe = os.path.join(os.environ.get("BUILD") or os.path.join(ROOT, "build"), "bin", "step10")
    try:
        out = subprocess.run([exe, "--gpus", str(G), "--rows", "1", "--cols", "1", "--reps", "1",
                              "--warmup", "0", "--only", "overlapped"],
                             capture_output=True, text=True, timeout=300).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    m = re.search(r"over a link of (\d+) GB/s", out)
    if not m:
        print("peers_pytorch.py: no link rate from %s: the bound is the copy's alone" % exe)
    return float(m.group(1)) if m else 0.0


def first_line(e):
    """An exception in one line, for the note that skips a program."""
    lines = str(e).strip().splitlines() or [type(e).__name__]
    return "%s: %s" % (type(e).__name__, lines[0][:160])


def worker(rank, G, plan, args, init_file, results):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method="file://" + init_file, rank=rank, world_size=G,
                            device_id=dev)
    tick = torch.zeros(1, device=dev)

    def all_ok(flag):
        """Whether flag holds on every GPU."""
        t = torch.tensor([1 if flag else 0], device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MIN)
        return bool(t.item())

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
        dtype, ity, nbits = peers.DTYPES[type_name]
        dtype, ity = getattr(torch, dtype), getattr(torch, ity)
        rfirst, rcount = blocks(R, G)
        cfirst, ccount = blocks(C, G)
        rows, cols = rcount[rank], ccount[rank]
        size = ELEM_SIZE[type_name]
        # The largest program holds x, send (the one the ceiling and the per-piece program
        # share, and one made by pack), recv, y and the y being made while the last one is
        # freed; 2 GiB more for the verification's int64 indices and torch.compile's work.
        free, _ = torch.cuda.mem_get_info()
        need = (3 * rows * C + 3 * cols * R) * size + (2 << 30)
        if not all_ok(need < free):
            out.append((type_name, R, C, "not enough device memory", None))
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

        def verify(y):
            """y is rows cfirst[rank].. of the transpose: y[j, i] = A[i, cfirst + j]."""
            good = tuple(y.shape) == (cols, R) and y.is_contiguous()
            step = max(1, (1 << 26) // max(R, 1))
            for j0 in range(0, cols, step) if good else ():
                j1 = min(cols, j0 + step)
                j = torch.arange(j0, j1, device=dev, dtype=torch.int64)[:, None] + cfirst[rank]
                idx = torch.arange(R, device=dev, dtype=torch.int64)[None, :] * C + j
                good = good and torch.equal(y[j0:j1].view(ity), pattern(idx, ity, nbits))
            return all_ok(good)

        def piece():
            offset = 0
            for part, c in zip(x.split(ccount, dim=1), ccount):
                send[offset:offset + rows * c].view(rows, c).copy_(part)
                offset += rows * c
            dist.all_to_all_single(recv, send, out_sizes, in_sizes)
            return recv.view(R, cols).t().contiguous()

        pack, unpack, recv_sizes, send_sizes = short_program(R, C, G, rank)

        def around(pack, unpack):
            def program():
                dist.all_to_all_single(recv, pack(x), recv_sizes, send_sizes)
                return unpack(recv)
            return program

        programs, notes, symm = {}, [], None

        def attempt(name, build):
            """programs[name] = build() where it builds on every GPU, else a note saying why not."""
            why, fn = "", None
            try:
                fn = build()
            except Exception as e:  # no triton or symmetric memory here, an unsupported PyTorch...
                why = first_line(e)
            if all_ok(not why):
                programs[name] = fn
            else:
                notes.append("%s skipped: %s" % (name, why or "failed on another GPU"))
            torch.cuda.synchronize()

        def compiled():  # compiled once for this shape and type, here, before any timing
            import torch._dynamo
            torch._dynamo.reset()  # each shape its own compile, no recompile limit
            cpack = torch.compile(pack, dynamic=False, fullgraph=True)
            cunpack = torch.compile(unpack, dynamic=False, fullgraph=True)
            cpack(x)  # compiled here, on the shapes the timing will use
            cunpack(recv)
            return around(cpack, cunpack)

        def symmetric(name):
            nonlocal symm
            if symm is None:
                symm = symmetric_outputs(R, C, G, rank, x, dev)
            return symm[0] if name == "symm" else symm[1]()

        for name in args.programs:
            if name == "short":
                programs[name] = around(pack, unpack)
            elif name == "piece":
                programs[name] = piece
            else:
                attempt(name, compiled if name == "compiled" else lambda: symmetric(name))

        runs = []
        for _ in range(args.runs):
            run = {"a2a": time_ms(lambda: dist.all_to_all_single(recv, send, out_sizes,
                                                                 in_sizes)),
                   # the bound's copy pace, as step 10's harness times it: this GPU's block
                   # copied once (the slowest GPU's time)
                   "copy": time_ms(lambda: send[:rows * C].copy_(x.reshape(-1)))}
            for name, fn in programs.items():
                if name.startswith("symm"):
                    symm[2]()
                ok = verify(fn())  # every run, every program, before it is timed
                run[name] = time_ms(fn) + (ok,)
            runs.append(run)
        out.append((type_name, R, C, notes, runs))
        del x, send, recv, programs, symm
        torch.cuda.empty_cache()
    if rank == 0:
        results.put(out)
    dist.destroy_process_group()


def main(argv):
    args, plan = parse_args(argv)
    torch = peers.import_torch("peers_pytorch.py")
    if torch is None:
        return 0
    import torch.multiprocessing as mp
    if not torch.cuda.is_available():
        print("peers_pytorch.py: PyTorch finds no usable CUDA device", file=sys.stderr)
        return 3
    count = torch.cuda.device_count()
    G = args.gpus or count
    if G > count:
        print("peers_pytorch.py: --gpus %d: only %d visible" % (G, count), file=sys.stderr)
        return 3
    link = link_gbps(G) if G > 1 else 0.0
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # as step 10: no NVLink SHARP for an all-to-all
    os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"  # symmetric memory without multicast

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

    # What identifies the run, as every peer row's (after the processes are done, so that this
    # one holds no GPU memory while they run).
    ident = peers.identify(torch)
    gpus = "%d GPU%s" % (G, "" if G == 1 else "s")
    on = "-%dgpu%s" % (G, "" if G == 1 else "s")  # in the ids, as step 10's
    print("PyTorch %s, %s x %s, driver %s, CUDA %s; %d run%s of %d repetitions" %
          (torch.__version__, G, ident["device"], ident["driver"], ident["cuda"], args.runs,
           "" if args.runs == 1 else "s", args.reps))
    print("%-5s %-12s %-9s %10s %10s %9s %8s  %s" %
          ("type", "shape", "program", "median ms", "min ms", "GB/s/GPU", "% a2a", "verified"))
    rows, failed = [], False
    for type_name, R, C, notes, runs in out:
        shape = "%dx%d" % (R, C)
        if runs is None:
            print("%-5s %-12s skipped: %s" % (type_name, shape, notes))
            continue
        for note in notes:
            print("%-5s %-12s %s" % (type_name, shape, note))
        # As step 10's harness: GB/s count the bytes a GPU sends and receives (on average), and
        # the bound is the larger of the most any GPU sends or receives over the link's rate and
        # the largest block read and written at the copy's pace.
        size = ELEM_SIZE[type_name]
        rc, cc = blocks(R, G)[1], blocks(C, G)[1]
        kept = [rc[g] * cc[g] * size for g in range(G)]
        sent = [rc[g] * C * size - kept[g] for g in range(G)]
        got = [cc[g] * R * size - kept[g] for g in range(G)]
        moved = 2.0 * sum(sent) / G if G > 1 else 2.0 * R * C * size
        local = max((rc[g] * C + cc[g] * R) * size for g in range(G))
        link_ms = max(sent + got) / link / 1e6 if link else 0.0
        copy_gbps = 2.0 * rc[0] * C * size / (statistics.median(r["copy"][0] for r in runs) * 1e-3) / 1e9
        bound_ms = max(link_ms, local / copy_gbps / 1e6)
        ceiling = ("a2a", "a2a", "copy: all_to_all_single, ")
        summary = {}
        for name, prefix, kernel in (ceiling,) + PROGRAMS:
            if name not in runs[0]:
                continue
            for run in runs:
                med, mn = run[name][:2]
                ok = run[name][2] if name != "a2a" else None
                failed = failed or ok is False
                gbps = moved / (med * 1e-3) / 1e9
                rows.append(peers.csv_row("pytorch-nccl", prefix + on, kernel + gpus, type_name,
                                          R, C, med, mn, gbps, 100.0 * run["a2a"][0] / med,
                                          100.0 * bound_ms / med,
                                          "-" if ok is None else ("yes" if ok else "FAILED"),
                                          ident))
            med = statistics.median(run[name][0] for run in runs)
            mn = min(run[name][1] for run in runs)
            a_med = statistics.median(run["a2a"][0] for run in runs)
            verified = "-" if name == "a2a" else \
                ("yes" if all(run[name][2] for run in runs) else "FAILED")
            summary[name] = med
            print("%-5s %-12s %-9s %10.4f %10.4f %9.0f %8.1f  %s" %
                  (type_name, shape, name, med, mn, moved / (med * 1e-3) / 1e9,
                   100.0 * a_med / med, verified))
        timed = [n for n in summary if n != "a2a"]
        if timed:
            best = min(timed, key=lambda n: summary[n])
            print("%-5s %-12s best PyTorch program: %s, %.4f ms" %
                  (type_name, shape, best, summary[best]))
    if args.csv and rows:
        peers.append_csv(args.csv, rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
