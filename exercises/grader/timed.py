"""The timed runs (a part of grade.Grader; Python standard library only): chained, masked calls
(judge/protocol.hpp) against the course's own kernel, on the public size and a random one, timed
from outside; what they measure and decide: exercises/INSTRUCTORS.md, step 7 of "What happens to
a submission"."""

import json
import secrets
import time

from results import NOT_GRADED
from runs import MIB, MemoryMonitor, Nvml
from tools import tail


class TimedMixin:

    def timed_run(self, binary, number, rows, cols, spec, monitor=None, reps=None):
        item = "speed %d %d %d %d" % (rows, cols, secrets.randbits(62), reps or spec["reps"])
        key = secrets.randbits(64)

        def handshake():
            if monitor:
                monitor.mark_ready()
            return "go %016x\n" % key

        ran, verdicts, note = self.run_plan(binary, number, [item],
                                            self.time_left(self.timeouts["speed"]),
                                            handshake=handshake, monitor=monitor, key=key)
        v = verdicts[0] if verdicts else {"ok": False, "message": "no verdict", "item": 0}
        timing = dict(kv.split("=", 1) for kv in v.get("timing", "").split() if "=" in kv)
        wall = ran.exit_time - ran.go_time if ran.go_time and ran.exit_time else None
        return {"ran": ran, "verdict": v, "note": note, "item": item, "wall": wall,
                "busy": monitor.busy() if monitor else "",
                "cpu": ran.cpu, "timing": timing, "shape": "%d x %d" % (rows, cols),
                "ready_used": monitor.ready_used if monitor else None,
                "peak": monitor.peak if monitor else None,
                "samples": monitor.samples if monitor else 0}

    def probe(self, in_place, rows, cols, spec, monitor, reps=None):
        """The course's own kernel timed the same way, right before the submission's run it is
        compared with: both see the machine as it is at that moment (a neighbour's build, a busy
        disk), never one a quiet moment and the other a busy one."""
        binary = self.build / "bin" / ("grader_probe_inplace" if in_place else "grader_probe")
        result = self.timed_run(binary, 3 if in_place else 1, rows, cols, spec, monitor, reps)
        if not result["verdict"].get("ok") or result["wall"] is None:
            raise RuntimeError("the course's own kernel failed its timed run: %s\n%s" % (
                result["verdict"].get("message"), tail(result["ran"].output, 2000)))
        return result

    def memory_monitor(self):
        if self.nvml is None and not self.nvml_why:
            try:
                self.nvml = Nvml()
            except (OSError, AttributeError) as err:
                self.nvml_why = "NVML (libnvidia-ml.so.1, part of the driver) is not usable: %s" \
                    % err
        return MemoryMonitor(self.nvml) if self.nvml else None

    def timed_shapes(self, spec, in_place):
        """The public shape, and one drawn now: unaligned, large enough that a second buffer
        passes the memory slack and host work shows in the CPU time."""
        public = (spec["size"], spec["size"]) if in_place else (spec["rows"], spec["cols"])
        low, high = spec["random_sides"]
        return [public, self.random_shape(low, high, in_place)]

    @staticmethod
    def reps_for(spec, shape, public):
        """Chained calls on @p shape: as many as move the public size's bytes, so that a smaller
        shape's loop is as long as the public one's and stands as far above the noise of a run's
        start and end (odd, like the manifest's, so an out-of-place chain ends transposed)."""
        area, full = shape[0] * shape[1], public[0] * public[1]
        reps = max(spec["reps"], -(-spec["reps"] * full // max(1, area)))
        return reps if reps % 2 else reps + 1

    @staticmethod
    def timed_estimate(spec, pairs):
        """What the rounds of one shape say: (ratio, steady, loop_ms, probe_ms): the best of the
        rounds, trusted (steady) when the two best runs of each kernel agree more closely than
        the distance from the limit (why: INSTRUCTORS.md, step 7). A single run never decides."""
        done = [(b, s) for b, s in pairs if s["wall"] is not None and not s["ran"].timed_out]
        if not done:
            return None, len(pairs) > 0, None, None
        probe_ms = min(float(b["timing"].get("loop_ms", "0") or 0) for b, _ in done) or 1e-3
        base = sorted(b["wall"] for b, _ in done)
        sub = sorted(s["wall"] for _, s in done)
        loop_ms = max(probe_ms * 0.05, probe_ms + (sub[0] - base[0]) * 1000)
        ratio = loop_ms / probe_ms
        if len(done) < max(2, spec.get("rounds", 2)):
            return ratio, False, loop_ms, probe_ms
        spread_ms = ((sub[1] - sub[0]) + (base[1] - base[0])) * 1000
        margin_ms = abs(ratio - spec["max_ratio"]) * probe_ms
        return ratio, spread_ms * 2 < margin_ms, loop_ms, probe_ms

    def run_timed(self, ex, number, binary, timed, gates):
        spec = dict(self.m["speed"], **ex.get("speed", {}))
        in_place = ex.get("in_place", False)
        if not self.gpu or self.args.no_speed:
            why = self.no_gpu_why if not self.gpu else "the timed run was turned off (--no-speed)"
            return [self.not_graded_entry(ex, e, why) for e in timed]
        if not self.gpu_test_passed:
            return [self.entry(ex, e, "not_run", "not run: no GPU test of this exercise passed")
                    for e in timed]
        shapes = self.timed_shapes(spec, in_place)
        most = max(2, spec.get("max_rounds", 4))
        runs, busy = [], ""
        for rows, cols in shapes:
            reps = self.reps_for(spec, (rows, cols), shapes[0])

            def course():
                return self.probe(in_place, rows, cols, spec, self.memory_monitor(), reps)

            def theirs():
                return self.timed_run(binary, number, rows, cols, spec, self.memory_monitor(), reps)
            # Rounds of the course's kernel and the submission's, each pair run together, until
            # the estimate is steady (timed_estimate). Every other round the submission runs
            # first: whatever the machine does to the second run of a pair (its output written
            # right after the first's) falls on both alike. Another process on the device makes
            # a round say nothing: it is run again (after a pause), then the entries say the GPU
            # was busy. Never a failure for it.
            pairs, tries = [], 0
            while len(pairs) < most and not self.out_of_time(ex):
                if len(pairs) % 2:
                    sub, base = theirs(), course()
                else:
                    base, sub = course(), theirs()
                if base["busy"] or sub["busy"]:
                    busy = base["busy"] or sub["busy"]
                    tries += 1
                    if tries > self.busy_retries:
                        break
                    time.sleep(self.busy_pause_s)
                    continue
                busy = ""
                pairs.append((base, sub))
                if not sub["verdict"].get("ok") or self.timed_estimate(spec, pairs)[1]:
                    break
            if busy:
                break
            runs.append(pairs)
            if not pairs or not pairs[-1][1]["verdict"].get("ok") or self.out_of_time(ex):
                break
        if busy:
            why = "the GPU was busy: %s (run again %d times); grade it when the GPU is free" % (
                busy, self.busy_retries)
            self.r.notes.append("Not graded because the GPU was busy: " + busy)
            return [self.not_graded_entry(ex, e, why) for e in timed]
        return self.timed_entries(ex, timed, spec, [p for p in runs if p], gates)

    def describe_timed(self, spec, pairs):
        base, sub = pairs[-1]
        ratio, steady, loop_ms, probe_ms = self.timed_estimate(spec, pairs)
        roundtrip = float(base["timing"].get("roundtrip_ms", "0") or 0)
        reps = int(sub["item"].split()[4])
        text = ("%d chained calls on %s, each output masked before the next: %s (the course's "
                "tiled kernel: %.0f ms%s; the best of %d %s of each). CPU time of everything your "
                "code ran: %.2f s (the course's kernel: %.2f s)."
                % (reps, sub["shape"], "about %.0f ms, %.1f times the course's kernel"
                   % (loop_ms, ratio) if loop_ms is not None else "no time: it did not finish",
                   probe_ms or 0, ", a round trip of the matrix through the host %.0f ms"
                   % roundtrip if roundtrip else "", len(pairs),
                   "run" if len(pairs) == 1 else "runs", max(s["cpu"] for _, s in pairs),
                   min(b["cpu"] for b, _ in pairs)))
        # Each round's times from the go to the exit, so a report shows what the verdict saw.
        text += " Rounds, go to exit: the course's kernel %s s, yours %s s." % tuple(
            " ".join("%.3f" % r[k]["wall"] if r[k]["wall"] is not None else "-" for r in pairs)
            for k in (0, 1))
        return text, ratio, steady

    def timed_entries(self, ex, timed, spec, runs, gates):
        """@p runs: per shape, its rounds [(the course's run, the submission's run)]. What the
        exercise forbids (host work, a second buffer) is checked on every round; the speed is
        the steady estimate of the rounds, or no verdict."""
        texts, ratios, unsteady, host, extra = [], [], [], [], []
        for pairs in runs:
            text, ratio, steady = self.describe_timed(spec, pairs)
            texts.append(text)
            ratios.append(ratio)
            if not steady:
                unsteady.append(pairs[-1][1]["shape"])
            for base, sub in pairs:
                excess = sub["cpu"] - base["cpu"]
                if excess > spec["host_cpu_s"]:
                    host.append("%.1f s of CPU time more than the course's kernel on %s"
                                % (excess, sub["shape"]))
                    break
            for base, sub in pairs:
                if sub["ready_used"] is not None and base["ready_used"] is not None:
                    before = (sub["ready_used"] - base["ready_used"]) / MIB
                    during = ((sub["peak"] - sub["ready_used"]) -
                              (base["peak"] - base["ready_used"])) / MIB
                    extra.append((sub["shape"], before, during, sub["samples"]))
                else:
                    extra.append(None)
        if host:
            gates.append(("exercise", "the timed runs used %s doing the same work on the GPU: "
                                      "the transposes were done on the host, not by a kernel"
                          % "; ".join(host)))
        measured = "\n".join(texts)
        subs = [sub for pairs in runs for _, sub in pairs]
        out = []
        for e in timed:
            seconds = sum(s["ran"].seconds for s in subs)
            if e["kind"] == "speed":
                bad = next((sub for sub in subs if not sub["verdict"].get("ok")), None)
                if bad is not None:
                    v = bad["verdict"]
                    text, outcome = (v["message"], "failed") if not v.get("missing") else \
                        self.describe_stop(bad["ran"], bad["item"])
                    out.append(self.entry(ex, e, outcome, text + "\n" + measured,
                                          seconds=seconds))
                    continue
                if unsteady and not host:
                    # The machine disturbed the runs more than the verdict can bear: no point is
                    # lost for it, and a regrade on a quieter machine gives the verdict.
                    why = ("retry: the timed runs on %s varied more than the verdict can bear "
                           "(the machine was busy); grade this exercise again" % ", ".join(unsteady))
                    out.append(self.entry(ex, e, NOT_GRADED, "not graded: %s\n%s" % (
                        why, measured), reason=why, seconds=seconds))
                    continue
                fast = all(r is not None and r <= spec["max_ratio"] for r in ratios)
                verdict = "passed" if fast and not host else "failed"
                why = "" if verdict == "passed" else (
                    "\nThe work was done on the host." if host else
                    "\nAt most %g times the course's kernel passes." % spec["max_ratio"])
                out.append(self.entry(ex, e, verdict, measured + why, ratio=ratios[0],
                                      seconds=seconds))
            elif None in extra or not extra:
                out.append(self.not_graded_entry(ex, e, self.nvml_why or
                                                 "the timed run did not start"))
            else:
                slack = spec["memory_slack_mib"]
                shown = {}
                for s, b, d, n in extra:  # the worst round of each shape is shown
                    if s not in shown or max(b, d) > max(shown[s][0], shown[s][1]):
                        shown[s] = (b, d, n)
                text = "\n".join("device memory in use on %s, sampled %d times: %+.0f MiB against "
                                 "the course's in-place kernel before the first call, %+.0f MiB "
                                 "more while the calls ran (the most of %d %s)"
                                 % (s, n, b, d, len(extra), "run" if len(extra) == 1 else "runs")
                                 for s, (b, d, n) in shown.items()) + \
                    " (at most %d MiB more passes)." % slack
                worst = max(max(b, d) for _, b, d, _ in extra)
                if worst > slack:
                    gates.append(("exercise", "the in-place transpose used %.0f MiB of device "
                                              "memory beyond the matrix: a second buffer" % worst))
                    out.append(self.entry(ex, e, "failed", text + "\nIn place means no second "
                                          "buffer.", seconds=seconds))
                else:
                    out.append(self.entry(ex, e, "passed", text, seconds=seconds))
        return out
