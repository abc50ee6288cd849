"""An instructor's hidden tests (a part of grade.Grader; Python standard library only): data the
worker runs and the judge decides, like the visible entries, never code built with the
submission (exercises/INSTRUCTORS.md, "Hidden tests")."""

import fnmatch
import json
import re

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")
MAX_FILE_BYTES = 1 << 20
MAX_SIDE, MAX_ELEMENTS, MAX_SHAPES = 1 << 24, 1 << 28, 64


def hidden_entries(folder):
    """([entries], [notes]) of the instructor's <folder>/*.json files: each a list of
    {"name": "Suite.Test", "kind": "check", "check": NAME} or {"name", "kind": "gpu", "shapes":
    [[rows, cols], ...] or "random": {"count", "max_side"}}, with an optional "title". An entry
    that is not one of these is left out, and a note says why."""
    entries, notes, seen = [], [], set()
    for path in sorted(folder.glob("*.cu")) + sorted(folder.glob("*.cpp")):
        notes.append("%s is not run: hidden tests are data (%s/*.json) that the grader's judge "
                     "checks, never code built with the submission (INSTRUCTORS.md, \"Hidden "
                     "tests\")" % (path.name, folder.name))
    for path in sorted(folder.glob("*.json")):
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise ValueError("over %d bytes" % MAX_FILE_BYTES)
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            notes.append("%s is not read: %s" % (path.name, err))
            continue
        for e in doc if isinstance(doc, list) else [doc]:
            why = entry_problem(e)
            if why:
                notes.append("%s: an entry is left out: %s" % (path.name, why))
            elif e["name"] in seen:
                notes.append("%s: %s is listed twice; the first counts" % (path.name, e["name"]))
            else:
                seen.add(e["name"])
                entries.append(dict(e, title=str(e.get("title") or e["name"])[:200]))
    return entries, notes


def entry_problem(e):
    """Why @p e is no hidden test ("" if it is one)."""
    if not isinstance(e, dict) or not isinstance(e.get("name"), str) or not NAME.match(e["name"]):
        return "each needs a \"name\" like \"HiddenEx01.PrimeRows\""
    if e.get("kind") == "check":
        return "" if isinstance(e.get("check"), str) and re.match(r"^\w{1,64}$", e["check"]) \
            else "%s: a check entry needs a \"check\" name" % e["name"]
    if e.get("kind") != "gpu":
        return "%s: \"kind\" is \"check\" or \"gpu\"" % e["name"]
    if "random" in e:
        r = e["random"]
        ok = isinstance(r, dict) and all(isinstance(r.get(k), int) for k in ("count", "max_side"))
        return "" if ok and 0 < r["count"] <= MAX_SHAPES and 0 < r["max_side"] <= 1 << 14 \
            else "%s: \"random\" needs a count (at most %d) and a max_side" % (e["name"],
                                                                               MAX_SHAPES)
    shapes = e.get("shapes")
    if not isinstance(shapes, list) or not 0 < len(shapes) <= MAX_SHAPES:
        return "%s: a gpu entry needs \"shapes\" (1 to %d) or \"random\"" % (e["name"],
                                                                             MAX_SHAPES)
    for s in shapes:
        rc = [s, s] if isinstance(s, int) else s
        if not (isinstance(rc, list) and len(rc) == 2 and all(
                isinstance(x, int) and 0 < x <= MAX_SIDE for x in rc)
                and rc[0] * rc[1] <= MAX_ELEMENTS):
            return "%s: a shape is a side or [rows, cols], at most %d elements" % (
                e["name"], MAX_ELEMENTS)
    return ""


class HiddenMixin:

    def hidden_plan(self, ex):
        """[(entry, points, visibility)] of the exercise's hidden tests, their points scaled
        down to hidden_tests.max_points together."""
        rules = self.m["hidden_tests"]
        entries, notes = hidden_entries(self.hidden_source / ex["id"])
        self.r.notes += ["hidden tests: " + n for n in notes]
        plan = []
        for e in entries:
            points, visibility = rules.get("points", 1), rules.get("visibility", "after_published")
            for rule in rules.get("rules", []):
                if fnmatch.fnmatchcase(e["name"], rule["match"]):
                    points = rule.get("points", points)
                    visibility = rule.get("visibility", visibility)
            plan.append([e, float(points), visibility])
        total, cap = sum(p[1] for p in plan), rules.get("max_points", 10)
        if total > cap:
            for p in plan:
                p[1] = round(p[1] * cap / total, 4)
        return plan

    def run_hidden(self, ex):
        """Each hidden test of @p ex, run by the worker and decided by the judge, like a visible
        entry of the same kind."""
        number = int(ex["id"][:2])
        binary = self.worker(ex)
        self.ex_deadline = self.deadline
        for e, points, visibility in self.hidden_plan(ex):
            e = dict(e, points=points)
            if self.time_left(self.timeouts["entry"]) < 1 and (self.gpu or not self.is_gpu(e)):
                got = self.entry(ex, e, "not_run", "not run: the submission's time is spent")
            else:  # a GPU entry without a GPU is "not graded" there
                got = self.run_entry(ex, number, e, binary, [])
            self.r.add(ex["id"], "hidden", "%s | hidden: %s" % (ex["title"], e["name"]), points,
                       got.passed, got.output, got.outcome, seconds=got.seconds, gtest=e["name"],
                       visibility=visibility, tags=["gpu" if got.gpu else "cpu"],
                       verdict_from="the judge", **got.extra)
