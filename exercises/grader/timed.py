"""The timed runs (a part of grade.Grader; Python standard library only): what an exercise
forbids, measured from outside, on the public size and on a random, unaligned one drawn at
grading time, each against the course's own kernel doing the same in the same sandbox.

A timed run chains REPS calls, each output masked before the next with a key sent only when the
clock starts (judge/protocol.hpp), so every transpose must really happen, on whatever does it.
From outside the grader measures its wall time (speed), the CPU time of every process it ran
(work on the host) and, in place, the device memory in use (a second buffer)."""

import json
import secrets
import time

from results import Entry
from runs import MIB, MemoryMonitor, Nvml
from tools import tail


class TimedMixin:

    def timed_run(self, binary, number, rows, cols, spec, monitor=None):
        item = "speed %d %d %d %d" % (rows, cols, secrets.randbits(62), spec["reps"])
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

    def probe(self, in_place, rows, cols, spec, monitor):
        """The course's own kernel timed the same way: once per grading, per shape (a run that
        shared the GPU with another process is not kept)."""
        key = (in_place, rows, cols, json.dumps(spec, sort_keys=True))
        if key not in self.probe_cache:
            binary = self.build / "bin" / ("grader_probe_inplace" if in_place else "grader_probe")
            result = self.timed_run(binary, 3 if in_place else 1, rows, cols, spec, monitor)
            if not result["verdict"].get("ok") or result["wall"] is None:
                raise RuntimeError("the course's own kernel failed its timed run: %s\n%s" % (
                    result["verdict"].get("message"), tail(result["ran"].output, 2000)))
            if result["busy"]:
                return result
            self.probe_cache[key] = result
        return self.probe_cache[key]

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

    def run_timed(self, ex, number, binary, timed, gates):
        spec = dict(self.m["speed"], **ex.get("speed", {}))
        in_place = ex.get("in_place", False)
        if not self.gpu or self.args.no_speed:
            why = self.no_gpu_why if not self.gpu else "the timed run was turned off (--no-speed)"
            return [self.not_graded_entry(ex, e, why) for e in timed]
        if not self.gpu_test_passed:
            return [Entry(ex["id"], self.kind_tag(e), "%s | %s" % (ex["title"], e["title"]),
                          e["points"], "not_run", "not run: no GPU test of this exercise passed",
                          gtest=e["name"], gpu=True) for e in timed]
        runs, busy = [], ""
        for rows, cols in self.timed_shapes(spec, in_place):
            # Another process on the device makes a run's time and memory say nothing: the pair
            # is run again (after a pause), then the entries say the GPU was busy. Never a
            # failure for it.
            for attempt in range(1 + self.busy_retries):
                if attempt:
                    time.sleep(self.busy_pause_s)
                base = self.probe(in_place, rows, cols, spec, self.memory_monitor())
                sub = self.timed_run(binary, number, rows, cols, spec, self.memory_monitor())
                busy = base["busy"] or sub["busy"]
                if not busy or self.out_of_time(ex):
                    break
            if busy:
                break
            runs.append((base, sub))
            if not sub["verdict"].get("ok") or self.out_of_time(ex):
                break
        if busy:
            why = "the GPU was busy: %s (run again %d times); grade it when the GPU is free" % (
                busy, self.busy_retries)
            self.r.notes.append("Not graded because the GPU was busy: " + busy)
            return [self.not_graded_entry(ex, e, why) for e in timed]
        return self.timed_entries(ex, timed, spec, runs, gates)

    def describe_timed(self, spec, base, sub):
        probe_loop = float(base["timing"].get("loop_ms", "0") or 0) or 1e-3
        roundtrip = float(base["timing"].get("roundtrip_ms", "0") or 0)
        if sub["ran"].timed_out or sub["wall"] is None:
            loop_ms = ratio = None
        else:
            loop_ms = max(probe_loop * 0.05, probe_loop + (sub["wall"] - base["wall"]) * 1000)
            ratio = loop_ms / probe_loop
        text = ("%d chained calls on %s, each output masked before the next: about %s (the "
                "course's tiled kernel: %.0f ms%s). CPU time of everything your code ran: %.2f s "
                "(the course's kernel: %.2f s)."
                % (spec["reps"], sub["shape"], "%.0f ms, %.1f times the course's kernel"
                   % (loop_ms, ratio) if loop_ms is not None else "no time: it did not finish",
                   probe_loop, ", a round trip of the matrix through the host %.0f ms" % roundtrip
                   if roundtrip else "", sub["cpu"], base["cpu"]))
        return text, ratio

    def timed_entries(self, ex, timed, spec, runs, gates):
        texts, ratios, host, extra = [], [], [], []
        for base, sub in runs:
            text, ratio = self.describe_timed(spec, base, sub)
            texts.append(text)
            ratios.append(ratio)
            excess = sub["cpu"] - base["cpu"]
            if excess > spec["host_cpu_s"]:
                host.append("%.1f s of CPU time more than the course's kernel on %s"
                            % (excess, sub["shape"]))
            if sub["ready_used"] is not None and base["ready_used"] is not None:
                before = (sub["ready_used"] - base["ready_used"]) / MIB
                during = ((sub["peak"] - sub["ready_used"]) -
                          (base["peak"] - base["ready_used"])) / MIB
                extra.append((sub["shape"], before, during, sub["samples"]))
        if host:
            gates.append(("exercise", "the timed runs used %s doing the same work on the GPU: "
                                      "the transposes were done on the host, not by a kernel"
                          % "; ".join(host)))
        measured = "\n".join(texts)
        out = []
        for e in timed:
            name = "%s | %s" % (ex["title"], e["title"])
            common = dict(gtest=e["name"], gpu=True,
                          seconds=sum(sub["ran"].seconds for _, sub in runs))
            if e["kind"] == "speed":
                bad = next((sub for _, sub in runs if not sub["verdict"].get("ok")), None)
                if bad is not None:
                    v = bad["verdict"]
                    text, outcome = (v["message"], "failed") if not v.get("missing") else \
                        self.describe_stop(bad["ran"], bad["item"])
                    out.append(Entry(ex["id"], "speed", name, e["points"], outcome,
                                     text + "\n" + measured, **common))
                    continue
                fast = all(r is not None and r <= spec["max_ratio"] for r in ratios)
                verdict = "passed" if fast and not host else "failed"
                why = "" if verdict == "passed" else (
                    "\nThe work was done on the host." if host else
                    "\nAt most %g times the course's kernel passes." % spec["max_ratio"])
                out.append(Entry(ex["id"], "speed", name, e["points"], verdict, measured + why,
                                 ratio=ratios[0], **common))
            elif len(extra) < len(runs) or not extra:
                out.append(self.not_graded_entry(ex, e, self.nvml_why or
                                                 "the timed run did not start"))
            else:
                slack = spec["memory_slack_mib"]
                text = "\n".join("device memory in use on %s, sampled %d times: %+.0f MiB against "
                                 "the course's in-place kernel before the first call, %+.0f MiB "
                                 "more while the calls ran" % (s, n, b, d)
                                 for s, b, d, n in extra) + \
                    " (at most %d MiB more passes)." % slack
                worst = max(max(b, d) for _, b, d, _ in extra)
                if worst > slack:
                    gates.append(("exercise", "the in-place transpose used %.0f MiB of device "
                                              "memory beyond the matrix: a second buffer" % worst))
                    out.append(Entry(ex["id"], "memory", name, e["points"], "failed",
                                     text + "\nIn place means no second buffer.", **common))
                else:
                    out.append(Entry(ex["id"], "memory", name, e["points"], "passed", text,
                                     **common))
        return out
