"""The grader's trusted commands and text helpers (Python standard library only)."""

import os
import re
import signal
import subprocess
import tempfile
import time

OUTPUT_LIMIT = 6000  # characters of output kept in one entry


class Ran:
    """The outcome of one trusted command: exit status, combined output, and why it stopped."""

    def __init__(self, rc, output, seconds, timed_out):
        self.rc = rc
        self.output = output
        self.seconds = seconds
        self.timed_out = timed_out


def run(cmd, cwd=None, timeout=None, env=None, limit=1 << 20):
    """Runs a trusted command (never the submission's code) and returns the last @p limit bytes
    of what it printed."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        size = out.seek(0, os.SEEK_END)
        out.seek(max(0, size - limit))
        text = out.read().decode("utf-8", errors="replace")
    return Ran(proc.returncode, text, time.monotonic() - start, timed_out)


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
