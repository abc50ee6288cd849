"""CPU tests of data from several devices: a merge keeps every device's rows of one problem (and
step 10's rows of another GPU count), and the markers show the course's reference device unless
they say device=, failing when what they ask for was measured only on another device."""

import contextlib
import io
import unittest

from support import HEADER, Repo, bench_row
from test_figures import tiny_png
import bench

COURSE = {"steps/course.toml": 'headline_shapes = ["8192x8192"]\n'
                               'reference_device = "Test GPU 80GB"\n'}
# step07's kernel on two devices (the other one also a shape of its own), and a step07 lab
# kernel measured only on the other device.
ROWS = [
    bench_row("step07", "copy-float4", "copy: float4 kernel", 100.0, verified="-",
              device="Test GPU 80GB"),
    bench_row("step07", "columns", "tile64, down the columns", 95.6, device="Test GPU 80GB"),
    bench_row("step07", "copy-float4", "copy: float4 kernel", 100.0, verified="-",
              device="Other GPU 141GB", date="2026-02-02"),
    bench_row("step07", "columns", "tile64, down the columns", 88.8, device="Other GPU 141GB",
              date="2026-02-02"),
    bench_row("step07", "columns", "tile64, down the columns", 77.7, shape=(4096, 4096),
              device="Other GPU 141GB", date="2026-02-02"),
    bench_row("step07-lab", "lab", "lab kernel", 66.6, device="Other GPU 141GB"),
]


class Merge(unittest.TestCase):
    def test_two_devices_of_one_problem_both_survive(self):
        h100 = [bench_row("step05", "k", "k", 90, device="GPU A")]
        h200 = [bench_row("step05", "k", "k", 95, device="GPU B")]
        rows = bench.merge(HEADER, h100, HEADER, h200, ["f32"])
        self.assertEqual(sorted((r[15], r[12]) for r in rows), [("GPU A", "90.0"),
                                                                 ("GPU B", "95.0")])
        # Measured again on GPU A: GPU A's rows are replaced, GPU B's stay.
        again = bench.merge(HEADER, rows, HEADER, [bench_row("step05", "k", "k", 91,
                                                             device="GPU A")], ["f32"])
        self.assertEqual(sorted((r[15], r[12]) for r in again), [("GPU A", "91.0"),
                                                                 ("GPU B", "95.0")])

    def test_rows_of_another_gpu_count_survive(self):
        two = [bench_row("step10", "a2a-2gpus", "copy: NCCL all-to-all, 2 GPUs", 100),
               bench_row("step10", "overlapped-2gpus", "overlapped, 2 GPUs", 63)]
        one = [bench_row("step10", "a2a-1gpu", "copy: NCCL all-to-all, 1 GPU", 100),
               bench_row("step10", "overlapped-1gpu", "overlapped, 1 GPU", 103)]
        rows = bench.merge(HEADER, two, HEADER, one, ["f32"])
        self.assertEqual(sorted(r[1] for r in rows), ["a2a-1gpu", "a2a-2gpus",
                                                      "overlapped-1gpu", "overlapped-2gpus"])
        again = bench.merge(HEADER, rows, HEADER, two[1:], ["f32"])
        self.assertEqual(sorted(r[1] for r in again), ["a2a-1gpu", "overlapped-1gpu",
                                                       "overlapped-2gpus"])


class Markers(unittest.TestCase):
    def page(self, text, rows=ROWS):
        repo = Repo(rows, {"steps/07_tile64/README.md": text + "\n"}, facts=COURSE)
        self.addCleanup(repo.close)
        code, _, err = repo.run()
        return code, repo.read("steps/07_tile64/README.md"), err

    def test_a_number_is_the_reference_devices_unless_device_says(self):
        code, text, err = self.page(
            "<!-- num step=step07 id=columns shape=8192x8192 -->?<!-- /num --> here, "
            "<!-- num step=step07 id=columns shape=8192x8192 device=Other -->?<!-- /num --> "
            "there, <!-- num diff step=step07 id=columns shape=8192x8192 "
            "vs.device=other -->?<!-- /num --> between")
        self.assertEqual(code, 0, err)
        self.assertIn("-->95.6<!-- /num --> here", text)
        self.assertIn("-->88.8<!-- /num --> there", text)
        self.assertIn("-->6.8<!-- /num --> between", text)

    def test_a_table_says_the_device_it_shows(self):
        code, text, err = self.page(
            "<!-- bench-table steps=step07 shapes=8192x8192 -->\n<!-- /bench-table -->\n"
            "<!-- bench-table steps=step07 shapes=8192x8192 device=141GB -->\n"
            "<!-- /bench-table -->")
        self.assertEqual(code, 0, err)
        first, second = text.split("device=141GB")
        self.assertIn("| 95.6 |", first)
        self.assertIn("Measured on Test GPU 80GB, driver 1.0, CUDA 13.0, 2026-01-01", first)
        self.assertNotIn("Other GPU", first)
        self.assertIn("| 88.8 |", second)
        self.assertIn("Measured on Other GPU 141GB, driver 1.0, CUDA 13.0, 2026-02-02", second)

    def test_rows_only_on_another_device_fail_without_device(self):
        for marker in ("<!-- num step=step07 id=columns shape=4096x4096 -->1<!-- /num -->",
                       "<!-- num step=step07-lab id=lab shape=8192x8192 -->1<!-- /num -->",
                       "<!-- bench-table steps=step07-lab shapes=8192x8192 -->\n"
                       "<!-- /bench-table -->"):
            with self.subTest(marker=marker):
                code, _, err = self.page(marker)
                self.assertEqual(code, 1)
                self.assertIn("no rows on Test GPU 80GB (the reference device, "
                              "steps/course.toml); measured on Other GPU 141GB: say "
                              "device=Other", err)
        code, text, err = self.page(
            "<!-- num step=step07 id=columns shape=4096x4096 device=Other -->1<!-- /num -->")
        self.assertEqual(code, 0, err)
        self.assertIn("-->77.7<", text)

    def test_a_table_takes_the_copy_of_its_kernels_gpu_count(self):
        rows = [bench_row("step10", "a2a-2gpus", "copy: all-to-all, 2 GPUs", 100, gbps=1300,
                          verified="-", device="Test GPU 80GB"),
                bench_row("step10", "overlapped-2gpus", "overlapped, 2 GPUs", 63,
                          device="Test GPU 80GB"),
                bench_row("step10", "a2a-1gpu", "copy: all-to-all, 1 GPU", 100, gbps=3800,
                          verified="-", device="Test GPU 80GB"),
                bench_row("step10", "overlapped-1gpu", "overlapped, 1 GPU", 103,
                          device="Test GPU 80GB")]
        code, text, err = self.page("<!-- bench-table steps=step10 shapes=8192x8192 "
                                    "ids=overlapped-2gpus -->\n<!-- /bench-table -->", rows)
        self.assertEqual(code, 0, err)
        self.assertIn("copy: all-to-all, 2 GPUs", text)
        self.assertNotIn("1 GPU", text)

    def test_a_device_that_names_none_or_several_is_an_error(self):
        for device, why in (("H900", "'H900' matches no device"),
                            ("GPU", "'GPU' matches 2 devices")):
            with self.subTest(device=device):
                code, _, err = self.page(f"<!-- num step=step07 id=columns shape=8192x8192 "
                                         f"device={device} -->1<!-- /num -->")
                self.assertEqual(code, 1)
                self.assertIn(why, err)

    def test_the_readme_table_names_a_step_measured_elsewhere(self):
        rows = ROWS[:2] + [bench_row("step05", "block-32x4", "coarsened 32x4", 70,
                                     device="Other GPU 141GB"),
                           bench_row("step05", "copy-float4", "copy: float4 kernel", 100,
                                     verified="-", device="Other GPU 141GB")]
        repo = Repo(rows, {"README.md": "<!-- results-table -->\n<!-- /results-table -->\n"},
                    facts=COURSE)
        self.addCleanup(repo.close)
        code, _, err = repo.run()
        self.assertEqual(code, 0, err)
        text = repo.read("README.md")
        self.assertIn("several elements per thread; on Other GPU 141GB | 2100 | 70.0 |", text)
        self.assertIn("Step 05: on Other GPU 141GB, driver 1.0, CUDA 13.0, 2026-01-01, against "
                      "the copy its runs timed (float4 kernel)", text)


# A lesson module whose figure draws the lab's rows from the device that measured them.
MODULE = """\
def figures(data):
    rows = [r for r in data.where("step07-lab").bench if r.step == "step07-lab"]
    return [("lab_figure", "the lab", rows, lambda path: None)]
"""


class Figures(unittest.TestCase):
    def test_a_figure_of_another_device_needs_device(self):
        for marker, fails in (("<!-- figure name=lab_figure -->", True),
                              ("<!-- figure name=lab_figure device=Other -->", False),
                              ("<!-- figure name=lab_figure device=80GB -->", True)):
            with self.subTest(marker=marker):
                repo = Repo(ROWS, {"steps/07_tile64/README.md": marker + "\n<!-- /figure -->\n",
                                   "plots/lessons/step07.py": MODULE}, facts=COURSE)
                self.addCleanup(repo.close)
                (repo.root / "plots" / "figures" / "lab_figure.png").write_bytes(tiny_png())
                code, _, err = repo.run()
                self.assertEqual(code, 1 if fails else 0, err)
                if fails:
                    self.assertIn("figure: lab_figure is drawn from rows measured on Other GPU "
                                  "141GB, not on Test GPU 80GB", err)
                    self.assertIn("say device=Other", err)


class MergeFiles(unittest.TestCase):
    def test_merge_brings_another_devices_rows_in(self):
        repo = Repo(ROWS[:2], {})
        self.addCleanup(repo.close)
        extra = repo.root / "other.csv"
        Repo.write_csv(extra, HEADER, ROWS[2:4])
        out = repo.root / "plots" / "data" / "bench.csv"
        with contextlib.redirect_stdout(io.StringIO()):
            code = bench.main(["--merge", str(extra), "--out", str(out), "--build",
                               str(repo.root / "build")])
        self.assertEqual(code, 0)
        _, rows = bench.read_rows(out)
        self.assertEqual(sorted((r[1], r[15]) for r in rows),
                         [("columns", "Other GPU 141GB"), ("columns", "Test GPU 80GB"),
                          ("copy-float4", "Other GPU 141GB"), ("copy-float4", "Test GPU 80GB")])


if __name__ == "__main__":
    unittest.main()
