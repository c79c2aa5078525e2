"""The report's sections by kind (edgebench/report/sections/) read the typed run record: a verify, a
self-test and a sweep run render their own figures, and a run that lacks a section renders nothing
for it rather than failing (an absent section reads as an empty one)."""
from __future__ import annotations

from edgebench.report import html
from edgebench.report.sections import accuracy, energy, points, selftest, soak, verify
from edgebench.report.sections.base import RunData
from edgebench.results.model import RunResult


def _run(kind: str, **sections) -> RunResult:
    r = RunResult(run_id=f"{kind}1", created_utc="2026-01-01T00:00:00+00:00", kind=kind, status="complete")
    r.model = {"name": "digits_int8", "precision": "int8"}
    r.board = {"name": "qemu-m4"}
    for name, value in sections.items():
        setattr(r, name, value)
    return r


def test_verify_says_how_many_bytes_differ_and_whether_the_gate_holds():
    r = _run("verify", extra={"verify": {
        "bit_exact": False, "device": {"kernels": "cmsis-nn"}, "reference": {"kernels": "reference", "where": "host"},
        "gate": {"applies": True, "passed": False, "rule": "the profile promises bit-exact outputs"},
        "outputs": [{"name": "logits", "bytes": 1000, "differing_bytes": 3, "samples": 100, "differing_samples": 2,
                     "max_diff_lsb": 1, "top1_agreement": 1.0}]}})
    out = verify.html(RunData(r))
    assert "3 of 1,000" in out and "2 of 100" in out and "1 LSB" in out
    assert "NOT bit-exact: the profile promises bit-exact outputs" in out
    assert "reference kernels, host" in out


def test_selftest_lists_each_check_and_its_notes():
    r = _run("selftest", extra={"selftest": {"checks": [{"name": "protocol", "status": "pass", "summary": "ok"},
                                                        {"name": "clock", "status": "fail", "summary": "drifts"}],
                                             "notes": ["the counter wraps every 71 s"]}})
    out = selftest.html(RunData(r))
    assert out.index("protocol") < out.index("clock") and "drifts" in out
    assert "note: the counter wraps every 71 s" in out


def test_a_sweep_has_a_row_per_point_with_its_energy_label():
    r = _run("sweep", extra={"points": [
        {"id": "p1", "name": "duty 0.5", "throughput_per_s": 100.0, "latency": {"median_s": 0.005},
         "steady_temp_c": 61.0, "throttled": False, "steady": True,
         "energy": {"per_inference_j": 0.002, "label": "simulated"}},
        {"id": "p2", "name": "duty 1", "throughput_per_s": 200.0, "latency": {"median_s": 0.005},
         "throttled": True}]})
    out = points.html(RunData(r, images={"sweep plot a.png": b"\x89PNG"}))
    assert "duty 0.5" in out and "2 mJ (simulated)" in out and "61 °C" in out
    assert out.count("<tr>") == 3 and 'alt="sweep plot a.png"' in out


def test_a_run_without_a_section_renders_nothing_for_it():
    r = _run("bench")
    d = RunData(r)
    assert [f(d) for f in (verify.html, selftest.html, soak.html, accuracy.html, energy.html)] == [""] * 5
    page = html.render_html([RunData(_run(kind)) for kind in ("verify", "selftest", "sweep", "profile",
                                                               "layer-error", "soak", "accuracy", "energy")],
                            report=_NoVerdicts())
    assert page.count("no figures in this run") == 7        # the sweep's (empty) table is drawn


class _NoVerdicts:
    verdicts: list = []
    counts: dict = {}
