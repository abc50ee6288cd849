"""The self-test's submissions (Python standard library only): each case of testdata/ is a small
patch against the reference answers or the skeletons, so a case cannot drift from the course:
a patch that no longer applies is a failure of the self-test (testdata/README.md)."""

import json
import re
import shutil
import subprocess
from pathlib import Path

GRADER_DIR = Path(__file__).resolve().parent
COURSE_DIR = GRADER_DIR.parent.parent
TESTDATA = GRADER_DIR / "testdata"
SKELETON_MARK = re.compile(rb"return\s+\{?\s*(k\w*NotImplemented|cudaErrorNotYetImplemented)\b")


class CaseError(Exception):
    """A case that cannot be built (a patch that does not apply, no pristine skeleton)."""


class NoSkeleton(CaseError):
    """No pristine skeleton here (answers in exercises/, no history): the case is skipped."""


def apply_patch(text, files):
    """Applies a unified diff to @p files ({relative path: bytes}), in place. Every hunk's
    context must be found exactly; raises CaseError otherwise."""
    chunks = re.split(r"(?m)^--- ", text)[1:]
    for chunk in chunks:
        lines = chunk.splitlines(keepends=True)
        if len(lines) < 2 or not lines[1].startswith("+++ "):
            raise CaseError("a patch without its +++ line")
        path = re.sub(r"^[ab]/", "", lines[1][4:].split("\t")[0].strip())
        old_path = lines[0].split("\t")[0].strip()
        body = files.get(path, b"").decode() if old_path != "/dev/null" else ""
        if old_path != "/dev/null" and path not in files:
            raise CaseError("the patch changes %s, which is not in the base" % path)
        current = body.splitlines(keepends=True)
        hunks, hunk = [], None
        for line in lines[2:]:
            if line.startswith("@@"):
                m = re.match(r"@@ -(\d+)", line)
                hunk = [int(m.group(1)) if m else 1, [], []]
                hunks.append(hunk)
            elif hunk is not None and line[:1] in (" ", "-", "+"):
                if line[0] in " -":
                    hunk[1].append(line[1:] if line[1:] else "\n")
                if line[0] in " +":
                    hunk[2].append(line[1:] if line[1:] else "\n")
        offset = 0
        for start, old, new in hunks:
            at = start - 1 + offset
            if current[at:at + len(old)] != old:
                found = [i for i in range(len(current) - len(old) + 1)
                         if current[i:i + len(old)] == old]
                if not found:
                    raise CaseError("a hunk at line %d of %s does not apply: the base changed"
                                    % (start, path))
                at = min(found, key=lambda i: abs(i - (start - 1 + offset)))
            current[at:at + len(old)] = new
            offset += len(new) - len(old)
        files[path] = "".join(current).encode()


def skeleton_source(rel):
    """The skeleton of exercises/<rel> as handed out, whatever a learner has done to it: the
    newest version in the repository's history that still has the skeleton's "not implemented"
    returns, else the working copy if it has them; None if neither has."""
    path = "exercises/" + rel
    if shutil.which("git"):
        r = subprocess.run(["git", "-C", str(COURSE_DIR), "rev-list", "-n", "50", "HEAD", "--",
                            path], capture_output=True, text=True)
        for commit in r.stdout.split() if r.returncode == 0 else []:
            blob = subprocess.run(["git", "-C", str(COURSE_DIR), "show", "%s:%s" % (commit, path)],
                                  capture_output=True)
            if blob.returncode == 0 and SKELETON_MARK.search(blob.stdout):
                return blob.stdout
    data = (COURSE_DIR / path).read_bytes()
    return data if SKELETON_MARK.search(data) else None


def base_files(base, manifest):
    """{relative path: bytes} of every allowlisted file, from the solutions or the skeletons."""
    files = {}
    for ex in manifest["exercises"]:
        for f in ex["files"]:
            rel = "%s/%s" % (ex["id"], f)
            if base == "solutions":
                files[rel] = (COURSE_DIR / "solutions" / rel).read_bytes()
            else:
                data = skeleton_source(rel)
                if data is None:
                    raise NoSkeleton("no pristine skeleton of exercises/%s: the working copy holds "
                                    "answers and the repository's history has no skeleton" % rel)
                files[rel] = data
    return files


def case_text(case, name):
    """A file of the case, with the placeholders of paths filled in."""
    return (case["dir"] / name).read_text().replace("@COURSE@", str(COURSE_DIR))


def submission_files(case, manifest, part=None):
    """{relative path: bytes} of a case's submission (or of its "previous" part)."""
    spec = case if part is None else case[part]
    files = base_files(spec.get("base", "solutions"), manifest)
    patch = spec.get("patch", "case.patch" if part is None else None)
    if patch and (case["dir"] / patch).is_file():
        apply_patch(case_text(case, patch), files)
    for rel in spec.get("remove", []):
        files.pop(rel, None)
    return files


def make_submission(case, manifest, dest, part=None):
    if dest.exists():
        shutil.rmtree(dest)
    for rel, data in submission_files(case, manifest, part).items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    pad = case.get("pad") if part is None else None
    if pad:  # lines appended up to a size, inside #if 0 (what the compiler never reads)
        with open(dest / pad["path"], "a") as f:
            body = pad["line"] + "\n"
            f.write("\n#if 0\n" + body * (pad["bytes"] // len(body)) + "#endif\n")
    sparse = case.get("sparse") if part is None else None
    if sparse:  # a file that claims gigabytes without taking them
        with open(dest / sparse["path"], "r+b") as f:
            f.truncate(sparse["bytes"])


def load_cases(selected, mode):
    cases = []
    for d in sorted(TESTDATA.iterdir()):
        if (d / "case.json").is_file() and (not selected or d.name in selected):
            c = json.loads((d / "case.json").read_text())
            c["name"], c["dir"] = d.name, d
            runs = "gpu" in c["expect"] if mode == "gpu" else \
                ("cpu" in c["expect"] or "both" in c["expect"])
            if runs or d.name in selected:
                cases.append(c)
    # The solutions first (the full build), the skeletons last: each case then recompiles only
    # the files it changes.
    order = {"solutions": 0, "skeletons": 2}
    cases.sort(key=lambda c: (order.get(c["name"], 1), c["name"]))
    return cases


def os_keys():
    """The System V shared memory keys in use on this machine (ipcs)."""
    try:
        text = Path("/proc/sysvipc/shm").read_text()
    except OSError:
        return set()
    return {int(line.split()[0]) for line in text.splitlines()[1:] if line.split()}

