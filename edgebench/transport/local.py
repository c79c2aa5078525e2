"""The ``local`` transport: the agent as a child process on this computer.

Runs ``<python> -m edgebench.agent`` with ``PYTHONPATH`` pointing at the tree
this edgebench was imported from, so the agent is importable even when
edgebench is not installed into that interpreter (it still needs numpy and a
TFLite runtime there).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from edgebench.transport.process import ProcessChannel

SOURCE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding edgebench/


class LocalTransport:
    """Start the agent with ``python`` (default: this interpreter)."""

    kind = "local"

    def __init__(self, python: str | None = None, cache_dir: str | None = None,
                 env: dict | None = None, cpus: str | None = None):
        self.python = python or sys.executable
        self.cache_dir = cache_dir
        self.cpus = cpus  # e.g. "0": pin the agent (comparisons on a machine whose cores differ)
        self.env = dict(env or {})
        self._version: str | None = None

    def argv(self) -> list[str]:
        argv = [self.python, "-m", "edgebench.agent"]
        if self.cache_dir:
            argv += ["--cache-dir", str(self.cache_dir)]
        if self.cpus:
            argv += ["--cpus", str(self.cpus)]
        return argv

    def environment(self) -> dict:
        env = dict(os.environ)
        env.update(self.env)
        parts = [SOURCE_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
        return env

    def open(self) -> ProcessChannel:
        return ProcessChannel(self.argv(), "agent process", env=self.environment())

    def describe(self) -> str:
        pinned = f", pinned to CPUs {self.cpus}" if self.cpus else ""
        return f"local agent (python {self._python_version()} at {self.python}{pinned})"

    def _python_version(self) -> str:
        if self._version is None:
            if os.path.realpath(self.python) == os.path.realpath(sys.executable):
                self._version = "%d.%d" % sys.version_info[:2]
            else:
                try:
                    out = subprocess.run(
                        [self.python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                        stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=True)
                    self._version = out.stdout.decode().strip() or "?"
                except (OSError, subprocess.SubprocessError):
                    self._version = "?"
        return self._version

    def __repr__(self) -> str:
        return f"LocalTransport(python={self.python!r})"
