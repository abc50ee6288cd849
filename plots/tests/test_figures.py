"""CPU tests of the figures' catalogue and of the record each PNG keeps of its data: a committed
figure whose rows changed is stale for --check (no drawing needed), lesson modules join the
catalogue or are named when they fail, and, where matplotlib is installed, a figure drawn twice
is the same bytes."""

import struct
import textwrap
import unittest
import zlib

from support import HEADER, ROWS, Repo, bench_row
from facts import Course
from figures import catalog
from plotting import read_stamp, stamp
from rows import Data


def tiny_png():
    """A 1 x 1 PNG, as a stand-in for a drawn figure."""
    def chunk(kind, body):
        return struct.pack(">I4s", len(body), kind) + body + struct.pack(
            ">I", zlib.crc32(kind + body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0\0")) + chunk(b"IEND", b""))


PAGE = "<!-- figure name=sizes_step07 -->\n<!-- /figure -->\n"


class Stamps(unittest.TestCase):
    def setUp(self):
        self.repo = Repo(ROWS, {"steps/07_tile64/README.md": PAGE})
        self.addCleanup(self.repo.close)
        self.png = self.repo.root / "plots" / "figures" / "sizes_step07.png"

    def figures(self):
        data = Data(self.repo.root / "plots" / "data", Course(self.repo.root))
        return catalog(data, self.repo.root)

    def test_a_stamp_is_written_and_read_back(self):
        self.png.write_bytes(tiny_png())
        self.assertIsNone(read_stamp(self.png))
        stamp(self.png, "abc")
        stamp(self.png, "0123456789abcdef")  # a second stamp replaces the first
        self.assertEqual(read_stamp(self.png), "0123456789abcdef")
        self.assertEqual(self.png.read_bytes().count(b"Drawn-from"), 1)

    def test_a_figure_whose_rows_changed_is_stale(self):
        self.png.write_bytes(tiny_png())
        stamp(self.png, self.figures()["sizes_step07"].stamp())
        self.repo.run()  # the page links the figure
        code, _, err = self.repo.run("--check")
        self.assertEqual(code, 0, err)
        # One run of one step 07 kernel measured again: the figure no longer shows the data.
        rows = ROWS[:-1] + [bench_row("step07", "swizzled", "tile64, swizzled", 90.0)]
        Repo.write_csv(self.repo.root / "plots" / "data" / "bench.csv", HEADER, rows)
        code, _, err = self.repo.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("plots/figures/sizes_step07.png: stale: drawn from other data", err)

    def test_a_figure_without_a_stamp_is_stale(self):
        self.png.write_bytes(tiny_png())
        code, _, err = self.repo.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("sizes_step07.png: stale", err)

    def test_an_unlinked_png_fails_the_check(self):
        repo = Repo(ROWS, {"README.md": "![journey](plots/figures/linked.png)\n"})
        self.addCleanup(repo.close)
        for name in ("linked.png", "orphan.png"):
            (repo.root / "plots" / "figures" / name).write_bytes(b"png")
        code, _, err = repo.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("plots/figures/orphan.png: linked from no Markdown page", err)
        self.assertNotIn("linked.png: linked from no", err)


class LessonModules(unittest.TestCase):
    def test_a_lesson_module_that_raises_is_named(self):
        repo = Repo(ROWS, {"plots/lessons/step03.py": "def figures(data):\n"
                                                      "    raise ValueError('no data for me')\n",
                           "plots/lessons/step04.py": "import no_such_module\n"})
        self.addCleanup(repo.close)
        code, _, err = repo.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("plots/lessons/step03.py: ValueError: no data for me", err)
        self.assertIn("plots/lessons/step04.py: ModuleNotFoundError", err)

    def test_a_lesson_figure_joins_the_catalogue(self):
        repo = Repo(ROWS, {"plots/lessons/step05.py": textwrap.dedent("""\
            from rows import select

            def figures(data):
                rows = select(data.bench, step="step07", shape=(8192, 8192), type_="f32")
                return [("mine", "My figure", rows, lambda path: None)]
            """)})
        self.addCleanup(repo.close)
        problems = []
        found = catalog(Data(repo.root / "plots" / "data", Course(repo.root)), repo.root,
                        problems)
        self.assertEqual(problems, [])
        self.assertEqual(found["mine"].caption, "My figure")
        self.assertTrue(found["mine"].ready)
        self.assertEqual(found["mine"].source, "lessons/step05.py")


class Drawing(unittest.TestCase):
    def test_a_figure_drawn_twice_is_the_same_bytes(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib is not installed")
        repo = Repo(ROWS, {})
        self.addCleanup(repo.close)
        figure = catalog(Data(repo.root / "plots" / "data", Course(repo.root)),
                         repo.root)["progression"]
        first, second = repo.root / "a.png", repo.root / "b.png"
        figure.draw(first)
        figure.draw(second)
        self.assertEqual(first.read_bytes(), second.read_bytes())
        self.assertNotIn(b"matplotlib version", first.read_bytes())


if __name__ == "__main__":
    unittest.main()
