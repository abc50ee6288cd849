"""The graded entries: results.json in Gradescope's format, a JUnit report and the terminal's
table (Python standard library only)."""

import json
import os
import secrets
import xml.etree.ElementTree as ET

from tools import clean

NOT_GRADED = "not_graded"


class Results:
    """The graded entries, in Gradescope's results.json format, plus a JUnit report. How an entry
    that was not graded shows in each: INSTRUCTORS.md, "In one command"."""

    def __init__(self):
        self.tests = []
        self.notes = []
        self.extra = {}
        self.titles = {}  # exercise id -> title

    def add(self, exercise, kind, name, max_score, passed, output, outcome, visibility="visible",
            score=None, gtest=None, tags=(), seconds=None, **extra):
        if outcome == NOT_GRADED:
            passed, score = False, 0.0
        if score is None:
            score = max_score if passed else 0.0
        data = {"exercise": exercise, "kind": kind, "outcome": outcome}
        if gtest:
            data["gtest"] = gtest
        if seconds is not None:
            data["seconds"] = round(seconds, 2)
        data.update({k: clean(v) if isinstance(v, str) else v for k, v in extra.items()})
        entry = {
            "name": clean(name),
            "score": round(float(score), 4),
            "max_score": float(max_score),
            "output": clean(output),
            "visibility": visibility,
            "tags": [exercise, kind] + list(tags),
            "extra_data": data,
        }
        if outcome != NOT_GRADED:
            entry["status"] = "passed" if passed else "failed"
        self.tests.append(entry)
        return entry

    @staticmethod
    def state(t):
        if t["extra_data"]["outcome"] == NOT_GRADED:
            return "not graded"
        return t["status"]

    def total(self):
        return round(sum(t["score"] for t in self.tests), 4)

    def max_total(self):
        return round(sum(t["max_score"] for t in self.tests), 4)

    def not_graded(self, tests=None):
        return round(sum(t["max_score"] for t in (tests if tests is not None else self.tests)
                         if t["extra_data"]["outcome"] == NOT_GRADED), 4)

    def subtotals(self):
        """One line per exercise: "Exercise 1 (rectangular): 16 of 35 points, 19 not graded",
        then the total's."""
        def line(title, tests):
            ng = self.not_graded(tests)
            return "%s: %g of %g points%s" % (
                title, round(sum(t["score"] for t in tests), 4),
                round(sum(t["max_score"] for t in tests), 4), ", %g not graded" % ng if ng else "")
        order = dict.fromkeys(t["extra_data"]["exercise"] for t in self.tests)
        return [line(self.titles.get(ex, ex), [t for t in self.tests
                                               if t["extra_data"]["exercise"] == ex])
                for ex in order] + [line("Total", self.tests)]

    def summary(self, why_lines=4):
        """The table printed on the terminal: every entry's full name, its points and state, and
        under each failed entry the first lines of why."""
        import textwrap
        width = max([len(t["name"]) for t in self.tests] + [5])
        lines = ["%-*s  %9s  %s" % (width, "entry", "points", "status")]
        for t in self.tests:
            lines.append("%-*s  %9s  %s" % (width, t["name"], "%g/%g" % (t["score"],
                                                                        t["max_score"]),
                                            self.state(t)))
            if self.state(t) == "failed":
                why = [l.rstrip() for l in t["output"].strip().splitlines() if l.strip()]
                for l in why[:why_lines]:  # a long reason wrapped, never cut
                    lines.extend("      " + part for part in textwrap.wrap(
                        l, 150, break_on_hyphens=False, drop_whitespace=False) or [l])
                if len(why) > why_lines:
                    lines.append("      [... results.json has the rest]")
        return "\n".join(lines + [""] + self.subtotals())

    def write(self, out_dir, seconds):
        out_dir.mkdir(parents=True, exist_ok=True)
        text = "\n".join(self.subtotals()) + "\n"
        if self.notes:
            text += "\n" + "\n".join(clean(n) for n in self.notes) + "\n"
        doc = {
            "score": self.total(),
            "execution_time": int(seconds),
            "output": text,
            "visibility": "visible",
            "stdout_visibility": "hidden",
            "tests": self.tests,
            "extra_data": dict(self.extra, max_score=self.max_total(),
                               not_graded=self.not_graded()),
        }
        # Written to a new file, then renamed: a reader never sees half a report.
        for name, data in (("results.json", json.dumps(doc, indent=2) + "\n"),
                           ("junit.xml", self.junit())):
            tmp = out_dir / (".%s.%s" % (name, secrets.token_hex(4)))
            tmp.write_text(data)
            os.replace(tmp, out_dir / name)

    def junit(self):
        suites = ET.Element("testsuites", name="transpose exercises")
        by_exercise = {}
        for t in self.tests:
            ex = t["extra_data"]["exercise"]
            if ex not in by_exercise:
                by_exercise[ex] = ET.SubElement(suites, "testsuite", name=ex)
            case = ET.SubElement(by_exercise[ex], "testcase", classname=ex, name=t["name"],
                                 time=str(t["extra_data"].get("seconds", 0)))
            state = self.state(t)
            first = (t["output"].strip().splitlines() or [state])[0][:200]
            if state == "not graded":
                ET.SubElement(case, "skipped", message=first)
            elif state == "failed":
                f = ET.SubElement(case, "failure", message=first, type=t["extra_data"]["outcome"])
                f.text = t["output"]
            ET.SubElement(case, "system-out").text = "score %g / %g\n%s" % (
                t["score"], t["max_score"], t["output"])

        def count(element, tests):
            element.set("tests", str(len(tests)))
            for attribute, state in (("failures", "failed"), ("skipped", "not graded")):
                element.set(attribute, str(sum(1 for t in tests if self.state(t) == state)))

        for ex, suite in by_exercise.items():
            count(suite, [t for t in self.tests if t["extra_data"]["exercise"] == ex])
        count(suites, self.tests)
        return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"




class Entry:
    """One entry of an exercise before the exercise's rules are applied: a measured violation
    (host work, extra memory, a memory error, the wrong technique) can still zero it."""

    def __init__(self, exercise, kind, name, points, outcome, output, gtest=None,
                 visibility="visible", gpu=False, seconds=None, **extra):
        self.exercise, self.kind, self.name, self.points = exercise, kind, name, points
        self.outcome, self.output, self.gtest = outcome, output, gtest
        self.visibility, self.gpu, self.seconds, self.extra = visibility, gpu, seconds, extra

    @property
    def passed(self):
        return self.outcome == "passed"

    def zero(self, reason):
        if self.outcome == NOT_GRADED:
            return
        if self.passed:
            self.output = "0 points: %s\n(what this entry checks on its own passed: %s)" % (
                reason, self.output)
            self.outcome = "zeroed"
        else:
            self.output += "\nAlso: %s" % reason
