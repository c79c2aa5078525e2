"""The shared store's parts that need no server: the samples bucket in a folder, store URLs, conditions rows."""
from __future__ import annotations

import json
import os

import pytest

from edgebench.errors import ResultError, UsageError
from edgebench.results.model import RunResult
from edgebench.store.bucket import FolderBucket, digest_bytes, open_bucket, samples_key
from edgebench.store.postgres import SAMPLES_ENV, conditions_of, split_url


def test_folder_bucket_stores_each_digest_once(tmp_path):
    bucket = open_bucket((tmp_path / "b").as_uri())
    assert isinstance(bucket, FolderBucket)
    data = b"PAR1 not really parquet PAR1"
    key = samples_key(digest_bytes(data))
    assert key.startswith(f"samples/{digest_bytes(data)[:2]}/") and key.endswith(".parquet")
    assert not bucket.has(key)
    assert bucket.put(key, data) is True
    assert bucket.put(key, b"other bytes") is False          # present: never rewritten
    assert bucket.get(key) == data
    assert [p.name for p in (tmp_path / "b").rglob("*") if p.is_file()] == [key.rsplit("/", 1)[1]]


def test_folder_bucket_refuses_a_planted_link(tmp_path):
    bucket = open_bucket(str(tmp_path / "b"))
    key = samples_key("ab" * 32)
    target = tmp_path / "b" / key
    target.parent.mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere", target)
    with pytest.raises(ResultError, match="symbolic link"):
        bucket.get(key)
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("digest", ["", "../../etc/passwd", "AB" * 32, "ab" * 31])
def test_a_samples_key_is_a_sha256_only(digest):
    with pytest.raises(ResultError, match="not a SHA-256"):
        samples_key(digest)


@pytest.mark.parametrize("url, match", [("s3:///prefix", "names no bucket"), ("ftp://host/x", "neither file")])
def test_bad_samples_urls_are_one_line(url, match):
    with pytest.raises(UsageError, match=match) as err:
        open_bucket(url)
    assert "\n" not in err.value.one_line()


def test_the_samples_url_is_taken_out_of_the_store_url(monkeypatch):
    monkeypatch.delenv(SAMPLES_ENV, raising=False)
    dsn, samples = split_url("postgresql://u:p@db:5432/lab?sslmode=require&samples=s3://bkt/pre")
    assert (dsn, samples) == ("postgresql://u:p@db:5432/lab?sslmode=require", "s3://bkt/pre")
    monkeypatch.setenv(SAMPLES_ENV, "file:///srv/samples")
    assert split_url("postgresql://db/lab") == ("postgresql://db/lab", "file:///srv/samples")


def test_conditions_rows_leave_out_what_drifts():
    run = RunResult(run_id="r1", created_utc="2026-11-29T00:00:00+00:00",
                    runtime={"name": "ai-edge-litert", "threads": 2}, board={"kind": "ssh", "system": {
                        "os": {"pretty_name": "Debian 12"}, "cpu": {"model_name": "Cortex-A76"},
                        "temperature_c": 61.0}},
                    scenario={"name": "single-stream", "inputs": {"sha256": "e" * 64}}, settings={})
    rows = conditions_of(run)
    assert set(rows) == {"runtime", "board.kind", "board.os", "board.cpu", "scenario"}
    assert json.loads(rows["runtime"]) == {"name": "ai-edge-litert", "threads": 2}
    assert "inputs" not in json.loads(rows["scenario"]) and "61.0" not in json.dumps(rows)
