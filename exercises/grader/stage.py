"""Staging and building a submission (a part of grade.Grader; Python standard library only).

The stage is a clean copy of the course's build (manifest.json, "stage") with only the
submission's allowlisted files copied in, and the grader's worker beside it. Everything built from
the submission is built in the sandbox; the judge and the sandbox's init are built by the grader
itself from the course's own files."""

import hashlib
import os
import re
import secrets
import shutil
from pathlib import Path

import sandbox
from tools import head, run, tail

GRADER_DIR = Path(__file__).resolve().parent
COURSE_DIR = GRADER_DIR.parent.parent


def find_submission_file(submission, exercise_id, name):
    """Where a submission keeps one allowlisted file: <id>/<name>, exercises/<id>/<name>, the
    same one folder down (an archive's top folder), or <name> at the top (names are unique)."""
    candidates = [submission / exercise_id / name, submission / "exercises" / exercise_id / name,
                  submission / name]
    if submission.is_dir():
        for sub in sorted(p for p in submission.iterdir() if p.is_dir() and not p.is_symlink()):
            candidates += [sub / exercise_id / name, sub / "exercises" / exercise_id / name,
                           sub / name]
    root = submission.resolve()
    for c in candidates:
        # A plain file inside the submission: no link out of it (to a hidden test, say).
        if c.is_file() and not c.is_symlink() and c.resolve().is_relative_to(root):
            return c
    return None


def read_limited(path, limit):
    """(bytes, size): the file's bytes if it holds at most @p limit, else None; its size is
    checked before anything is read (a sparse file can claim gigabytes)."""
    size = os.lstat(path).st_size
    if size > limit:
        return None, size
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    return (data, len(data)) if len(data) <= limit else (None, len(data))


def write_if_changed(path, data):
    """Writes only when the content differs, so the build tool recompiles only what changed."""
    if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
        return False
    if path.is_symlink() or path.is_dir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def tree_files(root, tops, skip=()):
    """{path relative to @p root: bytes} of the plain files of root/top for each of @p tops (a
    folder or a file), but those under @p skip and Python's caches."""
    files = {}
    skip = [Path(s) for s in skip]
    for top in tops:
        paths = [root / top] if (root / top).is_file() else (root / top).rglob("*")
        for p in paths:
            rel = p.relative_to(root)
            if p.is_file() and not p.is_symlink() and "__pycache__" not in rel.parts and \
                    not any(rel == s or s in rel.parents for s in skip):
                files[rel] = p.read_bytes()
    return files


def sync_stage(course_root, wanted):
    """Makes course_root hold exactly `wanted` (relative path -> bytes)."""
    changed = 0
    for rel, data in wanted.items():
        changed += write_if_changed(course_root / rel, data)
    for p in sorted(course_root.rglob("*"), reverse=True):
        rel = p.relative_to(course_root)
        if (p.is_file() or p.is_symlink()) and rel not in wanted:
            p.unlink()
        elif p.is_dir() and not any(p.iterdir()):
            p.rmdir()
    return changed


def make_readable(root):
    for p in [root] + list(root.rglob("*")):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)


class StageMixin:
    """The stage, the sandbox's view of it, and the builds."""

    def set_up(self, stage, submission, out_dir):
        """The stage's folders and the sandbox. Raises sandbox.Unavailable when the grader is
        root and cannot isolate."""
        self.stage = stage
        self.submission = submission
        self.course_root = stage / "course"
        self.grader_root = stage / "grader"
        self.build = stage / "build"
        self.hidden_dir = stage / "hidden"  # an earlier grader's copy, removed
        self.hidden_source = Path(self.args.hidden).resolve() if self.args.hidden else None
        self.private = stage / "private"
        self.runs = stage / "runs"
        for d in (stage, self.course_root, self.grader_root, self.build, self.runs):
            d.mkdir(parents=True, exist_ok=True)
            os.chmod(d, 0o755)
        self.private.mkdir(exist_ok=True)
        os.chmod(self.private, 0o700)
        self.box = sandbox.Sandbox.create(want=not self.args.no_sandbox,
                                          user=self.args.sandbox_user, private=self.private,
                                          hide=self.args.mask or [])
        self.box.data_mib = self.args.data_limit_mib
        self.box.chown(self.build)
        self.r.extra["isolation"] = self.box.level
        self.r.notes.append("Isolation: " + self.box.note + ".")

    def next_id(self):
        self.counter += 1
        return "%d-%d" % (os.getpid(), self.counter)

    def base_env(self):
        env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "CUDA_HOME", "CUDA_PATH",
                                          "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")
               if k in os.environ}
        env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
        home = "/tmp" if self.box.isolated else str(self.private)
        # EAGER: every kernel is loaded before a timed run's clock starts.
        env.update(HOME=home, TMPDIR="/tmp", CUDA_DEVICE_ORDER="PCI_BUS_ID",
                   CUDA_MODULE_LOADING="EAGER")
        return env

    def boxed(self, argv, timeout, log, rw=(), ro=None, files=None, network=False,
              as_root=False, handshake=None, monitor=None, libraries=False):
        """Runs a command built from the submission (or compiling it) in the sandbox. It sees the
        stage's course, grader and build folders (read-only but @p rw), or only @p ro; the GPU
        math libraries only with @p libraries (builds)."""
        if ro is None:
            ro = [self.course_root, self.grader_root, self.build]
        ro = [p for p in ro if Path(p) not in [Path(w) for w in rw]]
        cwd = "/tmp" if self.box.isolated else str(self.private)
        return self.box.run(argv, timeout=timeout, log=log, cwd=cwd, env=self.base_env(),
                            ro=ro, rw=rw, files=files, network=network,
                            as_root=as_root, handshake=handshake, monitor=monitor,
                            libraries=libraries)

    # -- staging and building -------------------------------------------------------------

    def stage_submission(self, submission, exercises):
        """Copies the course and the submission's allowlisted files into the stage. Returns
        {exercise id: (present files {name: (source path, bytes)}, problems [text])}."""
        wanted = tree_files(COURSE_DIR, self.m["stage"]["copy"], self.m["stage"]["skip"])
        found = {}
        limit = self.m["max_file_bytes"]
        for ex in exercises:
            files, problems = {}, []
            for name in ex["files"]:
                path = find_submission_file(submission, ex["id"], name)
                if path is None:
                    problems.append("missing: %s (expected at %s/%s in the submission)"
                                    % (name, ex["id"], name))
                    continue
                data, size = read_limited(path, limit)
                if data is None:
                    problems.append("%s is %d bytes, more than the %d allowed"
                                    % (name, size, limit))
                    continue
                files[name] = (path, data)
                wanted[Path("exercises", ex["id"], name)] = data
            found[ex["id"]] = (files, problems)
        sync_stage(self.course_root, wanted)
        sync_stage(self.grader_root, tree_files(GRADER_DIR, ("worker", "judge")))
        make_readable(self.course_root)
        make_readable(self.grader_root)
        return found

    def clear_earlier_submissions(self):
        """A reused stage (a batch) keeps the course's build, but nothing built from an earlier
        submission: its objects, preprocessed sources, workers and hidden tests go before this
        submission's code is compiled or run."""
        b = self.build
        gone = list(b.glob("exercises/CMakeFiles/ex*_exercise.dir")) + \
            list(b.glob("CMakeFiles/grader_worker_ex*.dir")) + \
            list(b.glob("bin/grader_worker_ex*")) + [b / "exercises" / "keep"] + \
            list(b.glob("bin/test_ex*_hidden_*")) + \
            list(b.glob("**/CMakeFiles/test_ex*_hidden_*.dir"))  # an earlier grader's
        for p in gone:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            elif p.exists() or p.is_symlink():
                p.unlink()
        for ex in self.m["exercises"]:  # where nvcc --keep puts the preprocessed sources
            keep = b / "exercises" / "keep" / ex["objects"]
            keep.mkdir(parents=True, exist_ok=True)
            self.box.chown(b / "exercises" / "keep")

    def nvcc(self):
        for a in self.args.cmake_arg or []:
            if a.startswith("-DCMAKE_CUDA_COMPILER="):
                return a.split("=", 1)[1]
        return sandbox.find_tool("nvcc") or "nvcc"

    def configure(self):
        # The hidden tests are data the grader reads from the instructor's folder (hidden.py):
        # they never enter the stage, so no build and no run can see them.
        if self.hidden_dir.exists():
            shutil.rmtree(self.hidden_dir)
        cmd = ["cmake", "-S", self.course_root, "-B", self.build, "-DCMAKE_BUILD_TYPE=Release",
               "-DCOURSE_GRADER_STAGE=ON", "-DCOURSE_HIDDEN_TESTS=",
               "-DCMAKE_PROJECT_transpose_course_INCLUDE=%s"
               % (self.grader_root / "worker" / "project_hook.cmake")]
        if shutil.which("ninja") and not (self.build / "CMakeCache.txt").exists():
            cmd += ["-G", "Ninja"]
        if self.args.build_arch:
            cmd.append("-DCMAKE_CUDA_ARCHITECTURES=%s" % self.args.build_arch)
        if "--no-compress" in run([self.nvcc(), "--help"], timeout=60).output:
            # Plain device code in the objects, so the grader can read each kernel's shared
            # memory (compressed code it could not).
            cmd.append("-DCMAKE_CUDA_FLAGS=--no-compress")
        cmd += self.args.cmake_arg or []
        ran = self.boxed(cmd, self.timeouts["configure"], self.private / "configure.log",
                         rw=[self.build], network=True, libraries=True)
        if ran.rc != 0 or ran.timed_out:
            raise RuntimeError("the course's build could not be configured (cmake):\n"
                               + tail(ran.output, 4000))
        self.clear_earlier_submissions()
        # The probes (the course's own kernels: the device check and the timed runs'
        # yardsticks) only run on a GPU; --no-gpu grades without them.
        probes = [] if self.args.no_gpu else ["grader_probe", "grader_probe_inplace"]
        ran = self.build_targets(probes + ["grader_watch"] + [
            "grader_worker_main_ex%s" % ex["id"][:2] for ex in self.m["exercises"]])
        if ran.rc != 0 or ran.timed_out:
            raise RuntimeError("the grader's probe did not build:\n" + tail(ran.output, 4000))

    def build_targets(self, targets, timeout=None):
        return self.boxed(["cmake", "--build", self.build, "--target"] + targets +
                          ["-j", str(self.jobs)], timeout or self.timeouts["build"],
                          self.private / "build.log", rw=[self.build], libraries=True)

    def build_judge(self):
        """The judge, compiled here from the course's own files (never from the stage, which a
        build of the submission wrote to)."""
        sources = [GRADER_DIR / "judge" / "judge.cpp"] + \
            [COURSE_DIR / "common" / f for f in ("host_data.cpp", "problem.cpp", "bank_model.cpp")]
        deps = sources + sorted((GRADER_DIR / "judge").glob("*.hpp")) + \
            sorted((COURSE_DIR / "common").glob("*.hpp")) + \
            sorted((COURSE_DIR / "exercises" / "testing").glob("*.hpp"))
        digest = hashlib.sha256(b"".join(p.read_bytes() for p in deps)).hexdigest()[:16]
        target = self.private / ("judge-" + digest)
        if not target.is_file():
            cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or "c++"
            tmp = self.private / ("judge-" + secrets.token_hex(4))
            ran = run([cxx, "-O2", "-std=c++17", "-pthread", "-I", COURSE_DIR / "common",
                       "-I", COURSE_DIR / "exercises" / "testing", "-I", GRADER_DIR / "judge"]
                      + sources + ["-o", tmp], timeout=600)
            if ran.rc != 0:
                raise RuntimeError("the grader's judge did not compile:\n" + tail(ran.output))
            os.replace(tmp, target)
        self.judge_bin = target

    def build_exercise(self, ex, files, problems):
        """Steps 1 to 3 of an exercise: its files, its build, its static checks. Returns True
        when it can run; otherwise its entries are recorded, with the reason."""
        ex_id, title = ex["id"], ex["title"]
        self.r.titles[ex_id] = title

        def entry_name(t):
            return "%s | %s" % (title, t)

        def zero_all(reason):  # every entry, the sanitizer's too
            every = ex["entries"] + ([None] if ex.get("sanitizer") else [])
            self.finish(ex, [self.entry(ex, e, "not_run", reason) for e in every], [])
            return False

        # 1. files
        if problems:
            self.r.add(ex_id, "files", entry_name("files"), 0, False,
                       "\n".join(problems) + "\nThis exercise is not graded: 0 points.",
                       "missing_file")
            return zero_all("not graded: a file of this exercise is missing or too large (see "
                            "'%s')" % entry_name("files"))
        self.r.add(ex_id, "files", entry_name("files"), 0, True,
                   "found: " + ", ".join("%s (from %s)" % (n, self.rel_sub(p))
                                         for n, (p, _) in files.items()), "passed")

        if self.out_of_time(ex):
            return zero_all("not run: the submission's time is spent (see '%s')"
                            % entry_name("time limit"))

        # 2. build (in the sandbox: a compile can #include any file it can see): the
        # submission's objects first, checked before anything is linked with them
        def build_failed(ran, why):
            if ran.timed_out:
                why = "the build timed out after %d s" % ran.limit
            self.r.add(ex_id, "build", entry_name("build"), 0, False,
                       "%s:\n%s" % (why, self.compiler_messages(ran.output)), "compile_error")
            return zero_all("not graded: the exercise did not build (see '%s')"
                            % entry_name("build"))

        ran = self.build_targets([ex["objects"]], timeout=self.time_left(self.timeouts["build"]))
        if ran.rc != 0 or ran.timed_out:
            return build_failed(ran, "compile error")

        # 3. static checks, then the worker linked with the objects that passed them
        findings = self.static_checks(ex, files)
        check_titles = "; ".join(self.m["checks"][c]["title"] for c in ex["checks"])
        seconds, output = ran.seconds, ran.output
        if not findings:
            linked = self.build_targets([ex["worker"]],
                                        timeout=self.time_left(self.timeouts["build"]))
            if linked.rc != 0 or linked.timed_out:
                return build_failed(linked, "the grader's worker did not link with your code")
            seconds, output = seconds + linked.seconds, output + linked.output
        self.r.add(ex_id, "build", entry_name("build"), 0, True,
                   "compiled (%.0f s)" % seconds, "passed", seconds=seconds,
                   warnings=self.compiler_messages(output) if "warning" in output else "")
        if findings:
            self.r.add(ex_id, "static", entry_name("static checks"), 0, False,
                       "%s\nThis exercise is not graded: 0 points. Its rules: %s."
                       % ("\n".join(findings), check_titles), "static_check_failed")
            return zero_all("not graded: the static checks failed (see '%s')"
                            % entry_name("static checks"))
        self.r.add(ex_id, "static", entry_name("static checks"), 0, True,
                   "passed: " + check_titles, "passed")
        return True

    def rel_sub(self, path):
        try:
            return str(Path(path).relative_to(self.submission))
        except ValueError:
            return str(path)

    def compiler_messages(self, output):
        """The build output without progress lines, with paths relative to the course."""
        keep = [l for l in output.splitlines()
                if not re.match(r"^\[\d+/\d+\] ", l)                      # progress
                and not l.startswith(("ninja: build stopped", "FAILED: "))
                and not (" -c " in l and " -o " in l)]                    # the command line
        text = "\n".join(keep).replace(str(self.course_root) + "/", "")
        text = text.replace(str(self.build) + "/", "build/").replace(str(self.stage) + "/", "")
        return head(text)

