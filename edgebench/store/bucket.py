"""Where a shared store keeps the samples of its runs: Parquet files in a folder or an S3-compatible bucket.

A run's ``samples.parquet`` is stored once under its content digest
(``samples/<d[:2]>/<digest>.parquet``): the same samples pushed twice, or by two writers at once,
are one object, and an object is written *before* the run's row commits, so a push killed
between the two leaves at most an orphan object that no run names, never a run without its
samples (docs/store.md).

* ``file:///srv/edgebench/samples`` (or a plain path): a folder, each file written through
  :func:`edgebench.results.files.atomic_write` (temporary file, fsync, rename; no links followed);
* ``s3://BUCKET/PREFIX``: any S3-compatible service through boto3 (``lab`` extra); the endpoint
  of a service other than AWS (MinIO, Ceph, moto in the tests) is ``?endpoint=http://host:port``
  in the URL or ``$EDGEBENCH_S3_ENDPOINT``; credentials the usual boto3 way (environment,
  ``~/.aws``), never in the URL.

Library code: raises :class:`~edgebench.errors.StoreError` with one line (StoreUnreachable when the
service cannot be reached, so the run is queued), never prints.
"""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from edgebench.errors import ResultError, StoreError, StoreUnreachable, UsageError
from edgebench.results.files import atomic_write, refuse_link

ENDPOINT_ENV = "EDGEBENCH_S3_ENDPOINT"
_DIGEST = re.compile(r"[0-9a-f]{64}")


def digest_bytes(data: bytes) -> str:
    """The content digest naming a samples object (SHA-256, hex)."""
    return hashlib.sha256(data).hexdigest()


def samples_key(digest: str) -> str:
    """The object key of the samples whose digest is ``digest``."""
    if not _DIGEST.fullmatch(digest):
        raise ResultError(f"samples digest {digest[:80]!r} is not a SHA-256 hex digest")
    return f"samples/{digest[:2]}/{digest}.parquet"


class FolderBucket:
    """Samples objects as files under one folder."""

    def __init__(self, root: Path):
        self.root = root
        self.url = root.as_uri()

    def _path(self, key: str) -> Path:
        return self.root / key

    def has(self, key: str) -> bool:
        return self._path(key).is_file()

    def put(self, key: str, data: bytes) -> bool:
        """Store ``data`` under ``key`` unless present; True when written now."""
        path = self._path(key)
        if self.has(key):
            return False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            refuse_link(path.parent, "samples folder")
            atomic_write(path, lambda f: f.write(data))
        except OSError as exc:
            raise StoreError(f"cannot write samples to {self.url}: {exc.strerror or exc}",
                              "check the folder, its permissions and the free space") from None
        return True

    def get(self, key: str) -> bytes:
        path = self._path(key)
        try:
            refuse_link(path)
            return path.read_bytes()
        except FileNotFoundError:
            raise StoreError(f"samples {key} are missing from {self.url}") from None
        except OSError as exc:
            raise StoreError(f"cannot read samples {key} from {self.url}: {exc.strerror or exc}") from None


class S3Bucket:
    """Samples objects in an S3-compatible bucket (boto3)."""

    def __init__(self, bucket: str, prefix: str, endpoint: str | None):
        import boto3
        from botocore.config import Config

        self.bucket, self.prefix, self.endpoint = bucket, prefix.strip("/"), endpoint
        self.url = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        cfg = Config(connect_timeout=5, read_timeout=30, retries={"max_attempts": 2})
        self.client = boto3.client("s3", endpoint_url=endpoint, config=cfg)

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def _fail(self, what: str, exc: Exception) -> StoreError:
        """A bucket that cannot be reached (StoreUnreachable: the run is queued) or that refuses (StoreError)."""
        from botocore.exceptions import BotoCoreError

        where = f"{self.url}" + (f" at {self.endpoint}" if self.endpoint else "")
        text = " ".join(str(exc).split())[:200]
        kind = StoreUnreachable if isinstance(exc, BotoCoreError) else StoreError
        return kind(f"cannot {what} {where}: {text}",
                    "check the bucket, its endpoint and the credentials (docs/store.md)")

    def has(self, key: str) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self._key(key))
            return True
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise self._fail("read", exc) from None
        except BotoCoreError as exc:
            raise self._fail("reach", exc) from None

    def put(self, key: str, data: bytes) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        if self.has(key):
            return False
        try:   # one PUT: an object is whole or absent (S3 has no partial objects)
            self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data,
                                   ContentType="application/vnd.apache.parquet")
        except (BotoCoreError, ClientError) as exc:
            raise self._fail("write samples to", exc) from None
        return True

    def get(self, key: str) -> bytes:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"].read()
        except (BotoCoreError, ClientError) as exc:
            raise self._fail(f"read samples {key} from", exc) from None


def open_bucket(url: str) -> FolderBucket | S3Bucket:
    """The samples bucket named by ``url`` (``file:///path``, a path, or ``s3://bucket/prefix``)."""
    parts = urlsplit(url)
    if parts.scheme == "s3":
        if not parts.netloc:
            raise UsageError(f"samples URL {url} names no bucket", "write s3://BUCKET/PREFIX")
        query = parse_qs(parts.query)
        endpoint = (query.get("endpoint") or [""])[0] or os.environ.get(ENDPOINT_ENV) or None
        try:
            import boto3  # noqa: F401
        except ImportError:
            raise UsageError("an s3:// samples bucket needs boto3",
                             "pip install 'edgebench[lab]'") from None
        return S3Bucket(parts.netloc, parts.path, endpoint)
    if parts.scheme == "file":
        return FolderBucket(Path(unquote(parts.path)))
    if parts.scheme in ("", None) or len(parts.scheme) == 1:   # a plain path (or a Windows drive)
        return FolderBucket(Path(url).resolve())
    raise UsageError(f"samples URL {url} is neither file:// nor s3://",
                     "give file:///FOLDER or s3://BUCKET/PREFIX")
