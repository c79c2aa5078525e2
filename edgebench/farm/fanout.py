"""Fan one command out over the places of a farm (``--farm TAGS``): the pieces without processes.

The CLI (``edgebench.cli.farm_fanout``) runs the same command line once per matching place, in
parallel, each a child ``edgebench`` process holding its own place (``--board labgrid:PLACE``) and
writing its own run under one session folder. This module rewrites that command line
(:func:`child_args`), names the session folder, and keeps the outcome of every place in a
:class:`FanoutSummary` (its ``to_dict()`` is ``--json`` and ``farm.json``).
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path

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
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    path.mkdir(parents=True)
    return path


@dataclass
class PlaceOutcome:
    """One place's share of a fan-out: what ran, how it ended, where its run is."""

    place: str
    profile: str | None
    status: str = "pending"            # ok, failed, busy (skipped), gate-failed, interrupted
    exit_code: int | None = None
    message: str | None = None          # the child's error line
    elapsed_s: float | None = None
    run_dir: str | None = None
    result: dict | None = None          # the child's --json output

    def figure(self) -> dict:
        """The headline of a bench run: e2e median and its 95% interval, runs, n, throughput, label."""
        r = self.result or {}
        e2e = (r.get("latency") or {}).get("e2e") or {}
        if not e2e:
            return {}
        return {"median_s": e2e.get("median_s"), "ci_low_s": e2e.get("ci_low_s"), "ci_high_s": e2e.get("ci_high_s"),
                "ci_method": e2e.get("ci_method"), "runs": len(e2e.get("per_run") or []) or None, "n": e2e.get("n"),
                "throughput_per_s": (r.get("throughput") or {}).get("per_s"), "label": r.get("label"),
                "run_status": r.get("status")}

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
        return {"place": self.place, "profile": self.profile, "status": self.status, "exit_code": self.exit_code,
                "verdict": self.verdict(),
                "message": self.message, "elapsed_s": self.elapsed_s, "run_dir": self.run_dir,
                "figure": self.figure() or None, "result": self.result}


@dataclass
class FanoutSummary:
    verb: str
    tags: dict
    coordinator: str
    session_dir: str
    started_utc: str
    places: list = field(default_factory=list)
    elapsed_s: float | None = None
    comparisons: list = field(default_factory=list)   # each place's run against the first place's (bench, soak)

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
        return {"format": "edgebench-farm-fanout", "verb": self.verb, "tags": dict(self.tags),
                "coordinator": self.coordinator, "session_dir": self.session_dir, "started_utc": self.started_utc,
                "elapsed_s": self.elapsed_s, "counts": self.counts(), "places": [p.to_dict() for p in self.places],
                "comparisons": list(self.comparisons)}
