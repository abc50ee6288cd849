#!/usr/bin/env python3
"""Runs a submission's processes isolated, and tears them down (Python standard library only).

A submission is hostile code. Every process built from it (its compile, its worker, a sanitizer
run) goes through Sandbox.run, which, run as root, gives it:
  - a user of its own (no write access to the course, the grader or the results), its groups
    cleared except those that open the GPU's device files, no new privileges;
  - a PID namespace whose first process is this file's supervisor (--init, root, trusted): it
    enforces the time limit, and when the command ends or its time is up it kills every process
    the command started and reaps them, so nothing outlives a run and nobody holds a pipe; it
    reports the exit status, the wall time and the CPU time of everything that ran;
  - a mount namespace: the whole file system read-only, fresh empty /tmp, /var/tmp and /dev/shm
    (the scratch folder), the course, the submission, the results and the hidden tests replaced
    by empty folders, only the folders the run needs shown again (read-only, or read-write for a
    build folder);
  - optionally a network namespace with only the loopback interface.
Output goes to files the grader opened, never to a pipe the grader waits on.

Where namespaces are refused (a container without the capability), the supervisor still runs the
command as the sandbox user and kills every process of that user when it ends. Without root
nothing can be isolated: the command runs as the caller, and the supervisor (a child subreaper)
still kills everything it started. Sandbox.level and Sandbox.note say which applies.
"""

import ctypes
import json
import os
import pwd
import grp
import resource
import select
import shutil
import signal
import socket
import struct
import fcntl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SANDBOX_USER = "transpose-sandbox"
FALLBACK_ID = 64000  # uid and gid used when no user can be created

# Levels of isolation.
NAMESPACES = "namespaces"  # root: own user, PID, mount and network namespaces
USER_ONLY = "user"         # root, namespaces refused: own user, everything of that user killed
NONE = "none"              # not root: the caller's rights; the process tree is killed


class Ran:
    """The outcome of one sandboxed command."""

    def __init__(self, rc, signal_no, timed_out, seconds, cpu, exit_time, output, status):
        self.rc = rc                  # exit code, or None when killed by a signal
        self.signal_no = signal_no    # the signal that ended it, or None
        self.timed_out = timed_out
        self.seconds = seconds        # wall time of the command
        self.cpu = cpu                # CPU seconds of every process it started
        self.exit_time = exit_time    # time.monotonic() when the command ended
        self.output = output          # its stdout and stderr (the log), as text
        self.status = status          # the supervisor's report (dict), {} if there was none
        self.go_time = None           # time.monotonic() of the "go" (timed runs)
        self.ready = False            # the command said "ready" (timed runs)

    def signal_name(self):
        if self.signal_no:
            try:
                return signal.Signals(self.signal_no).name
            except ValueError:
                return "signal %d" % self.signal_no
        return None


def _ids_of(user):
    try:
        p = pwd.getpwnam(user)
        return p.pw_uid, p.pw_gid
    except KeyError:
        return None


def ensure_user(name=SANDBOX_USER):
    """(uid, gid, note) of the sandbox user, created (a system user without a home or a login
    shell) when missing. Falls back to a numeric id nobody uses."""
    ids = _ids_of(name)
    if ids:
        return ids[0], ids[1], ""
    if name.isdigit():
        return int(name), int(name), ""
    useradd = shutil.which("useradd")
    if useradd:
        subprocess.run([useradd, "--system", "--user-group", "--no-create-home",
                        "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ids = _ids_of(name)
        if ids:
            return ids[0], ids[1], "created the system user %s for the sandbox" % name
    used = {p.pw_uid for p in pwd.getpwall()} | {g.gr_gid for g in grp.getgrall()}
    uid = FALLBACK_ID
    while uid in used:
        uid += 1
    return uid, uid, ("no user %s and none could be created: the sandbox runs as uid %d"
                      % (name, uid))


def gpu_groups():
    """Groups that the GPU's device files need, where 'other' may not open them."""
    gids = set()
    for dev in Path("/dev").glob("nvidia*"):
        try:
            st = dev.stat()
        except OSError:
            continue
        if not st.st_mode & 0o006 and st.st_mode & 0o060:
            gids.add(st.st_gid)
    return sorted(gids)


class Sandbox:
    """Runs commands isolated from the grader (see the module's docstring)."""

    def __init__(self, level, uid=None, gid=None, groups=(), hide=(), note="", python=None):
        self.level = level
        self.uid, self.gid, self.groups = uid, gid, list(groups)
        self.hide = [str(Path(h).resolve()) for h in hide if h]
        self.note = note
        self.python = python or sys.executable
        self.script = str(Path(__file__).resolve())
        self.unshare = shutil.which("unshare")
        self.setpriv = shutil.which("setpriv")

    @classmethod
    def create(cls, want=True, user=SANDBOX_USER, hide=()):
        """The strongest isolation this machine allows (or none, with want=False)."""
        if not want:
            return cls(NONE, note="not isolated (--no-sandbox): the submission's code runs with "
                                  "the grader's rights")
        if os.geteuid() != 0:
            return cls(NONE, note="not isolated: the grader is not root, so the submission's "
                                  "code runs with your rights (it could read or change your "
                                  "files); grade untrusted code as root")
        uid, gid, made = ensure_user(user)
        box = cls(USER_ONLY, uid, gid, gpu_groups(), hide)
        why = box._namespaces_work() if box.unshare else "unshare (util-linux) is missing"
        if not why:
            box.level = NAMESPACES
            box.note = ("isolated: the submission ran as user %s in its own PID, mount and "
                        "network namespaces" % (user if not user.isdigit() else "uid " + user))
        else:
            box.level = USER_ONLY
            box.note = ("partly isolated: namespaces are refused here (%s), so the submission "
                        "ran as its own user without a private view of the file system (it can "
                        "read what 'other' may read)" % why)
        if made:
            box.note += "; " + made
        return box

    def _namespaces_work(self):
        """'' when a run in namespaces works here (the real supervisor, a trivial command), else
        why not."""
        self.level = NAMESPACES
        try:
            with tempfile.TemporaryDirectory() as tmp:
                os.chmod(tmp, 0o700)
                ran = self.run(["/bin/sh", "-c", "touch /tmp/ok && test -f /tmp/ok"], timeout=30,
                               log=Path(tmp) / "log", private=tmp)
            if ran.rc == 0:
                return ""
            why = ran.status.get("setup_error") or ran.output.strip() or "exit %s" % ran.rc
            return why[:300]
        except OSError as err:
            return str(err)
        finally:
            self.level = USER_ONLY

    @property
    def isolated(self):
        return self.level != NONE

    def drop_prefix(self):
        """A command prefix that runs the rest as the sandbox user (for a trusted root process,
        like compute-sanitizer, that launches the submission's worker)."""
        if self.level == NONE:
            return []
        if self.setpriv:
            groups = ",".join(str(g) for g in self.groups)
            return [self.setpriv, "--reuid=%d" % self.uid, "--regid=%d" % self.gid] + \
                (["--groups=" + groups] if groups else ["--clear-groups"]) + \
                ["--no-new-privs", "--"]
        return [self.python, self.script, "--drop", "%d:%d:%s" % (
            self.uid, self.gid, ",".join(str(g) for g in self.groups)), "--"]

    def chown(self, path):
        """Gives a folder (a build folder) to the sandbox user."""
        if self.level == NONE:
            return
        for root, dirs, files in os.walk(path):
            for name in [root] + [os.path.join(root, f) for f in dirs + files]:
                try:
                    os.lchown(name, self.uid, self.gid)
                except OSError:
                    pass

    def run(self, argv, timeout, log, cwd="/tmp", env=None, fds=None, ro=(), rw=(), hide=(),
            network=False, as_root=False, handshake=None, monitor=None, private=None):
        """Runs argv and returns a Ran.

        log:       file that receives stdout and stderr (read back into Ran.output).
        fds:       {target fd number: path or open file descriptor} for fds 3 and up; a path is
                   opened read-only for fd 3 (the plan) and write-only for the others.
        ro, rw:    folders the command needs (read-only, read-write); all else is hidden or
                   read-only (namespaces level).
        hide:      more folders to replace with empty ones for this run.
        handshake: callable() -> "go ...\\n" line, called when the command writes "ready" on
                   fd 5; the line is written to its stdin.
        monitor:   object with start() and stop(), running while the command runs.
        private:   a folder only root may enter, for the supervisor's status file.
        """
        env = dict(env or {})
        log = Path(log)
        private = Path(private or log.parent)
        status_path = private / ("status-%d-%d.json" % (os.getpid(), time.monotonic_ns()))
        opened = []

        def opened_fd(path, mode, perm=0o600):
            fd = os.open(str(path), mode, perm)
            opened.append(fd)
            return fd

        log_fd = opened_fd(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        status_fd = opened_fd(status_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        target_fds = {1: log_fd, 2: log_fd}
        for num, what in (fds or {}).items():
            if isinstance(what, int):
                target_fds[num] = what
            else:
                mode = os.O_RDONLY if num == 3 else os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                target_fds[num] = opened_fd(what, mode)
        go_w = ready_r = None
        if handshake:
            go_r, go_w = os.pipe()
            ready_r, ready_w = os.pipe()
            opened += [go_r, ready_w]
            target_fds[0] = go_r
            target_fds[5] = ready_w
        else:
            target_fds[0] = opened_fd("/dev/null", os.O_RDONLY)
        hide = [str(Path(p).resolve()) for p in hide]
        if self.level == NAMESPACES:
            # A folder shown again must be reachable by the sandbox user: an ancestor that
            # 'other' may not enter (a home folder, say) is replaced by an empty one, in which
            # the path is made again.
            for p in list(ro) + list(rw):
                for a in list(Path(p).resolve().parents)[:-1]:
                    try:
                        if not os.stat(a).st_mode & 0o001 and str(a) not in hide:
                            hide.append(str(a))
                    except OSError:
                        pass
        config = {
            "level": self.level,
            "uid": self.uid, "gid": self.gid, "groups": self.groups,
            "drop": self.level != NONE and not as_root,
            "argv": [str(a) for a in argv], "cwd": str(cwd), "env": env,
            "timeout": float(timeout),
            "fds": {str(k): v for k, v in target_fds.items()},
            "status_fd": status_fd,
            "hide": self.hide + hide,
            "ro": [str(Path(p).resolve()) for p in ro],
            "rw": [str(Path(p).resolve()) for p in rw],
            "network": bool(network),
        }
        cmd = [self.python, "-I", "-S", self.script, "--init", json.dumps(config)]
        if self.level == NAMESPACES:
            cmd = [self.unshare, "--pid", "--fork", "--kill-child", "--mount-proc", "--mount"] + \
                (["--net"] if not network else []) + ["--"] + cmd
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log_fd, stderr=log_fd,
                                pass_fds=sorted(set(target_fds.values()) | {status_fd}),
                                start_new_session=True)
        for fd in opened:  # the supervisor has its copies; the grader keeps only its pipe ends
            os.close(fd)
        ran_go = None
        ready = False
        deadline = start + timeout + 20  # the supervisor enforces `timeout`; this is a backstop
        try:
            if monitor:
                monitor.start()
            if handshake:
                buf = b""
                while b"\n" not in buf and time.monotonic() < start + timeout:
                    r, _, _ = select.select([ready_r], [], [], 0.2)
                    if r:
                        chunk = os.read(ready_r, 64)
                        if not chunk:
                            break
                        buf += chunk
                    elif proc.poll() is not None:
                        break
                if buf.startswith(b"ready"):
                    ready = True
                    line = handshake()
                    ran_go = time.monotonic()
                    try:
                        os.write(go_w, line.encode())
                    except OSError:
                        pass
                os.close(go_w)
                go_w = None
            try:
                proc.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)  # --kill-child takes the namespace with it
                proc.wait()
        finally:
            if monitor:
                monitor.stop()
            for fd in (go_w, ready_r):
                if fd is not None:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
        if self.level != NAMESPACES:
            self.kill_leftovers(proc.pid)
        try:
            status = json.loads(status_path.read_text() or "{}")
        except (OSError, ValueError):
            status = {}
        status_path.unlink(missing_ok=True)
        output = read_tail(log, 200000)
        if not status:
            # The supervisor itself did not report: it was killed at the backstop.
            ran = Ran(None, signal.SIGKILL, True, time.monotonic() - start, 0.0,
                      time.monotonic(), output, {})
        else:
            ran = Ran(status.get("exit"), status.get("signal"), status.get("timed_out", False),
                      status.get("seconds", 0.0), status.get("cpu", 0.0),
                      status.get("exit_time"), output, status)
            if status.get("setup_error"):
                ran.output = "sandbox: %s\n%s" % (status["setup_error"], output)
        ran.go_time = ran_go
        ran.ready = ready
        return ran

    def kill_leftovers(self, supervisor_pid):
        """Without namespaces: every process of the sandbox user (the supervisor kills its own
        process tree too)."""
        if self.level != USER_ONLY:
            return
        for _ in range(50):
            found = False
            for p in Path("/proc").iterdir():
                if not p.name.isdigit():
                    continue
                try:
                    if p.stat().st_uid == self.uid:
                        os.kill(int(p.name), signal.SIGKILL)
                        found = True
                except (OSError, ValueError):
                    pass
            if not found:
                return
            time.sleep(0.05)


def read_tail(path, limit):
    """The last @p limit bytes of a file the command wrote, as text (it may be huge)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


# ---------------------------------------------------------------------------------------------
# The supervisor (runs as root inside the namespaces, or as the caller without them)

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                           ctypes.c_void_p]
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                           ctypes.c_ulong]
    return libc


def _mount(libc, source, target, fstype, flags, data=None):
    r = libc.mount(source.encode() if source else None, target.encode(),
                   fstype.encode() if fstype else None, flags,
                   ctypes.c_char_p(data.encode()) if data else None)
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, "mount %s on %s: %s" % (source or fstype, target, os.strerror(e)))


def _mount_points():
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            sep = parts.index("-")
            point = parts[4].encode().decode("unicode_escape")
            points.append((point, parts[sep + 1]))
    return points


def _kept_flags(path):
    """The flags a read-only remount of @p path must keep (changing a locked one is refused)."""
    try:
        f = os.statvfs(path).f_flag
    except OSError:
        return MS_NOSUID | MS_NODEV
    flags = 0
    for st, ms in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                   (os.ST_NOATIME, 1024), (os.ST_NODIRATIME, 2048), (os.ST_RELATIME, 1 << 21)):
        if f & st:
            flags |= ms
    return flags


def _set_up_mounts(libc, cfg):
    """The run's view of the file system (see the module's docstring)."""
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    shown = []  # (path, fd, writable)
    for key, writable in (("ro", False), ("rw", True)):
        for p in cfg[key]:
            if os.path.isdir(p):
                shown.append((p, os.open(p, os.O_RDONLY | os.O_DIRECTORY), writable))
    # Everything read-only, in this namespace only (device nodes stay usable).
    for point, fstype in _mount_points():
        if fstype in ("proc", "sysfs", "devtmpfs", "devpts", "mqueue", "cgroup", "cgroup2",
                      "securityfs", "debugfs", "tracefs", "fusectl", "binfmt_misc") \
                or point.startswith(("/proc", "/dev/pts")):
            continue
        try:
            _mount(libc, None, point, None,
                   MS_REMOUNT | MS_BIND | MS_RDONLY | _kept_flags(point))
        except OSError as e:
            if point == "/":
                raise
            del e
    # Fresh, empty scratch space.
    for point, size in (("/tmp", "2g"), ("/var/tmp", "64m"), ("/dev/shm", "256m")):
        if os.path.isdir(point):
            _mount(libc, "tmpfs", point, "tmpfs", MS_NOSUID | MS_NODEV,
                   "mode=1777,size=%s" % size)
    # What the run must not see: empty folders (or /dev/null for a file) in their place. What it
    # needs is then shown again at the same paths; what is hidden inside those is hidden last.
    inside = [p for p in cfg["hide"] if any(p.startswith(s + "/") for s, _, _ in shown)]
    hidden = []

    def hide(p):
        if os.path.isdir(p):
            _mount(libc, "tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
            hidden.append(p)
        elif os.path.exists(p):
            _mount(libc, "/dev/null", p, None, MS_BIND)

    for p in cfg["hide"]:
        if p not in inside:
            hide(p)
    for p, fd, writable in shown:
        os.makedirs(p, exist_ok=True)
        _mount(libc, "/proc/self/fd/%d" % fd, p, None, MS_BIND)
        _mount(libc, None, p, None,
               MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | (0 if writable else MS_RDONLY))
        os.close(fd)
    for p in inside:
        hide(p)
    for p in hidden:
        _mount(libc, None, p, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _loopback_up():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        req = struct.pack("16sH14s", b"lo", 0, b"\0" * 14)
        flags = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, req)[:18])[1]  # SIOCGIFFLAGS
        fcntl.ioctl(s, 0x8914, struct.pack("16sH14s", b"lo", flags | 1, b"\0" * 14))
    finally:
        s.close()


def _children_of(pid):
    kids = []
    try:
        for task in Path("/proc/%d/task" % pid).iterdir():
            kids += [int(k) for k in (task / "children").read_text().split()]
    except OSError:
        pass
    return kids


def _kill_all(cfg):
    """Kills every process the command started (and their children), as far as this level can
    see them."""
    if cfg["level"] == NAMESPACES:
        try:
            os.kill(-1, signal.SIGKILL)  # PID 1 of the namespace: every other process in it
        except OSError:
            pass
        return
    for _ in range(100):  # the subtree: with the subreaper, orphans are our children
        todo, seen = _children_of(os.getpid()), set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            todo += _children_of(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not seen:
            return
        _reap(0.05)


def _reap(wait):
    """Reaps children until none is left or @p wait seconds pass; the main one's status is not
    needed here."""
    end = time.monotonic() + wait
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            if time.monotonic() > end:
                return False
            time.sleep(0.005)


def supervise(cfg):
    libc = _libc()
    status_fd = cfg["status_fd"]
    report = {"exit": None, "signal": None, "timed_out": False}
    setup_error = None
    if cfg["level"] == NAMESPACES:
        try:
            _set_up_mounts(libc, cfg)
            if not cfg["network"]:
                _loopback_up()
        except OSError as e:
            setup_error = str(e)
    else:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    if setup_error:
        report["setup_error"] = setup_error
        os.write(status_fd, json.dumps(report).encode())
        return 0
    fds = {int(k): v for k, v in cfg["fds"].items()}
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the command
        try:
            # Its descriptors: first out of the way (above every number in use), then in place.
            high = max(list(fds) + list(fds.values()) + [status_fd]) + 1
            moved = {}
            for num, fd in fds.items():
                moved[num] = os.dup2(fd, high + num, inheritable=False)
            for num, fd in moved.items():
                os.dup2(fd, num, inheritable=True)
            os.closerange(max(fds) + 1, 65536)
            for num in range(max(fds) + 1):
                if num not in fds:
                    try:
                        os.close(num)
                    except OSError:
                        pass
            os.chdir(cfg["cwd"] if os.path.isdir(cfg["cwd"]) else "/tmp")
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 30, 2 << 30))
            if cfg["level"] != NAMESPACES:
                libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            try:  # if memory runs out, the kernel's OOM killer takes the command first
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write("1000")
            except OSError:
                pass
            if cfg["drop"]:
                resource.setrlimit(resource.RLIMIT_NPROC, (1024, 1024))
                os.setgroups(cfg["groups"])
                os.setresgid(cfg["gid"], cfg["gid"], cfg["gid"])
                os.setresuid(cfg["uid"], cfg["uid"], cfg["uid"])
                libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            os.execvpe(cfg["argv"][0], cfg["argv"], cfg["env"])
        except BaseException as e:  # noqa: B902 (anything: report it and leave)
            try:
                os.write(2, ("sandbox: cannot run %s: %s\n" % (cfg["argv"][0], e)).encode())
            finally:
                os._exit(127)
    # The supervisor: wait for the command, within its time.
    deadline = start + cfg["timeout"]
    status = None
    while status is None:
        try:
            done, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if done == pid:
            status = st
            break
        if done == 0:
            if time.monotonic() > deadline:
                report["timed_out"] = True
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                _, status = os.waitpid(pid, 0)
                break
            time.sleep(0.002)
    exit_time = time.monotonic()
    _kill_all(cfg)
    if not _reap(10.0):
        _kill_all(cfg)
        _reap(10.0)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if status is not None:
        if os.WIFEXITED(status):
            report["exit"] = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            report["signal"] = os.WTERMSIG(status)
    report.update(seconds=round(exit_time - start, 4), exit_time=exit_time,
                  cpu=round(usage.ru_utime + usage.ru_stime, 4))
    os.write(status_fd, json.dumps(report).encode())
    return 0


def drop(spec, argv):
    """--drop UID:GID:GROUPS -- argv: becomes the sandbox user and runs argv (used where setpriv
    is missing)."""
    uid, gid, groups = spec.split(":")
    os.setgroups([int(g) for g in groups.split(",") if g])
    os.setresgid(int(gid), int(gid), int(gid))
    os.setresuid(int(uid), int(uid), int(uid))
    _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--init":
        sys.exit(supervise(json.loads(sys.argv[2])))
    if len(sys.argv) > 4 and sys.argv[1] == "--drop" and sys.argv[3] == "--":
        drop(sys.argv[2], sys.argv[4:])
    sys.exit("usage: sandbox.py --init CONFIG | --drop UID:GID:GROUPS -- COMMAND")
