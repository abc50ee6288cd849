"""Runs a submission's processes isolated, on bubblewrap (Python standard library only).

Every process built from a submission goes through Sandbox.run: under bwrap when the grader is
root (what the run sees, and as whom: exercises/INSTRUCTORS.md, "The sandbox"), with
sandbox_init.c as its pid 1. As root without bwrap Sandbox.create raises Unavailable: the grader
refuses rather than run hostile code half isolated. Not as root, or with --no-sandbox, the command
runs as the caller in its own process group, killed when it ends. Output goes to files the grader
opened, never to a pipe the grader reads to its end.
"""

import grp
import hashlib
import os
import pwd
import shutil
import select
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools import Ran, run

SANDBOX_USER = "transpose-sandbox"
FALLBACK_ID = 64000  # uid and gid used when no user can be created
DATA_MIB = 16384     # RLIMIT_DATA of every process of a run (its heap; see sandbox_init.c)
BWRAP = "bwrap"      # bubblewrap, with user namespaces or without
NONE = "none"        # the caller's rights, its process group killed after each run
HERE = Path(__file__).resolve().parent

# Seen by every run, read-only: the system and the toolchain (others are added when a tool lives
# elsewhere). Everything else of the machine is absent.
SYSTEM = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys"]
# Libraries a transpose could be handed to, hidden even from a hand-written loader.
HIDDEN_LIBRARIES = ("libcublas", "libcublasLt", "libnvblas", "libcutensor", "libcusparse",
                    "libcusolver", "libcufft", "libnpp", "libcudnn", "libnvjpeg", "libcurand")


def no_sandbox_hint():
    """How the person who ran the grader turns the sandbox off: make's variable under make
    (which takes no --no-sandbox), the option otherwise."""
    return "NO_SANDBOX=1 (make grade ... NO_SANDBOX=1)" if os.environ.get("MAKELEVEL") \
        else "--no-sandbox"


class Unavailable(Exception):
    """The grader is root but cannot isolate: it refuses to grade (one line says why)."""


def ensure_user(name=SANDBOX_USER):
    """(uid, gid, note) of the sandbox user, created (a system user without a home or a login
    shell) when missing. Falls back to a numeric id nobody uses."""
    def ids():
        try:
            p = pwd.getpwnam(name)
            return p.pw_uid, p.pw_gid
        except KeyError:
            return None
    if ids():
        return ids() + ("",)
    if name.isdigit():
        return int(name), int(name), ""
    if shutil.which("useradd"):
        run([shutil.which("useradd"), "--system", "--user-group", "--no-create-home",
             "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name], timeout=60)
        if ids():
            return ids() + ("created the system user %s for the sandbox" % name,)
    used = {p.pw_uid for p in pwd.getpwall()} | {g.gr_gid for g in grp.getgrall()}
    uid = FALLBACK_ID
    while uid in used:
        uid += 1
    return uid, uid, "no user %s and none could be created: the sandbox runs as uid %d" % (
        name, uid)


LOCKS = "/run/transpose-grader"  # one lock file per sandbox user held by a grading


def claim_user(base, lanes=64):
    """The first of base, base-1, base-2, ... that no other grading on this machine holds (a
    lock file held for the rest of this process): RLIMIT_NPROC counts per user."""
    import fcntl
    folder = LOCKS if os.path.isdir("/run") else os.path.join(tempfile.gettempdir(),
                                                              "transpose-grader")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    for n in range(lanes):
        name = base if n == 0 else "%s-%d" % (base, n)
        fd = os.open(os.path.join(folder, name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _held.append(fd)
        return name
    raise Unavailable("%d gradings already run on this machine, each as its own sandbox user"
                      % lanes)


_held = []


def gpu_devices():
    """The GPU's device files (/dev/nvidia*, /dev/nvidia-caps) and the groups that open them
    where 'other' may not."""
    devs, gids = [], set()
    for dev in sorted(Path("/dev").glob("nvidia*")):
        try:
            st = dev.stat()
        except OSError:
            continue
        devs.append(str(dev))
        if not st.st_mode & 0o006 and st.st_mode & 0o060:
            gids.add(st.st_gid)
    return devs, sorted(gids)


def running(pid):
    """Whether child @p pid still runs (not reaped: its CPU time is read when it is)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None


def read_tail(path, limit):
    """The last @p limit bytes of a file a command wrote, as text (it may be huge)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def read_owned(dir_path, name, limit, owners):
    """Up to @p limit bytes of the plain file @p name in @p dir_path, opened without following a
    link and only if one of @p owners owns it and it has no other name: root never reads a file
    the sandbox user could have swapped for another. None when it is not such a file."""
    try:
        dfd = os.open(dir_path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
    except OSError:
        return None
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_uid not in owners:
            return None
        os.lseek(fd, max(0, st.st_size - limit), os.SEEK_SET)
        return os.read(fd, limit).decode("utf-8", errors="replace")
    finally:
        os.close(fd)


def find_tool(name):
    """Where the tool @p name is: on PATH, else in the CUDA toolkit ($CUDA_HOME, $CUDA_PATH,
    /usr/local/cuda, or beside nvcc); None if nowhere."""
    found = shutil.which(name)
    nvcc = shutil.which("nvcc")
    homes = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda",
             str(Path(nvcc).resolve().parent.parent) if nvcc else ""]
    for d in [] if found else [h for h in homes if h]:
        if Path(d, "bin", name).is_file():
            return str(Path(d, "bin", name))
    return found


def tool_roots():
    """Install prefixes of the tools a run uses that live outside SYSTEM (a CUDA toolkit in /opt,
    a CMake elsewhere): shown read-only too."""
    roots = set()
    for tool in ("nvcc", "compute-sanitizer", "cmake", "ninja", "c++", "setpriv"):
        found = find_tool(tool)
        if not found:
            continue
        prefix = Path(found).resolve().parent.parent
        if not any(str(prefix) == s or str(prefix).startswith(s + "/") for s in SYSTEM):
            roots.add(str(prefix))
    return sorted(roots)


def _hidden_libraries():
    """Every copy of the HIDDEN_LIBRARIES in the toolkit's and the system's library folders, and
    the NVIDIA wheels of Python installs."""
    files, dirs = [], []
    lib_dirs = set()
    nvcc = find_tool("nvcc")
    if nvcc:
        top = Path(nvcc).resolve().parent.parent
        lib_dirs |= {top / "lib64", top / "lib"} | set(top.glob("targets/*/lib"))
    lib_dirs |= {Path("/usr/lib/x86_64-linux-gnu"), Path("/usr/lib/aarch64-linux-gnu"),
                 Path("/usr/lib64"), Path("/usr/local/lib")}
    for d in sorted(lib_dirs):
        if d.is_dir():
            files += [str(p) for p in sorted(d.iterdir())
                      if p.name.startswith(HIDDEN_LIBRARIES) and not p.is_dir()]
    for pattern in ("/usr/lib/python3*/*-packages/nvidia",
                    "/usr/local/lib/python3*/*-packages/nvidia"):
        dirs += [str(p) for p in sorted(Path("/").glob(pattern.lstrip("/"))) if p.is_dir()]
    return files, dirs


class Sandbox:
    """Runs commands isolated from the grader (see the module's docstring)."""

    def __init__(self, level, uid=None, gid=None, note="", private=None):
        self.level = level
        self.uid, self.gid = uid, gid
        self.note = note
        self.devices, self.groups = gpu_devices()
        self.init = None
        self.private = Path(private) if private else None
        self.extra_hide = []
        self.data_mib = DATA_MIB
        if level == BWRAP:
            self.bwrap, self.setpriv = shutil.which("bwrap"), shutil.which("setpriv")
            self.roots = [d for d in SYSTEM if os.path.lexists(d)] + tool_roots()
            self.lib_files, self.lib_dirs = _hidden_libraries()

    @classmethod
    def create(cls, want=True, user=SANDBOX_USER, private=None, hide=()):
        """The sandbox for this grading. Raises Unavailable when the grader is root and bwrap
        cannot run here."""
        if not want:
            return cls(NONE, note="not isolated (--no-sandbox): the submission's code ran with "
                                  "the grader's rights")
        if os.geteuid() != 0:
            return cls(NONE, note="not isolated: the grader was not root, so the submission's "
                                  "code ran with your rights (fine for your own code; grade "
                                  "anyone else's as root)")
        missing = [t for t in ("bwrap", "setpriv") if not shutil.which(t)]
        if missing:
            raise Unavailable("%s not found: the grader isolates every run with bubblewrap "
                              "(bwrap) and setpriv (util-linux); install them with `make deps` "
                              "(or apt-get install bubblewrap), or grade trusted code with "
                              "%s" % (" and ".join(missing), no_sandbox_hint()))
        if user == SANDBOX_USER:
            user = claim_user(user)
        uid, gid, made = ensure_user(user)
        box = cls(BWRAP, uid, gid, private=private)
        box.extra_hide = [str(Path(h).resolve()) for h in hide if h]
        box.build_init()
        ran = box.run(["/bin/sh", "-c", "echo ok > /tmp/ok && test \"$(cat /tmp/ok)\" = ok"],
                      timeout=30, log=box.private / "sandbox-check.log")
        if ran.rc != 0:
            raise Unavailable("bwrap cannot isolate a run here (%s): the grader refuses to grade "
                              "untrusted code without it; %s grades trusted code"
                              % (" ".join(ran.output.split())[:300], no_sandbox_hint()))
        who = user if not user.isdigit() else "uid " + user
        box.note = ("isolated by bubblewrap: the submission ran as user %s in its own PID, IPC, "
                    "UTS, mount and network namespaces, seeing only the system folders and what "
                    "each run needs" % who) + ("; " + made if made else "")
        return box

    @property
    def isolated(self):
        return self.level != NONE

    def build_init(self):
        """sandbox_init, compiled into the private folder (once per version of its source)."""
        src = HERE / "sandbox_init.c"
        digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
        target = self.private / ("sandbox-init-" + digest)
        if not target.is_file():
            cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("c++") or "cc"
            tmp = self.private / ("sandbox-init-%d" % os.getpid())
            r = run([cc, "-O2", "-x", "c", src, "-o", tmp], timeout=120)
            if r.rc != 0:
                raise Unavailable("the sandbox's init did not compile: " + r.output[-300:])
            os.chmod(tmp, 0o755)
            os.replace(tmp, target)
        self.init = target

    def mount_point(self, name, host):
        """Where a run sees the file or folder @p host passed as files={name: ...}."""
        return "/run/grader/" + name if self.level == BWRAP else str(host)

    def drop_prefix(self):
        """A command prefix that runs the rest as the sandbox user, without capabilities or new
        privileges (for a trusted root process, like compute-sanitizer, that starts the
        submission's worker)."""
        if self.level == NONE:
            return []
        groups = ",".join(str(g) for g in self.groups)
        return [self.setpriv, "--reuid=%d" % self.uid, "--regid=%d" % self.gid] + \
            (["--groups=" + groups] if groups else ["--clear-groups"]) + \
            ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]

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

    def bwrap_args(self, ro, rw, files, network, cwd, libraries):
        a = ["--die-with-parent", "--new-session", "--as-pid-1", "--unshare-pid", "--unshare-ipc",
             "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
        if not network:
            a.append("--unshare-net")
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"):  # for setpriv, then dropped
            a += ["--cap-add", cap]
        made = set()

        def traversable(paths):
            """The folders above @p paths, made before they are shown and traversable: bwrap
            makes them 0700 as root, and the sandbox user could not reach what is below."""
            for d in sorted({str(q) for p in paths for q in Path(p).parents if str(q) != "/"} -
                            made):
                if not any(d == r or d.startswith(r + "/") for r in self.roots):
                    a.extend(["--perms", "0755", "--dir", d])
                    made.add(d)

        traversable(self.roots)  # a toolkit or a CMake in /opt/...
        for d in self.roots:
            if os.path.islink(d):
                a += ["--symlink", os.readlink(d), d]
            else:
                a += ["--ro-bind", d, d]
        a += ["--proc", "/proc", "--dev", "/dev"]
        for dev in self.devices:
            a += ["--dev-bind", dev, dev]
        for point, size in (("/tmp", 2 << 30), ("/var/tmp", 64 << 20), ("/dev/shm", 256 << 20)):
            a += ["--size", str(size), "--perms", "1777", "--tmpfs", point]
        for f in [] if libraries else self.lib_files:
            a += ["--ro-bind", "/dev/null", f]
        traversable([str(p) for p in list(ro) + list(rw)] + ["/run/grader/init"] +
                    [self.mount_point(n, h) for n, (h, _) in (files or {}).items()])
        for d in ([] if libraries else self.lib_dirs) + [h for h in self.extra_hide
                                                         if os.path.isdir(h)]:
            a += ["--tmpfs", d]
        for p in ro:
            a += ["--ro-bind", str(p), str(p)]
        for p in rw:
            a += ["--bind", str(p), str(p)]
        for name, (host, writable) in (files or {}).items():
            a += ["--bind" if writable else "--ro-bind", str(host), self.mount_point(name, host)]
        a += ["--ro-bind", str(self.init), "/run/grader/init", "--chdir", cwd]
        return a

    def run(self, argv, timeout, log, cwd="/tmp", env=None, ro=(), rw=(), files=None,
            network=False, as_root=False, handshake=None, monitor=None, libraries=False):
        """Runs argv and returns a Ran.

        log:       file that receives stdout and stderr (read back into Ran.output).
        ro, rw:    stage folders the command needs (read-only, read-write).
        files:     {name: (host path, writable)}: shown at mount_point(name, host).
        as_root:   the command stays root in the sandbox (a trusted tool that drops the
                   submission's process itself, with drop_prefix()).
        libraries: the GPU math libraries are there (a build links the course's code with them);
                   the workers' runs never see them.
        handshake: callable() -> "go ...\\n" line, called when the command writes "ready" on the
                   descriptor given to it as argv's last item ({ready}); the line goes to stdin.
        monitor:   object with start(pid) and stop(), running while the command runs (pid: the
                   run's first process, as the grader sees it; every process of the run is below).
        """
        env = dict(env or {})
        close = []
        log_fd = os.open(str(log), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        close.append(log_fd)
        stdin = os.open(os.devnull, os.O_RDONLY)
        close.append(stdin)
        go_w = ready_r = None
        keep = []
        if handshake:
            stdin, go_w = os.pipe()
            ready_r, ready_w = os.pipe()
            close += [stdin, ready_w]
            keep.append(ready_w)
            argv = [str(a).replace("{ready}", str(ready_w)) for a in argv]
        argv = [str(a) for a in argv]
        status_r = args_r = None
        if self.level == BWRAP:
            status_r, status_w = os.pipe()
            # The bind list goes to bwrap through a file, so it is not in /proc/1/cmdline.
            with tempfile.TemporaryFile() as f:
                f.write(b"".join(s.encode() + b"\0" for s in
                                 self.bwrap_args(ro, rw, files, network, cwd, libraries)))
                f.flush()
                f.seek(0)
                args_r = os.dup(f.fileno())
            close += [status_w, args_r]
            keep += [status_w, args_r]
            cmd = [self.bwrap, "--args", str(args_r), "--", "/run/grader/init", str(status_w),
                   "%.3f" % max(0.001, timeout), str(self.data_mib), "--"] + \
                ([] if as_root else self.drop_prefix()) + argv
            cwd_host = "/"
        else:
            cmd, cwd_host = argv, (cwd if os.path.isdir(cwd) else None)
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=stdin, stdout=log_fd, stderr=log_fd, env=env,
                                cwd=cwd_host, pass_fds=keep, start_new_session=True)
        for fd in close:
            os.close(fd)
        timed_out, go_time = False, None
        # The sandbox's init enforces the limit (and counts the CPU time of a run it stops);
        # this is the backstop.
        deadline = start + timeout + (10 if self.level == BWRAP else 0)
        try:
            if monitor:
                monitor.start(proc.pid)
            if handshake:
                buf = b""
                while b"\n" not in buf and time.monotonic() < deadline and running(proc.pid):
                    if select.select([ready_r], [], [], 0.2)[0]:
                        chunk = os.read(ready_r, 64)
                        if not chunk:
                            break
                        buf += chunk
                if buf.startswith(b"ready"):
                    line = handshake()
                    go_time = time.monotonic()
                    try:
                        os.write(go_w, line.encode())
                    except OSError:
                        pass
            while running(proc.pid):
                if time.monotonic() > deadline:
                    timed_out = True
                    break
                time.sleep(0.002)
        finally:
            exit_time = time.monotonic()
            if monitor:
                monitor.stop()
            # bwrap's death takes the sandbox's pid 1, and with it the namespace; without bwrap,
            # the command's process group.
            for target in (lambda: os.kill(proc.pid, signal.SIGKILL),
                           lambda: os.killpg(proc.pid, signal.SIGKILL)):
                try:
                    target()
                except OSError:
                    pass
            _, wait_status, usage = os.wait4(proc.pid, 0)
            proc.returncode = 0  # reaped here; Popen must not wait for it again
            for fd in (go_w, ready_r):
                if fd is not None:
                    os.close(fd)
        status = b""
        if status_r is not None:
            os.set_blocking(status_r, False)
            try:
                status = os.read(status_r, 64)
            except OSError:
                pass
            os.close(status_r)
        output = read_tail(log, 200000)
        rc = sig = None
        if self.level == BWRAP:
            parts = status.decode(errors="replace").split()
            if parts[:1] == ["timeout"]:
                timed_out = True
            elif len(parts) == 2 and parts[1].isdigit():
                rc, sig = (int(parts[1]), None) if parts[0] == "exit" else (None, int(parts[1]))
            elif not timed_out:  # bwrap itself failed: its message is in the log
                rc = 125
                output = "sandbox: bwrap could not start the run:\n" + output
        elif os.WIFEXITED(wait_status):
            rc = os.WEXITSTATUS(wait_status)
        else:
            sig = os.WTERMSIG(wait_status)
        if timed_out:
            rc, sig = None, signal.SIGKILL
        ran = Ran(rc, sig, timed_out, exit_time - start, usage.ru_utime + usage.ru_stime,
                  exit_time, output)
        ran.go_time, ran.limit = go_time, timeout
        return ran


if __name__ == "__main__":
    sys.exit("sandbox.py is a module of grade.py")
