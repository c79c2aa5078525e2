"""Options more than one verb takes (level 5), each declared here once.

A verb uses a factory as the default of its parameter::

    from edgebench.cli import options as opt

    board: str = opt.board(),
    json_out: bool = opt.json_flag("the run"),

A factory fixes the option's spelling, its meaning and its help text; its
arguments change only what honestly differs between verbs: the default, the
noun in the help ("the run", "the estimate"), a verb-specific help text where
the option means something narrower there (``--url`` of ``flash`` is a serial
port), and ``rich_help_panel`` (the group it is listed under in ``--help``).
Options only one verb takes stay in that verb.

The panel names below are the groups the long verbs use in ``--help``.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Optional

import typer

from edgebench import ranges as R
from edgebench.errors import InputWarning

# Help panels of the long verbs (bench, soak, sweep, energy, battery, accuracy).
BOARD = "Board"                    # which board, reached how
RUNTIME = "How the model runs"     # kernels, threads, delegate, inputs
STOPPING = "When to stop"          # precision target, sample and time budgets, repeats
OUTPUT = "Runs and output"         # where runs are stored, --recover, --json
STEADY = "Steady state"            # the thermal-soak family: cooling, windows, telemetry


def within(rng: "R.Range"):
    """The callback that checks a numeric option against its :class:`edgebench.ranges.Range` (the one
    the library checks too): one line naming the range, e.g. ``Invalid value for '--rate': must be
    a finite number from 0.001 to 1,000,000 inferences per second, got 1e-320``."""
    def check(value):
        if value is None:
            return value
        why = rng.problem(value)
        if why:
            raise typer.BadParameter(why)
        return value

    # tests/test_ranges.py: every numeric option declares one (cause of the ignore: mypy models no function attributes)
    check.range = rng  # type: ignore[attr-defined]
    return check


def json_flag(what: str = "the result", **kw: Any) -> Any:
    """``--json``: the verb's data model (its ``to_dict()``) on stdout instead of tables."""
    return typer.Option(False, "--json", help=f"Print {what} as JSON on stdout.", **kw)


def quiet(**kw: Any) -> Any:
    """``--quiet/-q``: no progress on stderr (warnings and errors still), on a terminal or in a log."""
    return typer.Option(False, "--quiet", "-q", help="No progress lines on stderr (warnings and errors still "
                        "go there); without it a log gets one plain line per finished step.", **kw)


def board(default: Any = "host", help: Optional[str] = None, **kw: Any) -> Any:
    """``--board/-b``: a board profile name (``...`` as default makes it required)."""
    return typer.Option(default, "--board", "-b", help=help or "Board profile name (see `edgebench boards`), or a "
                        "labgrid farm's place: labgrid:PLACE or labgrid:TAG=VALUE (docs/farm.md).", **kw)


def farm(**kw: Any) -> Any:
    """``--farm TAGS``: run the command on every labgrid place with these tags, in parallel."""
    return typer.Option(None, "--farm", metavar="TAGS",
                        help="Run this on every place of the labgrid farm with these tags (e.g. board=posix), in "
                             "parallel, each its own run in one session folder, then compare the boards; busy places "
                             "are waited for up to $EDGEBENCH_FARM_WAIT s (default 60) or skipped (docs/farm.md).",
                        **kw)


def boards_dir(**kw: Any) -> Any:
    """``--boards-dir DIR`` (repeatable): extra folders of board profiles."""
    return typer.Option([], "--boards-dir", metavar="DIR",
                        help="Also read board profiles (NAME.yaml) from DIR; repeatable, later ones win.", **kw)


URL_HELP = ("Override the board's address: ssh://user@host, user@host, a serial port (/dev/ttyUSB0, "
            "socket://host:port) or local.")
IMAGE_HELP = ("Emulated boards: firmware image to start instead of building one (e.g. from "
              "`edgebench flash --build-only`).")


def url(help: Optional[str] = None, **kw: Any) -> Any:
    """``--url``: the board's address instead of its profile's."""
    return typer.Option(None, "--url", help=help or URL_HELP, **kw)


def image(help: Optional[str] = None, **kw: Any) -> Any:
    """``--image``: a firmware image for an emulated board instead of building one."""
    return typer.Option(None, "--image", help=help or IMAGE_HELP, **kw)


def cpus(**kw: Any) -> Any:
    """``--cpus``: CPU pinning of a local board's agent."""
    return typer.Option(None, "--cpus", help="Pin a local board's agent to these CPUs, e.g. 0 (cores of a "
                                             "machine can differ: pin when comparing runs).", **kw)


def runs_dir(writes: bool = True, help: Optional[str] = None, **kw: Any) -> Any:
    """``--runs-dir``: the folder of run folders (written by measuring verbs, read by the others)."""
    text = help or ("Where run folders are written." if writes else "Folder holding run folders.")
    return typer.Option(Path("runs"), "--runs-dir", help=text, **kw)


def store(help: Optional[str] = None, **kw: Any) -> Any:
    """``--store URL``: a shared results store every new run is also appended to (a reader: read from)."""
    return typer.Option(None, "--store", metavar="URL",
                        help=help or "Also append the run to this shared results store (postgresql://...; default "
                             "$EDGEBENCH_STORE); unreachable: the run is queued for `edgebench push` (docs/store.md).",
                        **kw)


def label(**kw: Any) -> Any:
    """``--label key=value``: labels stored with the run (``extra.labels``), repeatable."""
    return typer.Option([], "--label", metavar="KEY=VALUE",
                        help="Label the run (repeatable), e.g. commit=abc123 or ci=nightly; default commit= the git "
                             "commit of the current folder when it is a repository (`edgebench history --by commit`).",
                        **kw)


def recover(kind: str, keeps: str = "", **kw: Any) -> Any:
    """``--recover RUN_DIR``: finish a run of this verb left ``running`` by a crash or a kill."""
    return typer.Option(None, "--recover", metavar="RUN_DIR",
                        help=f"Finish a {kind} run folder left 'running' by a crash or a kill{keeps}.", **kw)


def seed(help: str = "Seed of the random inputs.", **kw: Any) -> Any:
    """``--seed``: the seed of whatever the verb draws at random (its help says what)."""
    return typer.Option(0, "--seed", help=help, callback=within(R.SEED), **kw)


def inputs(help: str = ".npy/.npz inputs (default: seeded random in range).", **kw: Any) -> Any:
    """``--inputs``: input samples instead of seeded random ones."""
    return typer.Option(None, "--inputs", help=help, **kw)


RATE_HELP = "Requests per second: 50, 50/s, 2/min, 30/h."


def rate(help: str = RATE_HELP, **kw: Any) -> Any:
    """``--rate``: requests (inferences) per second, one syntax everywhere (``stats.energy.parse_rate``:
    ``50``, ``50/s``, ``2/min``, ``30/h``); a sweep takes a comma-separated list of them."""
    return typer.Option(None, "--rate", help=help, **kw)


def kernels(default: Optional[str] = "xnnpack",
            help: str = "Kernels: xnnpack (default), builtin (no default delegates) or reference.", **kw: Any) -> Any:
    """``--kernels``: the kernel set of the runtime on the board."""
    return typer.Option(default, "--kernels", help=help, **kw)


def threads(default: Any = 1, help: str = "Interpreter threads.", **kw: Any) -> Any:
    """``--threads``: interpreter threads (``sweep`` takes a list: its library checks each)."""
    if isinstance(default, int):
        kw.setdefault("callback", within(R.THREADS))
    return typer.Option(default, "--threads", help=help, **kw)


def delegate(default: Optional[str] = None, help: str = "Delegate to load, e.g. edgetpu.", **kw: Any) -> Any:
    """``--delegate``: a TFLite delegate to load."""
    return typer.Option(default, "--delegate", help=help, **kw)


def preprocess(of: str = "", **kw: Any) -> Any:
    """``--preprocess KEY=VALUE`` (repeatable): the declared preprocessing, one spelling in every verb."""
    return typer.Option(None, "--preprocess",
                        help=f"Declared preprocessing{of}, KEY=VALUE, repeatable (the same in accuracy and "
                             "quantize): scale=1/255, mean=0.5 or per channel mean=0.485,0.456,0.406, std=..., "
                             "and for image folders size=HxW, resize=HxW, channels=1|3.", **kw)


def target_ci(help: str = "Stop when the 95% CI half-width of the median is within this fraction of it.",
              **kw: Any) -> Any:
    """``--target-ci``: the precision a latency measurement stops at (``--target`` before 0.3)."""
    return typer.Option(0.01, "--target-ci", help=help, callback=within(R.TARGET), **kw)


def deprecated(old: str, new: str, **kw: Any) -> Any:
    """A hidden option keeping an old spelling working: ``old`` is read as ``new`` (see :func:`renamed`)."""
    return typer.Option(None, old, hidden=True, help=f"Deprecated: {new}.", **kw)


def renamed(old_value: Any, value: Any, old: str, new: str) -> Any:
    """The value of an option given under its ``old`` name (with one warning line), else ``value``."""
    if old_value is None:
        return value

    warnings.warn(f"{old} is deprecated; use {new}", InputWarning, stacklevel=2)
    return old_value


# The thermal-soak family (soak, and sweep at each of its points).

def cool_down(help: str = "First idle until the temperature is flat.", **kw: Any) -> Any:
    return typer.Option(False, "--cool-down", help=help, **kw)


def cool_timeout(**kw: Any) -> Any:
    return typer.Option(600.0, "--cool-timeout", help="Give up cooling down after this many seconds.",
                        callback=within(R.COOL_TIMEOUT_S), **kw)


def window(help: str = "Trailing window (s) over which temperature and latency must be flat.", **kw: Any) -> Any:
    return typer.Option(60.0, "--window", help=help, callback=within(R.WINDOW_S), **kw)


def burst(help: str = "Seconds at the start reported as the burst figure.", **kw: Any) -> Any:
    return typer.Option(5.0, "--burst", help=help, callback=within(R.BURST_S), **kw)


def telemetry_hz(**kw: Any) -> Any:
    return typer.Option(2.0, "--telemetry-hz", help="Telemetry samples per second on the device (at most 10).",
                        callback=within(R.TELEMETRY_HZ), **kw)


# MLPerf Tiny runner compatibility (deploy, and bench --mlperf).

def model_id(help: str = "", **kw: Any) -> Any:
    return typer.Option(
        None, "--model-id", help=help or "What `profile%` reports as m-model-[ID], the id the MLCommons runner "
        "looks its test script up by: kws01, ic01, vww01, ad01 (1-16 of A-Z a-z 0-9 _ - .). Default: that id "
        "when the model's input shape is an MLPerf Tiny benchmark's, else the file name.", **kw)


def input_encoding(default: Optional[str] = "int8", extra: str = "", **kw: Any) -> Any:
    return typer.Option(
        default, "--input-encoding", help="How the device reads the `db` input buffer: int8 (the input "
        "tensor as is), uint8-offset (uint8, minus 128 on the device: the ic01/vww01 reference firmware), "
        "float32 (quantized on the device: the ad01 reference firmware)." + extra, **kw)


def results(default: Optional[str] = "outputs", extra: str = "", **kw: Any) -> Any:
    return typer.Option(
        default, "--results", help="What m-results-[...] reports: outputs (the dequantized output "
        "tensor) or mse (one anomaly score, mean squared error between input and output: the ad01 "
        "reference firmware)." + extra, **kw)


# The root options (edgebench --debug / --version), used by cli/app.py.

def debug() -> Any:
    return typer.Option(False, "--debug", help="Show tracebacks for errors (allowed anywhere on the line).")


def version(callback) -> Any:
    return typer.Option(False, "--version", callback=callback, is_eager=True, help="Print the version and exit.")
