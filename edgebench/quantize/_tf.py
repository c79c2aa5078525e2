"""Import TensorFlow on demand, and keep its chatter off stdout/stderr (level 2).

TensorFlow is imported only inside functions (``edgebench --help`` stays fast).
Before the first import, ``TF_ENABLE_ONEDNN_OPTS=0`` is set: oneDNN kernels are a
source of run-to-run floating point differences (models/digits/build.py learned
this). When TensorFlow was already imported by the caller with oneDNN on, the
quantizer says so in a warning instead of silently promising identical bytes.

Keras 3's ``model.export`` (used by ``TFLiteConverter.from_keras_model``) prints
to stdout, the converter's C++ code prints to file descriptors 1 and 2, and
Python warnings fly: :class:`Quiet` captures all of it, at the Python and at the
file-descriptor level, so that ``--json`` output stays parseable and an error
stays one line. The captured text is kept for error messages.
"""
from __future__ import annotations

import io
import os
import sys
import tempfile
import warnings
from typing import Callable, Optional

from edgebench.errors import UsageError

INSTALL_HINT = "pip install 'edgebench[quantize]' (installs tensorflow-cpu)"


class TensorFlowMissing(UsageError):
    """TensorFlow is not installed (or fails to import)."""


def onednn_setting() -> Optional[str]:
    return os.environ.get("TF_ENABLE_ONEDNN_OPTS")


def import_tensorflow():
    """Return the ``tensorflow`` module; TensorFlowMissing with an install hint if absent."""
    if "tensorflow" not in sys.modules or sys.modules["tensorflow"] is None:
        os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        with Quiet():
            import tensorflow as tf  # noqa: WPS433 (heavy import, on purpose here)
    except ImportError as exc:
        missing = getattr(exc, "name", None)
        if missing in (None, "tensorflow") or str(exc).startswith("import of tensorflow halted"):
            raise TensorFlowMissing("TensorFlow is not installed; quantize needs it", INSTALL_HINT) from None
        raise TensorFlowMissing(f"TensorFlow fails to import ({type(exc).__name__}: {exc})",
                                f"repair the installation: {INSTALL_HINT}") from None
    return tf


def keras_version(tf) -> str:
    try:
        import keras  # optional dependency: its absence is handled here

        return str(keras.__version__)
    except Exception:  # pragma: no cover - keras ships with tensorflow >= 2.16
        return str(getattr(getattr(tf, "keras", None), "__version__", "unknown"))


def _fileno(stream) -> Optional[int]:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


class Quiet:
    """Capture Python and file-descriptor output (1 and 2) and warnings while active.

    ``text`` holds what was captured once the block is left. :meth:`say` calls a
    progress function with the streams of the caller (so progress still reaches
    the user's stderr while TensorFlow's noise does not).
    """

    def __init__(self) -> None:
        self.text = ""
        self._saved_fds: dict = {}

    def __enter__(self) -> "Quiet":
        self._py = (sys.stdout, sys.stderr)
        for s in self._py:
            try:
                s.flush()
            except Exception:
                pass
        self._log = tempfile.TemporaryFile(mode="w+b")
        try:
            for fd in (1, 2):
                self._saved_fds[fd] = os.dup(fd)
                os.dup2(self._log.fileno(), fd)
        except OSError:  # no real descriptors (unusual embedding): Python-level capture only
            self._restore_fds()
        self._buf = io.StringIO()
        self._progress_err = self._py[1]
        if _fileno(self._py[1]) == 2 and 2 in self._saved_fds:
            self._progress_err = open(os.dup(self._saved_fds[2]), "w", buffering=1,  # noqa: SIM115
                                      encoding=getattr(self._py[1], "encoding", None) or "utf-8",
                                      errors="replace")
        sys.stdout = sys.stderr = self._buf
        self._warn = warnings.catch_warnings()
        self._warn.__enter__()
        warnings.simplefilter("ignore")
        return self

    def say(self, fn: Optional[Callable[[str], None]], message: str) -> None:
        if fn is None:
            return
        inner = (sys.stdout, sys.stderr)
        sys.stdout, sys.stderr = self._py[0], self._progress_err
        try:
            fn(message)
        finally:
            try:
                sys.stderr.flush()
            except Exception:
                pass
            sys.stdout, sys.stderr = inner

    def _restore_fds(self) -> None:
        for fd, saved in self._saved_fds.items():
            os.dup2(saved, fd)
            os.close(saved)
        self._saved_fds = {}

    def __exit__(self, *exc) -> None:
        self._warn.__exit__(None, None, None)
        sys.stdout, sys.stderr = self._py
        self._restore_fds()
        if self._progress_err is not self._py[1]:
            self._progress_err.close()
        self._log.seek(0)
        raw = self._log.read().decode("utf-8", "replace")
        self._log.close()
        self.text = raw + self._buf.getvalue()
        return None


def first_error_line(exc: BaseException, log: str = "") -> str:
    """The most telling single line of a TensorFlow/Keras exception (and its captured log)."""
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        low = ln.lower()
        if "error:" in low and "<unknown>" not in low:
            return _clip(ln.split("error:", 1)[1].strip() or ln)
    if lines:
        return _clip(lines[0])
    for ln in reversed([s.strip() for s in log.splitlines() if s.strip()]):
        if "error" in ln.lower():
            return _clip(ln)
    return type(exc).__name__


def _clip(line: str, limit: int = 300) -> str:
    line = " ".join(line.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
