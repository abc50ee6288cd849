"""The facts of the course, read from the step folders: steps/NN_name/step.toml (a lesson),
steps/NN_name/lab/lab.toml (its lab, the binary stepNN-lab) and steps/course.toml (the shapes
the README compares at, the exercises' answers). plots/README.md ("A step's facts") describes
the keys. Nothing about a step is written in the Python of plots/: it is read here.

    python3 plots/facts.py --check-binary BIN FACTS   the binary's --list agrees with FACTS
                                                      (exit 0, 1 with the differences, 77
                                                      when BIN is not built)

Standard library only (tomllib: Python 3.11).
"""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ID = re.compile(r"[a-z0-9][a-z0-9.-]*")
# Ids the markers give a meaning of their own: the step's fastest kernel and its copy ceiling.
RESERVED_IDS = ("best", "ceiling")
DEFAULT_TYPE = "f32"  # the command-line contract's default element type
# Options a group's args may not hold: its keys give them, or the benchmark sets them.
OWN_OPTIONS = ("--rows", "--cols", "--type", "--batch", "--csv", "--no-verify", "--help",
               "--list", "--only")


class FactsError(Exception):
    """A facts file that cannot be used, said as file: reason."""


def gpu_count(kid):
    """"overlapped-2gpus" -> "2", "a2a-1gpu" -> "1": the number of GPUs a kernel id names (step
    10's ids carry it); "" for every other id."""
    m = re.search(r"-(\d+)gpus?$", kid)
    return m.group(1) if m else ""


def normalize_step(name):
    """A binary as a marker or --steps may name it: "5", "05" or "step5" is "step05", "05-lab"
    is "step05-lab"; other names ("pytorch", "labs") pass unchanged."""
    m = re.fullmatch(r"(?:step)?(\d+)(-lab)?", name)
    return f"step{int(m.group(1)):02d}{m.group(2) or ''}" if m else name


def parse_shape(text):
    """"8192" -> (8192, 8192); "4095x4097" -> (4095, 4097); ValueError otherwise."""
    m = re.fullmatch(r"(\d+)(?:x(\d+))?", str(text).strip().lower())
    if not m or int(m.group(1)) < 1 or int(m.group(2) or 1) < 1:
        raise ValueError(f"'{text}' is not N or ROWSxCOLS")
    return int(m.group(1)), int(m.group(2) or m.group(1))


def parse_shapes(text):
    """"8192,4096x2048" -> [(8192, 8192), (4096, 2048)] (a marker's shapes=, bench.py's
    --sizes); ValueError naming the item that is not a shape."""
    shapes = [parse_shape(item) for item in text.split(",") if item.strip()]
    if not shapes:
        raise ValueError("no shape given")
    return shapes


def check_keys(where, raw, known):
    """FactsError naming the keys of raw that are not known."""
    unknown = set(raw) - known
    if unknown:
        raise FactsError(f"{where}: unknown key {', '.join(sorted(unknown))} (known: "
                         f"{', '.join(sorted(known))})")


def kernel_of(kid):
    """The kernel a profiled id names: "rect-pass2" (pass 2 of kernel rect, profiled apart) ->
    "rect"; any other id is its own."""
    return re.sub(r"-pass\d+$", "", kid)


# scripts/profile.py's Nsight Compute metrics, for a [[profile]] group that names none.
PROFILE_METRICS = [
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    # Shared-memory wavefronts (passes): the conflict counters above also count some passes that
    # are not bank conflicts; wavefronts per warp-wide access is the conflict degree itself.
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    # Sectors the SMs read from and wrote into L2 (a partly written sector counts once per
    # write), and warp instructions executed: what misaligned rows cost beyond DRAM bytes.
    "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
    "smsp__inst_executed.sum",
]


class Group:
    """One [[sweep]] or [[profile]] entry: every shape x every type, with the binary's other
    arguments (args), a batch, and for a profile the ids to profile, the metrics (when not
    scripts/profile.py's) and whether each launch of one call is a row of its own (passes)."""

    KEYS = {"shapes", "types", "args", "batch", "passes", "ids", "metrics"}

    def __init__(self, entry, where):
        check_keys(where, entry, self.KEYS)
        try:
            self.shapes = [parse_shape(s) for s in entry["shapes"]]
        except KeyError:
            raise FactsError(f"{where}: 'shapes' is required")
        except ValueError as e:
            raise FactsError(f"{where}: shapes: {e}")
        self.types = list(entry.get("types", [DEFAULT_TYPE]))
        self.args = str(entry.get("args", "")).split()
        self.batch = int(entry.get("batch", 1))
        self.passes = bool(entry.get("passes", False))
        self.ids = list(entry.get("ids", []))
        self.metrics = list(entry.get("metrics", []))  # Nsight Compute's names; [] the default
        if self.batch < 1:
            raise FactsError(f"{where}: batch must be at least 1")
        for arg in self.args:
            if arg.split("=", 1)[0] in OWN_OPTIONS:
                raise FactsError(f"{where}: args: {arg.split('=', 1)[0]} is not for args (the "
                                 "group's own keys and the benchmark set it)")

    def measures(self, kid, type_, shape):
        """The metrics this profile group measures of kernel `kid` at that problem ([] if none):
        a page may cite only those, since a new profile run replaces the problem's rows."""
        if type_ not in self.types or tuple(shape) not in self.shapes:
            return []
        if self.ids and kernel_of(kid) not in self.ids:
            return []
        return self.metrics or PROFILE_METRICS

    def problems(self):
        """[(argv, shape, type, batch)]: the binary's arguments of each problem of the group."""
        out = []
        for type_ in self.types:
            for shape in self.shapes:
                argv = list(self.args) + ["--rows", str(shape[0]), "--cols", str(shape[1])]
                if type_ != DEFAULT_TYPE:
                    argv += ["--type", type_]
                if self.batch != 1:
                    argv += ["--batch", str(self.batch)]
                out.append((argv, shape, type_, self.batch))
        return out


class Facts:
    """The facts of one binary: a lesson (stepNN, from step.toml) or a lab (stepNN-lab, from
    lab/lab.toml)."""

    # `check`: make gpu-check's estimates and parts of the step's own (scripts/gpu_check.py).
    LESSON_KEYS = {"title", "idea", "headline", "types", "kernels", "sweep", "profile", "twice",
                   "types_figure", "peers", "check"}
    LAB_KEYS = {"types", "kernels", "sweep", "profile"}
    TWICE_KEYS = {"label", "what", "best", "note"}

    def __init__(self, path, root=ROOT):
        self.path = Path(path)
        self.is_lab = self.path.name == "lab.toml"
        self.folder = self.path.parent.parent if self.is_lab else self.path.parent
        self.number = self.folder.name[:2]
        self.binary = f"step{self.number}" + ("-lab" if self.is_lab else "")
        try:
            self.shown = self.path.relative_to(root).as_posix()
        except ValueError:
            self.shown = str(self.path)
        try:
            raw = tomllib.loads(self.path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise FactsError(f"{self.shown}: {e}")
        check_keys(self.shown, raw, self.LAB_KEYS if self.is_lab else self.LESSON_KEYS)
        required = ("types", "kernels") if self.is_lab else ("title", "idea", "headline",
                                                             "types", "kernels")
        for key in required:
            if key not in raw:
                raise FactsError(f"{self.shown}: '{key}' is required")
        self.title = raw.get("title", "")
        self.idea = raw.get("idea", "")
        self.headline = raw.get("headline", "")
        self.types = list(raw["types"])
        self.kernels = dict(raw["kernels"])
        for kid in self.kernels:
            if not ID.fullmatch(kid) or kid in RESERVED_IDS:
                raise FactsError(f"{self.shown}: kernels: '{kid}' is not an id (lower case, "
                                 "digits, '-' and '.'; not 'best' or 'ceiling')")
        if self.headline and self.headline not in self.kernels:
            raise FactsError(f"{self.shown}: headline '{self.headline}' is not one of [kernels]")
        self.twice = raw.get("twice")
        if self.twice is not None and set(self.twice) != self.TWICE_KEYS:
            raise FactsError(f"{self.shown}: [twice] takes {', '.join(sorted(self.TWICE_KEYS))}")
        self.types_figure = bool(raw.get("types_figure", False))
        # peers: a script of the step's own (its path), or [[peers]] groups: the problems
        # plots/peers.py times with PyTorch for this step (its shapes, types and batch).
        peers = raw.get("peers")
        self.peers = self.folder / peers if isinstance(peers, str) and peers else None
        self.peer_groups = [Group(g, f"{self.shown}: [[peers]] {i}")
                            for i, g in enumerate(peers, 1)] if isinstance(peers, list) else []
        self.sweep = [Group(g, f"{self.shown}: [[sweep]] {i}")
                      for i, g in enumerate(raw.get("sweep", []), 1)]
        self.profile = [Group(g, f"{self.shown}: [[profile]] {i}")
                        for i, g in enumerate(raw.get("profile", []), 1)]
        for g in self.sweep + self.profile:
            for t in g.types:
                if t not in self.types:
                    raise FactsError(f"{self.shown}: type '{t}' is not one of types "
                                     f"({', '.join(self.types)})")
            for kid in g.ids:
                if kid not in self.kernels:
                    raise FactsError(f"{self.shown}: ids: '{kid}' is not one of [kernels]")

    @property
    def name(self):
        """"08 general": the number and title, as tables and figures name a lesson."""
        return f"{self.number} {self.title}".strip()


class Course:
    """Every step's and lab's facts, and steps/course.toml's."""

    def __init__(self, root=ROOT):
        self.root = Path(root)
        self.binaries = {}  # "step05" or "step05-lab" -> Facts, lessons and labs in order
        for folder in sorted((self.root / "steps").glob("[0-9][0-9]_*")):
            for path in (folder / "step.toml", folder / "lab" / "lab.toml"):
                if path.exists():
                    facts = Facts(path, self.root)
                    self.binaries[facts.binary] = facts
        course = self.root / "steps" / "course.toml"
        raw = {}
        if course.exists():
            try:
                raw = tomllib.loads(course.read_text())
            except tomllib.TOMLDecodeError as e:
                raise FactsError(f"steps/course.toml: {e}")
        try:
            self.headline_shapes = [parse_shape(s) for s in raw.get("headline_shapes", [])]
        except ValueError as e:
            raise FactsError(f"steps/course.toml: headline_shapes: {e}")
        # The device whose rows the pages show unless a marker says device= (None: every row).
        self.reference_device = raw.get("reference_device")
        if self.reference_device is not None and not str(self.reference_device).strip():
            raise FactsError("steps/course.toml: reference_device is empty")
        self.exercises = {}  # binary -> Group
        for i, entry in enumerate(raw.get("exercise", []), 1):
            entry = dict(entry)
            binary = entry.pop("binary", None)
            if not binary:
                raise FactsError(f"steps/course.toml: [[exercise]] {i}: 'binary' is required")
            self.exercises[binary] = Group(entry, f"steps/course.toml: [[exercise]] {i}")

    def lessons(self):
        """{"05": Facts} of the numbered lessons (labs aside), in order."""
        return {f.number: f for f in self.binaries.values() if not f.is_lab}

    def of(self, binary):
        """The Facts of a binary ("step05", "step05-lab"), None for others (pytorch, exercises)."""
        return self.binaries.get(binary)


def read_list(text):
    """(types, kernels) from a binary's --list output: types [(name, bytes, takes)] for every
    element type of the course, in common/problem.cpp's order (takes: "default", "yes" or "no"
    for this binary), kernels [(id, name)] for the options given."""
    types, kernels = [], []
    for line in text.splitlines():
        parts = line.split("\t")
        if parts[0] == "type" and len(parts) == 4:
            types.append((parts[1], int(parts[2]), parts[3]))
        elif parts[0] == "kernel" and len(parts) == 3:
            kernels.append((parts[1], parts[2]))
    return types, kernels


def list_binary(binary, argv=()):
    """read_list of `binary --list ARGV`; RuntimeError with its message when it fails."""
    done = subprocess.run([str(binary), "--list", *argv], capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{binary} --list {' '.join(argv)}: exit {done.returncode}: "
                           f"{done.stderr.strip()}")
    return read_list(done.stdout)


def check_binary(binary, facts):
    """The differences between a binary's --list, over the problems of its facts' sweep and
    profile groups, and its facts: [] when they agree."""
    problems = []
    listed_types, seen = None, {}
    groups = facts.sweep + facts.profile or [Group({"shapes": ["64"]}, facts.shown)]
    for group in groups:
        for argv, _, _, _ in group.problems():
            types, kernels = list_binary(binary, argv)
            listed_types = types
            for kid, name in kernels:
                seen.setdefault(kid, name)
            ids = [k for k, _ in kernels]
            for kid in sorted({k for k in ids if ids.count(k) > 1}):
                problems.append(f"id '{kid}' is given to several kernels for {' '.join(argv)}")
    names = [t for t, _, takes in listed_types or [] if takes != "no"]
    if sorted(names) != sorted(facts.types):
        problems.append(f"types: the binary has {', '.join(names)}, {facts.shown} says "
                        f"{', '.join(facts.types)}")
    for kid in sorted(set(seen) - set(facts.kernels)):
        problems.append(f"kernel '{kid}' ({seen[kid]}) is not in {facts.shown}'s [kernels]")
    for kid in sorted(set(facts.kernels) - set(seen)):
        problems.append(f"{facts.shown}: kernel '{kid}' is listed by none of the problems of "
                        "its sweep and profile")
    return problems


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 3 or args[0] != "--check-binary":
        print(__doc__, file=sys.stderr)
        return 2
    if not Path(args[1]).exists():  # a lab's binary before `make labs`
        print(f"facts: skipped: {args[1]} is not built")
        return 77
    try:
        facts = Facts(Path(args[2]).resolve())
        problems = check_binary(args[1], facts)
    except (FactsError, RuntimeError) as e:
        print(f"facts: {e}", file=sys.stderr)
        return 1
    for p in problems:
        print(f"facts: {facts.binary}: {p}", file=sys.stderr)
    if not problems:
        print(f"facts: {facts.binary} agrees with {facts.shown}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
