"""CPU tests of scripts/profile.py on Nsight Compute output written here: the counters of one
launch, a kernel's passes as rows of their own (the first of its two calls), the rows of one
problem replaced in profile.csv while the others are kept, and the problems that --shapes,
--types and --ids select from step 08's [[profile]] groups."""

import csv
import importlib.util
import tempfile
import unittest
from pathlib import Path

import support  # noqa: F401  (puts plots/ on the path, which scripts/profile.py uses too)

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "profile.py"
spec = importlib.util.spec_from_file_location("profile_script", SCRIPT)
profile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(profile)

RUN = {"type": "f32", "rows": "8191", "cols": "4097", "device": "Test GPU", "driver": "1.0",
       "date": "2026-01-01"}
KINDS = ["shuffle_rows", "reflect_columns", "swap_rows", "swap_rows"]


def raw_csv(calls=2):
    """ncu --csv --page raw, wide: a header, a row of units, one row per launch."""
    lines = ['"ID","Process ID","Kernel Name","dram__bytes_read.sum","gpu__time_duration.sum",'
             '"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",'
             '"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"',
             '"","","","Mbyte","nsecond","sector","request"']
    launch = 0
    for call in range(calls):
        for p, kind in enumerate(KINDS):
            name = f"void step09::{kind}<float>(float*, long, const int*)"
            lines.append(f'"{launch}","1","{name}","134.27","{304672 + 1000 * p + call}",'
                         f'"4,000","1000"')
            launch += 1
    return "==PROF== a line ncu prints first\n" + "\n".join(lines) + "\n"


class Counters(unittest.TestCase):
    def metrics(self):
        return {"dram__bytes_read.sum", "gpu__time_duration.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"}

    def test_one_launch_in_bytes_with_sectors_per_request(self):
        found = profile.launches(raw_csv(), self.metrics())
        self.assertEqual(len(found), 8)
        rows = profile.kernel_rows("step09", "rect", "rectangle", found, RUN, passes=False)
        values = {r[6]: (r[7], r[8]) for r in rows}
        self.assertEqual(values["dram__bytes_read.sum"], ("134270000", "byte"))
        self.assertEqual(values["gpu__time_duration.sum"], ("304672", "nsecond"))
        self.assertEqual(values["global_ld_sectors_per_request"], ("4", "sector/request"))
        self.assertEqual({r[1] for r in rows}, {"rect"})

    def test_passes_are_the_first_call_one_row_each(self):
        found = profile.launches(raw_csv(), self.metrics())
        rows = profile.kernel_rows("step09", "rect", "in-place rectangle", found, RUN,
                                   passes=True)
        names = list(dict.fromkeys((r[1], r[2]) for r in rows))
        self.assertEqual(names, [(f"rect-pass{p}", f"in-place rectangle, pass {p} of 4: {k}")
                                 for p, k in enumerate(KINDS, 1)])
        times = [r[7] for r in rows if r[6] == "gpu__time_duration.sum"]
        self.assertEqual(times, ["304672", "305672", "306672", "307672"])  # call 1's launches
        with self.assertRaises(profile.ProfileError):
            profile.kernel_rows("step09", "rect", "x", found[:7], RUN, passes=True)

    def test_function_names(self):
        self.assertEqual(profile.function_name(
            "void step09::swap_rows<float>(float*, long, const int*)"), "swap_rows")
        self.assertEqual(profile.function_name(
            "void k<std::pair<int, int>, 4>(int)"), "k")

    def test_a_problem_profiled_again_replaces_its_rows_only(self):
        def row(kid, rows="8191"):
            return ["step09", kid, kid, "f32", rows, "4097", "m", "1", "", "GPU", "1", "d"]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "profile.csv"
            with open(path, "w", newline="") as f:
                csv.writer(f, lineterminator="\n").writerows(
                    [profile.HEADER, row("rect-pass1"), row("rect-pass2"), row("other"),
                     row("rect-pass1", rows="8192"),
                     row("rect-pass2")[:7] + ["3", "", "GPU2", "1", "d"]])
            profile.replace_rows(path, [row("rect-pass1")[:7] + ["2", "", "GPU", "1", "d"]],
                                 "step09", ("f32", "8191", "4097"), {"rect"})
            with open(path, newline="") as f:
                got = [(r["id"], r["rows"], r["value"]) for r in csv.DictReader(f)]
        # Another device's rows of the same problem stay.
        self.assertEqual(sorted(got), [("other", "8191", "1"), ("rect-pass1", "8191", "2"),
                                       ("rect-pass1", "8192", "1"), ("rect-pass2", "8191", "3")])

    def test_groups_of_one_problem_keep_each_others_metrics(self):
        # A bytes group and a stall group over the same kernel's passes: both groups' metrics
        # stay; the one both measure keeps the later value; other kernels' rows are not touched.
        def row(kid, metric, value):
            return ["step09-lab", kid, kid, "f32", "8191", "4097", metric, value, "", "GPU", "1",
                    "d"]
        problem = ("f32", "8191", "4097")
        pending = {}
        profile.combine(pending, problem, [row("rect-pass1", "time", "1"),
                                           row("rect-pass1", "dram", "5")], {"rect"})
        profile.combine(pending, problem, [row("rect-pass1", "time", "2"),
                                           row("rect-pass1", "stall", "7")], {"rect"})
        got, ids = pending[problem]
        self.assertEqual(ids, {"rect"})
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "profile.csv"
            with open(path, "w", newline="") as f:
                csv.writer(f, lineterminator="\n").writerows(
                    [profile.HEADER, row("rect-pass1", "old", "0"), row("other", "time", "9")])
            profile.replace_rows(path, list(got.values()), "step09-lab", problem, ids)
            with open(path, newline="") as f:
                rows = sorted((r["id"], r["metric"], r["value"]) for r in csv.DictReader(f))
        self.assertEqual(rows, [("other", "time", "9"), ("rect-pass1", "dram", "5"),
                                ("rect-pass1", "stall", "7"), ("rect-pass1", "time", "2")])
        profile.combine(pending, problem, [row("other", "time", "3")], None)  # every kernel
        self.assertIsNone(pending[problem][1])


class Selection(unittest.TestCase):
    def setUp(self):
        from facts import Course
        self.facts = Course(SCRIPT.parents[1]).of("step08")

    def picked(self, **kw):
        return [(argv[argv.index("--type") + 1] if "--type" in argv else "f32",
                 sorted(ids) if ids else None) for argv, ids, _ in
                profile.selected(self.facts, **kw)]

    def test_a_shape_in_two_groups_is_profiled_in_both(self):
        # 16384 x 16384 is the double group's (every kernel), the int8 one's (two kernels) and
        # the launcher's stall group's (bytes and halves).
        self.assertEqual(self.picked(shapes={(16384, 16384)}),
                         [("f64", None), ("i8", ["scalar-cut", "vec-128x128"]), ("i8", ["auto"]),
                          ("f16", ["auto"])])

    def test_types_keep_the_group_whose_kernel_ids_name(self):
        # --ids vec-128x128 alone would ask the double group for an int8 kernel it never runs.
        self.assertEqual(self.picked(shapes={(16384, 16384)}, types={"i8"}, only={"vec-128x128"}),
                         [("i8", ["vec-128x128"])])


if __name__ == "__main__":
    unittest.main()
