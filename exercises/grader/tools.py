"""The grader's trusted commands and text helpers (Python standard library only)."""

import os
import re
import signal
import subprocess
import tempfile
import threading
import time

OUTPUT_LIMIT = 6000  # characters of output kept in one entry


class Ran:
    """The outcome of one command (run() here, or sandbox.Sandbox.run)."""

    def __init__(self, rc, signal_no, timed_out, seconds, cpu, exit_time, output):
        self.rc = rc                  # exit code, or None when killed by a signal
        self.signal_no = signal_no    # the signal that ended it, or None
        self.timed_out = timed_out
        self.seconds = seconds        # wall time of the command
        self.cpu = cpu                # CPU seconds of every process it started (sandboxed runs)
        self.exit_time = exit_time    # time.monotonic() when the command ended
        self.output = output          # its stdout and stderr (the log), as text
        self.go_time = None           # time.monotonic() of the "go" (timed runs)
        self.limit = None

    def signal_name(self):
        if self.signal_no:
            try:
                return signal.Signals(self.signal_no).name
            except ValueError:
                return "signal %d" % self.signal_no
        return None


# The trusted commands running now, ended together by stop_all (the class command's Ctrl-C).
RUNNING = set()
RUNNING_LOCK = threading.Lock()


def run(cmd, cwd=None, timeout=None, env=None, limit=1 << 20, log=None):
    """Runs a trusted command (never the submission's code) in its own process group, killed
    whole at @p timeout, and returns the last @p limit bytes of what it printed (kept in the file
    @p log when given)."""
    start = time.monotonic()
    with open(log, "w+b") if log else tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        with RUNNING_LOCK:
            RUNNING.add(proc)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(proc)
            proc.wait()
        finally:
            with RUNNING_LOCK:
                RUNNING.discard(proc)
        size = out.seek(0, os.SEEK_END)
        out.seek(max(0, size - limit))
        text = out.read().decode("utf-8", errors="replace")
    return Ran(proc.returncode, None, timed_out, time.monotonic() - start, 0.0, None, text)


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def stop_all():
    """Kills every running command's process group. Returns how many were running."""
    with RUNNING_LOCK:
        procs = list(RUNNING)
    for proc in procs:
        kill_group(proc)
    return len(procs)


_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff\ud800-\udfff]")


def clean(text):
    """Text the submission shaped, safe for JSON, XML and a terminal: control characters (but
    newlines and tabs) become '?'."""
    return _UNPRINTABLE.sub("?", text)


def tail(text, limit=OUTPUT_LIMIT):
    text = text.rstrip()
    if len(text) <= limit:
        return text
    return "[... %d characters cut ...]\n" % (len(text) - limit) + text[-limit:]


def head(text, limit=OUTPUT_LIMIT):
    text = text.rstrip()
    if len(text) <= limit:
        return text
    return text[:limit] + "\n[... %d characters cut ...]" % (len(text) - limit)
