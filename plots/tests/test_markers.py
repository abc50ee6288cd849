"""CPU tests of the Markdown side of make_plots (no matplotlib: nothing here draws): runs
aggregated into one row, the inline number markers (values, diff, ratio, profile, latency,
errors), kernels selected by id and checked against the step's facts, the tables, the prose lint
and the README's results table."""

import unittest

from support import FACTS, ROWS, Repo, bench_row
from rows import load_bench
from render import fmt_fixed, fmt_sig


class Aggregation(unittest.TestCase):
    def setUp(self):
        self.repo = Repo(ROWS + [bench_row("step07", "failing", "tile64, failing", 50,
                                           verified="FAILED"),
                                 bench_row("step07", "failing", "tile64, failing", 51,
                                           verified="skipped")], {})
        self.data = load_bench(self.repo.root / "plots" / "data" / "bench.csv")

    def tearDown(self):
        self.repo.close()

    def one(self, kid):
        return next(r for r in self.data if r.id == kid)

    def test_runs_become_one_row(self):
        r = self.one("columns")
        self.assertEqual(r.runs, 3)
        self.assertAlmostEqual(r.pct_copy, 95.6)
        self.assertAlmostEqual(r.gbps, 2811)
        self.assertAlmostEqual(r.spread, 96.1 - 95.2)
        self.assertEqual((r.gbps_lo, r.gbps_hi), (2799, 2825))
        self.assertAlmostEqual(r.min_ms, min(m.min_ms for m in r.members))
        self.assertEqual(r.verified, "yes")  # one run verified, the others skipped

    def test_a_failed_run_fails_the_row(self):
        self.assertEqual(self.one("failing").verified, "FAILED")

    def test_a_single_run_keeps_its_numbers(self):
        r = self.one("block-32x4")
        self.assertEqual((r.runs, r.spread, r.pct_copy), (1, 0.0, 92.9))

    def test_copies_keep_their_verdict(self):
        self.assertEqual(self.one("copy-float4").verified, "-")

    def test_a_renamed_kernel_keeps_its_runs_together(self):
        """Runs are one measurement by id: a display name changed between runs does not split
        them, and the latest run's name is shown."""
        repo = Repo([bench_row("step05", "block-32x4", "old name", 90),
                     bench_row("step05", "block-32x4", "new name", 92)], {})
        self.addCleanup(repo.close)
        data = load_bench(repo.root / "plots" / "data" / "bench.csv")
        self.assertEqual([(r.kernel, r.runs) for r in data], [("new name", 2)])


class Numbers(unittest.TestCase):
    def make(self, line, profile=None):
        self.repo = Repo(ROWS, {"steps/01_naive/README.md": line + "\n"}, profile)
        self.addCleanup(self.repo.close)
        return self.repo

    def value_after_make_plots(self, marker):
        repo = self.make(f"It reads {marker} here.")
        code, _, err = repo.run()
        return code, repo.read("steps/01_naive/README.md"), err

    def test_a_stale_value_is_rewritten_and_check_says_where(self):
        repo = self.make("Down the columns: <!-- num step=step07 id=columns shape=8192x8192 -->"
                         "94.0<!-- /num -->% of the copy.")
        code, _, err = repo.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("steps/01_naive/README.md:1: stale number", err)
        self.assertIn("-->94.0<", repo.read("steps/01_naive/README.md"))  # --check writes nothing
        repo.run()
        self.assertIn("-->95.6<!-- /num -->% of the copy.", repo.read("steps/01_naive/README.md"))
        code, _, err = repo.run("--check")
        self.assertEqual(code, 0, err)

    def test_columns_and_their_formats(self):
        base = "step=step07 id=columns shape=8192x8192"
        for col, want in (("gbps", "2811"), ("spread", "0.9"), ("runs", "3"),
                          ("pct_peak", "83.2"), ("median_ms", "0.191")):
            with self.subTest(col=col):
                code, text, err = self.value_after_make_plots(
                    f"<!-- num {base} col={col} -->?<!-- /num -->")
                self.assertEqual(code, 0, err)
                self.assertIn(f"-->{want}<!--", text)

    def test_median_ms_keeps_three_significant_digits(self):
        code, text, err = self.value_after_make_plots(
            "<!-- num step=05 id=block-32x4 shape=8192x8192 col=median_ms -->?<!-- /num -->")
        self.assertIn("-->0.197<!--", text)

    def test_diff_and_ratio(self):
        code, text, err = self.value_after_make_plots(
            "<!-- num diff step=step07 id=columns shape=8192x8192 vs.id=swizzled -->?<!-- /num -->")
        self.assertEqual(code, 0, err)
        self.assertIn("-->2.6<!--", text)  # 95.6 - 93.0
        code, text, err = self.value_after_make_plots(
            "<!-- num ratio step=step07 id=columns shape=8192x8192 vs.step=step01 "
            "vs.id=read-32x32 -->?<!-- /num -->")
        self.assertEqual(code, 0, err)
        self.assertIn("-->5.9<!--", text)  # 95.6 / 16.1 = 5.94
        code, text, err = self.value_after_make_plots(
            "<!-- num ratio step=step07 id=columns shape=8192x8192 col=gbps vs.step=step01 "
            "vs.id=read-32x32 -->?<!-- /num -->")
        self.assertIn("-->6.0<!--", text)  # 2811 / 472 = 5.96: two significant digits

    def test_several_markers_on_one_line(self):
        code, text, err = self.value_after_make_plots(
            "<!-- num step=07 id=columns shape=8192x8192 -->1<!-- /num --> and "
            "<!-- num step=07 id=swizzled shape=8192x8192 -->2<!-- /num -->")
        self.assertEqual(code, 0, err)
        self.assertIn("-->95.6<!-- /num --> and <!-- num step=07 id=swizzled "
                      "shape=8192x8192 -->93.0<!-- /num -->", text)

    def test_best_and_ceiling(self):
        code, text, err = self.value_after_make_plots(
            "<!-- num step=07 id=best shape=8192x8192 -->?<!-- /num --> of "
            "<!-- num step=07 id=ceiling shape=8192x8192 col=gbps -->?<!-- /num -->")
        self.assertEqual(code, 0, err)
        self.assertIn("-->95.6<", text)
        self.assertIn("-->2940<", text)

    def test_errors_say_where_and_why(self):
        for marker, why in (
                ("<!-- num step=step07 id=nothing shape=8192x8192 -->1<!-- /num -->",
                 "'nothing' is not a kernel of step07 (steps/07_tile64/step.toml: columns"),
                ("<!-- num step=step07 id=tiled shape=8192x8192 -->1<!-- /num -->",
                 "no measurement of step07 'tiled' at 8192x8192 f32"),
                ("<!-- num step=step07 id=columns shape=4096x4096 -->1<!-- /num -->",
                 "no rows of step07 at 4096x4096 f32"),
                ('<!-- num step=step07 kernel="down" shape=8192x8192 -->1<!-- /num -->',
                 "'kernel=' picks kernels by their names, which may change: select them by id"),
                ("<!-- num step=step07 id=columns -->1<!-- /num -->", "'shape' is required"),
                ("<!-- num step=step07 id=columns shape=8192x8192 col=speed -->1<!-- /num -->",
                 "col: 'speed'"),
                ("<!-- num step=step07 id=columns shape=8192x8192 colour=red -->1<!-- /num -->",
                 "unknown attribute 'colour'"),
                ("<!-- num diff step=step07 id=columns shape=8192x8192 -->1<!-- /num -->",
                 "vs. attributes"),
                ("<!-- num step=step07 id=columns shape=8192x8192 -->1", "closed by"),
                ("1<!-- /num -->", "without its opening"),
                ('<!-- num step=step07 id="columns shape=8192x8192 -->1<!-- /num -->',
                 "cannot read")):
            with self.subTest(marker=marker):
                code, _, err = self.value_after_make_plots(marker)
                self.assertEqual(code, 1)
                self.assertIn("steps/01_naive/README.md:1:", err)
                self.assertIn(why, err)

    def test_a_marker_that_opens_a_line_before_a_full_stop_is_an_error(self):
        marker = "<!-- num step=step07 id=columns shape=8192x8192 col=gbps -->2811<!-- /num -->"
        for line, bad in ((f"{marker}. The next sentence", True),
                          (f"  - {marker}) and more", True),
                          (f"{marker}.5 is a decimal, {marker}.", False),
                          (f"It reads {marker}. Then", False),
                          (f"{marker} GB/s. Then", False)):
            with self.subTest(line=line):
                code, _, err = self.make(line).run()
                self.assertEqual(code, 1 if bad else 0, err)
                self.assertEqual("the site shows a numbered list" in err, bad, err)

    def test_markers_in_code_are_examples(self):
        repo = self.make("Write `<!-- num step=step07 kernel=tile64 shape=1x1 -->9<!-- /num -->` "
                         "like so.\n```\n<!-- num step=nothing -->1<!-- /num -->\n```\n")
        code, _, err = repo.run("--check")
        self.assertEqual(code, 0, err)

    def test_profile_values(self):
        profile = [["step07", "columns", "tile64, down the columns", "f32", "8192", "8192",
                    "dram__bytes_read.sum", "268.44", "Mbyte", "Test GPU", "1.0", "2026-01-01"],
                   ["step07", "columns", "tile64, down the columns", "f32", "8192", "8192",
                    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "1234567", "",
                    "Test GPU", "1.0", "2026-01-01"],
                   ["step07", "columns-pass2", "tile64, down the columns, pass 2 of 2: k", "f32",
                    "8192", "8192", "gpu__time_duration.sum", "304672", "nsecond", "Test GPU",
                    "1.0", "2026-01-01"]]
        # The step's facts ask for what the page cites: a new profile run keeps it.
        facts = {"steps/07_tile64/step.toml": FACTS["steps/07_tile64/step.toml"] + """\
            [[profile]]
            shapes = ["8192"]
            metrics = ["dram__bytes_read.sum", "gpu__time_duration.sum",
                       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]
            """}
        for marker, want in (
                ('id=columns metric="DRAM read MB"', "268"),
                ("id=columns metric=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                 "1,234,567"),
                ('id=columns-pass2 metric="time us"', "305")):
            with self.subTest(marker=marker):
                self.repo = Repo(ROWS, {"steps/01_naive/README.md":
                                        f"<!-- num profile step=07 shape=8192x8192 {marker} -->"
                                        "?<!-- /num -->\n"}, profile, facts)
                self.addCleanup(self.repo.close)
                code, _, err = self.repo.run()
                self.assertEqual(code, 0, err)
                self.assertIn(f"-->{want}<", self.repo.read("steps/01_naive/README.md"))
        # A counter in the data that no [[profile]] group asks for any more: the next run drops it.
        other = FACTS["steps/07_tile64/step.toml"] + \
            '[[profile]]\nshapes = ["8192"]\nmetrics = ["smsp__inst_executed.sum"]\n'
        for step_toml in (other, FACTS["steps/07_tile64/step.toml"]):  # another counter; none
            with self.subTest(step_toml=step_toml[-40:]):
                self.repo = Repo(ROWS, {"steps/01_naive/README.md":
                                        '<!-- num profile step=07 shape=8192x8192 id=columns '
                                        'metric="DRAM read MB" -->?<!-- /num -->\n'}, profile,
                                 {"steps/07_tile64/step.toml": step_toml})
                self.addCleanup(self.repo.close)
                code, _, err = self.repo.run("--check")
                self.assertEqual(code, 1)
                self.assertIn("no [[profile]] group", err)

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

    def test_number_formats(self):
        self.assertEqual(fmt_sig(0.189792, 3), "0.190")
        self.assertEqual(fmt_sig(12.345, 3), "12.3")
        self.assertEqual(fmt_sig(10.4, 2), "10")
        self.assertEqual(fmt_sig(9.96, 2), "10")
        self.assertEqual(fmt_sig(2.46, 2), "2.5")
        self.assertEqual(fmt_sig(123.0, 2), "120")
        self.assertEqual(fmt_fixed(-0.04, 1), "0.0")


class Tables(unittest.TestCase):
    def test_a_bench_table_picks_kernels_by_id(self):
        repo = Repo(ROWS, {"steps/07_tile64/README.md":
                           "<!-- bench-table steps=step07 shapes=8192x8192 ids=swizzled -->\n"
                           "<!-- /bench-table -->\n"})
        self.addCleanup(repo.close)
        code, _, err = repo.run()
        self.assertEqual(code, 0, err)
        text = repo.read("steps/07_tile64/README.md")
        self.assertIn("| tile64, swizzled | 8192x8192 |", text)
        self.assertNotIn("down the columns", text)
        self.assertIn("| *copy: float4 kernel* |", text)

    def test_pattern_table_takes_the_median_of_the_runs(self):
        header = ("type,rows,cols,pattern,group_rows,median_ms,gbps,pct_stream,device,driver,"
                  "cuda,date\n")
        runs = "".join(f"f64,64,64,reads: linear stream,-,{ms},{gbps},{pct},GPU,1,1,d\n"
                       for ms, gbps, pct in ((1.0, 100, 100.0), (3.0, 90, 97.0), (2.0, 95, 99.0)))
        repo = Repo(ROWS, {"steps/01_naive/README.md":
                           "<!-- pattern-table tool=step08_patterns type=f64 shapes=64x64 -->\n<!-- /pattern-table -->"})
        self.addCleanup(repo.close)
        (repo.root / "plots" / "data" / "patterns.csv").write_text(header + runs)
        code, _, err = repo.run()
        self.assertEqual(code, 0, err)
        text = repo.read("steps/01_naive/README.md")
        self.assertIn("| reads: linear stream | 64x64 | - | 2.00 | 95 | 99.0 | 3.0 |", text)
        self.assertIn("the median of 3 runs", text)

    def test_step01_shows_its_headline_kernel_and_its_fastest(self):
        """The README's table from the facts: step 01's [twice] gives two rows, the labs never
        enter it, and the shapes are steps/course.toml's."""
        repo = Repo(ROWS, {"README.md": "<!-- results-table -->\n<!-- /results-table -->\n"})
        self.addCleanup(repo.close)
        code, _, err = repo.run()
        self.assertEqual(code, 0, err)
        text = repo.read("README.md")
        classic = next(line for line in text.splitlines() if "classic" in line)
        best = next(line for line in text.splitlines() if "best block shape" in line)
        self.assertIn("| 01 naive, classic | one thread per element; the kernel of every tutorial "
                      "(naive, coalesced read 32x32) | 472 | 16.1 |", classic)
        self.assertIn("coalesced write 8x32", best)
        self.assertIn("| 1931 | 65.9 |", best)
        self.assertIn("| 05 coarsened | several elements per thread |", text)
        self.assertNotIn("lab kernel", text)
        self.assertIn("GB/s 32768x32768", text)
        self.assertIn("step 01 twice: the classic kernel and its best block shape", text)
        self.assertIn("median of 1 to 3 separate runs", text)


class Lint(unittest.TestCase):
    TEXT = """\
        # Lesson

        Prose that types 95.6% of the copy.
        Prose that types 2800 GB/s and 2,800 GB/s.
        Fine: 16% (no decimal), GB/s alone, `95.6%` in code, <!-- 95.6% in a comment -->.
        Fine: <!-- num step=step07 id=columns shape=8192x8192 -->95.6<!-- /num -->% and
        <!-- num step=step07 id=columns shape=8192x8192 col=gbps -->2811<!-- /num --> GB/s.

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


if __name__ == "__main__":
    unittest.main()
