#!/usr/bin/env python3
"""CPU tests of plots/make_plots.py and plots/bench.py on small data built in a temporary folder:
runs aggregated into one row, inline number markers (values, diff, ratio, profile, errors), the
prose lint, the check that every figure is linked, the README's step 01 rows, lesson modules
that fail, and bench.py's sweep files, merge and parts. Standard library only (no matplotlib:
nothing here draws). Run by ctest as plots_unit_tests; alone: python3 plots/test_make_plots.py
"""

import argparse
import contextlib
import csv
import io
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402
import make_plots as mp  # noqa: E402

HEADER = ("step,kernel,block,tile,type,rows,cols,batch,median_ms,min_ms,gbps,pct_copy,pct_peak,"
          "verified,device,driver,cuda,date").split(",")


def bench_row(step, kernel, pct, gbps=None, ms=None, shape=(8192, 8192), type_="f32", batch=1,
              verified="yes", block="32x8", min_ms=None, date="2026-01-01"):
    gbps = gbps if gbps is not None else pct * 30
    ms = ms if ms is not None else 537.0 / gbps
    return [step, kernel, block, "-", type_, str(shape[0]), str(shape[1]), str(batch), str(ms),
            str(min_ms if min_ms is not None else ms * 0.95), f"{gbps:.1f}", f"{pct:.1f}",
            f"{pct * 0.87:.1f}", verified, "Test GPU", "1.0", "13.0", date]


class Repo:
    """A small repository in a temporary folder: plots/data, plots/figures, a lesson, a README."""

    def __init__(self, rows, files, profile=None):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        data = self.root / "plots" / "data"
        data.mkdir(parents=True)
        (self.root / "plots" / "figures").mkdir()
        (self.root / "steps" / "01_naive").mkdir(parents=True)
        with open(data / "bench.csv", "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(HEADER)
            w.writerows(rows)
        if profile:
            with open(data / "profile.csv", "w", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow("step,kernel,type,rows,cols,metric,value,unit,device,driver,date"
                           .split(","))
                w.writerows(profile)
        for name, text in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))

    def run(self, *args):
        """make_plots' exit code, stdout and stderr."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = mp.main(["--root", str(self.root), "--no-figures", *args])
        return code, out.getvalue(), err.getvalue()

    def read(self, name):
        return (self.root / name).read_text()

    def close(self):
        self.tmp.cleanup()


# Three runs of two step07 kernels, one run of step05's, and step 01's two naive kernels.
ROWS = [
    bench_row("step07", "copy: float4 kernel", 100.0, gbps=2940, block="256", verified="-"),
    bench_row("step07", "tile64, down the columns", 95.6, gbps=2811),
    bench_row("step07", "tile64, down the columns", 96.1, gbps=2825, verified="skipped"),
    bench_row("step07", "tile64, down the columns", 95.2, gbps=2799, verified="skipped"),
    bench_row("step07", "tile64, swizzled", 93.0, gbps=2734),
    bench_row("step07", "tile64, swizzled", 93.4, gbps=2746, verified="skipped"),
    bench_row("step07", "tile64, swizzled", 92.8, gbps=2728, verified="skipped"),
    bench_row("step05", "coarsened 32x4", 92.9, gbps=2721, ms=0.197310),
    bench_row("step01", "naive, coalesced read 32x32", 16.1, gbps=472, block="32x32"),
    bench_row("step01", "naive, coalesced write 8x32", 65.9, gbps=1931, block="8x32"),
    bench_row("step07-lab", "lab kernel", 99.0, gbps=2911),
]


class Aggregation(unittest.TestCase):
    def setUp(self):
        self.repo = Repo(ROWS + [bench_row("step07", "tile64, failing", 50, verified="FAILED"),
                                 bench_row("step07", "tile64, failing", 51, verified="skipped")],
                         {})
        self.data = mp.load_bench(self.repo.root / "plots" / "data" / "bench.csv")

    def tearDown(self):
        self.repo.close()

    def one(self, kernel):
        return next(r for r in self.data if r.kernel == kernel)

    def test_runs_become_one_row(self):
        r = self.one("tile64, down the columns")
        self.assertEqual(r.runs, 3)
        self.assertAlmostEqual(r.pct_copy, 95.6)
        self.assertAlmostEqual(r.gbps, 2811)
        self.assertAlmostEqual(r.spread, 96.1 - 95.2)
        self.assertEqual((r.gbps_lo, r.gbps_hi), (2799, 2825))
        self.assertAlmostEqual(r.min_ms, min(m.min_ms for m in r.members))
        self.assertEqual(r.verified, "yes")  # one run verified, the others skipped

    def test_a_failed_run_fails_the_row(self):
        self.assertEqual(self.one("tile64, failing").verified, "FAILED")

    def test_a_single_run_keeps_its_numbers(self):
        r = self.one("coarsened 32x4")
        self.assertEqual((r.runs, r.spread, r.pct_copy), (1, 0.0, 92.9))

    def test_copies_keep_their_verdict(self):
        self.assertEqual(self.one("copy: float4 kernel").verified, "-")


class Numbers(unittest.TestCase):
    def make(self, line, profile=None):
        self.repo = Repo(ROWS, {"steps/01_naive/README.md": line + "\n"}, profile)
        self.addCleanup(self.repo.close)
        return self.repo

    def value_after_make_plots(self, marker):
        repo = self.make(f"It reads {marker} here.")
        code, _, err = repo.run()
        text = repo.read("steps/01_naive/README.md")
        return code, text, err

    def test_a_stale_value_is_rewritten_and_check_says_where(self):
        line = ('Down the columns: <!-- num step=step07 kernel="down the columns" '
                'shape=8192x8192 -->94.0<!-- /num -->% of the copy.')
        repo = self.make(line)
        code, _, err = repo.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("steps/01_naive/README.md:1: stale number", err)
        self.assertIn("-->94.0<", repo.read("steps/01_naive/README.md"))  # --check writes nothing
        code, _, err = repo.run()
        self.assertIn("-->95.6<!-- /num -->% of the copy.", repo.read("steps/01_naive/README.md"))
        code, _, err = repo.run("--check")
        self.assertEqual(code, 0, err)

    def test_columns_and_their_formats(self):
        base = 'step=step07 kernel="down the columns" shape=8192x8192'
        for col, want in (("gbps", "2811"), ("spread", "0.9"), ("runs", "3"),
                          ("pct_peak", "83.2"), ("median_ms", "0.191")):
            with self.subTest(col=col):
                code, text, err = self.value_after_make_plots(
                    f"<!-- num {base} col={col} -->?<!-- /num -->")
                self.assertEqual(code, 0, err)
                self.assertIn(f"-->{want}<!--", text)

    def test_median_ms_keeps_three_significant_digits(self):
        code, text, err = self.value_after_make_plots(
            "<!-- num step=05 kernel=32x4 shape=8192x8192 col=median_ms -->?<!-- /num -->")
        self.assertIn("-->0.197<!--", text)

    def test_diff_and_ratio(self):
        diff = ("<!-- num diff step=step07 kernel=down shape=8192x8192 vs.kernel=swizzled -->"
                "?<!-- /num -->")
        code, text, err = self.value_after_make_plots(diff)
        self.assertEqual(code, 0, err)
        self.assertIn("-->2.6<!--", text)  # 95.6 - 93.0
        ratio = ("<!-- num ratio step=step07 kernel=down shape=8192x8192 vs.step=step01 "
                 'vs.kernel="read 32x32" -->?<!-- /num -->')
        code, text, err = self.value_after_make_plots(ratio)
        self.assertEqual(code, 0, err)
        self.assertIn("-->5.9<!--", text)  # 95.6 / 16.1 = 5.94
        big = ("<!-- num ratio step=step07 kernel=down shape=8192x8192 col=gbps vs.step=step01 "
               'vs.kernel="read 32x32" -->?<!-- /num -->')
        code, text, err = self.value_after_make_plots(big)
        self.assertIn("-->6.0<!--", text)  # 2811 / 472 = 5.96: two significant digits

    def test_several_markers_on_one_line(self):
        code, text, err = self.value_after_make_plots(
            "<!-- num step=07 kernel=down shape=8192x8192 -->1<!-- /num --> and "
            "<!-- num step=07 kernel=swizzled shape=8192x8192 -->2<!-- /num -->")
        self.assertEqual(code, 0, err)
        self.assertIn("-->95.6<!-- /num --> and <!-- num step=07 kernel=swizzled "
                      "shape=8192x8192 -->93.0<!-- /num -->", text)

    def test_best_and_ceiling(self):
        code, text, err = self.value_after_make_plots(
            "<!-- num step=07 kernel=best shape=8192x8192 -->?<!-- /num --> of "
            "<!-- num step=07 kernel=ceiling shape=8192x8192 col=gbps -->?<!-- /num -->")
        self.assertEqual(code, 0, err)
        self.assertIn("-->95.6<", text)
        self.assertIn("-->2940<", text)

    def test_an_ambiguous_selection_is_an_error(self):
        code, _, err = self.value_after_make_plots(
            "<!-- num step=step07 kernel=tile64 shape=8192x8192 -->95.6<!-- /num -->")
        self.assertEqual(code, 1)
        self.assertIn("steps/01_naive/README.md:1: num: kernel 'tile64' matches 2 kernels", err)

    def test_a_selection_that_matches_nothing_is_an_error(self):
        for marker, why in (
                ("<!-- num step=step07 kernel=nothing shape=8192x8192 -->1<!-- /num -->",
                 "matches no kernel"),
                ("<!-- num step=step07 kernel=down shape=4096x4096 -->1<!-- /num -->",
                 "no rows of step07 at 4096x4096 f32"),
                ("<!-- num step=step07 kernel=down -->1<!-- /num -->", "'shape' is required"),
                ("<!-- num step=step07 kernel=down shape=8192x8192 col=speed -->1<!-- /num -->",
                 "col: 'speed'"),
                ("<!-- num step=step07 kernel=down shape=8192x8192 colour=red -->1<!-- /num -->",
                 "unknown attribute 'colour'"),
                ("<!-- num diff step=step07 kernel=down shape=8192x8192 -->1<!-- /num -->",
                 "vs. attributes"),
                ("<!-- num step=step07 kernel=down shape=8192x8192 -->1", "closed by"),
                ("1<!-- /num -->", "without its opening"),
                ('<!-- num step=step07 kernel="down shape=8192x8192 -->1<!-- /num -->',
                 "cannot read")):
            with self.subTest(marker=marker):
                code, _, err = self.value_after_make_plots(marker)
                self.assertEqual(code, 1)
                self.assertIn("steps/01_naive/README.md:1:", err)
                self.assertIn(why, err)

    def test_markers_in_code_are_examples(self):
        text = ("Write `<!-- num step=step07 kernel=tile64 shape=1x1 -->9<!-- /num -->` like so.\n"
                "```\n<!-- num step=nothing -->1<!-- /num -->\n```\n")
        repo = self.make(text)
        code, _, err = repo.run("--check")
        self.assertEqual(code, 0, err)

    def test_profile_values(self):
        profile = [["step07", "tile64, down the columns", "f32", "8192", "8192",
                    "dram__bytes_read.sum", "268.44", "Mbyte", "Test GPU", "1.0", "2026-01-01"],
                   ["step07", "tile64, down the columns", "f32", "8192", "8192",
                    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "1234567", "",
                    "Test GPU", "1.0", "2026-01-01"]]
        for marker, want in (
                ('metric="DRAM read MB"', "268"),
                ("metric=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "1,234,567")):
            with self.subTest(marker=marker):
                self.repo = Repo(ROWS, {"steps/01_naive/README.md":
                                        f"<!-- num profile step=07 kernel=down shape=8192x8192 "
                                        f"{marker} -->?<!-- /num -->\n"}, profile)
                self.addCleanup(self.repo.close)
                code, _, err = self.repo.run()
                self.assertEqual(code, 0, err)
                self.assertIn(f"-->{want}<", self.repo.read("steps/01_naive/README.md"))

    def test_latency_values(self):
        header = ("pattern,footprint_bytes,loads,ns_per_load,cycles_per_load,sms,l2_bytes,device,"
                  "driver,cuda,date\n")
        runs = "".join(f"random lines within each page,1073741824,1,{ns},1,132,1,GPU,1,1,d\n"
                       for ns in (349.7, 345.8, 345.9))
        repo = self.make('<!-- num latency pattern="within each page" footprint=1073741824 -->'
                         "?<!-- /num --> ns\n")
        (repo.root / "plots" / "data" / "latency.csv").write_text(header + runs)
        code, _, err = repo.run()
        self.assertEqual(code, 0, err)
        self.assertIn("-->346<", repo.read("steps/01_naive/README.md"))
        for marker, why in (("pattern=zzz footprint=1", "matches no pattern"),
                            ('pattern="each page" footprint=5', "no latency.csv run"),
                            ('pattern="each page"', "are required")):
            with self.subTest(marker=marker):
                repo = self.make(f"<!-- num latency {marker} -->1<!-- /num -->\n")
                (repo.root / "plots" / "data" / "latency.csv").write_text(header + runs)
                code, _, err = repo.run("--check")
                self.assertNotEqual(code, 0)
                self.assertIn(why, err)

    def test_pattern_table_takes_the_median_of_the_runs(self):
        header = "type,rows,cols,pattern,group_rows,median_ms,gbps,pct_stream,device,driver,cuda,date\n"
        runs = "".join(f"f64,64,64,reads: linear stream,-,{ms},{gbps},{pct},GPU,1,1,d\n"
                       for ms, gbps, pct in ((1.0, 100, 100.0), (3.0, 90, 97.0), (2.0, 95, 99.0)))
        repo = self.make("<!-- pattern-table type=f64 shapes=64x64 -->\n<!-- /pattern-table -->")
        (repo.root / "plots" / "data" / "patterns.csv").write_text(header + runs)
        code, _, err = repo.run()
        self.assertEqual(code, 0, err)
        text = repo.read("steps/01_naive/README.md")
        self.assertIn("| reads: linear stream | 64x64 | - | 2.00 | 95 | 99.0 | 3.0 |", text)
        self.assertIn("the median of 3 runs", text)

    def test_number_formats(self):
        self.assertEqual(mp.fmt_sig(0.189792, 3), "0.190")
        self.assertEqual(mp.fmt_sig(12.345, 3), "12.3")
        self.assertEqual(mp.fmt_sig(10.4, 2), "10")
        self.assertEqual(mp.fmt_sig(9.96, 2), "10")
        self.assertEqual(mp.fmt_sig(2.46, 2), "2.5")
        self.assertEqual(mp.fmt_sig(123.0, 2), "120")
        self.assertEqual(mp.fmt_fixed(-0.04, 1), "0.0")


class Lint(unittest.TestCase):
    TEXT = """\
        # Lesson

        Prose that types 95.6% of the copy.
        Prose that types 2800 GB/s and 2,800 GB/s.
        Fine: 16% (no decimal), GB/s alone, `95.6%` in code, <!-- 95.6% in a comment -->.
        Fine: <!-- num step=step07 kernel=down shape=8192x8192 -->95.6<!-- /num -->% and
        <!-- num step=step07 kernel=down shape=8192x8192 col=gbps -->2811<!-- /num --> GB/s.

        ```
        95.6% and 2800 GB/s in a fence
        ```

        <!-- bench-table steps=step07 shapes=8192x8192 -->
        | typed | 95.6% | 2800 GB/s |
        <!-- /bench-table -->
        """

    def test_prose_is_flagged_and_the_rest_is_not(self):
        repo = Repo(ROWS, {"steps/01_naive/README.md": self.TEXT,
                           "steps/01_naive/lab/LAB.md": "Lab: 97.5% typed.\n",
                           "steps/01_naive/NOTES.md": "Notes: 3000 GB/s typed.\n"})
        self.addCleanup(repo.close)
        code, _, err = repo.run()
        self.assertEqual(code, 1)
        found = [line for line in err.splitlines() if "typed in prose:" in line]
        self.assertEqual(sorted(line.split(": '")[0] + " " + line.split("'")[1] for line in found),
                         sorted(["steps/01_naive/README.md:3 95.6%",
                                 "steps/01_naive/README.md:4 2800 GB/s",
                                 "steps/01_naive/README.md:4 2,800 GB/s",
                                 "steps/01_naive/lab/LAB.md:1 97.5%",
                                 "steps/01_naive/NOTES.md:1 3000 GB/s"]), err)
        self.assertIn("lint: 5 measured number(s)", err)
        # The bench-table block was regenerated, so what was typed in it is gone.
        self.assertNotIn("| typed |", repo.read("steps/01_naive/README.md"))


class Figures(unittest.TestCase):
    def test_an_unlinked_png_fails_the_check(self):
        repo = Repo(ROWS, {"README.md": "![journey](plots/figures/linked.png)\n"})
        self.addCleanup(repo.close)
        for name in ("linked.png", "orphan.png"):
            (repo.root / "plots" / "figures" / name).write_bytes(b"png")
        code, _, err = repo.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("plots/figures/orphan.png: linked from no Markdown page", err)
        self.assertNotIn("linked.png: linked from no", err)

    def test_a_lesson_module_that_raises_is_named(self):
        repo = Repo(ROWS, {"plots/lessons/step03.py": "def figures(data, mp):\n"
                                                      "    raise ValueError('no data for me')\n",
                           "plots/lessons/step04.py": "import no_such_module\n"})
        self.addCleanup(repo.close)
        code, _, err = repo.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("plots/lessons/step03.py: ValueError: no data for me", err)
        self.assertIn("plots/lessons/step04.py: ModuleNotFoundError", err)

    def test_a_lesson_figure_joins_the_catalogue(self):
        repo = Repo(ROWS, {"plots/lessons/step05.py": textwrap.dedent("""\
            def figures(data, mp):
                rows = mp.select(data, step="step07", shape=(8192, 8192), type_="f32")
                return [("mine", "My figure", bool(rows), lambda path: None)]
            """)})
        self.addCleanup(repo.close)
        problems = []
        catalog = mp.figure_catalog(mp.load_bench(repo.root / "plots/data/bench.csv"), {},
                                    repo.root, problems)
        self.assertEqual(problems, [])
        self.assertEqual(catalog["mine"][0], "My figure")
        self.assertEqual(catalog["mine"][3], "plots/lessons/step05.py")


class ResultsTable(unittest.TestCase):
    def test_step01_shows_the_classic_kernel_and_the_best_block_shape(self):
        repo = Repo(ROWS, {"README.md": "<!-- results-table -->\n<!-- /results-table -->\n"})
        self.addCleanup(repo.close)
        repo.run()
        text = repo.read("README.md")
        classic = next(line for line in text.splitlines() if "classic" in line)
        best = next(line for line in text.splitlines() if "best block shape" in line)
        self.assertIn("| 472 | 16.1 |", classic)
        self.assertIn("coalesced write 8x32", best)
        self.assertIn("| 1931 | 65.9 |", best)
        self.assertNotIn("lab kernel", text)  # labs never enter the journey
        self.assertIn("median of 1 to 3 separate runs", text)


class Bench(unittest.TestCase):
    def args(self, **kw):
        base = dict(build=Path("build"), runs=3, pytorch_runs=3, verify_every_run=False,
                    sizes=None, types=bench.TYPES, reps=None, warmup=None, pytorch=False)
        base.update(kw)
        return argparse.Namespace(**base)

    def test_options_in_another_order_are_the_same_problem(self):
        self.assertEqual(bench.same_options(["--rows", "4", "--type", "i8"]),
                         bench.same_options(["--type", "i8", "--rows", "4"]))
        self.assertNotEqual(bench.same_options(["--rows", "4", "--cols", "5"]),
                            bench.same_options(["--rows", "5", "--cols", "4"]))

    def test_sweep_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "sweep.txt"
            path.write_text("# a comment\n\n--rows 4096 --cols 1024  # two shapes\n"
                            "--rows=8192 --cols=8192 --type f64 --batch 2\n")
            problems = bench.read_sweep_file(path, "step07-lab")
            self.assertEqual([(p.rows, p.cols, p.type, p.batch) for p in problems],
                             [(4096, 1024, "f32", 1), (8192, 8192, "f64", 2)])
            self.assertEqual(problems[1].nbytes, 8192 * 8192 * 8 * 2)
            self.assertTrue(problems[0].source.endswith("sweep.txt:3"))
            for bad in ("--rows 64 --csv x.csv\n", "--rows 64 --no-verify\n", "--rows x\n",
                        "--type f12\n"):
                path.write_text(bad)
                with self.subTest(line=bad), self.assertRaises(bench.SweepError) as e:
                    bench.read_sweep_file(path, "step07-lab")
                self.assertIn("sweep.txt:1", str(e.exception))

    def test_a_problem_measured_again_loses_all_its_old_runs(self):
        old = [bench_row("step05", "k", 90), bench_row("step05", "k", 91),
               bench_row("step05", "k", 90, shape=(4096, 4096))]
        new = [bench_row("step05", "k", 95)]
        rows = bench.merge(HEADER, old, HEADER, new)
        self.assertEqual(sorted((r[5], r[11]) for r in rows), [("4096", "90.0"), ("8192", "95.0")])

    def test_prune_drops_the_shapes_the_sweep_no_longer_has(self):
        old = [bench_row("step05", "k", 90, shape=(256, 256)),
               bench_row("step05", "k", 90, shape=(4096, 4096)),
               bench_row("step06", "k", 90, shape=(256, 256))]
        new = [bench_row("step05", "k", 95)]
        keys = {("step05", "f32", "8192", "8192", "1"), ("step05", "f32", "4096", "4096", "1")}
        rows = bench.merge(HEADER, old, HEADER, new, prune=({"step05"}, keys))
        self.assertEqual(sorted((r[0], r[5]) for r in rows),
                         [("step05", "4096"), ("step05", "8192"), ("step06", "256")])

    def test_later_runs_are_cheaper_and_the_parts_cover_the_plan(self):
        args = self.args()
        big = bench.Problem("step07", [], (32768, 32768))
        self.assertLess(big.estimate_s(args, False), big.estimate_s(args, True) / 2)
        self.assertAlmostEqual(big.estimate_all_s(args),
                               big.estimate_s(args, True) + 2 * big.estimate_s(args, False))
        problems = [bench.Problem("step01", [], (n, n)) for n in (1024, 4096, 16384, 32768)] * 3
        parts = bench.split_parts(problems, args, 3)
        self.assertEqual(sum(parts, []), problems)
        self.assertTrue(all(parts))
        # PyTorch, last in the plan, moves no cut: --part K/N with and without --no-pytorch
        # slice the same problems (a sweep split over several commands leaves no gap).
        peers = bench.Problem("pytorch", [], source="peers_pytorch.py")
        with_peers = bench.split_parts(problems + [peers], args, 3)
        self.assertEqual(with_peers[:2], parts[:2])
        self.assertEqual(with_peers[2], parts[2] + [peers])

    def test_the_default_sweep(self):
        args = self.args()
        steps = {s: bench.default_problems(s, args) for s in ("step01", "step05", "step08",
                                                               "step09")}
        shapes = lambda s: {(p.rows, p.cols) for p in steps[s] if p.type == "f32"}
        for s in steps:
            if s != "step09":
                self.assertTrue({(8192, 8192), (32768, 32768), (1024, 1024)} <= shapes(s))
        self.assertNotIn((8192, 2048), shapes("step01"))
        self.assertIn((8192, 2048), shapes("step05"))
        self.assertEqual({p.type for p in steps["step08"]}, set(bench.TYPES))
        modes = {bench.option_value(p.argv, "--mode") for p in steps["step09"]}
        self.assertEqual(modes, {"inplace", "batched", "inplace-batched"})

    def test_a_sweep_with_a_stand_in_binary(self):
        """bench.main end to end: 3 runs of each problem, the first verified, the CSV updated
        (a problem measured again loses its old runs, --prune drops shapes no longer swept)."""
        fake = textwrap.dedent(f"""\
            #!{sys.executable}
            import sys
            argv = sys.argv[1:]
            value = lambda name, default: argv[argv.index(name) + 1] if name in argv else default
            rows, cols = value("--rows", "8192"), value("--cols", "8192")
            verified = "skipped" if "--no-verify" in argv else "yes"
            with open(value("--csv", None), "a") as f:
                f.write("{','.join(HEADER)}\\n")
                for kernel, v in (("copy: float4 kernel", "-"), ("tiled 32x32", verified)):
                    f.write(f"step02,{{kernel}},32x32,-,f32,{{rows}},{{cols}},1,0.1,0.09,"
                            f"2000.0,70.0,60.0,{{v}},Test GPU,1.0,13.0,2026-01-01\\n")
            """)
        with tempfile.TemporaryDirectory() as tmp:
            build, out = Path(tmp) / "build", Path(tmp) / "bench.csv"
            (build / "bin").mkdir(parents=True)
            (build / "bin" / "step02").write_text(fake)
            (build / "bin" / "step02").chmod(0o755)
            with open(out, "w", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(HEADER)
                w.writerows([bench_row("step02", "tiled 32x32", 50, shape=(1024, 1024)),
                             bench_row("step02", "tiled 32x32", 50, shape=(256, 256)),
                             bench_row("step03", "padded 32x32", 50, shape=(256, 256))])
            saved, bench.cuda_device = bench.cuda_device, lambda why: True
            try:
                with contextlib.redirect_stdout(io.StringIO()) as said:
                    code = bench.main(["--build", str(build), "--steps", "02", "--sizes",
                                       "1024,2048", "--out", str(out), "--no-pytorch"])
                    self.assertEqual(code, 0, said.getvalue())
                    _, rows = bench.read_rows(out)
                    runs = sorted((r[5], r[13]) for r in rows if r[1] == "tiled 32x32")
                    self.assertEqual(runs, [("1024", "skipped"), ("1024", "skipped"),
                                            ("1024", "yes"), ("2048", "skipped"),
                                            ("2048", "skipped"), ("2048", "yes"),
                                            ("256", "yes")])
                    self.assertEqual(len(rows), 2 * 2 * 3 + 2)  # the 256 rows are kept
                    code = bench.main(["--build", str(build), "--steps", "02", "--out", str(out),
                                       "--no-pytorch", "--runs", "1", "--prune", "--part", "1/2"])
                    self.assertEqual(code, 0, said.getvalue())
            finally:
                bench.cuda_device = saved
            _, rows = bench.read_rows(out)
            self.assertNotIn(("step02", "256"), {(r[0], r[5]) for r in rows})  # pruned
            self.assertIn(("step03", "256"), {(r[0], r[5]) for r in rows})  # not swept: kept
            self.assertIn("run 3, unverified", said.getvalue())

    def test_steps_option(self):
        self.assertEqual(bench.parse_steps("5,07-lab,step08,labs,pytorch"),
                         {"step05", "step07-lab", "step08", "labs", "pytorch"})
        with self.assertRaises(argparse.ArgumentTypeError):
            bench.parse_steps("five")


if __name__ == "__main__":
    unittest.main()
