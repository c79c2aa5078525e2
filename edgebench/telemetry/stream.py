"""Append-only sample files that survive Ctrl-C and crashes (level 2).

A long run writes its rows as they come into an Arrow IPC *stream* file
(``*.arrows``): one record batch per chunk, flushed to the operating system
after each, so a run killed at any moment keeps every chunk written before.
At the end the stream is converted to Parquet (atomically) and removed.
:func:`read_stream` reads what a crashed run left, stopping at a torn last batch.

The schema is fixed by the first batch: later columns that are missing become
nulls, unknown extra columns are dropped (and counted in :attr:`dropped`).
"""
from __future__ import annotations

import os
from pathlib import Path


class ArrowStream:
    def __init__(self, path):
        self.path = Path(path)
        self._file = None
        self._writer = None
        self.schema = None
        self.rows = 0
        self.dropped: set = set()

    def append(self, data) -> None:
        """Write one chunk (a pandas DataFrame or a dict of equal-length numpy arrays) and flush it."""
        import pyarrow as pa

        cols = _columns(data)
        n = len(next(iter(cols.values()))) if cols else 0
        if n == 0:
            return
        if self._writer is None:
            table = pa.table({k: _arrow(v) for k, v in cols.items()})
            self.schema = table.schema
            self._file = open(self.path, "wb")
            self._writer = pa.ipc.new_stream(self._file, self.schema)
        else:
            self.dropped |= set(cols) - set(self.schema.names)
            table = pa.Table.from_arrays(
                [_arrow(cols[f.name], f.type) if f.name in cols else pa.nulls(n, f.type) for f in self.schema],
                schema=self.schema)
        for batch in table.to_batches():
            self._writer.write_batch(batch)
        self._file.flush()
        self.rows += n

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def to_parquet(self, parquet_path) -> Path | None:
        """Close, convert to Parquet atomically, remove the stream; None if nothing was written."""
        self.close()
        if not self.path.exists():
            return None
        frame = read_stream(self.path)
        out = Path(parquet_path)
        tmp = out.with_name(out.name + ".tmp")
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, out)
        self.path.unlink()
        return out


def _columns(data) -> dict:
    import numpy as np

    if hasattr(data, "columns"):
        return {str(c): data[c].to_numpy() for c in data.columns}
    return {str(k): np.asarray(v) for k, v in (data or {}).items()}


def _arrow(values, type_=None):
    import pyarrow as pa

    if values.dtype.kind == "U":
        return pa.array(values, type=type_ or pa.string())
    if values.dtype == object:
        return pa.array([None if v is None else str(v) for v in values.tolist()], type=type_ or pa.string())
    arr = pa.array(values)
    return arr if type_ is None or arr.type == type_ else arr.cast(type_, safe=False)


def read_stream(path):
    """Every complete record batch of a stream file as one DataFrame (a torn tail is ignored)."""
    import pandas as pd
    import pyarrow as pa

    batches = []
    try:
        with pa.OSFile(str(path), "rb") as f:
            reader = pa.ipc.open_stream(f)
            schema = reader.schema
            while True:
                try:
                    batches.append(reader.read_next_batch())
                except StopIteration:
                    break
                except (pa.ArrowInvalid, OSError):  # a batch cut short by a crash
                    break
    except (pa.ArrowInvalid, OSError):
        return pd.DataFrame()
    if not batches:
        return schema.empty_table().to_pandas()
    return pa.Table.from_batches(batches, schema=schema).to_pandas()
