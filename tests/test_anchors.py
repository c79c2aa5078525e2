"""The published MLPerf Tiny anchors (edgebench.mcu.anchors): one table, the code's, which
docs/mlperf-tiny.md repeats; the comparison `bench --mlperf` stores and prints."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from edgebench.mcu.anchors import ANCHORS, compare, lines

DOC = Path(__file__).resolve().parents[1] / "docs" / "mlperf-tiny.md"
ROW = re.compile(r"^\| (?P<title>[^|(]+) \((?P<macs>[\d.]+) M\) \| (?P<ref>[\d.]+) ms, (?P<ref_c>[\d.]+)(?: c/MAC)? \| "
                 r"(?P<best>[\d.]+) ms, \**(?P<best_c>[\d.]+)\**(?: c/MAC)?(?: \((?P<engine>[^)]+)\))? \|", re.M)


def test_the_doc_table_is_the_codes():
    rows = {m["title"].strip(): m for m in ROW.finditer(DOC.read_text().split("## 5.", 1)[1])}
    assert len(rows) == len(ANCHORS) == 4
    for a in ANCHORS.values():
        row = rows[a.title]
        assert float(row["macs"]) * 1e6 == pytest.approx(a.macs)
        assert float(row["ref"]) == a.reference_ms and float(row["best"]) == a.best_ms
        assert (row["engine"] or None) == a.best_engine
        # the cycles-per-MAC columns are the latency x 120 MHz / MACs of the same row, to the digits shown
        assert float(row["ref_c"]) == pytest.approx(a.cycles_per_mac(a.reference_ms), abs=0.006)
        assert float(row["best_c"]) == pytest.approx(a.cycles_per_mac(a.best_ms), abs=0.006)


def test_compare_sets_an_estimate_beside_the_published_figures():
    cmp = compare("kws01", {"ms": 86.38, "label": "estimated"})
    assert cmp["vs_best"] == pytest.approx(2.0, rel=1e-3) and cmp["vs_reference"] == pytest.approx(86.38 / 181.9)
    assert cmp["estimate_label"] == "estimated" and cmp["label"] == "published"
    text = "\n".join(lines(cmp))
    assert "reference 181.9 ms (8.22 c/MAC), best 43.19 ms (1.95 c/MAC) (X-CUBE-AI 9.0)" in text
    assert "2.00x the best (estimated against published, not a measurement)" in text
    assert compare("digits", {"ms": 1.0}) is None and compare(None, {"ms": 1.0}) is None
