"""Journals: samples that survive a kill, each chunk checksummed (level 0).

A measuring verb appends its samples as they come (:class:`Journal`); a run killed at any
moment (SIGKILL, power loss) keeps every chunk appended before, and a run folder copied,
cached or left on a failing disk says which chunks are still intact.

A journal ``<name>`` is a series of segment files ``<name>.journal.NNNN.arrows`` (a new
segment when the columns change, or when a resumed run appends). A segment is the magic
``EBJRNL01`` and then chunks, each::

    "EBC" kind:u8  length:u32 le  crc32(payload):u32 le  crc32(the 12 bytes before):u32 le  payload

with ``kind`` ``R`` (a copy of the run's run.json when the segment was opened), ``S`` (the
Arrow schema, ``Schema.serialize()``) or ``B`` (one Arrow record batch, ``RecordBatch.serialize()``).
Every chunk is fsync'd before :meth:`Journal.append` returns (``durable``).

Reading (:func:`read_chunks`) checks every chunk before Arrow sees its bytes: a segment that
ends inside a chunk was torn by a kill (its complete chunks count, as expected); a chunk whose
checksum fails, or whose batch does not validate, is damage: it and everything journalled
after it are left out and named in :attr:`JournalData.damage`. Segments written before
checksums (plain Arrow IPC streams) are still read, as they were.

Library code: raises edgebench errors, never prints.
"""
from __future__ import annotations

import mmap
import os
import re
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgebench.results.files import create_exclusive, disk_full, fsync_dir

SUFFIX = ".arrows"
MAGIC = b"EBJRNL01"
_HEAD = struct.Struct("<3scIII")    # "EBC", kind, length, payload crc, header crc
_LEGACY = b"\xff\xff\xff\xff"        # an Arrow IPC stream (journals of edgebench before checksums)
RUN, SCHEMA, BATCH = b"R", b"S", b"B"


def crc32(data) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def encode_chunk(kind: bytes, payload) -> bytes:
    """One chunk: header (with its own CRC) and payload."""
    head = struct.pack("<3scII", b"EBC", kind, len(payload), crc32(payload))
    return head + struct.pack("<I", crc32(head)) + bytes(payload)


def paths(run_dir, name: str = "samples") -> list[Path]:
    """The segments of journal ``name`` in ``run_dir``, in the order they were written."""
    return sorted(Path(run_dir).glob(f"{name}.journal.[0-9][0-9][0-9][0-9]{SUFFIX}"))


class Journal:
    """Append-only, crash-safe, checksummed sample chunks of one run (see the module doc).

    A chunk whose columns or types differ from the current segment's starts a new segment,
    so nothing is dropped or coerced silently. ``run_copy()`` gives the bytes of the run's
    run.json to keep at the head of each new segment (None: none).
    """

    def __init__(self, run_dir, name: str = "samples", durable: bool = True, run_copy=None):
        if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
            raise ValueError(f"journal name {name!r}: letters, digits, '_' and '-' only")
        self.run_dir = Path(run_dir)
        self.name = name
        self.durable = durable
        self.run_copy = run_copy
        self.rows = 0
        self.segments: list[Path] = []
        existing = paths(self.run_dir, name)
        self._next = int(existing[-1].name.split(".")[-2]) + 1 if existing else 0
        self._file: Any = None      # the open segment (a binary file) while one is open
        self._schema: Any = None

    def append(self, data) -> int:
        """Append one chunk (a pandas DataFrame, or a dict of equal-length arrays); returns its rows."""
        import pyarrow as pa

        table = arrow_table(data)
        if table.num_rows == 0:
            return 0
        if self._file is not None and not table.schema.equals(self._schema):
            if set(table.schema.names) == set(self._schema.names):
                try:
                    table = table.select(self._schema.names).cast(self._schema)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                    self._close_segment()
            else:
                self._close_segment()
        try:
            if self._file is None:
                self._open_segment(table.schema)
            for batch in table.combine_chunks().to_batches():
                self._file.write(encode_chunk(BATCH, batch.serialize()))
            self._sync()
        except OSError as exc:
            full = disk_full(exc, self.run_dir)
            if full is not None:
                raise full from None
            raise
        self.rows += table.num_rows
        return table.num_rows

    def _sync(self) -> None:
        self._file.flush()
        if self.durable:
            os.fsync(self._file.fileno())

    def _open_segment(self, schema) -> None:
        path = self.run_dir / f"{self.name}.journal.{self._next:04d}{SUFFIX}"
        self._next += 1
        self._file = create_exclusive(path)
        self._schema = schema
        self.segments.append(path)
        copy = self.run_copy() if self.run_copy is not None else None
        self._file.write(MAGIC + (encode_chunk(RUN, copy) if copy else b"") + encode_chunk(SCHEMA, schema.serialize()))
        self._sync()
        if self.durable:
            fsync_dir(self.run_dir)

    def _close_segment(self) -> None:
        if self._file is not None:
            self._sync()
            self._file.close()
            self._file = None
        self._schema = None

    def close(self) -> None:
        """Finish the current segment; the journal stays on disk (read it with :func:`read`)."""
        self._close_segment()

    def read(self):
        """Everything appended so far (all segments of this name in the folder) as a DataFrame."""
        if self._file is not None:
            self._file.flush()
        return read(self.run_dir, self.name)

    def remove(self) -> None:
        """Close and delete every segment (after their rows were written elsewhere)."""
        self.close()
        remove(self.run_dir, self.name)

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class JournalData:
    """What :func:`read_chunks` found: the intact batches per segment, the run.json copies,
    and what was left out (``damage``: one line each; ``torn``: segments cut short by a kill)."""

    tables: list = field(default_factory=list)       # one pyarrow Table per segment with rows (or schema only)
    run_copies: list = field(default_factory=list)   # (segment path, bytes), in segment order
    damage: list = field(default_factory=list)
    torn: list = field(default_factory=list)
    chunks: int = 0


def read_chunks(run_dir, name: str = "samples") -> JournalData:
    """Every intact chunk of journal ``name``, up to the first damaged one (see the module doc)."""
    out = JournalData()
    segs = paths(run_dir, name)
    for i, path in enumerate(segs):
        if not _read_segment(path, out):
            later = len(segs) - i - 1
            if later:
                out.damage.append(f"{later} later segment(s) of the {name} journal left out with it")
            break
    return out


def _read_segment(path: Path, out: JournalData) -> bool:
    """Add ``path``'s intact chunks to ``out``; False when it holds damage (reading stops there)."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            view: Any = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except (OSError, ValueError) as exc:
        out.damage.append(f"{path.name}: unreadable ({exc})")
        return False
    try:
        if size and view[:4] == _LEGACY:
            return _read_legacy(path, out)
        return _parse(path, view, size, out)
    finally:
        if size:
            view.close()


def _parse(path: Path, view, size: int, out: JournalData) -> bool:
    import pyarrow as pa

    if size < len(MAGIC):
        out.torn.append(path.name)     # killed while it was created
        return True
    if view[:len(MAGIC)] != MAGIC:
        out.damage.append(f"{path.name}: not a journal segment (its first bytes are damaged)")
        return False
    pos, schema, k = len(MAGIC), None, 0
    batches: list = []

    def damaged(why: str) -> bool:
        out.damage.append(f"{path.name}: chunk {k} (at byte {pos:,}) {why}; it and what was journalled after "
                          "it were left out")
        _keep(out, schema, batches)
        return False

    while pos < size:
        if size - pos < _HEAD.size:
            out.torn.append(path.name)
            break
        tag, kind, length, crc, hcrc = _HEAD.unpack_from(view, pos)
        if tag != b"EBC" or crc32(view[pos:pos + _HEAD.size - 4]) != hcrc:
            return damaged("has a damaged header")
        body = pos + _HEAD.size
        if size - body < length:
            out.torn.append(path.name)
            break
        payload = view[body:body + length]
        if crc32(payload) != crc and kind == RUN:     # only the copy of run.json: the samples stay good
            out.damage.append(f"{path.name}: its copy of run.json fails its checksum (not used)")
        elif crc32(payload) != crc:
            return damaged("fails its checksum")
        try:
            if kind == RUN:
                if crc32(payload) == crc:
                    out.run_copies.append((path, bytes(payload)))
            elif kind == SCHEMA:
                schema = pa.ipc.read_schema(pa.py_buffer(bytes(payload)))
            elif kind == BATCH and schema is not None:
                batch = pa.ipc.read_record_batch(pa.py_buffer(bytes(payload)), schema)
                batch.validate(full=True)
                batches.append(batch)
                out.chunks += 1
            else:
                return damaged(f"is of an unknown kind {kind!r}" if kind != BATCH else "comes before its schema")
        except (pa.ArrowException, ValueError, OSError) as exc:
            return damaged(f"does not decode ({str(exc).splitlines()[0][:80]})")
        pos, k = body + length, k + 1
    _keep(out, schema, batches)
    return True


def _keep(out: JournalData, schema, batches: list) -> None:
    import pyarrow as pa

    if schema is not None and (batches or not out.tables):
        out.tables.append(pa.Table.from_batches(batches, schema=schema))


def _read_legacy(path: Path, out: JournalData) -> bool:
    """A plain Arrow IPC stream (no checksums): its complete batches, as before."""
    import pyarrow as pa

    batches, schema = [], None
    try:
        with pa.OSFile(str(path), "rb") as f:
            reader = pa.ipc.open_stream(f)
            schema = reader.schema
            while True:
                try:
                    batch = reader.read_next_batch()
                    batch.validate(full=True)
                    batches.append(batch)
                except StopIteration:
                    break
                except (pa.ArrowInvalid, OSError):  # torn by a kill
                    out.torn.append(path.name)
                    break
    except (pa.ArrowInvalid, OSError):
        return True
    out.chunks += len(batches)
    _keep(out, schema, batches)
    return True


def read(run_dir, name: str = "samples"):
    """Every intact chunk journalled under ``name`` as one DataFrame (empty if none).

    Columns missing from some segments are NaN/None there. ``frame.attrs["journal_damage"]``
    lists what was left out as damaged (:func:`read_chunks`)."""
    import pandas as pd

    data = read_chunks(run_dir, name)
    frames = [t.to_pandas() for t in data.tables]
    if not frames:
        frame = pd.DataFrame()
    else:
        frames = [f for f in frames if len(f)] or frames[:1]
        frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    frame.attrs["journal_damage"] = list(data.damage)
    return frame


def remove(run_dir, name: str = "samples") -> None:
    """Delete the segments of journal ``name`` (call after their rows are safely elsewhere)."""
    for path in paths(run_dir, name):
        try:
            path.unlink()
        except FileNotFoundError:
            pass
    fsync_dir(Path(run_dir))


def names(run_dir) -> list[str]:
    """The journals in ``run_dir`` (``samples``, ``repeats``, ...)."""
    found = {p.name.split(".journal.")[0] for p in Path(run_dir).glob(f"*.journal.[0-9][0-9][0-9][0-9]{SUFFIX}")}
    return sorted(n for n in found if re.fullmatch(r"[A-Za-z0-9_-]+", n))


def arrow_table(data):
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data
    if not isinstance(data, pd.DataFrame):
        cols = {str(k): np.asarray(v) for k, v in dict(data or {}).items()}
        lengths = {len(v) if v.ndim else 1 for v in cols.values()}
        if len(lengths) > 1:
            raise ValueError(f"journal chunk columns differ in length: {sorted(lengths)}")
        data = pd.DataFrame(cols)
    return pa.Table.from_pandas(data, preserve_index=False)


__all__ = [
    "MAGIC",
    "SUFFIX",
    "Journal",
    "JournalData",
    "encode_chunk",
    "names",
    "paths",
    "read",
    "read_chunks",
    "remove",
]
