"""Shared pytest fixtures: tool checks and a throwaway sshd on 127.0.0.1."""
from __future__ import annotations

import os
import shutil

import pytest


def require_tool(name: str) -> str:
    """Path of an external program; skip the test without it, but fail under CI=true."""
    path = shutil.which(name, path=os.pathsep.join(
        [os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin", "/sbin"]))
    if path is None:
        message = f"{name} is not installed"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{message} (CI=true: .ci/run must install it)", pytrace=False)
        pytest.skip(message)
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
