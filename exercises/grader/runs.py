"""The runs of an exercise and what is measured from outside them (a part of grade.Grader;
Python standard library only): each entry's worker run and the judge's verdict, exercise 2's
technique, compute-sanitizer, the timed runs (speed, host work, device memory) and the
deadlines. Only the grader's own probe decides whether there is a GPU."""

import atexit
import ctypes
import fnmatch
import json
import os
import re
import secrets
import shutil
import tempfile
import threading
import time
from pathlib import Path

import sandbox
from results import NOT_GRADED, Entry
from tools import run, tail

MIB = 1 << 20


# Seconds the device probe may take before a grading says "grade again" (detect_gpu).
PROBE_SECONDS = 60

class Nvml:
    """The device the sandbox's CUDA sees (the first of CUDA_VISIBLE_DEVICES, by UUID or by index
    in PCI order, as the runs set CUDA_DEVICE_ORDER), through the driver's NVML (ctypes): what it
    measures and why, INSTRUCTORS.md's threat model ("another program on the machine")."""

    NOT_AVAILABLE = (1 << 64) - 1

    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                    ("used", ctypes.c_ulonglong)]

    class Process(ctypes.Structure):  # nvmlProcessInfo_t (the _v2 and _v3 calls)
        _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                    ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]

    class ProcessV1(ctypes.Structure):
        _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]

    def __init__(self, visible=None):
        lib = ctypes.CDLL("libnvidia-ml.so.1")
        if lib.nvmlInit_v2() != 0:
            raise OSError("nvmlInit failed")
        count = ctypes.c_uint(0)
        if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0 or count.value == 0:
            raise OSError("NVML sees no device")
        self.lib, self.mem = lib, Nvml.Memory()
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "") if visible is None else visible
        first = visible.split(",")[0].strip()
        self.handle = ctypes.c_void_p()
        if first.startswith(("GPU-", "MIG-")):
            rc = lib.nvmlDeviceGetHandleByUUID(first.encode(), ctypes.byref(self.handle))
        elif first and not first.isdigit():
            raise OSError("CUDA_VISIBLE_DEVICES=%s names no device NVML knows" % visible)
        else:
            rc = lib.nvmlDeviceGetHandleByIndex_v2(int(first or 0), ctypes.byref(self.handle))
        if rc != 0:
            raise OSError("NVML has no device %s (CUDA_VISIBLE_DEVICES=%s)" % (first or 0,
                                                                               visible or "unset"))
        uuid = ctypes.create_string_buffer(96)
        lib.nvmlDeviceGetUUID(self.handle, uuid, 96)
        self.uuid = uuid.value.decode(errors="replace")
        self.calls = []
        for name, struct in (("nvmlDeviceGetComputeRunningProcesses_v3", Nvml.Process),
                             ("nvmlDeviceGetComputeRunningProcesses_v2", Nvml.Process),
                             ("nvmlDeviceGetComputeRunningProcesses", Nvml.ProcessV1)):
            if hasattr(lib, name):
                self.calls.append((getattr(lib, name), struct))
                break
        if not self.calls:
            raise OSError("this NVML has no per-process list")

    def used(self):
        """The device's used memory (bytes): only where per-process figures are not given."""
        if self.lib.nvmlDeviceGetMemoryInfo(self.handle, ctypes.byref(self.mem)) != 0:
            return 0
        return self.mem.used

    def processes(self):
        """{pid: bytes or None} of the compute processes on the device (NVML's host PIDs); None
        when NVML does not say."""
        call, struct = self.calls[0]
        n = 64
        while True:
            count = ctypes.c_uint(n)
            infos = (struct * n)()
            rc = call(self.handle, ctypes.byref(count), infos)
            if rc == 7 and n < 4096:  # NVML_ERROR_INSUFFICIENT_SIZE
                n *= 4
                continue
            if rc != 0:
                return None
            return {infos[i].pid: (None if infos[i].usedGpuMemory == Nvml.NOT_AVAILABLE
                                   else infos[i].usedGpuMemory) for i in range(count.value)}


def descendants(root):
    """The PIDs of @p root and of every process below it, from /proc (the grader's own view:
    the sandbox's processes have other PIDs inside their namespace)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as f:
                stat = f.read(4096)
        except OSError:
            continue
        ppid = stat[stat.rfind(b")") + 2:].split()[1:2]
        if ppid:
            children.setdefault(int(ppid[0]), []).append(int(entry))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo += children.get(pid, [])
    return found


def process_name(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmd = f.read(300).replace(b"\0", b" ").decode(errors="replace").strip()
        return cmd or "?"
    except OSError:
        return "not visible from the grader: another container's, or gone"


class MemoryMonitor:
    """Samples the device memory of a timed run's own processes (found under its first process,
    from outside): at its "ready" and the peak after its "go". Every other process seen on the
    device is kept in @p others ({pid: what it runs}): the GPU was busy."""

    def __init__(self, nvml):
        self.nvml, self.ready_used, self.peak, self.samples = nvml, None, 0, 0
        self.others, self.root = {}, None
        self._stop, self._thread = threading.Event(), None
        self._ours, self._before, self._scan = set(), set(), 0.0

    def own_use(self):
        """Bytes of device memory held by the run's own processes, now."""
        procs = self.nvml.processes()
        if procs is None:  # no per-process list here: the device's figure (others not told)
            return self.nvml.used()
        now = time.monotonic()
        if self.root and (now - self._scan > 0.05 or any(
                p not in self._ours and p not in self.others for p in procs)):
            self._ours, self._scan = descendants(self.root), now
        total, unknown = 0, 0
        for pid, used in procs.items():
            if pid in self._ours:
                total += used or 0
            elif os.path.exists("/proc/%d" % pid) or pid in self._before:
                self.others.setdefault(pid, process_name(pid))
            else:
                # Not in the grader's /proc: a PID of another PID namespace (the grader runs in
                # a container whose PIDs NVML does not show). New since the run began, it is
                # taken as the run's own; INSTRUCTORS.md says what this cannot tell apart.
                unknown += used or 0
        if procs and all(v is None for v in procs.values()):
            return self.nvml.used()  # no per-process figures here (the device's, then)
        return total + unknown

    def mark_ready(self):
        self.ready_used = self.peak = self.own_use()

    def start(self, root=None):
        self.root = root
        self._before = set(self.nvml.processes() or {})
        for pid in self._before:  # there before the run began: never the run's
            if not (root and pid in descendants(root)):
                self.others.setdefault(pid, process_name(pid))

        def loop():
            while not self._stop.is_set():
                if self.ready_used is not None:
                    self.peak = max(self.peak, self.own_use())
                    self.samples += 1
                else:
                    self.own_use()  # others are seen before the "go" too
                time.sleep(0.0002)
        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join()

    def busy(self):
        """"" or why the device was not the run's alone: the other processes, named."""
        if not self.others:
            return ""
        shown = ["pid %d (%s)" % (p, n[:80]) for p, n in sorted(self.others.items())[:3]]
        return "another process used the GPU (%s) during the timed run: %s%s" % (
            self.nvml.uuid, "; ".join(shown), " and %d more" % (len(self.others) - 3)
            if len(self.others) > 3 else "")


def sanitizer_errors(log):
    """(errors, summary line) from a compute-sanitizer log; errors is None without a summary
    (the tool did not finish)."""
    m = re.findall(r"^=+ ERROR SUMMARY: (\d+) errors?", log, re.M)
    if m:
        return int(m[-1]), "ERROR SUMMARY: %s errors" % m[-1]
    m = re.findall(r"^=+ RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) "
                   r"warnings?\)", log, re.M)
    if m:
        return int(m[-1][1]), "RACECHECK SUMMARY: %s hazards (%s errors, %s warnings)" % m[-1]
    return None, ""


class RunMixin:
    """Steps 4 to 8 of an exercise: its entries, technique, sanitizers and timed runs."""

    # -- deadlines ------------------------------------------------------------------------

    def time_left(self, limit):
        """Seconds a run may take: its own limit, within what is left of the exercise's and the
        submission's time."""
        now = time.monotonic()
        return max(0.0, min(limit, self.ex_deadline - now, self.deadline - now))

    def out_of_time(self, ex):
        """True once the exercise's or the submission's time is spent; says so in an entry (once
        per exercise)."""
        if self.time_left(1e9) >= 1:
            return False
        if ex["id"] not in self.deadline_hit:
            self.deadline_hit.add(ex["id"])
            whole = self.deadline <= self.ex_deadline
            self.r.add(ex["id"], "deadline", "%s | time limit" % ex["title"], 0, False,
                       "the %s's %g s were spent: what had not run yet was not run, 0 points "
                       "(an endless loop or a hang makes every run wait for its own limit)"
                       % (("submission", self.timeouts["submission"]) if whole else
                          ("exercise", self.timeouts["exercise"])), "timeout")
        return True

    def skipped_for_time(self, ex, e=None):
        return self.entry(ex, e, "not_run", "not run: this exercise ran out of time (see '%s | "
                                            "time limit')" % ex["title"])

    # -- the worker and the judge ---------------------------------------------------------

    def worker(self, ex):
        return self.build / "bin" / ex["worker"]

    def judge(self, number, plan, data, key=0):
        ran = run([self.judge_bin, "verify", "--exercise", number, "--plan", plan, "--data", data,
                   "--key", "%x" % key], timeout=self.timeouts["judge"])
        verdicts, note = [], ""
        for line in ran.output.splitlines():
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if "note" in doc:
                note = doc["note"]
            elif "item" in doc:
                verdicts.append(doc)
        if ran.rc != 0 or ran.timed_out:
            raise RuntimeError("the judge failed (%s):\n%s" % (
                "timed out" if ran.timed_out else "exit code %s" % ran.rc, tail(ran.output, 3000)))
        return verdicts, note

    def run_plan(self, binary, number, items, timeout, handshake=None, monitor=None, key=0,
                 prefix=(), extra_files=None, as_root=False):
        """Runs a worker (under @p prefix, a tool) on a plan in a fresh sandbox, then the judge on
        what it wrote: (sandbox.Ran, verdicts, note). The plan and the data channel are files
        given as arguments, the same way in every run."""
        n = self.next_id()
        plan, data = self.private / ("plan-" + n), self.data_dir(handshake) / ("data-" + n)
        log = self.private / ("log-" + n)
        try:
            plan.write_text("plan 1\n" + "\n".join(items) + "\n")
            os.chmod(plan, 0o644)
            data.touch(mode=0o600)
            if self.box.isolated:
                os.chown(data, self.box.uid, self.box.gid)
            files = dict(extra_files or {}, plan=(plan, False), data=(data, True))
            argv = list(prefix) + [binary, self.box.mount_point("plan", plan),
                                   self.box.mount_point("data", data)]
            if handshake:
                argv.append("{ready}")
            before = self.device_processes()
            ran = self.boxed(argv, timeout, log, ro=[self.build / "bin"], files=files,
                             as_root=as_root, handshake=handshake, monitor=monitor)
            if ran.timed_out or ran.signal_no:
                self.settle(before)
            verdicts, note = self.judge(number, plan, data, key)
        finally:
            for p in (plan, data, log):
                p.unlink(missing_ok=True)
        return ran, verdicts, note

    def device_processes(self):
        """The PIDs on the grading's GPU, from NVML (None: no GPU, or NVML cannot say)."""
        if not self.gpu or self.memory_monitor() is None:
            return None
        procs = self.nvml.processes()
        return None if procs is None else set(procs)

    def settle(self, before, limit_s=20.0):
        """After a run that was killed: its GPU context can outlive its processes while the
        driver stops a kernel that never returns, and a run started meanwhile waits for it and
        loses its own time. So wait (at most @p limit_s) until the device holds no process that
        was not there before the killed run began."""
        if before is None:
            return
        end = time.monotonic() + limit_s
        while time.monotonic() < end:
            now = self.device_processes()
            if now is None or now <= before:
                return
            time.sleep(0.05)
        self.r.notes.append("A stopped run still held the GPU %g s after it was killed; the "
                            "next runs shared the GPU with it." % limit_s)

    def data_dir(self, timed):
        """Where a run's output goes. A timed run writes hundreds of MiB after its loop, inside
        the time measured: into memory (/dev/shm) where it has room, so that the disk's writeback
        of one run's output never delays the next run's exit (other lanes write theirs too)."""
        if not timed:
            return self.private
        if not hasattr(self, "_ram_dir"):
            self._ram_dir = self.private
            try:
                st = os.statvfs("/dev/shm")
                if st.f_bavail * st.f_frsize >= 4 << 30:
                    self._ram_dir = Path(tempfile.mkdtemp(prefix="grader-", dir="/dev/shm"))
                    atexit.register(shutil.rmtree, str(self._ram_dir), True)
            except OSError:
                pass
        return self._ram_dir

    def describe_stop(self, ran, item_line):
        """Why a worker stopped before an item was done: a timeout, a crash, an exit."""
        last = tail(ran.output, 1500)
        during = " during \"%s\"" % item_line if item_line else ""
        if ran.timed_out:
            return ("timed out after %g s%s: the code never finished (an endless loop, or a "
                    "hang in the kernel or the launcher?); every process it started was killed."
                    "\nlast output:\n%s" % (round(ran.limit, 1), during, last)), "timeout"
        sig = ran.signal_name()
        if sig:
            return ("the worker running your code was killed by %s%s (a crash?).\nlast output:"
                    "\n%s" % (sig, during, last)), "crashed"
        return ("the worker running your code stopped (exit code %s)%s before it finished.\n"
                "last output:\n%s" % (ran.rc, during, last)), "crashed"

    def outcome_of(self, ran, verdicts, note, items):
        """(outcome, output) of an entry from its items' verdicts: the first failure decides."""
        for v in verdicts:
            if v["ok"]:
                continue
            if v.get("missing"):
                text, outcome = self.describe_stop(ran, items[v["item"]])
                if not (ran.timed_out or ran.signal_no or ran.rc):
                    text, outcome = v["message"] + ("\n" + note if note else ""), "failed"
                return outcome, text
            msg = v["message"] + ("\n(%s)" % note if note else "")
            return ("cuda_error" if "CUDA error" in msg else
                    "not_implemented" if v.get("todo") else "failed"), msg
        if len(verdicts) < len(items):
            return "failed", "the judge has no verdict for every problem (a grader error)"
        return "passed", "passed (%d %s, %.1f s)" % (
            len(items), "problem" if len(items) == 1 else "problems", ran.seconds)

    # -- one exercise ---------------------------------------------------------------------

    def run_exercise(self, ex):
        """Steps 4 to 7 of an exercise that built and passed its static checks."""
        number = int(ex["id"][:2])
        self.ex_deadline = min(time.monotonic() + self.timeouts["exercise"], self.deadline)
        pending, gates, self.launches = [], [], []
        binary = self.worker(ex)
        # 4. the entries, each in a fresh sandbox, judged from the outside; the technique last,
        # when the kernel tests have shown which kernels the launcher launches
        for e in ex["entries"]:
            if e["kind"] in ("speed", "memory", "shared_memory"):
                continue
            pending.append(self.skipped_for_time(ex, e) if self.out_of_time(ex)
                           else self.run_entry(ex, number, e, binary, gates))
        self.gpu_test_passed = any(p.passed and p.kind == "test" and p.gpu for p in pending)
        for e in ex["entries"]:
            if e["kind"] == "shared_memory":
                pending.append(self.shared_memory(ex, e, gates, pending))
        # 5. memory safety
        if ex.get("sanitizer"):
            pending.append(self.skipped_for_time(ex) if self.out_of_time(ex)
                           else self.run_sanitizers(ex, number, binary, gates))
        # 6. host work and extra memory, measured from outside during long timed runs
        timed = [e for e in ex["entries"] if e["kind"] in ("speed", "memory")]
        if timed and self.out_of_time(ex):
            pending += [self.skipped_for_time(ex, e) for e in timed]
        elif timed:
            pending += self.run_timed(ex, number, binary, timed, gates)
        order = {e["name"]: i for i, e in enumerate(ex["entries"])}
        pending.sort(key=lambda p: order.get(p.gtest, len(order)))
        return self.finish(ex, pending, gates)

    def is_gpu(self, e):
        return e["kind"] in ("gpu", "same_swizzle", "speed", "memory")

    @staticmethod
    def kind_tag(e):
        """An entry's kind in results.json: test (the course's tests), technique, speed, memory."""
        return {"check": "test", "gpu": "test", "shared_memory": "technique",
                "same_swizzle": "technique"}.get(e["kind"], e["kind"])

    def entry(self, ex, e, outcome, output, **extra):
        """An Entry of exercise @p ex: of its manifest entry @p e, or its sanitizer's (e None)."""
        if e is None:
            return Entry(ex["id"], "sanitizer", self.sanitizer_title(ex), ex["sanitizer"]["points"],
                         outcome, output, gpu=True, **extra)
        return Entry(ex["id"], self.kind_tag(e), "%s | %s" % (ex["title"], e["title"]),
                     e["points"], outcome, output, gtest=e["name"], gpu=self.is_gpu(e), **extra)

    def sanitizer_title(self, ex):
        return "%s | memory safety (%s)" % (ex["title"], ", ".join(ex["sanitizer"]["tools"]))

    def not_graded_entry(self, ex, e, why):
        return self.entry(ex, e, NOT_GRADED, "not graded: " + why, reason=why)

    def run_entry(self, ex, number, e, binary, gates):
        name = "%s | %s" % (ex["title"], e["title"])
        kind = e["kind"]
        if self.is_gpu(e) and not self.gpu:
            return self.not_graded_entry(ex, e, self.no_gpu_why)
        items = ["check " + e["check"]] if kind == "check" else \
            ["swizzle"] if kind == "same_swizzle" else self.problems(ex, e)
        ran, verdicts, note = self.run_plan(binary, number, items,
                                            self.time_left(self.timeouts["entry"]))
        outcome, text = self.outcome_of(ran, verdicts, note, items)
        for v in verdicts:
            self.launches += [l.split() for l in v.get("launches", "").split(";") if l.strip()]
        if kind == "same_swizzle" and outcome != "passed":
            gates.append(("technique", "the kernel's swizzle is not the one the CPU tests check "
                                       "(see '%s')" % name))
        return self.entry(ex, e, outcome, text, seconds=ran.seconds,
                          visibility=e.get("visibility", "visible"))

    def problems(self, ex, e):
        """The plan items of a GPU entry (or the sanitizer's shapes): its shapes with fresh
        seeds."""
        in_place = ex.get("in_place", False)
        if "random" in e:
            shapes = [self.random_shape(1, e["random"]["max_side"], in_place)
                      for _ in range(e["random"]["count"])]
        elif isinstance(e["shapes"], str):
            shapes = self.course_shapes(e["shapes"])
        else:
            shapes = [(s, s) if isinstance(s, int) else tuple(s) for s in e["shapes"]]
        return [("inplace %d %d" % (r, secrets.randbits(62)) if in_place else
                 "transpose %d %d %d" % (r, c, secrets.randbits(62))) for r, c in shapes]

    @staticmethod
    def random_shape(low, high, square):
        """Random sides in [low, high], never multiples of 32 (a square when @p square)."""
        rnd = secrets.SystemRandom()
        sides = []
        for _ in range(1 if square else 2):
            n = 32
            while n % 32 == 0:
                n = rnd.randint(low, high)
            sides.append(n)
        return sides[0], sides[-1]

    def course_shapes(self, spec):
        ran = run([self.judge_bin, "shapes", spec.split(":", 1)[1]], timeout=60)
        if ran.rc != 0:
            raise RuntimeError("the judge does not know the shape list %s" % spec)
        return [tuple(int(x) for x in line.split()) for line in ran.output.splitlines()
                if line.strip()]

    def shared_memory(self, ex, e, gates, pending=()):
        """Exercise 2's tile: every kernel the objects register declares exactly e["bytes"] of
        static shared memory; on a GPU, so did every kernel the launcher launched during the
        kernel tests, and none with dynamic shared memory."""
        name = "%s | %s" % (ex["title"], e["title"])
        want = e["bytes"]
        ok, text = self.shared_memory_static(ex, want)
        if ok and self.gpu:
            def right(launch):
                if len(launch) != 4 or not all(f.lstrip("-").isdigit() for f in launch[1:]):
                    return False
                name, static, dynamic, reserved = launch[0], *map(int, launch[1:])
                if static < 0:  # the runtime did not say: the kernel's compiled size does
                    return dynamic == 0 and self.static_kernels.get(name) == want
                return dynamic == 0 and want in (static, static - reserved)
            bad = [l for l in self.launches if not right(l)]
            if not self.launches:
                ok, text = False, ("no kernel launch of the launcher was seen during the kernel "
                                   "tests (a launcher must launch its kernel with <<< >>> on the "
                                   "stream it is given)")
            elif bad:
                ok = False
                shown = (bad[0] + ["?"] * 3)[:3]
                text = "the launcher launched %s with %s bytes of static and %s of dynamic " \
                       "shared memory; the tile must be one static 32 x 32 float tile, %d bytes" \
                       % (shown[0], shown[1], shown[2], want)
            else:
                kernels = sorted({l[0] for l in self.launches})
                text += "\nlaunched during the kernel tests: %s, %d bytes, no dynamic shared " \
                        "memory" % (", ".join(kernels), want)
        # The tile earns its points with the swizzle that makes it conflict-free: a tile
        # declared beside a kernel that does not swizzle (a skeleton) earns nothing. Not a gate:
        # a wrong swizzle already loses the bank model's points.
        unswizzled = [p.name for p in pending if any(
            fnmatch.fnmatchcase(p.gtest or "", t) for t in ex.get("technique", []))
            and not p.passed]
        if ok and unswizzled:
            return self.entry(ex, e, "failed", "the tile counts with the swizzle that makes it "
                              "conflict-free, and the bank model's entries did not pass (see "
                              "'%s')\n%s" % (unswizzled[0], text))
        if not ok:
            gates.append(("technique", "the kernel does not use the unpadded, swizzled tile "
                                       "(see '%s')" % name))
        return self.entry(ex, e, "passed" if ok else "failed", ("passed: " if ok else "") + text)

    # -- sanitizers -----------------------------------------------------------------------

    def sanitize(self, binary, number, items, tool, mode, timeout):
        """One compute-sanitizer run of the worker in @p mode, "root" or "user" (INSTRUCTORS.md,
        step 6): (Ran, errors, summary, log text, verdicts); errors None for any end of the tool
        but a clean one (exit 0, or its error code)."""
        n = self.next_id()
        logdir = self.private / ("sanitizer-" + n)
        logdir.mkdir(mode=0o700)
        owner = os.getuid()
        if self.box.isolated and mode == "user":
            owner = self.box.uid
            os.chown(logdir, self.box.uid, self.box.gid)
        log = self.box.mount_point("log", logdir) + "/sanitizer.log"
        prefix = [self.sanitizer, "--tool", tool, "--log-file", log, "--print-limit", "20",
                  "--error-exitcode", "86"]
        if mode == "root":
            prefix += self.box.drop_prefix()
        try:
            ran, verdicts, _ = self.run_plan(binary, number, items, timeout, prefix=prefix,
                                             extra_files={"log": (logdir, True)},
                                             as_root=(mode == "root"))
            # Read without following a link, and only the tool's own file.
            text = sandbox.read_owned(logdir, "sanitizer.log", 400000, {owner})
        finally:
            shutil.rmtree(logdir, ignore_errors=True)
        errors, summary = sanitizer_errors(text or "")
        if text is None:
            errors, summary = None, "its report is missing or is not a plain file of the tool's"
        elif ran.rc not in (0, 86) or ran.timed_out:
            errors = None  # the tool itself did not end normally: no verdict
        elif ran.rc == 86 and not errors:
            # The exit status says it found errors, whatever the report says: in user mode the
            # submission can reach the report, never the tool's exit status.
            errors, summary = 1, "the tool exited with its error code (%s)" % (
                summary or "no summary")
        return ran, errors, summary, text or "", verdicts

    def choose_sanitizer_mode(self):
        """Root mode if the tool works that way here (checked once on the course's own probe),
        else user mode, else ""."""
        if self.sanitizer_mode is not None:
            return self.sanitizer_mode
        probe = self.build / "bin" / "grader_probe"
        item = ["transpose 33 65 %d" % secrets.randbits(62)]
        tried = []
        for mode in (["root", "user"] if self.box.isolated else ["user"]):
            ran, errors, _, log, verdicts = self.sanitize(probe, 1, item, "memcheck", mode, 120)
            if errors == 0 and verdicts and all(v["ok"] for v in verdicts):
                self.sanitizer_mode = mode
                if mode == "user" and self.box.isolated:
                    self.r.notes.append("compute-sanitizer could not run as root with only the "
                                        "worker dropped to the sandbox user, so it ran as the "
                                        "sandbox user: a clean report counts only with the "
                                        "tool's clean exit.")
                return mode
            tried.append("%s mode: %s" % (mode, tail(log or ran.output, 600)))
        self.sanitizer_mode = ""
        self.sanitizer_failure = "\n".join(tried)
        return ""

    def run_sanitizers(self, ex, number, binary, gates):
        s = ex["sanitizer"]
        name = self.sanitizer_title(ex)
        if not self.gpu:
            return self.not_graded_entry(ex, None, self.no_gpu_why)
        if self.args.no_sanitizer:
            return self.entry(ex, None, NOT_GRADED, "not graded: the sanitizers were turned off "
                              "(--no-sanitizer)", reason="--no-sanitizer")
        if not self.gpu_test_passed:
            return self.entry(ex, None, "not_run", "not run: no GPU test of this exercise passed, "
                              "so there is nothing to check")
        if not self.sanitizer:
            return self.entry(ex, None, NOT_GRADED, "not graded: compute-sanitizer was not found "
                              "(it comes with the CUDA toolkit)", reason="no compute-sanitizer")
        mode = self.choose_sanitizer_mode()
        if not mode:
            return self.entry(ex, None, NOT_GRADED, "not graded: compute-sanitizer does not run "
                              "here:\n" + self.sanitizer_failure, reason="compute-sanitizer failed")
        items = self.problems(ex, {"shapes": s["sizes"] if ex.get("in_place") else s["shapes"]})
        lines, ok, unsafe, seconds = [], True, False, 0.0
        tools = [t for t in (self.args.sanitizer_tools or ",".join(s["tools"])).split(",") if t]
        for tool in tools:
            if self.out_of_time(ex):
                ok, unsafe = False, True
                lines.append("%s: not run, out of time: counted as an error" % tool)
                continue
            ran, errors, summary, log, verdicts = self.sanitize(
                binary, number, items, tool, mode, self.time_left(self.timeouts["sanitizer"]))
            seconds += ran.seconds
            bad = [v for v in verdicts if not v["ok"]]
            if errors is None:
                # The tool's end was not its own (killed, timed out, its report replaced): no
                # clean bill of health, so it counts as an error.
                ok, unsafe = False, True
                stop = "timed out after %g s" % round(ran.seconds) if ran.timed_out else \
                    "killed by %s" % ran.signal_name() if ran.signal_no else \
                    "ended with exit code %s" % ran.rc
                lines.append("%s: the tool did not end cleanly (%s%s), which counts as an error"
                             "\n%s" % (tool, stop, "; " + summary if summary else "",
                                       tail(log or ran.output, 1500)))
            elif errors:
                ok, unsafe = False, True
                reports = [l for l in log.splitlines() if l.startswith("=========")]
                lines.append("%s: %s\n%s" % (tool, summary, tail("\n".join(reports), 2500)))
            elif bad or len(verdicts) < len(items):
                ok = False
                lines.append("%s: %s, but the output under the tool is wrong: %s" % (
                    tool, summary, bad[0]["message"] if bad else "missing"))
            else:
                lines.append("%s: clean (%s)" % (tool, summary))
        if unsafe:
            gates.append(("gpu_tests", "compute-sanitizer found memory errors or did not end "
                                       "cleanly (see '%s')" % name))
        return self.entry(ex, None, "passed" if ok else "sanitizer_error",
                          "the worker rerun under compute-sanitizer on %d problems:\n%s"
                          % (len(items), "\n".join(lines)), seconds=seconds, sanitizer_mode=mode)

    # -- the GPU ----------------------------------------------------------------------------

    def detect_gpu(self):
        """Whether the sandbox sees a CUDA device, asked of the course's own probe: the only
        thing that decides it (nothing a submission's worker writes does)."""
        if self.args.no_gpu:
            self.gpu, self.no_gpu_why = False, "no CUDA device (--no-gpu)"
            return
        # The unified-memory device file appears the first time CUDA runs as root (through the
        # setuid nvidia-modprobe, which the sandbox's "no new privileges" would refuse).
        modprobe = shutil.which("nvidia-modprobe")
        if modprobe and os.geteuid() == 0 and os.path.exists("/dev/nvidiactl") and \
                not os.path.exists("/dev/nvidia-uvm"):
            run([modprobe, "-u", "-c=0"], timeout=60)
            self.box.devices, self.box.groups = sandbox.gpu_devices()
        probe = self.build / "bin" / "grader_probe"
        # The probe has a limit of its own, not a test's (a case may give its tests 5 s): on a
        # busy machine starting CUDA can take seconds, and a slow answer is no verdict on the
        # device. A probe past it grades nothing on the GPU and says to grade again.
        limit = max(self.timeouts["entry"], PROBE_SECONDS)
        ran, verdicts, _ = self.run_plan(probe, 1, ["devices"], limit)
        v = verdicts[0] if verdicts else {}
        self.gpu = bool(v.get("ok"))
        if self.gpu:
            self.r.extra["device"] = v.get("message", "")
            return
        if ran.timed_out:
            self.no_gpu_why = ("the device probe did not answer in %d s (a busy machine?): "
                               "grade again" % limit)
            return
        self.no_gpu_why = "no CUDA device"
        if os.path.exists("/dev/nvidiactl"):
            self.r.notes.append(
                "A GPU driver is installed (/dev/nvidiactl), but the sandboxed probe could not use "
                "a device (%s). Check that the sandbox user (%s) may open /dev/nvidia* and that "
                "nothing else holds the GPU." % (v.get("message") or tail(ran.output, 300),
                                                self.args.sandbox_user))

    # -- the rules, then the results ------------------------------------------------------

    def finish(self, ex, pending, gates):
        technique = ex.get("technique", [])
        for scope, reason in gates:
            for e in pending:
                if scope == "exercise" or \
                        (scope == "gpu_tests" and e.kind == "test" and e.gpu) or \
                        (scope == "technique" and (e.kind == "technique" or any(
                            fnmatch.fnmatchcase(e.gtest or "", p) for p in technique))):
                    e.zero(reason)
        for e in pending:
            self.r.add(e.exercise, e.kind, e.name, e.points, e.passed, e.output, e.outcome,
                       visibility=e.visibility, gtest=e.gtest, tags=["gpu" if e.gpu else "cpu"],
                       seconds=e.seconds, **e.extra)
