"""Run kinds (level 0): what a stored run of each kind holds, declared once.

A run's ``kind`` (run.json) names the verb that wrote it. Everything below the command line
that treats runs differently by kind asks this table what the kind *holds* — a latency
figure, figures from a steady-state window, independent repeats, an accuracy comparison,
measured energy, a grid of points — and which report sections show it, instead of
recognising kind strings in many places. The verbs themselves (options, how they run,
recover and print) are declared in :mod:`edgebench.cli.verbs`, each naming its
:class:`RunKind` here.

A new kind of run: one :class:`RunKind` in :data:`KINDS`; the report sections it lists must
exist in :data:`edgebench.report.html.SECTIONS` (a test checks both).
"""
from __future__ import annotations

from collections import namedtuple

from edgebench.errors import ResultError


class RunKind(namedtuple("RunKind", ["name", "title", "verb", "latency", "samples", "repeats", "sustained",
                                     "accuracy", "energy", "points", "sections", "figures"],
                         defaults=(None, False, False, False, False, False, False, False, (), ()))):
    """One kind of stored run and what it holds (a named tuple: this module is read by ``edgebench
    --help``, which imports neither dataclasses nor typing).

    * ``name``: run.json ``kind``; ``title``: in reports ("benchmark", "thermal soak", ...);
      ``verb``: the command that writes it (for hints: ``edgebench VERB --recover``);
    * ``latency``: an inference latency figure (``latency.e2e``) the rules about timing apply to;
    * ``samples``: per-inference samples (samples.parquet) for plots and comparisons;
    * ``repeats``: independent repeats (fresh process and model load), comparable by ``compare``;
    * ``sustained``: its figures come from a steady-state window (burst against sustained);
    * ``accuracy``: an accuracy comparison against a baseline (``extra.accuracy``);
    * ``energy``: energy per inference from a meter, a power model or a datasheet (``power``);
    * ``points``: a grid of configurations, each with its own figures (``extra.points``);
    * ``sections``: report sections, in order (:data:`edgebench.report.html.SECTIONS`);
    * ``figures``: where in the run its figures are, each a typed declaration
      (:func:`edgebench.results.model.figure_type` names the type of ``"extra.accuracy"``:
      :class:`~edgebench.results.figures.accuracy.AccuracyFigure`).
    """

    __slots__ = ()

    @property
    def burst(self) -> bool:
        """A latency figure measured without waiting for thermal steady state."""
        return self.latency and not self.sustained

    @property
    def known(self) -> bool:
        return self.name in _BY_NAME


BENCH = RunKind("bench", "benchmark", "bench", latency=True, samples=True, repeats=True, sections=("latency",),
                figures=("latency", "throughput", "stopping", "extra.mac_rate", "extra.memory"))
SOAK = RunKind("soak", "thermal soak", "soak", latency=True, samples=True, sustained=True,
               sections=("soak", "latency"), figures=("extra.soak", "latency", "throughput", "thermal"))
SWEEP = RunKind("sweep", "sweep", "sweep", points=True, sections=("points",), figures=("extra.points",))
ACCURACY = RunKind("accuracy", "accuracy", "accuracy", accuracy=True, sections=("accuracy",),
                   figures=("extra.accuracy",))
ENERGY = RunKind("energy", "energy", "energy", latency=True, samples=True, energy=True,
                 sections=("latency", "energy"), figures=("power", "latency", "throughput"))
VERIFY = RunKind("verify", "verify", "verify", sections=("verify",), figures=("extra.verify",))
MLPERF = RunKind("mlperf-tiny", "MLPerf Tiny", "bench", latency=True, sections=("latency",),
                 figures=("latency", "throughput", "extra.mac_rate"))
SELFTEST = RunKind("selftest", "self-test", "selftest", sections=("selftest",), figures=("extra.selftest",))
PROFILE = RunKind("profile", "layer profile", "profile", samples=True, sections=("profile",),
                  figures=("extra.profile",))
LAYER_ERROR = RunKind("layer-error", "per-layer INT8 error", "layer-error", sections=("layer-error",),
                      figures=("extra.layer_error",))

KINDS = (BENCH, SOAK, SWEEP, ACCURACY, ENERGY, VERIFY, MLPERF, SELFTEST, PROFILE, LAYER_ERROR)
NAMES = tuple(k.name for k in KINDS)
_BY_NAME = {k.name: k for k in KINDS}


def kind_of(run) -> RunKind:
    """The :class:`RunKind` of a run (a RunResult, a run.json dict, or a kind name). A kind this
    edgebench does not know (a newer one wrote it) holds nothing it can interpret: a bare record."""
    name = run if isinstance(run, str) else (run.get("kind") if isinstance(run, dict) else getattr(run, "kind", None))
    return _BY_NAME.get(str(name)) or RunKind(str(name), str(name))


def require(run, kind: RunKind, doing: str, source: str = "") -> None:
    """ResultError unless ``run`` is of ``kind``: one line naming both kinds and the verb that handles it."""
    have = kind_of(run)
    if have.name != kind.name:
        where = f"{source}: " if source else ""
        hint = (f"it was written by `edgebench {have.verb}`: use that verb" if have.verb
                else f"this edgebench knows the kinds {', '.join(NAMES)}")
        raise ResultError(f"{where}{doing} needs a {kind.name} run, this is a {have.name} run", hint)


__all__ = ["RunKind", "KINDS", "NAMES", "kind_of", "require", "BENCH", "SOAK", "SWEEP", "ACCURACY", "ENERGY",
           "VERIFY", "MLPERF"]
