"""plots/peers.py without PyTorch: its problem list, its rows, its skip line."""

import csv
import io
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import peers  # noqa: E402


class Peers(unittest.TestCase):
    def test_problems_parse_and_bad_ones_say_which(self):
        got = peers.parse_problems("f16:4095x4097, i8:64x64x16384,9")
        self.assertEqual([str(p) for p in got], ["f16:4095x4097", "i8:64x64x16384", "f32:9x9"])
        self.assertEqual(got[1].nbytes, 64 * 64 * 16384)
        self.assertEqual(got[0].nbytes, 4095 * 4097 * 2)
        for bad in ("f33:8x8", "f32:8x0", "f32:8x8x8x8", "f32:axb"):
            with self.assertRaisesRegex(ValueError, bad.split(":")[0] if "f33" in bad else "'"):
                peers.parse_problems(bad)

    def test_the_facts_give_every_step_s_problems_once(self):
        found = [str(p) for p in peers.facts_problems()]
        self.assertEqual(len(found), len(set(found)))
        for item in ("f32:32768x32768", "f16:16385x8191", "bf16:12345x6789", "f64:16384x16384",
                     "f32:32x48x200000"):
            self.assertIn(item, found)

    def test_rows_are_in_the_report_s_columns(self):
        ident = {"device": "GPU", "driver": "1", "cuda": "13.0", "date": "2026-01-01"}
        row = peers.csv_row("pytorch", "compiled", "torch.compile: x.t().contiguous()", "i8",
                            64, 48, 0.5, 0.25, 123.456, 50.04, 4.0, "yes", ident, batch=7)
        self.assertEqual(len(row), len(peers.HEADER))
        fields = dict(zip(peers.HEADER, row))
        self.assertEqual((fields["batch"], fields["gbps"], fields["pct_copy"]), ("7", "123.5", "50.0"))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "a.csv"
            peers.append_csv(path, [row])
            peers.append_csv(path, [row])
            with open(path, newline="") as f:
                rows = list(csv.reader(f))
        self.assertEqual(rows[0], peers.HEADER)
        self.assertEqual(rows[1:], [row, row])

    def test_without_torch_one_line_and_exit_0(self):
        try:
            import torch  # noqa: F401
            self.skipTest("torch is installed here")
        except ImportError:
            pass
        out = io.StringIO()
        with redirect_stdout(out):
            code = peers.main(["--problems", "f32:8x8"])
        self.assertEqual(code, 0)
        self.assertEqual(len(out.getvalue().splitlines()), 1)
        self.assertIn("skipped", out.getvalue())

    def test_bad_arguments_exit_2(self):
        with self.assertRaises(SystemExit) as e, redirect_stdout(io.StringIO()):
            sys.stderr, err = io.StringIO(), sys.stderr
            try:
                peers.main(["--problems", "f32:0x8"])
            finally:
                sys.stderr = err
        self.assertEqual(e.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
