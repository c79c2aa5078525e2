"""Pack the on-device agent into one self-contained, deterministic zipapp.

A remote transport copies this single file to the board and runs it with the
board's ``python3`` (``python3 agent-<sha12>.pyz ...``). The archive holds only
what the agent needs: ``edgebench/agent/**.py``, an *empty* ``edgebench/__init__.py``
(the real one belongs to the host package and may import host-only code) and a
top-level ``__main__.py``. Entries are sorted, stored uncompressed and stamped
with a fixed date and mode, so the same sources always give the same bytes and
therefore the same sha256 on every machine; the file name carries that hash, so
a board's cached copy is reused exactly as long as the agent has not changed.
"""
from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path

from edgebench.errors import TransportError
from edgebench.results.files import atomic_write

_FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip entry can hold
_FILE_MODE = 0o100644 << 16  # regular file, rw-r--r--
_SHEBANG = b"#!/usr/bin/env python3\n"

_MAIN = '''\
"""Entry point of the edgebench agent zipapp: python3 agent-<sha12>.pyz [options]."""
import sys

if sys.version_info < (3, 9):
    sys.stderr.write(
        "edgebench-agent: Python 3.9 or newer is required, this is %d.%d.%d\\n"
        % tuple(sys.version_info[:3])
    )
    sys.exit(3)

from edgebench.agent.server import main

sys.exit(main(sys.argv[1:]))
'''

_STUB_INIT = '"""Stub package: only edgebench.agent is shipped to the board."""\n'


def _agent_sources() -> list[tuple[str, bytes]]:
    """(archive name, bytes) of every .py file of the agent package, sorted."""
    pkg_root = Path(__file__).resolve().parent.parent  # .../edgebench
    agent_dir = pkg_root / "agent"
    if not (agent_dir / "server.py").is_file():
        raise TransportError(
            f"the on-device agent is missing from this installation ({agent_dir}/server.py)",
            hint="reinstall edgebench",
        )
    files = []
    for path in sorted(agent_dir.rglob("*.py")):
        rel = path.relative_to(pkg_root.parent)
        if "__pycache__" in rel.parts:
            continue
        files.append((rel.as_posix(), path.read_bytes()))
    return files


def agent_zipapp_bytes() -> bytes:
    """The agent zipapp as bytes (deterministic for given sources)."""
    entries = [("__main__.py", _MAIN.encode()), ("edgebench/__init__.py", _STUB_INIT.encode())]
    entries += _agent_sources()
    entries.sort(key=lambda e: e[0])
    buf = io.BytesIO()
    buf.write(_SHEBANG)
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=_FIXED_DATE)
            info.external_attr = _FILE_MODE
            info.create_system = 3  # unix, whatever the host: the bytes stay the same
            info.compress_type = zipfile.ZIP_STORED
            zf.writestr(info, data)
    return buf.getvalue()


def agent_zipapp(dest_dir: str | os.PathLike) -> tuple[Path, str]:
    """Write ``agent-<sha12>.pyz`` into ``dest_dir`` (if not there yet).

    Returns ``(path, sha256_hex)``. The write is atomic (temporary file + rename),
    so concurrent callers and interrupted runs never leave a partial archive.
    """
    data = agent_zipapp_bytes()
    sha = hashlib.sha256(data).hexdigest()
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"agent-{sha[:12]}.pyz"
    if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
        return path, sha

    atomic_write(path, lambda fh: fh.write(data), mode=0o755)
    return path, sha
