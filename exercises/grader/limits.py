"""A cgroup (v2) per grading (Python standard library only): one bound on the memory and the
number of processes of the grading and of everything it starts, which the sandbox's per-process
limits cannot give (exercises/INSTRUCTORS.md, "What is still out of reach")."""

import mmap
import os
import resource
import signal
import sys
import time
from pathlib import Path

PARENT = "transpose-grader"


def cgroup2_root(mounts="/proc/mounts"):
    try:
        for line in Path(mounts).read_text().splitlines():
            fields = line.split()
            if len(fields) > 2 and fields[2] == "cgroup2":
                return Path(fields[1])
    except OSError:
        pass
    return None


def controllers(path):
    """The controllers a cgroup file lists (cgroup.controllers, cgroup.subtree_control)."""
    return set(path.read_text().split()) if path.is_file() else set()


class Limits:
    """The grading's cgroup: enter() moves this process into a fresh group with memory.max and
    pids.max (its children follow), leave() moves it out and removes the group with anything
    left in it."""

    def __init__(self, memory_bytes, pids, root=None):
        self.memory_bytes, self.pids = memory_bytes, pids
        self.root = root if root is not None else cgroup2_root()
        self.group, self.why = None, ""

    def enter(self):
        """The report's line: what bounds this grading, or why nothing does."""
        if self.root is None:
            self.why = "no cgroup v2 file system is mounted"
        elif os.geteuid() != 0 and not os.access(self.root, os.W_OK):
            self.why = "the grader is not root"
        else:
            have = controllers(self.root / "cgroup.controllers")
            if not {"memory", "pids"} <= have:
                self.why = ("cgroup v2 has no memory and pids controllers here (%s); they are "
                            "in cgroup v1 or not delegated" % (" ".join(sorted(have)) or "none"))
            else:
                try:
                    self.make()
                except OSError as err:
                    self.group, self.why = None, "cgroup v2 refused a group: %s" % err
        if self.group is None:
            return ("Limits: no cgroup for this grading (%s): its processes are limited one by "
                    "one, not together; INSTRUCTORS.md says how to bound the whole grading"
                    % self.why)
        return ("Limits: this grading and everything it ran shared one cgroup: %d MiB of "
                "memory, %d processes" % (self.memory_bytes >> 20, self.pids))

    def make(self):
        parent = self.root / PARENT
        # Controllers for the children of a group are enabled in its parent's subtree_control.
        for d in (self.root, parent):
            if d == parent:
                parent.mkdir(exist_ok=True)
            if not {"memory", "pids"} <= controllers(d / "cgroup.subtree_control"):
                (d / "cgroup.subtree_control").write_text("+memory +pids")
        group = parent / ("grading-%d" % os.getpid())
        group.mkdir(exist_ok=True)
        (group / "memory.max").write_text(str(self.memory_bytes))
        if (group / "memory.swap.max").exists():
            (group / "memory.swap.max").write_text("0")
        (group / "pids.max").write_text(str(self.pids))
        (group / "cgroup.procs").write_text(str(os.getpid()))
        self.group = group

    def leave(self):
        if self.group is None:
            return
        try:
            (self.root / "cgroup.procs").write_text(str(os.getpid()))
            if (self.group / "cgroup.kill").exists():  # anything the grading left behind
                (self.group / "cgroup.kill").write_text("1")
            for _ in range(50):
                try:
                    self.group.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
        except OSError:
            pass
        self.group = None


def fork_hog(cap):
    """Forks sleeping children until the kernel refuses (or cap): how many it got."""
    kids = []
    try:
        while len(kids) < cap:
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            kids.append(pid)
    finally:
        for pid in kids:
            os.kill(pid, signal.SIGKILL)
        for pid in kids:
            os.waitpid(pid, 0)
    return len(kids)


def memory_hog(count, each):
    """count children each touch `each` bytes and hold them 20 s: how many were killed."""
    kids = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:  # as a run in the sandbox: its heap within RLIMIT_DATA
            resource.setrlimit(resource.RLIMIT_DATA, (16 << 30, 16 << 30))
            block, chunk = mmap.mmap(-1, each), b"\1" * (64 << 20)
            for offset in range(0, each, len(chunk)):
                block[offset:offset + len(chunk)] = chunk
            time.sleep(20)
            os._exit(0)
        kids.append(pid)
    ends = [os.waitpid(pid, 0)[1] for pid in kids]
    return sum(os.WIFSIGNALED(e) and os.WTERMSIG(e) == signal.SIGKILL for e in ends)


def measure(memory_gib=64, pids=8192):
    """The grading's cgroup, as grade.py makes it, against a fork hog and against five processes
    of 15 GiB (gpu_acceptance.sh limits): a line each; 0 when the cgroup held both."""
    limits = Limits(memory_gib << 30, pids)
    print(limits.enter())
    if limits.group is None:
        return 1
    try:
        got = fork_hog(pids + 100)
        print("limits: a fork hog in the cgroup got %d processes beside its parent (pids.max %d)"
              % (got, pids))
        killed = memory_hog(5, 15 << 30)
        events = dict(line.split() for line in (limits.group / "memory.events").read_text()
                      .splitlines())
        peak = limits.group / "memory.peak"
        print("limits: 5 processes touching 15 GiB each (75 GiB): %d killed, oom_kill %s%s"
              % (killed, events.get("oom_kill"), ", peak %.1f GiB" % (int(peak.read_text()) / 2**30)
                 if peak.is_file() else ""))
    finally:
        limits.leave()
    held = got < pids and killed >= 1
    print("limits: %s" % ("the cgroup held both" if held else "NOT HELD"))
    return 0 if held else 1


if __name__ == "__main__":
    if sys.argv[1:] != ["--measure"]:
        sys.exit("usage: python3 exercises/grader/limits.py --measure  (as root, on cgroup v2)")
    sys.exit(measure())
