"""One key, one declaration (issue 30): a key several sections of run.json share with one meaning is
declared once, in a base the sections inherit (edgebench/results/figures/common.py and the figure
modules), and an inherited key behaves as a section's own: written only when set, read back the same."""
from __future__ import annotations

import json
from collections import defaultdict

from edgebench.results.figures.accuracy import Paired, Relative, SliceRow
from edgebench.results.figures.latency import LatencyFigure
from edgebench.results.figures.points import Point
from edgebench.results.figures.thermal import ThermalSection
from edgebench.results.model import RunResult
from edgebench.results.types import Figure
from edgebench.results.upgrade import SCHEMA_VERSION

#: keys declared alike in two sections that still mean different things (what "its" or "... high end"
#: points at differs, or the value's type does)
ALIKE_BUT_NOT_ONE = {
    ("ci_high_per_s", "... high end"),          # a trend's slope (unit/s) and a rate's interval (1/s)
    ("ci_high_s", "its interval's high end"),   # a latency repeat's interval and a profile repeat's
    ("df", "its degrees of freedom"),           # of a different se_log each (median, rate, headline)
    ("n", "samples"),                           # a resolution's and a calibration's, each its own set
    ("notes", "notes on the comparison"),       # a list of strings, and of anything
}


def _figures() -> list:
    seen, todo = [], [Figure]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return seen


def test_no_key_is_declared_alike_in_two_sections():
    where = defaultdict(list)
    for cls in _figures():
        for name in cls.__annotations__:
            where[(name, cls.model_fields[name].description)].append(cls.__name__)
    twice = {key: sorted(classes) for key, classes in where.items()
             if len(classes) > 1 and key not in ALIKE_BUT_NOT_ONE}
    assert not twice, f"declare these once, in a base the sections inherit: {twice}"


def test_every_declared_key_has_its_description():
    missing = [f"{cls.__name__}.{name}" for cls in _figures() for name, f in cls.model_fields.items()
               if not (f.description or "").strip()]
    assert not missing


def test_an_inherited_key_is_written_only_when_set_and_reads_back():
    point = Point(label="measured", kernels="xnnpack", max_temp_c=61.5, steady=True, index=1)
    assert point.to_dict() == {"label": "measured", "kernels": "xnnpack", "max_temp_c": 61.5, "steady": True,
                               "index": 1}
    assert Point.model_validate(json.loads(json.dumps(point.to_dict()))) == point
    assert not Point() and not LatencyFigure() and not ThermalSection()
    lat = LatencyFigure(ci_method="t on log medians", median_s=0.002)
    assert set(lat.to_dict()) == {"ci_method", "median_s"}      # ci_level and label, never set, stay absent


def test_a_relative_figure_and_a_slice_row_share_the_paired_keys():
    paired = Paired(n=200, diff_points=-1.5, baseline_errors=10, candidate_errors=13, mcnemar_p=0.25,
                    agreement_rate=0.97, label="measured")
    relative = Relative.model_validate({k: v for k, v in paired.to_dict().items() if k in Relative.model_fields})
    assert relative.to_dict() == {"diff_points": -1.5, "baseline_errors": 10, "candidate_errors": 13}
    row = SliceRow.model_validate({k: v for k, v in paired.to_dict().items() if k in SliceRow.model_fields})
    assert row.to_dict() == {"n": 200, "mcnemar_p": 0.25, "agreement_rate": 0.97}
    for key in ("n", "mcnemar_p", "agreement_rate"):
        assert SliceRow.model_fields[key].description == Paired.model_fields[key].description


def test_a_run_with_inherited_keys_round_trips_to_the_same_document():
    point = {"index": 1, "label": "measured", "delegate": None, "steady": False, "requested_rate_hz": 10.0}
    doc = {"format": "edgebench-run", "run_id": "0123456789ab", "created_utc": "2026-01-01T00:00:00+00:00",
           "schema_version": SCHEMA_VERSION, "kind": "sweep", "runtime": {"name": "tflite", "kernels": "xnnpack"},
           "thermal": {"max_temp_c": 60.0, "available": True},
           "extra": {"requested_rate_hz": 10.0, "points": [point]}}
    once = json.dumps(RunResult.from_dict(doc).to_dict(), indent=2)
    assert json.dumps(RunResult.from_dict(json.loads(once)).to_dict(), indent=2) == once
    back = json.loads(once)
    assert back["extra"]["points"] == [point]
    assert back["runtime"] == doc["runtime"] and back["thermal"] == doc["thermal"]
