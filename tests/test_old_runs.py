"""Run folders written by earlier schema versions still read, report and compare (issue 30 item 4).

The stored examples, each written by the edgebench of its version:

* version 1: tests/data/runs-v1/<name>/ (edgebench 0.1 as first published and the last commit before
  schema 2), version 3: tests/data/runs-v3/<name>/ (tests/data/make_old_runs.py made both and its
  README lists the commands and commits);
* version 2: tests/data/runs/<name>.json, bare run.json files (tests/data/runs/make_runs.py),
  put in a run folder of their own with the samples kept beside them.

Each folder is copied into a temporary runs folder per version (the readers may write an index
there) and driven through the command line as a user would: ``runs`` (the listing and one run,
in text and JSON), ``report`` (HTML and Markdown), ``compare`` (two bench runs of one version, and
across versions), each with an exit code it means, no traceback and no error line. The figures the
commands print are checked against the stored run.json: what is read is what was written.
"""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
V2 = DATA / "runs"
FOLDERED = {1: DATA / "runs-v1", 3: DATA / "runs-v3"}


def _stored() -> dict:
    """(version, name) -> the stored run: its run.json path and the samples beside a bare v2 file."""
    out = {}
    for version, root in FOLDERED.items():
        for run_json in sorted(root.glob("*/run.json")):
            out[(version, run_json.parent.name)] = (run_json, None)
    for run_json in sorted(V2.glob("*.json")):
        samples = V2 / f"{run_json.stem}.samples.parquet"
        out[(2, run_json.stem)] = (run_json, samples if samples.exists() else None)
    return out


STORED = _stored()
CASES = sorted(STORED)
IDS = [f"v{v}-{name}" for v, name in CASES]
SAME = [   # (A, B): two bench runs of one version
    ((1, "first-bench-host-int8"), (1, "first-bench-host-fp32")),
    ((1, "bench-host-int8"), (1, "bench-host-fp32")),
    ((2, "bench-host-int8"), (2, "bench-host-fp32")),
    ((3, "bench-host-int8"), (3, "bench-host-fp32")),
]
ACROSS = [   # one model on one board, written by two versions
    ((1, "first-bench-host-int8"), (3, "bench-host-int8")),
    ((1, "bench-host-int8"), (2, "bench-host-int8")),
    ((2, "bench-host-int8"), (3, "bench-host-int8")),
]


def _doc(case) -> dict:
    return json.loads(STORED[case][0].read_text())


def shown(seconds: float) -> str:
    """A time as the readers print it: three significant digits in s, ms, µs or ns."""
    unit, scale = next(((u, f) for u, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)) if seconds >= f), ("ns", 1e-9))
    value = seconds / scale
    decimals = max(0, 2 - math.floor(math.log10(value)))
    return f"{value:.{decimals}f} {unit}"


def e2e_median(doc: dict):
    return ((doc.get("latency") or {}).get("e2e") or {}).get("median_s")


@pytest.fixture(scope="module")
def roots(tmp_path_factory) -> dict:
    """A copy of every stored run, in one runs folder per version (``base/v1``, ...): ``{"base": base,
    (version, name): its run folder}``."""
    base = tmp_path_factory.mktemp("old-runs")
    folders = {}
    for (version, name), (run_json, samples) in STORED.items():
        d = base / f"v{version}" / name
        if version in FOLDERED:
            shutil.copytree(run_json.parent, d)
        else:
            d.mkdir(parents=True)
            shutil.copyfile(run_json, d / "run.json")
            if samples is not None:
                shutil.copyfile(samples, d / "samples.parquet")
        folders[(version, name)] = d
    return {"base": base, **folders}


def _runs_dir(roots, case) -> Path:
    return roots["base"] / f"v{case[0]}"


def clean(r) -> None:
    """An outcome a user should see: no traceback, no error line, no exception's name (``...Error``)."""
    assert "Traceback" not in r.stderr + r.stdout, r.stderr[-2000:]
    assert "Error" not in r.stderr and not any(ln.startswith("error") for ln in r.stderr.splitlines()), r.stderr[-2000:]


def test_the_stored_examples_cover_versions_1_to_3_and_every_kind_of_each():
    versions = {v: set() for v in (1, 2, 3)}
    for case in CASES:
        doc = _doc(case)
        versions[doc["schema_version"]].add(doc["kind"])
        assert doc["schema_version"] == case[0], case   # each folder holds what its version wrote
    assert versions[1] >= {"bench", "accuracy", "soak", "sweep", "energy", "mlperf-tiny"}
    assert versions[2] >= versions[1] | {"verify"} and versions[3] >= versions[1] | {"verify"}
    first = _doc((1, "first-bench-host-int8"))   # edgebench 0.1 as first published: one run, no repeats
    assert first["edgebench_version"] == "0.1.0" and "runs" not in first["latency"]["e2e"]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_the_listing_names_every_run_of_a_version(cli, roots, version):
    r = cli("runs", "--runs-dir", roots["base"] / f"v{version}")
    assert r.returncode == 0, r.stderr
    clean(r)
    assert "skipped" not in r.stderr
    for case in (c for c in CASES if c[0] == version):
        doc = _doc(case)
        row = next((ln for ln in r.stdout.splitlines() if ln.startswith(doc["run_id"][:6])), None)
        assert row is not None, f"{case} not listed"
        median = e2e_median(doc)
        if median is not None and doc["kind"] == "bench":
            assert shown(median) in row, (case, row)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_each_run_reads_and_keeps_its_figures(cli, roots, case):
    doc, folder = _doc(case), roots[case]
    shown_run = cli("runs", folder, "--runs-dir", _runs_dir(roots, case))
    assert shown_run.returncode == 0, shown_run.stderr
    clean(shown_run)
    assert shown_run.stdout.strip()
    median = e2e_median(doc)
    if median is not None and doc["kind"] == "bench":
        assert shown(median) in shown_run.stdout, shown(median)
    r = cli("runs", folder, "--json", "--runs-dir", _runs_dir(roots, case))
    assert r.returncode == 0, r.stderr
    clean(r)
    read = json.loads(r.stdout)
    assert (read["run_id"], read["kind"], read["status"], read["label"]) == (
        doc["run_id"], doc["kind"], doc["status"], doc["label"])
    assert read["schema_version"] >= doc["schema_version"]
    for stage, fig in (doc.get("latency") or {}).items():   # the upgrade keeps every stage's median and interval
        if isinstance(fig, dict) and fig.get("median_s") is not None:
            got = read["latency"][stage]
            assert got["median_s"] == fig["median_s"], stage
            assert (got.get("ci_low_s"), got.get("ci_high_s")) == (fig.get("ci_low_s"), fig.get("ci_high_s")), stage


def _report(cli, roots, case, tmp_path, fmt: str) -> None:
    doc, folder = _doc(case), roots[case]
    out = tmp_path / f"report.{fmt}"
    r = cli("report", folder, *(["--md"] if fmt == "md" else []), "-o", out, "--runs-dir", _runs_dir(roots, case))
    assert r.returncode == 0, r.stderr
    clean(r)
    assert out.exists() and "report written" in r.stdout
    text = out.read_text()
    if fmt == "md":
        text = text.replace("\\", "")   # Markdown escapes the punctuation of figures
    assert doc["run_id"] in text
    assert doc["model"]["name"].replace("_", "") in text.replace("_", "")
    median = e2e_median(doc)
    if median is not None and doc["kind"] == "bench":
        assert f"median {shown(median)}" in text, shown(median)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_each_run_reports_in_markdown(cli, roots, case, tmp_path):
    _report(cli, roots, case, tmp_path, "md")


HTML_FAST = [(v, "bench-host-int8") for v in (1, 2, 3)]


@pytest.mark.slow
@pytest.mark.parametrize("case", HTML_FAST, ids=[f"v{v}-{name}" for v, name in HTML_FAST])
def test_a_bench_run_of_each_version_reports_in_html(cli, roots, case, tmp_path):
    _report(cli, roots, case, tmp_path, "html")


@pytest.mark.slow   # up to a second each (the plots): 13 s of CPU for all of them
@pytest.mark.parametrize("case", [c for c in CASES if c not in HTML_FAST],
                         ids=[f"v{v}-{name}" for v, name in CASES if (v, name) not in HTML_FAST])
def test_each_run_reports_in_html(cli, roots, case, tmp_path):
    _report(cli, roots, case, tmp_path, "html")


def _pair_ids(pairs) -> list:
    return [f"v{a[0]}-{a[1]}-vs-v{b[0]}-{b[1]}" for a, b in pairs]


@pytest.mark.slow
@pytest.mark.parametrize("a,b", SAME, ids=_pair_ids(SAME))
def test_two_bench_runs_of_a_version_compare(cli, roots, a, b, monkeypatch):
    _compare(cli, roots, a, b, monkeypatch, ["--only-these"])


@pytest.mark.slow   # each compare takes 1-3 s of CPU (the power search, outliers of the pooled variation)
@pytest.mark.parametrize("a,b", SAME, ids=_pair_ids(SAME))
def test_two_bench_runs_of_a_version_compare_with_every_session_on_record_and_in_json(cli, roots, a, b,
                                                                                      monkeypatch):
    _compare(cli, roots, a, b, monkeypatch, [], ["--only-these", "--json"])


@pytest.mark.slow
@pytest.mark.parametrize("a,b", ACROSS, ids=_pair_ids(ACROSS))
def test_runs_of_two_versions_compare(cli, roots, a, b, monkeypatch):
    _compare(cli, roots, a, b, monkeypatch, ["--only-these", "--json"], [])


def _compare(cli, roots, a, b, monkeypatch, *ways) -> None:
    """``compare A B`` with each list of options in ``ways``: a decision (exit 0-3), no error, the two run
    ids; ``--only-these`` (these two runs alone) prints each side's stored median, ``--json`` says which
    run is which and a ratio inside its interval."""
    monkeypatch.setenv("COLUMNS", "250")   # the table whole: no figure cut to an ellipsis
    doc_a, doc_b = _doc(a), _doc(b)
    for options in ways:
        r = cli("compare", roots[a], roots[b], *options, "--runs-dir", _runs_dir(roots, a))
        assert r.returncode in (0, 1, 2, 3), r.stderr
        clean(r)
        if "--json" in options:
            got = json.loads(r.stdout)
            assert (got["baseline"], got["candidate"]) == (doc_a["run_id"], doc_b["run_id"])
            ratio = got["speedup"]["ratio"]
            assert ratio > 0 and got["speedup"]["ci_low"] <= ratio <= got["speedup"]["ci_high"]
            continue
        assert doc_a["run_id"] in r.stdout and doc_b["run_id"] in r.stdout
        e2e = next(ln for ln in r.stdout.splitlines() if ln.startswith("e2e "))
        if "--only-these" in options:   # each side's median is the stored one
            assert shown(e2e_median(doc_a)) in e2e and shown(e2e_median(doc_b)) in e2e, e2e


def test_an_unknown_schema_version_is_refused_in_one_line(cli, tmp_path):
    doc = _doc((3, "bench-host-int8"))
    doc["schema_version"] = 99
    d = tmp_path / "runs" / "future"
    d.mkdir(parents=True)
    (d / "run.json").write_text(json.dumps(doc))
    for args in (["runs", d], ["report", d, "--md", "-o", tmp_path / "r.md"]):
        r = cli(*args, "--runs-dir", tmp_path / "runs")
        assert r.returncode == 1
        lines = r.stderr.strip().splitlines()
        assert lines[-1].startswith("error: ") and "schema_version 99" in lines[-1], r.stderr
        assert "Traceback" not in r.stderr and len([ln for ln in lines if ln.startswith("error")]) == 1
    assert not (tmp_path / "r.md").exists()
