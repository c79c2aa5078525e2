"""Fan one command out over the places of a farm (``--farm TAGS``): the pieces without processes.

The CLI (``edgebench.cli.farm_fanout``) runs the same command line once per matching place, in
parallel, each a child ``edgebench`` process holding its own place (``--board labgrid:PLACE``) and
writing its own run under one session folder. This module rewrites that command line
(:func:`child_args`), names the session folder, and keeps the outcome of every place in a
:class:`FanoutSummary`: a pydantic dataclass whose serialized form (``to_dict()``) is ``--json``
and ``SESSION/farm.json``, so ``edgebench schema farm`` prints that file's JSON Schema.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional

from pydantic import ConfigDict, Field, computed_field
from pydantic.dataclasses import dataclass
from typing_extensions import Annotated

from edgebench.errors import ResultError
from edgebench.results.model import FORMAT, RunResult
from edgebench.schema import Float, Int, Str, adapter

BUSY_EXIT = 75     # a child's exit code when its place stayed taken for the whole wait (EX_TEMPFAIL)

# options whose value the fan-out replaces (the board, where runs go) or drops (--farm itself)
_VALUE_OPTIONS = ("--farm", "--board", "-b", "--runs-dir", "--url")
_FLAGS = ("--json",)


def child_args(argv: list, place: str, runs_dir: Path | None) -> list:
    """``argv`` (the command line after ``edgebench``) for one place: ``--farm``, ``--board``,
    ``--url``, ``--runs-dir`` and ``--json`` removed, then ``--board labgrid:PLACE [--runs-dir DIR] --json``
    (``runs_dir`` None: a verb that stores no run, e.g. verify)."""
    out, skip = [], False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        if arg == "--":
            out.extend(argv[i:])
            break
        name = arg.split("=", 1)[0]
        if name in _VALUE_OPTIONS:
            skip = "=" not in arg
            continue
        if arg in _FLAGS:
            continue
        out.append(arg)
    extra = ["--board", f"labgrid:{place}", *(["--runs-dir", str(runs_dir)] if runs_dir is not None else []),
             "--json"]
    if "--" in out:
        cut = out.index("--")
        return out[:cut] + extra + out[cut:]
    return out + extra


def session_dir(runs_root, verb: str, now: _dt.datetime | None = None) -> Path:
    """A new folder for one fan-out: ``RUNS/farm-VERB-YYYYmmddTHHMMSSZ[-N]``."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    base = Path(runs_root) / f"farm-{verb}-{now.strftime('%Y%m%dT%H%M%SZ')}"
    Path(runs_root).mkdir(parents=True, exist_ok=True)
    path, n = base, 1
    while True:   # made here, never one that already exists (a name anyone can compute in advance)
        try:
            path.mkdir()
            return path
        except FileExistsError:
            n += 1
            path = base.with_name(f"{base.name}-{n}")


STATUSES = ("pending", "ok", "failed", "busy", "gate-failed", "interrupted")
_CONFIG = ConfigDict(defer_build=True)
# Each ``@computed_field`` over ``@property`` below carries ``# type: ignore[prop-decorator]``: mypy does
# not support decorators on top of @property (python/mypy#1362), and pydantic's own documentation of
# computed_field (its "Mypy Warning") says to add exactly that ignore on the ``@computed_field`` line.


@dataclass(config=_CONFIG)
class PlaceOutcome:
    """One place's share of a fan-out: what ran, how it ended, where its run is."""

    place: Annotated[Str, Field(description="the labgrid place")]
    profile: Annotated[Optional[Str], Field(description="its edgebench board profile (the place's tag)")]
    status: Annotated[Literal["pending", "ok", "failed", "busy", "gate-failed", "interrupted"], Field(
        description="ok; failed; busy (taken for the whole wait: skipped); gate-failed (exit 2); interrupted; "
                    "pending (never finished)")] = "pending"
    exit_code: Annotated[Optional[Int], Field(description="the child's exit code")] = None
    message: Annotated[Optional[Str], Field(description="the child's error line")] = None
    elapsed_s: Annotated[Optional[Float], Field(description="how long the child ran")] = None
    run_dir: Annotated[Optional[Str], Field(description="the child's run folder")] = None
    result: Annotated[Optional[Dict[str, Any]], Field(description="the child's --json output (a run.json, or "
                                                                  "verify's comparison)")] = None

    @computed_field(  # type: ignore[prop-decorator]  # pydantic's documented pattern: see _CONFIG above
        alias="figure", description="bench, soak: the e2e median and its 95% interval, runs, n, throughput, label")
    @property
    def headline(self) -> Optional[Dict[str, Any]]:
        return self.figure() or None

    @computed_field(  # type: ignore[prop-decorator]  # pydantic's documented pattern: see _CONFIG above
        alias="verdict", description="verify, soak, sweep: the outcome in a phrase (bit-exact, differs, run status)")
    @property
    def outcome(self) -> Optional[str]:
        return self.verdict()

    def run(self) -> Optional[RunResult]:
        """The child's run, when its --json output is one (verify prints a comparison instead)."""
        r = self.result or {}
        if r.get("format") != FORMAT:
            return None
        try:
            return RunResult.from_dict(r, f"{self.place}: the child's --json output")
        except ResultError:
            return None

    def figure(self) -> dict:
        """The headline of a bench run: e2e median and its 95% interval, runs, n, throughput, label."""
        run = self.run()
        if run is None or not run.stage("e2e"):
            return {}
        e2e = run.stage("e2e")
        return {"median_s": e2e.median_s, "ci_low_s": e2e.ci_low_s, "ci_high_s": e2e.ci_high_s,
                "ci_method": e2e.ci_method, "runs": len(e2e.per_run or []) or None, "n": e2e.n,
                "throughput_per_s": run.throughput.per_s, "label": run.label, "run_status": run.status}

    def verdict(self) -> str | None:
        """A one-phrase outcome for runs without a latency headline (verify, soak, sweep)."""
        r = self.result or {}
        if r.get("format") == "edgebench-verify":
            if r.get("bit_exact"):
                return "bit-exact"
            worst = max((o.get("max_diff_lsb") or 0 for o in r.get("outputs") or []), default=0)
            return f"differs, max {worst} LSB"
        if r.get("status") and not self.figure():
            return f"run {r['status']}"
        return None

    def to_dict(self) -> dict:
        return adapter(PlaceOutcome).dump_python(self, mode="json", by_alias=True)


@dataclass(config=_CONFIG)
class FanoutSummary:
    """``farm.json``: one fan-out of a command over the places of a farm (``--farm TAGS``)."""

    verb: Annotated[Str, Field(description="the command run on every place")]
    tags: Annotated[Dict[str, Str], Field(description="the tags the places were chosen by")]
    coordinator: Annotated[Str, Field(description="the labgrid coordinator, HOST:PORT")]
    session_dir: Annotated[Str, Field(description="this folder: each place's run, stdout.json and stderr.log "
                                                  "under PLACE/")]
    started_utc: Annotated[Str, Field(description="when the fan-out started, ISO 8601")]
    places: Annotated[List[PlaceOutcome], Field(description="each place's outcome")] = \
        dataclasses.field(default_factory=list)
    elapsed_s: Annotated[Optional[Float], Field(description="the fan-out's duration")] = None
    comparisons: Annotated[List[Dict[str, Any]], Field(
        description="bench, soak: each place's run against the first place's (edgebench compare)")] = \
        dataclasses.field(default_factory=list)

    @computed_field(  # type: ignore[prop-decorator]  # pydantic's documented pattern: see _CONFIG above
        description="always `edgebench-farm-fanout`")
    @property
    def format(self) -> Literal["edgebench-farm-fanout"]:
        return "edgebench-farm-fanout"

    @computed_field(  # type: ignore[prop-decorator]  # pydantic's documented pattern: see _CONFIG above
        alias="counts", description="how many places ended with each status")
    @property
    def status_counts(self) -> Dict[str, int]:
        return self.counts()

    def counts(self) -> dict:
        out: dict = {}
        for p in self.places:
            out[p.status] = out.get(p.status, 0) + 1
        return out

    def exit_code(self) -> int:
        """0 when every place ran (busy ones skipped, if any ran), 2 when a gate failed, else 1."""
        statuses = [p.status for p in self.places]
        if any(s in ("failed", "interrupted") for s in statuses) or "ok" not in statuses and \
                "gate-failed" not in statuses:
            return 1
        return 2 if "gate-failed" in statuses else 0

    def to_dict(self) -> dict:
        """``farm.json`` and ``--json``: the fields above and the computed ones (format, status counts)."""
        return adapter(FanoutSummary).dump_python(self, mode="json", by_alias=True)
