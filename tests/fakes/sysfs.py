"""Fake Linux board trees for the collectors (edgebench.agent.sysinfo, .telemetry): sysfs/procfs files
written under a root folder, and a fake ``vcgencmd`` on PATH. Imported by the tests as ``fakes.sysfs``."""
from __future__ import annotations

import os
import stat
from pathlib import Path

#: what vcgencmd does on a Pi whose firmware interface is gone: a message on stderr, exit 255
VCGENCMD_FAILING = 'echo "VCHI initialization failed" >&2\nexit 255\n'


def write(root: Path, rel: str, value) -> None:
    """``root/rel`` holding value: bytes as they are, anything else as text ending in a newline
    (as sysfs files do: "48312\\n")."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if not isinstance(value, bytes):
        text = str(value)
        value = (text if text.endswith("\n") else text + "\n").encode()
    path.write_bytes(value)


def fake_vcgencmd(monkeypatch, bin_dir: Path, body: str, keep_path: bool = True) -> Path:
    """A ``vcgencmd`` shell script running ``body`` in bin_dir, first on PATH (the only folder on it
    when keep_path is False, so nothing else of the system is found either)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "vcgencmd"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}" if keep_path else str(bin_dir))
    return script
