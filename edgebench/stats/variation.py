"""One model of variation for every figure edgebench decides on (level 1: pure functions).

A benchmark figure (a median latency, a throughput) varies at three levels, and every
interval, comparison and gate here carries the levels that separate its two sides:

1. **within a run** (one repeat: a fresh process, K of them per invocation): autocorrelated
   samples with level shifts; each run's own standard error ``w`` comes from batch means
   (:mod:`edgebench.stats.dependence`), with its own degrees of freedom;
2. **between repeats** of one invocation: variance ``tau2`` on the log scale;
3. **between invocations** (sessions: separate runs of the command): variance ``sigma2``
   on the log scale, mostly a property of the machine (which core the hypervisor gives,
   memory placement, frequency), larger than ``tau2`` on shared machines.

On the log scale, with ``y`` the log of a figure::

    y(run k of invocation j) = mu + u_j + v_jk + e_jk,   u ~ N(0, sigma2), v ~ N(0, tau2), e ~ N(0, w_jk)

An invocation's figure is the mean of its K log run figures, variance
``(tau2 + mean w) / K``; the long-run figure over S invocations has variance
``(sigma2 + mean over sessions of their variance) / S``; two invocations differ by
``var_a + var_b + 2 sigma2``, two runs interleaved in one invocation by ``var_a + var_b``.

``tau2`` and ``sigma2`` are **pooled** across every measurement group (same model and
conditions) on the same board and host in the runs folder, by the method of moments
(``sum (n_g - 1)(s_g^2 - mean w_g) / sum (n_g - 1)``, never below 0), and shrunk towards a
stated, conservative **prior** with ``nu0`` pseudo degrees of freedom (a scaled inverse
chi-squared prior): ``(nu0 cv0^2 + nu s^2) / (nu0 + nu)`` with ``nu0 + nu`` degrees of
freedom less the noise of ``s^2`` around the units' own errors (:func:`effective_df`), where the prior's weight fades as the data's ``nu`` grow (:func:`prior_weight`:
``nu0 / (1 + nu ** fade)``). Between invocations the prior is a fallback for a board with
nothing on record, not a belief to hold against data: it weighs 2 df alone (so one
invocation per side is judged on t(2): A/A false verdicts <= 5% up to a true CV of 6%), 1 df
beside 1 df of data (two sessions: t(2), never t(1)), 0.12 beside 4, 0.02 beside 10
(``2 / (1 + nu ** 2)``), and it only widens: data noisier than the prior stand alone on their own
df, the prior keeping only a floor of 2 df (shrunk towards a quieter prior, a machine at CV 6%
gave 5.2% A/A false verdicts); what decides
is the **empirical-Bayes** estimate pooled over every model's sessions on this board and
host (three sessions of one model plus three of four others give 10 df), so a quiet board's
own spread decides after a few invocations (``benchmarks/decisions_sim.py``: headline width
2.4x the spread of re-runs at CV 0.2% and S = 3 with four other models on record, was 17.7x). Pooling is robust: a group (model) whose spread an
F test puts far from the other groups' is left out (:func:`pooled_component`). Two invocations thus already give an interval on many degrees of freedom (no
Student t with df 1), and nothing on record gives the prior, said so. Degrees of freedom of
a sum of variance terms are Welch–Satterthwaite's. Coverage and A/A false-alarm rates are
proven by simulation in ``benchmarks/ci_coverage.py``; docs/statistics.md states the
assumptions and failure modes.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional, Sequence

import numpy as np

from edgebench.errors import DataError
from edgebench.stats._samples import check_level

#: a df this large is "known exactly" (Student t = normal to 4 digits)
DF_EXACT = 1e6


@dataclass(frozen=True)
class Prior:
    """A stated prior for a variance component: coefficient of variation (sd of the log) and
    its weight in pseudo degrees of freedom."""

    cv: float
    df: float
    level: str          # "between invocations" / "between repeats"
    fade: float = 1.0   # the weight beside nu data df is df / (1 + nu ** fade) (:func:`prior_weight`)


#: between invocations: CV 3%, worth 2 degrees of freedom alone, fading with the square of the data's
#: df (``2 / (1 + nu ** 2)``: 1 beside 1 df, 0.12 beside 4, 0.02 beside 10); it only ever widens
#: (:func:`pooled_component`). Conservative for a quiet board (a
#: pinned Raspberry Pi spreads ~0.5%), about what this project's shared 2-vCPU VM shows
#: (invocation medians in two clusters 6% apart, docs/statistics.md). 2 df, not 4: with nothing on
#: record, one invocation per side on a machine at CV 6% was called different in 17.5% of A/A pairs
#: under t(4), and in <= 5% under t(2) (benchmarks/decisions_sim.py); the quick fade lets the
#: board's pooled data decide (a quiet board's headline was 17.7x the spread of re-runs at S = 3).
SESSION_PRIOR = Prior(cv=0.03, df=2.0, level="between invocations", fade=2.0)
#: between repeats of one invocation: CV 1%, worth 2 degrees of freedom: repeats inside one invocation
#: agreed within ~1% on the quiet VM, and spread 3-8% under a load of 8; a light prior lets the runs on
#: record decide soon either way.
REPEAT_PRIOR = Prior(cv=0.01, df=2.0, level="between repeats")


#: an emulated board's figures are instruction counts (QEMU ``-icount``), repeatable to a tick: no
#: variation between repeats or invocations is assumed unless the runs on record show some
EMULATED_PRIORS = (Prior(cv=0.0, df=4.0, level="between repeats"), Prior(cv=0.0, df=4.0, level="between invocations"))


def priors(label: str = "measured") -> tuple:
    """``(between-repeat, between-invocation)`` priors for figures of this label."""
    return EMULATED_PRIORS if label == "emulated" else (REPEAT_PRIOR, SESSION_PRIOR)


@dataclass(frozen=True)
class Component:
    """A variance component on the log scale with its degrees of freedom and where it came from."""

    var: float
    df: float
    level: str                  # between invocations | between repeats
    source: str                 # "pooled" | "prior"
    groups: int = 0             # measurement groups that contributed (two or more units each)
    units: int = 0              # sessions (or repeats) in those groups
    data_var: Optional[float] = None   # the moment estimate of the data alone (None: no data)
    prior_cv: float = 0.0
    prior_df: float = 0.0       # the prior's weight as used (it fades with the data's df)
    outliers: int = 0           # groups left out as far noisier (or quieter) than the rest

    @property
    def cv(self) -> float:
        return math.sqrt(max(self.var, 0.0))

    def describe(self) -> str:
        unit = "invocations" if self.level == "between invocations" else "repeats"
        prior = f"prior CV {100 * self.prior_cv:.1f}% ({self.prior_df:g} pseudo df)"
        if self.source == "prior":
            return f"{self.level} CV {100 * self.cv:.2f}%: the {prior}, nothing on record"
        data = math.sqrt(self.data_var) if self.data_var is not None else 0.0
        groups = ("measurement group" if self.level == "between invocations" else "invocation") + (
            "s" if self.groups != 1 else "")
        data_df = self.units - self.groups
        df = (f"df {self.df:.0f}" if self.df >= 0.5 * data_df else
              f"effective df {self.df:.2g} of {data_df} df of data: small beside the units' own errors, whose "
              "spread carries it")
        widens = "" if data <= self.prior_cv else ": the data, noisier than the prior, stand alone"
        return (f"{self.level} CV {100 * self.cv:.2f}% ({df}): pooled from {self.units} {unit} in "
                f"{self.groups} {groups} on this board and host "
                f"(data alone {100 * data:.2f}%) with the {prior}{widens}"
                + (f"; {self.outliers} outlier group{'s' if self.outliers != 1 else ''} left out"
                   if self.outliers else ""))

    def to_dict(self) -> dict:
        out = asdict(self)
        out["cv"] = self.cv
        out["description"] = self.describe()
        return out


#: how the prior's weight fades once data exist: ``nu0 / (1 + (nu / PRIOR_FADE) ** prior.fade)`` pseudo
#: df, where ``nu`` are the data's degrees of freedom (the between-repeat prior: 2 df alone, 1 beside
#: 1 df of data, 0.4 beside 4; the between-invocation prior: 2 alone, 1 beside 1, 0.12 beside 4),
#: so a quiet board's own spread decides after a few invocations while one data df still leans on
#: the conservative prior (benchmarks/decisions_sim.py: A/A and power)
PRIOR_FADE = 1.0
#: the fewest degrees of freedom a pooled component carries while the prior has that weight to give
#: (data noisier than the prior stand alone, but one data df is not judged on t(1))
MIN_DF = 2.0
#: a group whose spread lies beyond this two-sided F level of the others' pooled spread is an
#: outlier (a far noisier or far quieter model) and is not pooled
OUTLIER_LEVEL = 0.001


def prior_weight(prior: Prior, data_df: float) -> float:
    """The pseudo degrees of freedom of ``prior`` beside ``data_df`` degrees of freedom of data."""
    return prior.df / (1.0 + (max(data_df, 0.0) / PRIOR_FADE) ** prior.fade)


def _outliers(stats: list) -> set:
    """Indices of groups ``(var, mean_w, df)`` whose spread an F test (at :data:`OUTLIER_LEVEL`,
    two-sided) puts apart from the median spread of the other groups (a median, so one outlier
    cannot move the yardstick the others are judged by); needs three groups or more."""
    from scipy.stats import f as f_dist

    if len(stats) < 3:
        return set()
    out = set()
    for i, (v, _, d) in enumerate(stats):
        rest = [(vv, dd) for j, (vv, _, dd) in enumerate(stats) if j != i]
        dr = sum(dd for _, dd in rest)
        pooled = float(np.median([vv for vv, _ in rest]))
        if pooled <= 0 or v <= 0:
            continue
        ratio = v / pooled
        p = 2.0 * min(float(f_dist.sf(ratio, d, dr)), float(f_dist.cdf(ratio, d, dr)))
        if p < OUTLIER_LEVEL:
            out.add(i)
    return out


def pooled_component(groups: Sequence[Sequence[tuple]], prior: Prior) -> Component:
    """``groups``: per measurement group, its units' ``(y, w)``: the log figure and the variance of
    its estimate from the level below (a session's ``(tau2 + mean w)/K``, a run's batch-means
    variance). Groups with fewer than two units carry no information on the spread and are
    passed over; groups whose spread is an outlier against the others' (:func:`_outliers`: a far
    noisier model) are left out, so they neither inflate nor shrink the others' component. The
    prior's weight fades with the data (:func:`prior_weight`). See the module docstring."""
    stats = []
    for g in groups:
        pts = [(float(y), float(w)) for y, w in g if math.isfinite(y) and math.isfinite(w)]
        if len(pts) < 2:
            continue
        y = np.array([p[0] for p in pts])
        w = np.array([p[1] for p in pts])
        stats.append((float(np.var(y, ddof=1)), float(np.mean(w)), float(y.size - 1)))
    skip = _outliers(stats)
    num = dfs = wsum = 0.0
    used = units = 0
    for i, (v, wbar, d) in enumerate(stats):
        if i in skip:
            continue
        num += d * (v - wbar)
        wsum += d * wbar
        dfs += d
        used += 1
        units += int(d) + 1
    if dfs == 0:
        return Component(var=prior.cv ** 2, df=prior.df, level=prior.level, source="prior",
                         prior_cv=prior.cv, prior_df=prior.df)
    data = max(0.0, num / dfs)
    nu0 = prior_weight(prior, dfs)
    var = (nu0 * prior.cv ** 2 + dfs * data) / (nu0 + dfs)
    df = effective_df(var, dfs, wsum / dfs, nu0)
    if data > var:
        # the prior widens, never narrows: data noisier than it stand alone, on their own df (shrunk
        # towards a quieter prior, a machine at CV 6% gave 5.2% A/A false verdicts at three
        # invocations a side); the prior keeps only its floor of 2 df (one data df: t(2), never t(1))
        var = data
        df = max(effective_df(var, dfs, wsum / dfs, 0.0), min(dfs + nu0, MIN_DF))
    return Component(var=var, df=df, level=prior.level,
                     source="pooled", groups=used, units=units, data_var=data, prior_cv=prior.cv,
                     prior_df=nu0, outliers=len(skip))


def effective_df(var: float, data_df: float, w: float, prior_df: float) -> float:
    """Degrees of freedom of a component ``var`` estimated as ``s^2 - w`` on ``data_df`` df (the units'
    spread less their own mean error variance ``w``) and shrunk with ``prior_df`` pseudo df:
    ``(prior_df + data_df)^2 / (prior_df + data_df ((var + w) / var)^2)``, from
    ``Var(s^2) = 2 (var + w)^2 / data_df``. A component small beside the units' own errors is known on
    fewer df than ``data_df`` (its estimate carries the noise of ``s^2``), so Welch–Satterthwaite gives
    a sum ``var + w`` about the data's df, not the many df of ``w`` alone. No ``w``: ``data_df +
    prior_df``."""
    if var <= 0:
        return data_df + prior_df
    return (prior_df + data_df) ** 2 / (prior_df + data_df * ((var + w) / var) ** 2)


def satterthwaite(terms: Sequence[tuple]) -> float:
    """Welch–Satterthwaite degrees of freedom of a sum of variance terms ``(var, df)``, never below
    :data:`MIN_DF`: no interval edgebench prints rests on t(1) (12.7 a side); where the terms' own df
    would give fewer (a component clipped near zero, two repeats that disagree), t(2) is the stated
    fallback, the weight the priors give a figure with nothing else on record."""
    total = sum(v for v, _ in terms)
    den = sum(v * v / d for v, d in terms if d and d < DF_EXACT and v > 0)
    if total <= 0 or den <= 0:
        return DF_EXACT
    return max(MIN_DF, min(DF_EXACT, total * total / den))


def t_quantile(level: float, df: float) -> float:
    from scipy.stats import norm
    from scipy.stats import t as student_t

    q = 0.5 + check_level(level) / 2.0
    return float(norm.ppf(q)) if df >= DF_EXACT else float(student_t.ppf(q, df))


@dataclass(frozen=True)
class LogEstimate:
    """An estimate on the log scale: centre, variance and degrees of freedom."""

    centre: float
    var: float
    df: float
    method: str = ""

    @property
    def se(self) -> float:
        return math.sqrt(max(self.var, 0.0))

    @property
    def value(self) -> float:
        return math.exp(self.centre)

    def interval(self, level: float = 0.95) -> tuple:
        half = t_quantile(level, self.df) * self.se
        return math.exp(self.centre - half), math.exp(self.centre + half)

    def p_value(self) -> float:
        """Two-sided p of ``centre = 0`` with the same t; 1.0 when se is 0. It can underflow to 0.0
        for a very large t: what prints it shows a bound (``p<1e-16``), never p=0."""
        from scipy.stats import norm
        from scipy.stats import t as student_t

        if self.se <= 0:
            return 1.0
        z = abs(self.centre) / self.se
        return float(2.0 * (norm.sf(z) if self.df >= DF_EXACT else student_t.sf(z, self.df)))


@dataclass(frozen=True)
class RunFigure:
    """One run (repeat): its figure (> 0) and the standard error of the figure's log, with df."""

    value: float
    se_log: float
    df: float

    @property
    def y(self) -> float:
        return math.log(self.value)

    @property
    def w(self) -> float:
        return self.se_log ** 2


def _check_runs(runs: Sequence[RunFigure]) -> None:
    if not runs:
        raise DataError("no runs to estimate from")
    for r in runs:
        if not (r.value > 0 and math.isfinite(r.value) and math.isfinite(r.se_log) and r.se_log >= 0):
            raise DataError(f"a run's figure must be positive with a finite standard error, got {r}")


def invocation_estimate(runs: Sequence[RunFigure], repeat: Component) -> LogEstimate:
    """One invocation's figure from its K runs: mean of the log figures, variance
    ``(tau2 + mean w) / K`` with ``tau2`` the pooled between-repeat component."""
    _check_runs(runs)
    k = len(runs)
    y = np.array([r.y for r in runs])
    wbar = float(np.mean([r.w for r in runs]))
    var = (repeat.var + wbar) / k
    df = satterthwaite([(repeat.var / k, repeat.df), (wbar / k, min(r.df for r in runs))])
    return LogEstimate(float(y.mean()), var, df,
                       f"mean of the log figures of {k} run{'s' if k != 1 else ''}, variance (between-repeat "
                       f"CV {100 * repeat.cv:.2f}%, {repeat.source}; + within-run) / {k}")


def repeats_disagree(runs: Sequence[RunFigure], repeat: Component, alpha: float = 0.01) -> Optional[float]:
    """p-value of the K run figures spreading more than ``tau2 + w`` allows (chi-squared, df K - 1),
    when below ``alpha``; else None. Such an invocation is judged on its own spread."""
    from scipy.stats import chi2

    k = len(runs)
    if k < 2:
        return None
    y = np.array([r.y for r in runs])
    expect = repeat.var + float(np.mean([r.w for r in runs]))
    if expect <= 0:
        return None
    stat = (k - 1) * float(np.var(y, ddof=1)) / expect
    p = float(chi2.sf(stat, k - 1))
    return p if p < alpha else None


def own_spread_estimate(runs: Sequence[RunFigure], prior_df: float = 0.0) -> LogEstimate:
    """Student t on the K log run figures alone (df K - 1, plus ``prior_df``): for an invocation
    whose repeats disagree beyond the pooled between-repeat variance. The variance is never shrunk
    (the larger of the repeats' own spread and their own errors); ``prior_df`` adds the stated
    between-repeat prior's pseudo df to its degrees of freedom, as every component here does
    (:func:`invocation` passes :data:`REPEAT_PRIOR`'s 2, so two disagreeing repeats get t(3) = 3.18,
    not t(1) = 12.7)."""
    k = len(runs)
    y = np.array([r.y for r in runs])
    var = max(float(np.var(y, ddof=1)), float(np.mean([r.w for r in runs]))) / k
    df = float(k - 1) + prior_df
    return LogEstimate(float(y.mean()), var, df,
                       f"Student t on the log figures of {k} runs (df {df:g}"
                       + (f": {k - 1} of theirs + {prior_df:g} of the stated between-repeat prior" if prior_df else "")
                       + "): they disagree beyond the pooled between-repeat variation")


def invocation(runs: Sequence[RunFigure], repeat: Component) -> tuple:
    """``(LogEstimate, repeats_disagree_p)``: :func:`invocation_estimate`, or
    :func:`own_spread_estimate` when the runs disagree beyond ``repeat`` (then the p-value)."""
    _check_runs(runs)
    p = repeats_disagree(runs, repeat)
    return (own_spread_estimate(runs, REPEAT_PRIOR.df) if p is not None else invocation_estimate(runs, repeat)), p


@dataclass(frozen=True)
class SessionsResult:
    """The long-run figure over this invocation and earlier ones (sessions)."""

    estimate: LogEstimate          # the long-run figure (log scale)
    prediction: LogEstimate        # where one more invocation's figure should fall
    sessions: int
    session: Component
    differs_p: Optional[float]     # this invocation vs its history's prediction (None: no history)
    between_session_cv: Optional[float]   # sd of the session figures' logs (two or more sessions)

    def to_dict(self) -> dict:
        return asdict(self)


#: an invocation outside its history's prediction interval at this level is flagged
DIFFERS_LEVEL = 0.99


def combine_sessions(this: LogEstimate, earlier: Sequence[LogEstimate], session: Component) -> SessionsResult:
    """This invocation's figure and earlier ones of the same measurement: the long-run figure
    (mean of S log figures, variance ``(sigma2 + mean var) / S``), the prediction for one more
    invocation (``sigma2 + mean var`` on top), and whether this invocation lies outside what its
    history predicts (p-value, two-sided)."""
    from scipy.stats import norm
    from scipy.stats import t as student_t

    alls = [this, *earlier]
    s = len(alls)
    y = np.array([e.centre for e in alls])
    vbar = float(np.mean([e.var for e in alls]))
    dfv = min(e.df for e in alls)
    var = (session.var + vbar) / s
    df = satterthwaite([(session.var / s, session.df), (vbar / s, dfv)])
    est = LogEstimate(float(y.mean()), var, df,
                      f"mean of the log figures of {s} invocation{'s' if s != 1 else ''}, variance (between-invocation "
                      f"CV {100 * session.cv:.2f}%, {session.source}; + each invocation's own) / {s}")
    pvar = session.var + vbar + var
    pdf = satterthwaite([(session.var * (1 + 1 / s), session.df), (vbar * (1 + 1 / s), dfv)])
    pred = LogEstimate(est.centre, pvar, pdf, "prediction of one more invocation's figure")
    differs = None
    if earlier:
        he = np.array([e.centre for e in earlier])
        hv = float(np.mean([e.var for e in earlier]))
        d_var = session.var + this.var + (session.var + hv) / len(earlier)
        d_df = satterthwaite([(session.var * (1 + 1 / len(earlier)), session.df), (this.var, this.df),
                              (hv / len(earlier), min(e.df for e in earlier))])
        z = abs(this.centre - float(he.mean())) / math.sqrt(d_var) if d_var > 0 else 0.0
        differs = float(2.0 * (norm.sf(z) if d_df >= DF_EXACT else student_t.sf(z, d_df)))
    cv = float(np.std(y, ddof=1)) if s >= 2 else None
    return SessionsResult(est, pred, s, session, differs, cv)


def log_ratio(a: LogEstimate, b: LogEstimate, session: Optional[Component]) -> LogEstimate:
    """``log(a / b)`` of two figures. ``session``: the between-invocation component when a and b
    come from different invocations (``2 sigma2`` is added); None when they were interleaved in
    one invocation (their repeats shared the machine's state, so no session term)."""
    terms = [(a.var, a.df), (b.var, b.df)]
    if session is not None:
        terms.append((2.0 * session.var, session.df))
    var = sum(v for v, _ in terms)
    return LogEstimate(a.centre - b.centre, var, satterthwaite(terms),
                       "difference of the two invocations' log figures" +
                       (f", with 2 x between-invocation variance (CV {100 * session.cv:.2f}%, {session.source})"
                        if session is not None else ", interleaved in one invocation: no between-invocation term"))


__all__ = ["Prior", "Component", "LogEstimate", "RunFigure", "SessionsResult", "SESSION_PRIOR", "REPEAT_PRIOR",
           "DIFFERS_LEVEL", "EMULATED_PRIORS", "PRIOR_FADE", "OUTLIER_LEVEL", "priors", "prior_weight",
           "pooled_component", "effective_df", "satterthwaite", "t_quantile",
           "invocation_estimate",
           "repeats_disagree", "own_spread_estimate", "invocation", "combine_sessions", "log_ratio"]
