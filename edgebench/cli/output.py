"""Shared output helpers of the command line (level 5).

* ``console``: a rich Console on stdout, for results (tables, summaries);
* ``err_console``: a rich Console on stderr, for progress and warnings;
* :func:`emit_json`: the ``--json`` output of a command, from the data model's
  own ``to_dict()``;
* :func:`safe_text`: untrusted text (an ack reason, a class name, a tensor name read from a
  model, a path) with its control characters made visible, so nothing read from a file can
  move the cursor, retitle the terminal or hide a line. Both consoles apply it to every
  string they print (tables included), so a verb cannot forget it; the one error line of
  :mod:`edgebench.cli.app` applies it too.

The consoles are created on first use (``from edgebench.cli.output import
console`` works), so importing this module does not import rich and verbs that
register on the app stay cheap to load.
"""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

_consoles: dict = {}
_CONTROLS = None


def safe_text(text: str) -> str:
    """``text`` with every C0 control but newline and tab, DEL and every C1 control (ESC, CSI, OSC,
    BEL, carriage return...) written as a visible ``\\xNN`` escape."""
    global _CONTROLS
    if _CONTROLS is None:
        _CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def plain_text(text: str, **kwargs):
    """A rich ``Text`` of untrusted ``text`` (no markup read), its controls made visible (:func:`safe_text`)."""
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich.text import Text

    return Text(safe_text(str(text)), **kwargs)


def _console(stderr: bool):
    key = "err" if stderr else "out"
    if key not in _consoles:
        # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
        from rich.console import Console

        # file=None: rich resolves sys.stdout / sys.stderr at print time, so
        # redirection (tests, CliRunner) is honoured.
        stream = sys.stderr if stderr else sys.stdout
        # Piped output (a log, CI, a README) gets 120 columns instead of rich's 80,
        # so latency tables are not truncated; COLUMNS still wins when set.
        width = None
        if not (hasattr(stream, "isatty") and stream.isatty()) and "COLUMNS" not in os.environ:
            width = 120
        class SafeConsole(Console):
            """A Console whose strings (its own markup aside) cannot carry terminal control sequences."""

            def render_str(self, text, **kwargs):
                return super().render_str(safe_text(text), **kwargs)

        _consoles[key] = SafeConsole(stderr=stderr, highlight=False, width=width)
    return _consoles[key]


def get_console():
    """The rich Console on stdout (results); also available as ``console``."""
    return _console(stderr=False)


def get_err_console():
    """The rich Console on stderr (progress, warnings); also available as ``err_console``."""
    return _console(stderr=True)


def __getattr__(name: str) -> Any:  # PEP 562: lazy module attributes
    if name == "console":
        return get_console()
    if name == "err_console":
        return get_err_console()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _plain(obj: Any) -> Any:
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if isinstance(obj, (list, tuple)):
        return [_plain(item) for item in obj]
    return obj


def emit_json(obj: Any) -> None:
    """Print ``obj`` (its ``to_dict()`` if it has one; lists item by item) as JSON on stdout."""
    sys.stdout.write(json.dumps(_plain(obj), indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()


# console and err_console come from the module __getattr__ above (made on first use)
__all__ = ["console", "err_console", "get_console", "get_err_console", "emit_json", "plain_text", "safe_text"]  # noqa: F822
