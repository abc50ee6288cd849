"""The self-test's checks of the judge and of the runs' plumbing (Python standard library only):
the judge against an independent model of the protocol (the inputs' bit patterns, the masks of the
timed run), and the sanitizer and timed runs with stand-ins for the tool and the worker, attacks
on the sanitizer's report included. They need root and bubblewrap for the sandbox."""

import os
import shutil
from pathlib import Path

import grade
import results
import sandbox

GRADER_DIR = Path(__file__).resolve().parent


FAKE_WORKER = '''#!/usr/bin/python3
# A stand-in for the grader's worker (no GPU here): answers "transpose" items from a model.
import os, signal, struct, sys
M64 = (1 << 64) - 1
%s
%s
if "hostile" in sys.argv[0]:  # under the tool: swap its report for a link, then kill it
    args = open("/proc/%%d/cmdline" %% os.getppid(), "rb").read().split(b"\\0")
    log = args[args.index(b"--log-file") + 1].decode()
    try:
        os.unlink(log)
    except OSError:
        pass
    os.symlink("/etc/shadow", log)
    os.kill(os.getppid(), signal.SIGKILL)
plan = open(sys.argv[1]).read().splitlines()[1:]
out = open(sys.argv[2], "wb")
for i, line in enumerate(plan):
    _, rows, cols, seed = line.split()
    rows, cols, seed = int(rows), int(cols), int(seed)
    a = [pattern32(k, seed) for k in range(rows * cols)]
    t = [0] * (rows * cols)
    for r in range(rows):
        for c in range(cols):
            t[c * rows + r] = a[r * cols + c]
    body = b"\\xff" * 4096 + struct.pack("<%%dI" %% len(t), *t) + b"\\xff" * 4096
    out.write(b"@%%d region %%d\\n" %% (i, len(body)) + body + b"@%%d done 0\\n" %% i)
'''

FAKE_TIMED = '''#!/usr/bin/python3
# A stand-in for the grader's worker in a timed run (no GPU here): "ready", the grader's "go",
# then the chained calls from a model, with the same arguments as the real one.
import os, struct, sys
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1
%s
%s
%s
%s
%s
%s
line = open(sys.argv[1]).read().splitlines()[1]
_, rows, cols, seed, reps = line.split()
os.write(int(sys.argv[3]), b"ready\\n")
go = sys.stdin.readline().split()
final = chained(int(rows), int(cols), int(seed), int(reps), int(go[1], 16),
                "inplace" in sys.argv[0])
out = open(sys.argv[2], "wb")
timing = b"roundtrip_ms=20 loop_ms=100"
out.write(b"@0 region %%d\\n" %% len(final) + final + b"@0 timing %%d\\n" %% len(timing) + timing
          + b"@0 done 0\\n")
'''

FAKE_SANITIZER = """#!/bin/sh
# A stand-in for compute-sanitizer: runs the program, then writes a clean summary to its log.
log=""
while [ $# -gt 0 ]; do
  case "$1" in
    --log-file) log="$2"; shift 2 ;;
    --tool|--print-limit|--error-exitcode) shift 2 ;;
    *) break ;;
  esac
done
"$@"; rc=$?
echo "========= ERROR SUMMARY: 0 errors" > "$log"
exit $rc
"""


def sanitizer_plumbing(work, judge_grader):
    """The sanitizer runs' plumbing, with stand-ins for the tool and the worker: the plan and the
    data as files, the report where only root writes (root mode) or where the tool writes (user
    mode), the worker dropped to the sandbox user, the judge on its output; a worker that swaps
    the report for a link and kills the tool; a timed run end to end."""
    import inspect
    if os.geteuid() != 0 or not Path("/usr/bin/python3").exists() or not shutil.which("bwrap"):
        return [("sanitizer plumbing: needs root, bwrap and /usr/bin/python3, not checked", True,
                 "")]
    out = []
    args = grade.parse_args(["--submission", str(work / "nothing")])
    stage_dir = work / "plumbing"
    shutil.rmtree(stage_dir, ignore_errors=True)
    g = grade.Grader(args, grade.load_manifest(GRADER_DIR / "manifest.json"), results.Results())
    try:
        g.set_up(stage_dir, work / "nothing", work / "nothing-out")
    except sandbox.Unavailable as err:
        return [("sanitizer plumbing: not checked, bubblewrap cannot isolate here: %s" % err,
                 True, "")]
    g.judge_bin = judge_grader.judge_bin
    bin_dir = g.build / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    worker, tool = bin_dir / "fake-worker", bin_dir / "fake-sanitizer"
    source = FAKE_WORKER % (inspect.getsource(mix_bits), inspect.getsource(pattern32))
    worker.write_text(source)
    (bin_dir / "fake-hostile-worker").write_text(source)
    tool.write_text(FAKE_SANITIZER)
    timed = FAKE_TIMED % tuple(inspect.getsource(f) for f in (
        mix_bits, pattern32, mix32, step_key, mask_of, chained))
    for name in ("grader_probe", "grader_probe_inplace", "fake-timed-inplace"):
        (bin_dir / name).write_text(timed)
    for p in bin_dir.iterdir():
        os.chmod(p, 0o755)
    for p in (bin_dir, g.build):
        os.chmod(p, 0o755)
    g.sanitizer = str(tool)
    items = ["transpose 3 5 11", "transpose 33 2 12"]
    ex = dict(next(e for e in g.m["exercises"] if e["id"] == "03_inplace"))
    ex["speed"] = {"size": 12, "reps": 5, "random_sides": [5, 9]}
    g.gpu, g.gpu_test_passed = True, True
    gates = []
    try:
        entries = g.run_timed(ex, 3, bin_dir / "fake-timed-inplace",
                              [e for e in ex["entries"] if e["kind"] in ("speed", "memory")],
                              gates)
        speed = next(e for e in entries if e.kind == "speed")
        ok = speed.passed and not gates and speed.output.count("CPU time") == 2
        detail = "%s: %s; gates %s" % (speed.outcome, speed.output, gates)
    except Exception:
        import traceback
        ok, detail = False, traceback.format_exc()[-1500:]
    out.append(("timed runs' plumbing: handshake, judge, clock, CPU time, on the public and a "
                "random shape (stand-ins)", ok, detail))
    for mode in ("root", "user"):
        try:
            ran, errors, summary, log, verdicts = g.sanitize(worker, 1, items, "memcheck", mode,
                                                             60)
            ok = errors == 0 and len(verdicts) == 2 and all(v["ok"] for v in verdicts)
            detail = "errors %s, verdicts %s, output %s" % (errors, verdicts, ran.output[-400:])
        except Exception:  # a bug in the plumbing shows here
            import traceback
            ok, detail = False, traceback.format_exc()[-1500:]
        out.append(("sanitizer plumbing (%s mode): the report and the worker's data come back"
                    % mode, ok, detail))
    try:
        ran, errors, summary, log, _ = g.sanitize(bin_dir / "fake-hostile-worker", 1, items,
                                                  "memcheck", "user", 60)
        ok = errors is None and "root:" not in log + summary + ran.output
        detail = "errors %s, summary %s, log %r" % (errors, summary, log[:200])
    except Exception:
        import traceback
        ok, detail = False, traceback.format_exc()[-1500:]
    out.append(("sanitizer plumbing: a worker that swaps the report for a link to a root-only file "
                "and kills the tool gets no verdict, and the file is not read", ok, detail))
    # A clean report beside the tool's error exit status (a report the submission rewrote):
    # the exit status decides.
    tool.write_text(FAKE_SANITIZER.replace("exit $rc", "exit 86"))
    try:
        ran, errors, summary, log, verdicts = g.sanitize(worker, 1, items, "memcheck", "user", 60)
        ok, detail = bool(errors), "errors %s, summary %s" % (errors, summary)
    except Exception:
        import traceback
        ok, detail = False, traceback.format_exc()[-1500:]
    out.append(("sanitizer plumbing: the tool's error exit status outweighs a clean report", ok,
                detail))
    shutil.rmtree(stage_dir, ignore_errors=True)
    return out


# ---------------------------------------------------------------------------------------------
# The judge against an independent model of the protocol (Python): the inputs' bit patterns,
# the masks of the timed run, a right and a wrong answer of each kind.

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def mix_bits(x, k):
    mask = M64 if k == 64 else (1 << k) - 1
    shift = (k + 1) // 2
    x &= mask
    x = (x * 0x9E3779B97F4A7C15) & mask
    x ^= x >> shift
    x = (x * 0xBF58476D1CE4E5B9) & mask
    x ^= x >> shift
    return x


def pattern32(index, seed):
    v = mix_bits((index + seed) & M64, 31)
    return (v & ((1 << 30) - 1)) | (((v >> 30) & 1) << 31)


def mix32(x):
    x ^= x >> 16
    x = (x * 0x7feb352d) & M32
    x ^= x >> 15
    x = (x * 0x846ca68b) & M32
    return x ^ (x >> 16)


def step_key(key, step):
    return mix32((key & M32) ^ mix32(((key >> 32) + 0x9e3779b9 * (step + 1)) & M32))


def mask_of(k, pos):
    h = k ^ mix32((pos + 0x632be5ab) & M32)
    h ^= (pos >> 32) & M32
    for r in range(12):
        h = mix32((h + 0x85ebca6b * r) & M32)
    return h & 0x000FFFFF


def chained(rows, cols, seed, reps, key, in_place):
    """The final matrix of a timed run, the slow way."""
    import struct
    data = [pattern32(i, seed) for i in range(rows * cols)]
    r, c = rows, cols
    for k in range(reps):
        out = [0] * (r * c)
        for i in range(r):
            for j in range(c):
                out[j * r + i] = data[i * c + j]
        sk = step_key(key, k)
        data = [v ^ mask_of(sk, p) for p, v in enumerate(out)]
        if not in_place:
            r, c = c, r
    return struct.pack("<%dI" % len(data), *data)


def judge_checks(work):
    """[(name, ok, detail)]: the judge, compiled here as the grader compiles it, on records
    written by this independent model."""
    import struct
    out = []
    g = grade.Grader.__new__(grade.Grader)
    g.private = work / "stage" / "private"  # where the cases' grader finds it built
    g.private.mkdir(parents=True, exist_ok=True)
    os.chmod(g.private, 0o700)
    g.timeouts = {"judge": 120}
    g.build_judge()

    def verdicts(number, items, records, key=0):
        plan, data = g.private / "judge-plan", g.private / "judge-data"
        plan.write_text("plan 1\n" + "\n".join(items) + "\n")
        blob = b""
        for item, tag, payload in records:
            blob += b"@%d %s %d\n" % (item, tag.encode(), len(payload)) + payload
        data.write_bytes(blob)
        return g.judge(number, plan, data, key)[0]

    guard = b"\xff" * 4096
    rows, cols, seed = 5, 7, 12345
    a = [pattern32(i, seed) for i in range(rows * cols)]
    t = [0] * (rows * cols)
    for i in range(rows):
        for j in range(cols):
            t[j * rows + i] = a[i * cols + j]
    right = guard + struct.pack("<%dI" % len(t), *t) + guard
    item = "transpose %d %d %d" % (rows, cols, seed)
    v = verdicts(1, [item, item, item], [(0, "region", right), (0, "done", b""),
                                         (1, "region", right[:-1] + b"\x00"), (1, "done", b""),
                                         (2, "region", right)])
    out.append(("judge: a right transpose passes (bit patterns agree with the course's)",
                v[0]["ok"], v[0]["message"]))
    out.append(("judge: a byte written past the end fails",
                not v[1]["ok"] and "past the end" in v[1]["message"], v[1]["message"]))
    out.append(("judge: an item without 'done' is missing", v[2].get("missing"), str(v[2])))
    # A forged clean "launches" record before the watch's own: the grader sees both.
    v = verdicts(2, [item], [(0, "launches", b"k 4096 0 1024"), (0, "region", right),
                             (0, "launches", b"naive 0 0 1024"), (0, "done", b"")])
    out.append(("judge: every 'launches' record of an item reaches the grader, not the first",
                "naive 0 0 1024" in v[0].get("launches", "") and "k 4096" in
                v[0].get("launches", ""), str(v[0])))
    v = verdicts(2, [item], [(0, "launches", b"k 4096 0 1024;" * 70)] * 30 +
                 [(0, "region", right), (0, "done", b"")])
    out.append(("judge: a launch list past its limit ends in a field that fails the check",
                v[0].get("launches", "").endswith(";truncated"), str(v[0])[:200]))
    for number, in_place, (r, c) in ((1, False, (6, 9)), (3, True, (7, 7))):
        key, reps = 0x0123456789abcdef, 5
        final = chained(r, c, seed, reps, key, in_place)
        bad = bytearray(final)
        bad[len(bad) // 2] ^= 1
        item = "speed %d %d %d %d" % (r, c, seed, reps)
        v = verdicts(number, [item, item], [(0, "region", final), (0, "done", b""),
                                            (1, "region", bytes(bad)), (1, "done", b"")], key)
        out.append(("judge: a right timed run passes (%s; masks agree)" % (
            "in place" if in_place else "out of place"), v[0]["ok"], v[0]["message"]))
        out.append(("judge: one wrong bit of a timed run fails (%s)" % (
            "in place" if in_place else "out of place"), not v[1]["ok"], v[1]["message"]))
    return out + sanitizer_plumbing(work, g)
