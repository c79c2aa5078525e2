"""run.json against its schema (issue 22 item 4): a bad run is skipped with one warning naming the
file and the key, one bad run hides no good one, what is loaded is bounded, and no tampered field
makes runs, report, check, compare or load_runs fail unexpectedly.

The fixture runs (tests/data/runs/, one of every kind, written by the verbs) are tampered by
tests/run_tamper.py: every key path, each made the wrong type, a 2 MB string, 5,000-deep nesting,
missing or null. A tamper the schema refuses is a skipped run with a warning; a tamper it accepts
reaches the readers, which must cope with it.
"""
from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import pytest
import run_tamper as rt
from conftest import load_script, require_module

from edgebench.errors import InputWarning, ResultError
from edgebench.results import store, table
from edgebench.results.model import RunResult

DOCS = rt.fixtures()
#: latency keys the fixtures (schema 2) name as older versions did: the name this version reads
RENAMED = {"throughput_per_s": "inverse_median_per_s"}
KINDS = {"bench", "accuracy", "soak", "sweep", "energy", "verify", "mlperf-tiny"}


def test_the_fixtures_are_one_run_of_every_kind_and_validate():
    assert {d["kind"] for d in DOCS.values()} == KINDS
    for name, doc in DOCS.items():
        r = RunResult.from_dict(doc, name)
        assert RunResult.from_dict(r.to_dict(), name).to_dict() == r.to_dict()


def _key(path: tuple) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) else (f".{k}" if i else k) for i, k in enumerate(path))


def _paths(sample: int | None = None) -> list:
    """``(document, key path)`` of every fixture (a list's first item standing for the rest), or a sample."""
    out = [(doc, path) for doc in DOCS.values() for path in rt.key_paths(doc)
           if not any(isinstance(k, int) and k > 0 for k in path)]
    return out if sample is None else random.Random(22).sample(out, sample)


def _kept_or_refused_in_one_line(how: str, cases: list) -> None:
    """Each case tampered ``how``: a RunResult, or a ResultError whose one line names the file and the key
    (or an ancestor of it), or the bound it broke."""
    refused = 0
    for doc, path in cases:
        try:
            store.parse_result(rt.tamper(doc, path, how).encode(), "<run.json>")
        except ResultError as exc:
            refused += 1
            line = exc.one_line()
            assert "\n" not in line and line.startswith("<run.json>: "), line
            if how != "deep-nesting" and path[0] not in ("format", "schema_version"):
                # a key an older schema named otherwise is named as this version reads it (results/upgrade.py)
                path = tuple(RENAMED.get(k, k) if path[0] == "latency" else k for k in path)
                keys = [_key(path[:i]) for i in range(len(path), 0, -1)]
                assert any(line.startswith(f"<run.json>: {k}: ") for k in keys), (line, keys[0])
    assert refused == len(cases) if how == "deep-nesting" else 0 <= refused < len(cases)


@pytest.mark.parametrize("how", rt.TAMPERS)
def test_a_sample_of_fields_tampered_is_kept_or_refused_in_one_line_naming_the_key(how):
    _kept_or_refused_in_one_line(how, _paths(sample=40))


@pytest.mark.fuzz
@pytest.mark.slow
@pytest.mark.parametrize("how", rt.TAMPERS)
def test_every_field_tampered_is_kept_or_refused_in_one_line_naming_the_key(how):
    cases = _paths()
    assert len(cases) > 4000
    _kept_or_refused_in_one_line(how, cases)


def test_a_wrong_type_names_the_file_and_the_key(tmp_path):
    doc = json.loads(json.dumps(DOCS["bench-host-int8"]))
    doc["latency"]["e2e"]["median_s"] = "12.5 ms"
    d = rt.write_run(tmp_path, "r", json.dumps(doc))
    with pytest.raises(ResultError) as info:
        store.read_result(d)
    assert info.value.one_line() == (f"{d}/run.json: latency.e2e.median_s: expected a number, got '12.5 ms': "
                                     "the run.json is damaged or from another tool")


def test_size_and_nesting_are_bounded_before_anything_is_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "MAX_RUN_JSON_BYTES", 100_000)
    doc = json.loads(json.dumps(DOCS["bench-host-int8"]))
    doc["extra"]["claim"] = "x" * 200_000
    with pytest.raises(ResultError, match=r"larger than 0 MB, more than any run edgebench writes"):
        store.read_result(rt.write_run(tmp_path, "big", json.dumps(doc)))
    doc = json.loads(json.dumps(DOCS["bench-host-int8"]))
    doc["board"]["system"]["deep"] = json.loads("[" * 100 + "]" * 100)
    with pytest.raises(ResultError, match=r"nested 10\d levels deep"):
        store.read_result(rt.write_run(tmp_path, "deep", json.dumps(doc)))
    with pytest.raises(ResultError, match=r"unreadable JSON \(nested too deeply\)"):
        store.read_result(rt.write_run(tmp_path, "deeper", rt.tamper(DOCS["verify-posix"], ("extra",), "deep-nesting")))


def test_a_huge_claim_is_refused_without_being_parsed(tmp_path, monkeypatch):
    """A 50 MB claim: refused by the size bound after reading 16 MB, not parsed, not listed."""
    doc = json.loads(json.dumps(DOCS["bench-host-int8"]))
    doc["extra"]["claim"] = "x" * 50_000_000
    rt.write_run(tmp_path, "huge", json.dumps(doc))
    rt.write_run(tmp_path, "good", json.dumps(DOCS["bench-host-fp32"]))
    parsed = []
    loads = json.loads
    monkeypatch.setattr(json, "loads", lambda s, *a, **k: parsed.append(len(s)) or loads(s, *a, **k))
    code, out, err = rt.run_cli("runs", "--runs-dir", tmp_path)
    assert code == 0 and DOCS["bench-host-fp32"]["run_id"][:6] in out
    assert DOCS["bench-host-int8"]["run_id"][:6] not in out
    assert err.count("warning: skipped") == 1 and "larger than 16 MB" in err
    assert parsed and max(parsed) <= store.MAX_RUN_JSON_BYTES   # the good run parsed, the huge one never


def _folder(tmp_path) -> tuple:
    """A runs folder with two good runs and one whose e2e median is text."""
    good = rt.write_run(tmp_path, "20260101-000000-good", json.dumps(DOCS["bench-host-int8"]),
                        rt.samples_of("bench-host-int8"))
    other = rt.write_run(tmp_path, "20260101-000001-acc", json.dumps(DOCS["accuracy-host"]))
    doc = json.loads(json.dumps(DOCS["bench-host-fp32"]))
    doc["latency"]["e2e"]["median_s"] = "fast"
    bad = rt.write_run(tmp_path, "20260101-000002-bad", json.dumps(doc), rt.samples_of("bench-host-fp32"))
    return good, other, bad


WARNING = "warning: skipped {bad}/run.json: latency.e2e.median_s: expected a number, got 'fast'"


def test_runs_lists_the_good_runs_and_warns_once_about_the_bad(tmp_path):
    good, other, bad = _folder(tmp_path)
    code, out, err = rt.run_cli("runs", "--runs-dir", tmp_path)
    assert code == 0, err
    assert DOCS["bench-host-int8"]["run_id"][:6] in out and DOCS["accuracy-host"]["run_id"][:6] in out
    assert [ln for ln in err.splitlines() if ln.startswith("warning:")] == [WARNING.format(bad=bad)]
    code, out, err = rt.run_cli("runs", bad, "--runs-dir", tmp_path)
    assert code == 1 and err.startswith(f"error: {bad}/run.json: latency.e2e.median_s: expected a number")


def test_report_and_check_skip_the_bad_run_and_keep_the_others(tmp_path):
    good, other, bad = _folder(tmp_path)
    code, out, err = rt.run_cli("report", good, bad, other, "--md", "-o", tmp_path / "r.md", "--runs-dir", tmp_path)
    assert code == 0, err
    assert WARNING.format(bad=bad) in err and "report written" in out and "(2 runs;" in " ".join(out.split())
    code, out, err = rt.run_cli("check", good, bad, "--runs-dir", tmp_path)
    assert code == 0 and WARNING.format(bad=bad) in err
    code, out, err = rt.run_cli("check", bad, "--runs-dir", tmp_path)   # nothing left: the error itself
    assert code == 1 and err.startswith(f"error: {bad}/run.json: latency.e2e.median_s") and "Traceback" not in err


def test_compare_names_the_bad_run(tmp_path):
    good, other, bad = _folder(tmp_path)
    code, out, err = rt.run_cli("compare", good, bad, "--runs-dir", tmp_path)
    assert code == 1 and err.startswith(f"error: {bad}/run.json: latency.e2e.median_s: expected a number")


def test_load_runs_keeps_the_good_runs_and_warns(tmp_path):
    good, other, bad = _folder(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = table.load_runs(tmp_path)
    assert sorted(frame["path"]) == sorted([str(good), str(other)])
    assert [str(w.message) for w in caught if issubclass(w.category, InputWarning)] == [
        WARNING.format(bad=bad).removeprefix("warning: ")]


def test_load_runs_and_load_samples_say_what_they_did_not_find(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ResultError, match=r"no runs folder and no run 'typo'"):
        table.load_runs("typo")
    with pytest.raises(ResultError, match=r"no runs folder and no run 'c8bbf1'"):
        table.load_samples("c8bbf1")
    good = rt.write_run(tmp_path / "runs", "20260101-000000-good", json.dumps(DOCS["bench-host-int8"]),
                        rt.samples_of("bench-host-int8"))
    run_id = DOCS["bench-host-int8"]["run_id"]
    assert list(table.load_runs(run_id[:6])["path"]) == [str(Path("runs") / good.name)]
    samples = table.load_samples(run_id[:6])
    assert len(samples) > 0 and set(samples["run_id"]) == {run_id}
    with pytest.raises(ResultError, match=r"no runs folder and no run 'ffffff'"):
        table.load_samples("ffffff")
    assert len(table.load_runs(tmp_path / "runs")) == 1
    (tmp_path / "empty").mkdir()
    assert len(table.load_runs(tmp_path / "empty")) == 0          # an empty folder is an empty table


# ---------------------------------------------------------------- tampered fields through every reader

def _findings(cases) -> list:
    import tempfile

    out = []
    for name, path, how in cases:
        with tempfile.TemporaryDirectory() as tmp:
            for what, problem in rt.one_case(Path(tmp), name, rt.tamper(DOCS[name], path, how)):
                out.append(f"{what}: {problem}  <- {name} {'.'.join(map(str, path))} {how}")
    return out


READ_PATHS: dict = {}


def _accepted() -> list:
    if not READ_PATHS:
        READ_PATHS.update(rt.read_paths(DOCS))
    return rt.accepted_cases(DOCS, READ_PATHS)


@pytest.mark.slow   # finding the keys the readers read runs every reader on every fixture (about a minute)
def test_a_sample_of_accepted_tampers_reaches_the_readers_without_harm():
    """The schema keeps what it does not type (a verb's own figures) and lets null and missing keys
    through: 12 such tampers of keys the readers read, through every reader."""
    cases = random.Random(23).sample(_accepted(), 12)
    assert _findings(cases) == []


@pytest.mark.fuzz
@pytest.mark.slow
def test_accepted_tampers_of_the_keys_the_readers_read():
    """Key paths runs, report, check, compare and load_runs read (tracked on the fixtures), with a tamper
    the schema accepts, through every reader: no traceback, no unexpected error. 200 of the about 1,000
    cases (each about half a second); all of them: benchmarks/tampered_runs.py --readers."""
    cases = _accepted()
    assert len(cases) > 500
    assert _findings(random.Random(24).sample(cases, 200)) == []


# ---------------------------------------------------------------- the JSON Schemas and the docs tables

def test_schema_prints_each_document_as_json_schema(cli, tmp_path):
    from edgebench.cli.schema_cmd import DOCUMENTS

    r = cli("schema")
    assert r.returncode == 0 and all(name in r.stdout for name in DOCUMENTS)
    for name in DOCUMENTS:
        r = cli("schema", name)
        assert r.returncode == 0, r.stderr
        schema = json.loads(r.stdout)
        assert schema["$schema"].endswith("2020-12/schema") and schema["properties"]
    r = cli("schema", "run", "-o", tmp_path / "run.schema.json")
    assert r.returncode == 0 and json.loads((tmp_path / "run.schema.json").read_text())["title"].startswith("edgebench run")
    r = cli("schema", "runs")
    assert r.returncode == 1 and r.stderr == "error: no schema 'runs': one of run, board, farm, sidecar, acks\n"


def test_the_exported_json_schemas_accept_what_edgebench_writes_and_refuse_a_tamper():
    """A user's own tooling validating with the JSON Schema agrees with edgebench on real files."""
    jsonschema = require_module("jsonschema")
    from edgebench.boards.registry import list_profiles
    from edgebench.cli.schema_cmd import document_schema

    run = jsonschema.Draft202012Validator(document_schema("run"))
    for doc in DOCS.values():
        run.validate(doc)
    doc = json.loads(json.dumps(DOCS["bench-host-int8"]))
    doc["latency"]["e2e"]["median_s"] = "12.5 ms"
    assert not run.is_valid(doc)
    board = jsonschema.Draft202012Validator(document_schema("board"))
    for profile in list_profiles():
        d = profile.to_dict()
        d.pop("origin")
        board.validate(d)
    sidecar = jsonschema.Draft202012Validator(document_schema("sidecar"))
    for path in (Path(__file__).resolve().parents[1] / "models" / "digits").glob("*.tflite.json"):
        sidecar.validate(json.loads(path.read_text()))


@pytest.mark.slow
def test_the_docs_tables_are_written_from_the_schemas():
    docs = load_script("scripts/schema_docs.py")
    for page in docs.PAGES:
        text = page.read_text()
        assert "<!-- schema: " in text
        assert docs.render(text) == text, f"{page.name} is stale: run scripts/schema_docs.py"
