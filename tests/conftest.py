"""Shared pytest fixtures: tool checks and a throwaway sshd on 127.0.0.1."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# The MLPerf Tiny reference models: shared/ sits beside the clone (here, and in CI).
MLPERF_DIR = Path(__file__).resolve().parents[2] / "shared" / "models" / "mlperf-tiny"


def missing(message: str):
    """Something the test needs is absent: skip locally, but fail under CI=true (a skip proves nothing)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message} (CI=true: .ci/run must provide it)", pytrace=False)
    pytest.skip(message)


def require_tool(name: str) -> str:
    """Path of an external program; skip the test without it, but fail under CI=true."""
    path = shutil.which(name, path=os.pathsep.join(
        [os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin", "/sbin"]))
    if path is None:
        missing(f"{name} is not installed")
    return path


def require_module(name: str):
    """An importable module; skip the test without it, but fail under CI=true."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"{name} is not importable ({exc})")


def require_file(path):
    """A file the test reads (e.g. the shared MLPerf Tiny models); skip without it, fail under CI=true."""
    if not os.path.isfile(path):
        missing(f"{path} is not present")
    return path


@pytest.fixture(scope="session")
def sshd_server(tmp_path_factory):
    """A real OpenSSH server on 127.0.0.1 (see tests/sshd_fixture.py)."""
    sshd = require_tool("sshd")
    for tool in ("ssh", "scp", "ssh-keygen"):
        require_tool(tool)
    from sshd_fixture import SshServer

    server = SshServer(tmp_path_factory.mktemp("sshd"), sshd=sshd).start()
    try:
        yield server
    finally:
        server.stop()
