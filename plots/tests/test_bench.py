"""CPU tests of what `make bench` runs and writes, and of the steps' facts: the plan from the
facts (with stand-in binaries that answer --list), the merge of runs into bench.csv, the parts,
and a throwaway kernel id added to a copy of a step's facts reaching the plan and the markers."""

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

from support import HEADER, ROWS, Repo, bench_row
import bench
import plan
from facts import Course, Facts, FactsError, check_binary

ROOT = Path(__file__).resolve().parents[2]

# A stand-in for a step binary: --list prints the course's types and two kernels; a run appends
# a copy row and a kernel row to --csv.
FAKE = textwrap.dedent(f"""\
    #!{sys.executable}
    import sys
    argv = sys.argv[1:]
    value = lambda name, default: argv[argv.index(name) + 1] if name in argv else default
    if "--list" in argv:
        for t, size, takes in (("f32", 4, "default"), ("f64", 8, "yes"), ("i8", 1, "no")):
            print(f"type\\t{{t}}\\t{{size}}\\t{{takes}}")
        print("kernel\\ttiled\\ttiled 32x32")
        sys.exit(0)
    rows, cols = value("--rows", "8192"), value("--cols", "8192")
    verified = "skipped" if "--no-verify" in argv else "yes"
    with open(value("--csv", None), "a") as f:
        f.write("{','.join(HEADER)}\\n")
        for kid, kernel, v in (("copy-float4", "copy: float4 kernel", "-"),
                               ("tiled", "tiled 32x32", verified)):
            f.write(f"step02,{{kid}},{{kernel}},32x32,-,f32,{{rows}},{{cols}},1,0.1,0.09,"
                    f"2000.0,70.0,60.0,{{v}},Test GPU,1.0,13.0,2026-01-01\\n")
    """)

STEP02 = """\
    title = "tiled"
    idea = "a shared-memory tile"
    headline = "tiled"
    types = ["f32", "f64"]
    [kernels]
    tiled = "one 32 x 32 tile"
    [[sweep]]
    shapes = ["1024", "2048"]
    [[sweep]]
    types = ["f64"]
    shapes = ["4096x1024"]
    """


def args_for(**kw):
    base = dict(runs=3, verify_every_run=False, reps=None, warmup=None)
    base.update(kw)
    return argparse.Namespace(**base)


class Merge(unittest.TestCase):
    def test_a_problem_measured_again_loses_all_its_old_runs(self):
        old = [bench_row("step05", "k", "k", 90), bench_row("step05", "k", "k", 91),
               bench_row("step05", "k", "k", 90, shape=(4096, 4096))]
        rows = bench.merge(HEADER, old, HEADER, [bench_row("step05", "k", "k", 95)], ["f32"])
        self.assertEqual(sorted((r[6], r[12]) for r in rows),
                         [("4096", "90.0"), ("8192", "95.0")])

    def test_prune_drops_the_shapes_the_sweep_no_longer_has(self):
        old = [bench_row("step05", "k", "k", 90, shape=(256, 256)),
               bench_row("step05", "k", "k", 90, shape=(4096, 4096)),
               bench_row("step06", "k", "k", 90, shape=(256, 256))]
        keys = {("step05", "f32", "8192", "8192", "1"), ("step05", "f32", "4096", "4096", "1")}
        rows = bench.merge(HEADER, old, HEADER, [bench_row("step05", "k", "k", 95)], ["f32"],
                           prune=({"step05"}, keys))
        self.assertEqual(sorted((r[0], r[6]) for r in rows),
                         [("step05", "4096"), ("step05", "8192"), ("step06", "256")])

    def test_rows_sort_by_the_binaries_type_order(self):
        rows = [bench_row("step08", "k", "k", 90, type_=t) for t in ("i8", "f64", "f32")]
        merged = bench.merge(HEADER, [], HEADER, rows, ["f32", "f64", "f16", "bf16", "i8"])
        self.assertEqual([r[5] for r in merged], ["f32", "f64", "i8"])


class Plan(unittest.TestCase):
    def test_options_in_another_order_are_the_same_problem(self):
        self.assertEqual(plan.same_options(["--rows", "4", "--type", "i8"]),
                         plan.same_options(["--type", "i8", "--rows", "4"]))
        self.assertNotEqual(plan.same_options(["--rows", "4", "--cols", "5"]),
                            plan.same_options(["--rows", "5", "--cols", "4"]))

    def test_later_runs_are_cheaper_and_the_parts_cover_the_plan(self):
        args = args_for()
        big = plan.Problem("step07", [], (32768, 32768))
        self.assertLess(big.estimate_s(args, False), big.estimate_s(args, True) / 2)
        self.assertAlmostEqual(big.estimate_all_s(args),
                               big.estimate_s(args, True) + 2 * big.estimate_s(args, False))
        problems = [plan.Problem("step01", [], (n, n)) for n in (1024, 4096, 16384, 32768)] * 3
        parts = plan.split_parts(problems, args, 3)
        self.assertEqual(sum(parts, []), problems)
        self.assertTrue(all(parts))
        # The peers, last in the plan, move no cut: --part K/N with and without --no-pytorch
        # slice the same problems (a sweep split over several commands leaves no gap).
        peers = plan.Problem("pytorch", [], source="peers_pytorch.py", peers=Path("p.py"))
        with_peers = plan.split_parts(problems + [peers], args, 3)
        self.assertEqual(with_peers[:2], parts[:2])
        self.assertEqual(with_peers[2], parts[2] + [peers])

    def test_the_course_facts_give_the_sweep(self):
        """The repository's own facts: every step sweeps the squares, steps 05-08 the
        rectangles too, step 08 every type, step 09 its three modes."""
        course = Course(ROOT)
        problems, _ = plan.plan(course, set(course.binaries), {"f64": 8})
        of = lambda b: [p for p in problems if p.binary == b]
        shapes = lambda b: {(p.rows, p.cols) for p in of(b) if p.type == "f32"}
        for step in ("step01", "step05", "step08"):
            self.assertTrue({(8192, 8192), (32768, 32768), (1024, 1024)} <= shapes(step))
        self.assertNotIn((8192, 2048), shapes("step01"))
        self.assertIn((8192, 2048), shapes("step05"))
        self.assertEqual({p.type for p in of("step08")}, set(course.of("step08").types))
        modes = {plan.option_value(p.argv, "--mode") for p in of("step09")}
        self.assertEqual(modes, {"inplace", "batched", "inplace-batched"})
        self.assertEqual(of("step08")[0].nbytes, 1024 * 1024 * 4)
        self.assertIn(8 * 16384 * 16384, {p.nbytes for p in of("step09")})
        # Every step's [[peers]] problems run in one process of plots/peers.py, each once;
        # a step's own peers script (step 10's) runs beside it.
        peers = [p for p in problems if p.peers == plan.PEERS_MODULE]
        self.assertEqual(len(peers), 1)
        items = peers[0].argv[1].split(",")
        self.assertEqual(len(items), len(set(items)))
        self.assertIn("f32:8192x8192", items)
        self.assertIn("i8:12345x6789", items)
        self.assertIn("f32:64x64x16384", items)
        scripts = {p.peers for p in problems if p.peers and p.peers != plan.PEERS_MODULE}
        self.assertEqual(scripts, {f.peers for f in course.lessons().values() if f.peers})


class Facts_(unittest.TestCase):
    def facts(self, text, name="steps/02_tiled/step.toml"):
        repo = Repo([], {}, facts={name: text})
        self.addCleanup(repo.close)
        return Facts(repo.root / name, repo.root)

    def test_bad_facts_are_refused_with_the_file(self):
        for text, why in (
                (STEP02 + "colour = 1\n", "unknown key colour"),
                (STEP02.replace('headline = "tiled"', 'headline = "x"'), "headline 'x' is not"),
                (STEP02.replace("tiled = ", "Tiled = "), "'Tiled' is not an id"),
                (STEP02.replace('["1024", "2048"]', '["1024x"]'), "'1024x' is not N or"),
                (STEP02 + '[[sweep]]\nshapes = ["64"]\nargs = "--csv x"\n', "--csv is not for"),
                (STEP02 + '[[sweep]]\nshapes = ["64"]\ntypes = ["i8"]\n', "type 'i8' is not"),
                (STEP02.replace('title = "tiled"\n', ""), "'title' is required")):
            with self.subTest(why=why), self.assertRaises(FactsError) as e:
                self.facts(textwrap.dedent(text))
            self.assertIn("steps/02_tiled/step.toml", str(e.exception))
            self.assertIn(why, str(e.exception))

    def test_the_binary_must_agree_with_its_facts(self):
        with tempfile.TemporaryDirectory() as tmp:
            binary = Path(tmp) / "step02"
            binary.write_text(FAKE)
            binary.chmod(0o755)
            self.assertEqual(check_binary(binary, self.facts(textwrap.dedent(STEP02))), [])
            other = textwrap.dedent(STEP02).replace('tiled = "one', 'tiled = "a"\nspare = "one')
            problems = check_binary(binary, self.facts(other))
            self.assertEqual(len(problems), 1)
            self.assertIn("kernel 'spare' is listed by none", problems[0])


class Sweep(unittest.TestCase):
    """bench.main end to end with a stand-in binary and facts in a temporary repository."""

    def setUp(self):
        self.repo = Repo([], {}, facts={"steps/02_tiled/step.toml": STEP02})
        self.addCleanup(self.repo.close)
        self.build = self.repo.root / "build"
        (self.build / "bin").mkdir(parents=True)
        (self.build / "bin" / "step02").write_text(FAKE)
        (self.build / "bin" / "step02").chmod(0o755)
        self.out = self.repo.root / "plots" / "data" / "bench.csv"
        saved, bench.cuda_devices = bench.cuda_devices, lambda why: 1
        self.addCleanup(setattr, bench, "cuda_devices", saved)

    def main(self, *extra):
        with contextlib.redirect_stdout(io.StringIO()) as said:
            code = bench.main(["--root", str(self.repo.root), "--build", str(self.build),
                               "--steps", "02", "--no-pytorch", *extra])
        return code, said.getvalue()

    def test_runs_merge_and_prune(self):
        Repo.write_csv(self.out, HEADER, [
            bench_row("step02", "tiled", "tiled 32x32", 50, shape=(1024, 1024)),
            bench_row("step02", "tiled", "tiled 32x32", 50, shape=(256, 256)),
            bench_row("step03", "padded", "padded 32x32", 50, shape=(256, 256))])
        code, said = self.main("--types", "f32")
        self.assertEqual(code, 0, said)
        _, rows = bench.read_rows(self.out)
        runs = sorted((r[6], r[14]) for r in rows if r[1] == "tiled")
        self.assertEqual(runs, [("1024", "skipped"), ("1024", "skipped"), ("1024", "yes"),
                                ("2048", "skipped"), ("2048", "skipped"), ("2048", "yes"),
                                ("256", "yes")])
        self.assertIn("run 3, unverified", said)
        code, said = self.main("--runs", "1", "--prune", "--part", "1/2")
        self.assertEqual(code, 0, said)
        _, rows = bench.read_rows(self.out)
        self.assertNotIn(("step02", "256"), {(r[0], r[6]) for r in rows})  # pruned
        self.assertIn(("step03", "256"), {(r[0], r[6]) for r in rows})  # not swept: kept

    def test_sizes_and_types_choose_among_the_problems(self):
        code, said = self.main("--dry-run", "--sizes", "4096x1024")
        self.assertEqual(code, 0, said)
        self.assertIn("step02 4096x1024 f64", said)
        self.assertNotIn("1024x1024", said)
        self.assertIn("1 problems", said)

    def test_steps_option(self):
        self.assertEqual(bench.parse_steps("5,07-lab,step08,labs,pytorch"),
                         {"step05", "step07-lab", "step08", "labs", "pytorch"})
        with self.assertRaises(argparse.ArgumentTypeError):
            bench.parse_steps("five")


class ThrowawayKernel(unittest.TestCase):
    """Adding a kernel variant touches its step's folder only: a throwaway id added to a copy of
    step 05's real step.toml reaches the benchmark plan and the markers, no Python changed."""

    def test_a_new_id_reaches_the_plan_and_the_markers(self):
        marker = "<!-- num step=step05 id=throwaway shape=8192x8192 -->?<!-- /num -->\n"
        repo = Repo(ROWS + [bench_row("step05", "throwaway", "a kernel tried today", 42.0)],
                    {"steps/05_coarsened/README.md": marker})
        self.addCleanup(repo.close)
        facts = repo.root / "steps" / "05_coarsened" / "step.toml"
        shutil.copy(ROOT / "steps" / "05_coarsened" / "step.toml", facts)
        code, _, err = repo.run()
        self.assertEqual(code, 1)
        self.assertIn("'throwaway' is not a kernel of step05", err)
        before = self.plan(repo)

        facts.write_text(facts.read_text().replace(
            "[kernels]\n", '[kernels]\nthrowaway = "a kernel tried today"\n'))
        code, _, err = repo.run()
        self.assertEqual(code, 0, err)
        self.assertIn("-->42.0<!-- /num -->", repo.read("steps/05_coarsened/README.md"))
        after = self.plan(repo)
        self.assertIn("throwaway", after)
        self.assertNotIn("throwaway", before)
        self.assertIn("step05: 5 kernels", after)

    def plan(self, repo):
        build = repo.root / "build"
        (build / "bin").mkdir(parents=True, exist_ok=True)
        (build / "bin" / "step05").write_text(FAKE)
        (build / "bin" / "step05").chmod(0o755)
        with contextlib.redirect_stdout(io.StringIO()) as said:
            code = bench.main(["--root", str(repo.root), "--build", str(build), "--steps", "05",
                               "--dry-run", "--no-pytorch"])
        self.assertEqual(code, 0, said.getvalue())
        return said.getvalue()


if __name__ == "__main__":
    unittest.main()
