"""Link faults: what one lost byte costs in time, and what the plain MLPerf dialect lets through (issue 22).

Runs the real posix firmware (posix-sim) behind the serial proxy of tests/test_fault_injection.py.

1. **One lost byte** (items 1 and 9): ``verify`` of 4 inputs (the device part of
   ``edgebench verify --count 4``: upload, eb-infer, eb-output per input, then the host's
   reference kernels) with exactly one byte dropped, host to device or device to host, at
   ``--positions`` positions spread over the whole exchange; once on a fresh client (the
   model's first inference: nothing known of its speed) and once on a client that has run
   the model (later calls). Also a bench-style ``run()`` (eb-infer of up to 32 inferences per
   call). Reported: the clean time (median of 5), the largest extra time of any trial, trials
   more than 5 s over their clean time, and the outcome (correct, failed loudly, wrong).
2. **Plain MLPerf Tiny dialect** (item 6): ``--calls`` ``infer N 0`` through a link that flips
   (rate r) and drops (r/4) device-to-host bytes, each window checked by
   :class:`edgebench.mcu.dialect.WindowCheck` (host clock over the exchange, the run's other
   windows) and measured again when it fails; every accepted window is compared with the
   timestamps the device really sent (the proxy's log before faults). The same calls without
   the check are the baseline.

3. **Random faults** (issue 29): ``--fault-calls`` calls per kind (``--kinds`` lost, flipped, inserted
   bytes) and rate, both directions: a cycle of a new session, input uploads, a model upload with
   ``eb-model`` and the input's upload (one call), ``eb-infer 4`` and ``eb-output``; each call's extra time over the median of its kind
   on the clean link, and every accepted answer checked against what the device sent
   (:func:`random_faults`). Goal: no call over 5 s extra, 0 silently wrong. Each call, however many
   steps it has, gets one recovery budget (:class:`edgebench.mcu.link.Recovery`). Printed at the end:
   calls, silently wrong, failed with a clear error (and their fraction), longest and p99 extra wait.
   ``--trace S`` records what each call more than S seconds over its clean time did (requests,
   the recovery clock's start and the moment it was dated to, probes, drains, aborts, resends).

Usage:  python benchmarks/link_faults.py [--positions 40] [--calls 1000] [--fault-calls 1000]
        [--kinds lost,flipped,inserted] [--rates 1e-3,1e-2] [--json FILE]
Goals (issue 22): no call waits more than 5 s longer than its clean time; 0 accepted corrupted
windows in 1,000 calls at 1e-3 per byte. Figures are measured on the posix port (real host CPU,
a pseudo-terminal, no line rate).
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

DIGITS = ROOT / "models" / "digits" / "digits_int8.tflite"
GOAL_EXTRA_S = 5.0


def drop_proxy(url: str):
    """A SerialProxy that drops exactly the k-th byte (from arming) in one direction."""
    from test_fault_injection import SerialProxy

    class DropNth(SerialProxy):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.arm(None, None)

        def arm(self, direction, k) -> None:
            self.direction, self.k, self.count, self.dropped = direction, k, {"h2d": 0, "d2h": 0}, None

        def _faults(self, data: bytes, direction: str) -> bytes:
            start = self.count[direction]
            self.count[direction] += len(data)
            if direction != self.direction or self.k is None or not start <= self.k < start + len(data):
                return data
            i = self.k - start
            self.dropped = data[max(0, i - 12):i + 12]
            return data[:i] + data[i + 1:]

    return DropNth(url)


def lost_bytes(url: str, positions: int, seed: int) -> dict:
    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.connect import open_client
    from edgebench.boards.registry import get_profile
    from edgebench.errors import EdgebenchError
    from edgebench.mcu.board import McuClient
    from edgebench.mcu.protocol import DutClient
    from edgebench.modelfile import read_model

    profile = get_profile("posix-sim")
    model = read_model(DIGITS)
    ref = open_client(get_profile("host"))
    rng = np.random.default_rng(seed)
    out = {}
    try:
        with drop_proxy(url) as proxy:
            warm = McuClient(DutClient(proxy.host_path, timeout_s=5.0), profile)
            warm.hello()
            warm.deploy(model, force=False)

            def call(kind: str, k_seed: int):
                if kind == "verify, first call":
                    client = McuClient(warm.dut, profile)         # a new client on the same port: nothing known
                    return lambda: run_verify(DIGITS, profile, VerifyOptions(count=4, seed=k_seed), client=client,
                                              reference_client=ref).bit_exact
                if kind == "verify, later call":
                    return lambda: run_verify(DIGITS, profile, VerifyOptions(count=4, seed=k_seed), client=warm,
                                              reference_client=ref).bit_exact

                def bench_run():
                    warm.load(warm.ensure_model(model))
                    warm.set_inputs(np.random.default_rng(k_seed).random((4, 8, 8, 1), dtype=np.float32))
                    header, _ = warm.run("single-stream", count=128, max_time_s=30)
                    return header["n"] == 128
                return bench_run

            for kind in ("verify, first call", "verify, later call", "bench run, 128 inferences"):
                clean, size = [], {}
                for i in range(5):
                    proxy.arm(None, None)
                    fn = call(kind, i)
                    t0 = time.monotonic()
                    assert fn()
                    clean.append(time.monotonic() - t0)
                    size = dict(proxy.count)
                base = statistics.median(clean)
                row = {"clean_s": round(base, 3), "trials": 0, "correct": 0, "failed_loudly": 0, "wrong": 0,
                       "over_goal": 0, "max_extra_s": 0.0, "worst": None, "errors": {}}
                for direction in ("h2d", "d2h"):
                    for k in sorted(rng.choice(size[direction], size=min(positions, size[direction]), replace=False)):
                        warm.dut.sync()              # a clean start for each trial
                        warm.dut.resync()
                        proxy.arm(direction, int(k))
                        fn = call(kind, int(k))
                        t0 = time.monotonic()
                        try:
                            ok = fn()
                            row["correct" if ok else "wrong"] += 1
                        except EdgebenchError as exc:
                            row["failed_loudly"] += 1
                            key = re.sub(r"\d+", "N", exc.one_line())[:90]
                            row["errors"][key] = row["errors"].get(key, 0) + 1
                        extra = time.monotonic() - t0 - base
                        lost = proxy.dropped
                        proxy.arm(None, None)
                        row["trials"] += 1
                        row["over_goal"] += int(extra > GOAL_EXTRA_S)
                        if extra > row["max_extra_s"]:
                            row["max_extra_s"] = round(extra, 3)
                            row["worst"] = f"{direction} byte {int(k)} (around it: {lost!r})"
                out[kind] = row
                print(f"{kind}: clean {row['clean_s']:.3f} s; {row['trials']} trials with one byte lost: "
                      f"{row['correct']} correct, {row['failed_loudly']} failed loudly, {row['wrong']} wrong; "
                      f"largest extra wait {row['max_extra_s']:.2f} s ({row['worst']}); "
                      f"{row['over_goal']} over {GOAL_EXTRA_S:g} s", flush=True)
            out["link"] = warm.link_report()
            warm.dut.close()
    finally:
        ref.close()
    return out


class CleanLaps:
    """The m-lap-us pairs the device sent, one per ``infer`` it was sent, from the proxy's log of its
    bytes before any fault: the k-th infer command's true window is ``pairs[k]``."""

    def __init__(self, proxy):
        from test_fault_injection import CleanLog

        self.log, self.pairs, self.first = CleanLog(proxy), [], None

    def pair(self, k: int) -> tuple | None:
        deadline = time.monotonic() + 1.0
        while len(self.pairs) <= k and time.monotonic() < deadline:
            for line in self.log.lines():
                m = re.fullmatch(r"m-lap-us-(\d+)", line)
                if m and self.first is None:
                    self.first = int(m.group(1))
                elif m:
                    self.pairs.append((self.first, int(m.group(1))))
                    self.first = None
            if len(self.pairs) <= k:
                time.sleep(0.001)
        return self.pairs[k] if len(self.pairs) > k else None


def plain_windows(url: str, rate: float, calls: int, checked: bool, seed: int, n: int) -> dict:
    """``calls`` windows of ``infer n 0`` through a link damaging device-to-host bytes at ``rate``."""
    from test_fault_injection import SerialProxy

    from edgebench.errors import EdgebenchError
    from edgebench.mcu.dialect import LAP_SLACK_S, LAP_TOLERANCE_S, WindowCheck
    from edgebench.mcu.protocol import DutClient

    bound_s = LAP_TOLERANCE_S + LAP_SLACK_S
    out = {"rate_per_byte": rate, "checked": checked, "calls": calls, "n": n, "accepted": 0,
           "corrupted_accepted": 0, "corrupted_beyond_bound": 0, "bound_s": bound_s, "worst_error_s": 0.0,
           "worst_rel_error": 0.0, "window_s_median": None, "failed_loudly": 0, "errors": {}}
    with SerialProxy(url, seed=seed, corrupt=rate, drop=rate / 4, directions=("d2h",)) as proxy:
        dut = DutClient(proxy.host_path, timeout_s=0.5)
        sent = [0]
        write = dut.link.write

        def counting(data: bytes) -> None:
            sent[0] += data.startswith(b"infer ")
            write(data)

        dut.link.write = counting
        windows = []
        try:
            proxy.enabled = False
            dut.sync()
            dut.db_load(bytes(np.random.default_rng(0).integers(0, 256, 64, dtype=np.uint8)), check=True)
            proxy.enabled = True
            clean = CleanLaps(proxy)
            check = WindowCheck(timing="real")
            t0 = time.monotonic()
            for _ in range(calls):
                try:
                    rep = dut.checked_infer(n, 0, check) if checked else dut.infer(n, 0)
                    elapsed_s = rep.elapsed_us / 1e6
                except EdgebenchError as exc:
                    out["failed_loudly"] += 1
                    key = re.sub(r"\d+", "N", exc.one_line())[:90]
                    out["errors"][key] = out["errors"].get(key, 0) + 1
                    proxy.enabled = False
                    dut.sync()
                    proxy.enabled = True
                    continue
                out["accepted"] += 1
                truth = clean.pair(sent[0] - 1)
                true_s = (truth[1] - truth[0]) / 1e6 if truth else None
                windows.append(true_s or elapsed_s)
                if truth is None or tuple(rep.lap_us) != truth:
                    out["corrupted_accepted"] += 1
                    err = abs(elapsed_s - true_s) if true_s is not None else float("inf")
                    out["corrupted_beyond_bound"] += int(err > bound_s)
                    out["worst_error_s"] = max(out["worst_error_s"], err)
                    if true_s:
                        out["worst_rel_error"] = max(out["worst_rel_error"], round(err / true_s, 4))
            out["elapsed_s"] = round(time.monotonic() - t0, 1)
            out["window_s_median"] = statistics.median(windows) if windows else None
            out["link"] = dut.stats.to_dict()
        finally:
            dut.close()
    out["proxy"] = dict(proxy.stats)
    return out


CYCLE = ("session start", "input upload", "eb-infer 4", "eb-output", "input upload", "eb-infer 4", "eb-output",
         "model upload", "eb-infer 4", "eb-output")
KINDS = {"lost": "drop", "flipped": "corrupt", "inserted": "insert"}


class Trace:
    """``--trace``: what a call did and when (seconds from the call's start): each request and its
    end, the recovery clock's start, probes, drains, aborts, sleeps. The steps are wrapped here, not in
    the library; the trace of a call whose extra wait passes ``--trace`` seconds is kept in the report."""

    WRAPPED = (("edgebench.mcu.protocol", "DutClient", ("request", "_alive", "end_uploads", "resync", "sync")),
               ("edgebench.mcu.dialect", "DialectClient", ("sync",)),
               ("edgebench.mcu.upload", "UploadMixin", ("_upload_once", "_abort", "_resend_one")),
               ("edgebench.mcu.link", "Link", ("drain",)),
               ("edgebench.mcu.link", "Recovery", ("start",)))

    def __init__(self):
        import importlib

        self.t0, self.events, self._saved = time.monotonic(), [], []
        for mod, cls, names in self.WRAPPED:
            klass = getattr(importlib.import_module(mod), cls)
            for name in names:
                fn = klass.__dict__[name]
                self._saved.append((klass, name, fn))
                setattr(klass, name, self._wrap(f"{cls}.{name}", fn))

    def _wrap(self, label: str, fn):
        import functools

        @functools.wraps(fn)
        def traced(obj, *a, **kw):
            if label == "Recovery.start" and obj.started is not None:
                return fn(obj, *a, **kw)
            arg = str(a[0])[:40] if a and isinstance(a[0], str) else ""
            t = time.monotonic()
            try:
                return fn(obj, *a, **kw)
            except Exception as exc:
                arg += f" raised {type(exc).__name__}"
                raise
            finally:
                if label == "Recovery.start" and obj.started is not None:
                    arg = f"at {obj.started - self.t0:.3f}"      # the first sign of trouble it was dated to
                self.events.append((round(t - self.t0, 3), round(time.monotonic() - t, 3), f"{label} {arg}".strip()))
        return traced

    def restart(self) -> None:
        self.t0, self.events = time.monotonic(), []

    def close(self) -> None:
        for klass, name, fn in self._saved:
            setattr(klass, name, fn)


def random_faults(url: str, kind: str, rate: float, calls: int, seed: int, stop_at: float | None = None,
                  trace_over_s: float | None = None) -> dict:
    """``calls`` edgebench calls (the :data:`CYCLE`: a new session, uploads of an input and of the model,
    eb-infer, eb-output) through a link that loses, flips or inserts bytes (``kind``) at ``rate`` per
    byte in both directions. Each call's time is compared with the median of its kind on the clean
    link; every accepted answer is checked: the output bytes against the device's true output for the
    loaded input, the eb-infer timings against what the device sent (the proxy's log before faults).
    A call that fails loudly is followed by a clean-link restore (not timed), so later calls are judged."""
    from test_fault_injection import CleanTicks, SerialProxy

    from edgebench.boards.registry import get_profile
    from edgebench.errors import EdgebenchError
    from edgebench.mcu.board import McuClient
    from edgebench.mcu.protocol import DutClient
    from edgebench.modelfile import read_model

    profile = get_profile("posix-sim")
    model = read_model(DIGITS)
    rng = np.random.default_rng(seed)
    inputs = [bytes(rng.integers(-128, 128, 64, dtype=np.int8)) for _ in range(3)]
    row = {"kind": kind, "rate_per_byte": rate, "calls": 0, "correct": 0, "failed_loudly": 0, "silently_wrong": 0,
           "over_goal": 0, "max_extra_s": 0.0, "worst": None, "errors": {}, "by_call": {}}
    with SerialProxy(url, seed=seed, directions=("h2d", "d2h"), **{KINDS[kind]: rate}) as proxy:
        state = {"client": None, "input": None}

        def new_session():
            if state["client"] is not None:
                state["client"].dut.close()
            state["client"] = McuClient(DutClient(proxy.host_path, timeout_s=5.0), profile)
            state["client"].hello()

        def restore():
            proxy.enabled = False
            try:
                new_session()
                c = state["client"]
                c.deploy(model, force=False)
                c.dut.upload("input", inputs[0])
                c.dut.eb_infer(1, 0)
                state["input"] = 0
            finally:
                proxy.enabled = True

        proxy.enabled = False
        new_session()
        c = state["client"]
        c.deploy(model, force=True)
        truth = []
        for x in inputs:
            c.dut.upload("input", x)
            c.dut.eb_infer(1, 0)
            truth.append(c.dut.output())
        restore()
        ticks = CleanTicks(proxy)

        def one(name: str, i: int) -> bool:
            c = state["client"]
            if name == "session start":
                new_session()
                return True
            if name == "input upload":
                j = i % len(inputs)
                state["input"] = None
                c._upload("input", inputs[j])
                state["input"] = j
                return True
            if name == "model upload":
                state["input"] = None         # a new upload of the model empties nothing else, but reload it
                with c.dut.call():            # the deploy and the input's upload: one call, one recovery budget
                    c.deploy(model, force=True)
                    c.dut.upload("input", inputs[0])
                state["input"] = 0
                return True
            if name == "eb-infer 4":
                got = c.dut.eb_infer(4, 0)["ticks"]
                return got == ticks.get(c.dut.last_seq)
            out = c.dut.output()
            return state["input"] is not None and out == truth[state["input"]]

        proxy.enabled = False
        clean: dict = {}
        for _rep in range(3):
            for i, name in enumerate(CYCLE):
                t0 = time.monotonic()
                assert one(name, i), f"clean {name} wrong"
                clean.setdefault(name, []).append(time.monotonic() - t0)
        base = {k: statistics.median(v) for k, v in clean.items()}
        proxy.enabled = True
        t_all = time.monotonic()
        extras: list = []
        trace = Trace() if trace_over_s is not None else None
        for i in range(calls):
            if stop_at is not None and time.monotonic() > stop_at:
                row["stopped_early"] = f"--max-seconds reached after {i} calls"
                break
            name = CYCLE[i % len(CYCLE)]
            if trace is not None:
                trace.restart()
            t0 = time.monotonic()
            try:
                ok = one(name, i)
                row["correct" if ok else "silently_wrong"] += 1
                if not ok:
                    row.setdefault("wrong_calls", []).append(
                        {"call": i, "name": name, "seq": state["client"].dut.last_seq, "input": state["input"]})
                failed = False
            except EdgebenchError as exc:
                row["failed_loudly"] += 1
                key = f"{name}: " + re.sub(r"\d+", "N", exc.one_line())[:100]
                row["errors"][key] = row["errors"].get(key, 0) + 1
                failed = True
            extra = time.monotonic() - t0 - base[name]
            extras.append(extra)
            by = row["by_call"].setdefault(name, {"calls": 0, "max_extra_s": 0.0})
            by["calls"] += 1
            by["max_extra_s"] = round(max(by["max_extra_s"], extra), 3)
            row["calls"] += 1
            row["over_goal"] += int(extra > GOAL_EXTRA_S)
            if extra > row["max_extra_s"]:
                row["max_extra_s"], row["worst"] = round(extra, 3), f"call {i} ({name})"
            if trace is not None and extra > trace_over_s:
                row.setdefault("traces", []).append({"call": i, "name": name, "extra_s": round(extra, 3),
                                                     "failed": failed, "events": list(trace.events)})
                print(f"  trace of call {i} ({name}, {extra:.2f} s extra, {'failed' if failed else 'ok'}): "
                      + "; ".join(f"{t:.2f}+{d:.2f} {what}" for t, d, what in trace.events[-25:]),
                      file=sys.stderr, flush=True)
            if failed:
                restore()
            if (i + 1) % 100 == 0:
                print(f"  {kind} {rate:g}: {i + 1} calls, {row['failed_loudly']} failed, {row['silently_wrong']} "
                      f"wrong, max extra {row['max_extra_s']:.2f} s, p99 {np.percentile(extras, 99):.2f} s",
                      file=sys.stderr, flush=True)
        if trace is not None:
            trace.close()
        row["elapsed_s"] = round(time.monotonic() - t_all, 1)
        row["p99_extra_s"] = round(float(np.percentile(extras, 99)), 3) if extras else None
        row["failed_fraction"] = round(row["failed_loudly"] / max(row["calls"], 1), 4)
        row["clean_s"] = {k: round(v, 4) for k, v in base.items()}
        row["link"] = state["client"].dut.stats.to_dict()
        state["client"].dut.close()
    row["proxy"] = dict(proxy.stats)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=40, help="lost-byte positions per direction and case")
    ap.add_argument("--calls", type=int, default=1000, help="plain-dialect infer calls per rate")
    ap.add_argument("--rates", default="1e-3,1e-2")
    ap.add_argument("--fault-calls", type=int, default=1000,
                    help="calls per kind (lost, flipped, inserted bytes) and rate of the random-fault runs; 0: none")
    ap.add_argument("--kinds", default="lost,flipped,inserted")
    ap.add_argument("--window-n", type=int, default=200, help="inferences per plain-dialect window (infer N 0)")
    ap.add_argument("--max-seconds", type=float, help="stop the random-fault calls after this long (fewer calls, said so)")
    ap.add_argument("--trace", type=float, metavar="SECONDS",
                    help="keep a trace of each random-fault call more than this many seconds over its clean time")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args()

    from test_fault_injection import deploy_digits

    from edgebench.boards.registry import get_profile
    from edgebench.mcu.firmware import FirmwareSession, build_firmware

    stop_at = time.monotonic() + args.max_seconds if args.max_seconds else None
    image = build_firmware("posix")
    report = {"what": "measured on posix-sim (the firmware core on the host CPU, pseudo-terminal link)",
              "lost_byte": None, "random_faults": [], "plain_dialect": []}
    with FirmwareSession(get_profile("posix-sim"), image=image) as session:
        deploy_digits(session.url)
        if args.positions:
            report["lost_byte"] = lost_bytes(session.url, args.positions, seed=1)
        for rate in [float(r) for r in args.rates.split(",") if r] if args.fault_calls else []:
            for kind in [k for k in args.kinds.split(",") if k]:
                row = random_faults(session.url, kind, rate, args.fault_calls, seed=int(rate * 1e5) + len(kind),
                                    stop_at=stop_at, trace_over_s=args.trace)
                report["random_faults"].append(row)
                print(f"random faults, {kind} bytes at {rate:g}/byte both ways: {row['calls']} calls "
                      f"({row['elapsed_s']} s), {row['correct']} correct, {row['failed_loudly']} failed loudly, "
                      f"{row['silently_wrong']} silently wrong; largest extra wait {row['max_extra_s']:.2f} s "
                      f"({row['worst']}), {row['over_goal']} over {GOAL_EXTRA_S:g} s; proxy {row['proxy']}; "
                      f"errors {row['errors']}", flush=True)
        for rate in [float(r) for r in args.rates.split(",") if r] if args.calls else []:
            for checked in (False, True):
                row = plain_windows(session.url, rate, args.calls, checked, seed=int(rate * 1e5) + checked,
                                    n=args.window_n)
                report["plain_dialect"].append(row)
                print(f"plain dialect, d2h {rate:g}/byte, {'with' if checked else 'without'} window checks, "
                      f"infer {row['n']} 0 (windows ~{(row['window_s_median'] or 0) * 1e3:.2f} ms): {row['calls']} "
                      f"calls, {row['accepted']} windows accepted, {row['corrupted_accepted']} of them differ from "
                      f"the device's ({row['corrupted_beyond_bound']} by more than {row['bound_s'] * 1e3:g} ms; "
                      f"worst {row['worst_error_s'] * 1e3:.3g} ms, {row['worst_rel_error']:.2%}), "
                      f"{row['failed_loudly']} failed loudly, {row['link']['retries']} windows measured again "
                      f"({row['elapsed_s']} s)", flush=True)
    if report["random_faults"]:
        print("\n| fault | calls | silently wrong | failed with a clear error | longest extra wait | p99 extra wait |")
        print("|---|---|---|---|---|---|")
        for r in report["random_faults"]:
            print(f"| {r['kind']}, {r['rate_per_byte']:g} | {r['calls']:,} | {r['silently_wrong']} | "
                  f"{r['failed_loudly']} ({r['failed_fraction']:.1%}) | {r['max_extra_s']:.2f} s | "
                  f"{r['p99_extra_s']:.2f} s |")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=str))
    over = sum(r["over_goal"] + r["wrong"] for k, r in (report["lost_byte"] or {}).items() if k != "link")
    over += sum(r["over_goal"] + r["silently_wrong"] for r in report["random_faults"])
    bad = sum(r["corrupted_accepted"] for r in report["plain_dialect"] if r["checked"] and r["rate_per_byte"] <= 1e-3)
    return 0 if over == 0 and bad == 0 else 2


if __name__ == "__main__":
    sys.exit(main())
