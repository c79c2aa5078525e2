"""Between-invocation variation read from a runs folder (level 4: edgebench.bench.sessions): every run
on the same board and host counted once, the earlier sessions of one measurement, and two real
`bench` invocations in one folder. The estimators themselves: tests/test_variation.py."""
import dataclasses
import math
import shutil

import numpy as np
import pytest
from conftest import DIGITS_INT8

from edgebench.bench.latency import BenchOptions, run_bench
from edgebench.bench.record import new_result
from edgebench.bench.sessions import earlier_sessions, measurement_key, other_sessions, read_history, variation
from edgebench.boards.registry import get_profile
from edgebench.errors import UsageError
from edgebench.results import store
from edgebench.results.figures.latency import LatencyFigure


# ---------------------------------------------------------------- finding earlier sessions (level 4)
def _run(root, median, sha="a" * 64, status="complete", created=None, spread=0.01, **over):
    r = new_result("bench")
    r.model = {"name": "m", "sha256": sha, "precision": "int8"}
    r.board = {"name": "host"}
    r.host = {"hostname": "here"}
    r.runtime = {"name": "ai-edge-litert", "version": "2.3.0", "kernels": "xnnpack", "threads": 1}
    r.scenario = {"name": "single-stream", "batch": 1}
    r.settings = {"agent_cpus": "0"}
    r.status = status
    per = [{"median_s": median * math.exp(spread * d), "se_log": 0.002, "df": 20, "n": 1000} for d in (-1, 0, 1)]
    r.latency = {"e2e": {"median_s": median, "ci_low_s": median * 0.99, "ci_high_s": median * 1.01, "per_run": per}}
    if created:
        r.created_utc = created
    for k, v in over.items():
        setattr(r, k, v)
    d = store.new_run_dir(root, "m", "host")
    store.write_result(d, r)
    return r, d


def test_history_counts_every_run_of_this_board_and_host_once(tmp_path):
    keep1, _ = _run(tmp_path, 1.0)
    other_model, _ = _run(tmp_path, 2.0, sha="b" * 64)          # pooled too: the spread is the machine's
    _run(tmp_path, 3.0, status="incomplete")                    # not complete
    _run(tmp_path, 4.0, created="2020-01-01T00:00:00+00:00")    # too old
    _run(tmp_path, 5.0, host={"hostname": "elsewhere"})          # another host
    pinned, _ = _run(tmp_path, 6.0, settings={"agent_cpus": "1"})  # other pinning: another measurement, same machine
    this, this_dir = _run(tmp_path, 1.05)
    # a copied run folder: the same run id, and one whose id was edited (the same figures)
    copy = tmp_path / "20991231-000000-m-host-copy"
    shutil.copytree(store.resolve_run(keep1.run_id, tmp_path), copy)
    edited = tmp_path / "20991231-000001-m-host-edited"
    shutil.copytree(copy, edited)
    r = store.read_result(edited)
    r.run_id = "edited-" + r.run_id
    store.write_result(edited, r)
    history = read_history(this, tmp_path, exclude=this_dir)
    ids = [rec.run_id for rec in history]
    # the copies count once: the newest folder's id (the edited copy) stands for the three
    assert sorted(ids) == sorted(["edited-" + keep1.run_id, other_model.run_id, pinned.run_id])
    assert this.run_id not in ids
    assert [rec.run_id for rec in earlier_sessions(this, history, 10)] == ["edited-" + keep1.run_id]
    assert earlier_sessions(this, history, 1) == []


def test_near_copies_count_once(tmp_path):
    first, _ = _run(tmp_path, 1.0)
    nudged = tmp_path / "20991231-000002-m-host-nudged"
    shutil.copytree(store.resolve_run(first.run_id, tmp_path), nudged)
    r = store.read_result(nudged)
    r.run_id = "nudged-" + r.run_id
    for p in r.latency["e2e"].per_run:
        p.median_s *= 1 + 1e-4          # figures changed within rounding: still the same run
    store.write_result(nudged, r)
    real, _ = _run(tmp_path, 1.02)        # another invocation, 2% apart: a session of its own
    this, d = _run(tmp_path, 1.05)
    ids = [rec.run_id for rec in read_history(this, tmp_path, exclude=d)]
    assert len(ids) == 2 and real.run_id in ids
    assert ("nudged-" + first.run_id in ids) != (first.run_id in ids)


def test_variation_pools_other_models_on_this_machine(tmp_path):
    rng = np.random.default_rng(3)
    for _ in range(6):      # six invocations each of two other models, between-invocation CV 2.5%
        _run(tmp_path, 1.0 * math.exp(0.025 * rng.standard_normal()), sha="b" * 64)
        _run(tmp_path, 2.0 * math.exp(0.025 * rng.standard_normal()), sha="c" * 64)
    this, d = _run(tmp_path, 1.0)
    v = variation(read_history(this, tmp_path, exclude=d), "e2e")
    assert v.session.source == "pooled" and v.session.groups == 2 and v.session.units == 12
    assert 0.01 < v.session.cv < 0.05    # these draws spread 3.4% and 4.8%: the data, not the 3% prior, decide
    assert v.repeat.source == "pooled" and v.repeat.units == 36
    assert "pooled from 12 invocations in 2 measurement groups" in v.session.describe()
    empty = variation([], "e2e")
    assert empty.session.source == "prior" and empty.repeat.source == "prior"


def test_other_sessions_include_later_ones(tmp_path):
    first, d1 = _run(tmp_path, 1.0)
    _run(tmp_path, 0.9)
    _run(tmp_path, 1.1, created="2099-01-01T00:00:00+00:00")   # made after it: counts for best-of-N
    found = other_sessions(first, d1)
    assert sorted(round(f["median_s"], 3) for f in found) == [0.9, 1.1]


def test_measurement_key_needs_the_same_batch():
    a, b = new_result("bench"), new_result("bench")
    for r in (a, b):
        r.model, r.scenario = {"sha256": "x"}, {"name": "offline", "batch": 8}
    assert measurement_key(a) == measurement_key(b)
    b.scenario = {"name": "offline", "batch": 4}
    assert measurement_key(a) != measurement_key(b)


def test_bad_sessions_option():
    with pytest.raises(UsageError, match="--sessions"):
        BenchOptions(sessions=0).validate()


def test_throughput_interval_holds_this_invocations_rate_when_earlier_sessions_differ():
    # four earlier sessions at twice this invocation's rate pull the long-run centre far away; the
    # headline (this invocation's rate) must still lie inside the interval printed beside it, as the latency's
    from edgebench.bench import sessions as sess
    from edgebench.bench.throughput import throughput_interval
    from edgebench.stats.variation import RunFigure

    r = new_result("bench")
    r.model, r.board, r.scenario = {"sha256": "a" * 64}, {"name": "host"}, {"batch": 1}
    per = [{"per_s": 100.0, "se_log": 0.002, "df": 50.0, "n": 1000, "window_s": 10.0} for _ in range(3)]
    key = sess.measurement_key(r)
    history = [sess.Record(f"old{i}", "2026-01-01T00:00:00+00:00", f"h{i}", key,
                           {sess.THROUGHPUT: [RunFigure(200.0, 0.002, 50.0)] * 3}) for i in range(4)]
    out = throughput_interval(per, 0.95, history, r, 10)
    assert out["sessions"] == 5
    assert out["ci_low_per_s"] <= 100.0 <= out["ci_high_per_s"]
    assert out["ci_low_per_s"] <= out["invocation"]["ci_low_per_s"] and out["ci_high_per_s"] > 150.0


# ---------------------------------------------------------------- two real invocations
@pytest.mark.slow
def test_second_invocation_combines_the_first(tmp_path):
    host = get_profile("host")
    # pinned: unpinned repeats land on vCPUs tens of percent apart, and repeats that disagree that much
    # take their own spread (Student t), which can leave the session term nothing to add
    opts = dict(min_samples=50, min_time_s=0.3, max_time_s=2.0, chunk_time_s=0.1, repeat=2, max_repeats=2, cpus="0")
    first, _ = run_bench(DIGITS_INT8, host, BenchOptions(**opts), runs_root=tmp_path)
    e1 = first.latency["e2e"]
    assert e1.sessions == 1 and "single-session" in {w.code for w in first.warnings}
    assert "one session of this model" in first.extra.claim
    # the first session's interval already carries the between-invocation component (prior or pooled) and
    # never drops the invocation's own
    assert e1.ci_low_s <= e1.invocation.ci_low_s and e1.ci_high_s >= e1.invocation.ci_high_s
    assert e1.session_variation["cv"] > 0 and "between invocations CV" in e1.ci_method
    # (not strictly wider: two repeats on this VM's modes, tens of percent apart even pinned, give an own
    # interval so wide that the combined one, with more degrees of freedom, is narrower; the headline then
    # keeps the own one, which failed a strict assertion here in CI)
    second, d2 = run_bench(DIGITS_INT8, host, BenchOptions(**opts), runs_root=tmp_path)
    e2 = second.latency["e2e"]
    assert e2.sessions == 2 and e2.session_runs == [first.run_id]
    def geo(fig):   # what a session contributes: the geometric mean of its runs' medians
        return math.exp(np.mean([math.log(r.median_s) for r in fig.per_run]))

    assert e2.session_medians_s == [pytest.approx(geo(e2)), pytest.approx(geo(e1))]
    assert e2.ci_low_s <= e2.invocation.ci_low_s and e2.ci_high_s >= e2.invocation.ci_high_s
    # two invocations: no Student t with one degree of freedom on the two session figures (the fading
    # prior's pseudo df keep df at 2 or more), and the stored interval is at least as wide as its se_log/df
    from scipy.stats import t as student_t

    c = e2.combined          # the combined interval: never narrower than its own se_log and df say
    assert c.df >= 2.0 and c.ci_low_s < c.median_s < c.ci_high_s
    half = math.log(c.ci_high_s / c.ci_low_s) / 2
    assert half >= student_t.ppf(0.975, c.df) * c.se_log * (1 - 1e-3)
    tp = second.throughput
    assert tp.ci_low_per_s < tp.per_s < tp.ci_high_per_s and tp.sessions == 2
    assert e2.rerun_low_s < e2.rerun_high_s and e2.between_session_cv is not None
    assert "combines 2 sessions" in second.extra.claim
    assert "single-session" not in {w.code for w in second.warnings}
    # the stored run says the same, and the stop rule judged the invocation's own interval
    stored = store.read_result(d2)
    assert stored.latency["e2e"].sessions == 2
    assert stored.stopping.rel_ci_halfwidth == e2.invocation.rel_ci_halfwidth
    # --sessions 1: this invocation only
    third, _ = run_bench(DIGITS_INT8, host, dataclasses.replace(BenchOptions(**opts), sessions=1), runs_root=tmp_path)
    assert third.latency["e2e"].sessions == 1


def test_headline_interval_se_and_df_are_one_coherent_set(tmp_path):
    """run.json's headline: the combined interval with the combined se_log and df (top level and
    `combined`), this invocation's own under `invocation`."""
    from edgebench.bench.latency_summary import _combine_sessions
    from edgebench.stats.variation import t_quantile

    earlier, _ = _run(tmp_path, 1.02)
    this, d = _run(tmp_path, 1.0)
    history = read_history(this, tmp_path, exclude=d)
    fig = this.latency["e2e"].model_copy(update=dict(ci_level=0.95, ci_method="own", runs=3, rel_ci_halfwidth=0.01,
                                                     se_log=0.004, df=30.0))
    _combine_sessions(fig, earlier_sessions(this, history), variation(history, "e2e"), "e2e")
    c = fig.combined
    assert fig.sessions == c.sessions == 2 and fig.invocation.se_log == 0.004
    assert (fig.se_log, fig.df) == (c.se_log, c.df) and c.se_log > 0.004
    assert (fig.ci_low_s, fig.ci_high_s) == (c.ci_low_s, c.ci_high_s)
    # the interval is the combined estimate's (widened only to hold this invocation's own)
    half = t_quantile(0.95, c.df) * c.se_log
    assert math.log(c.ci_high_s / c.ci_low_s) == pytest.approx(2 * half, rel=1e-6)


def test_a_widened_headline_interval_recomputes_from_its_stored_se_log_and_df(tmp_path):
    """This invocation's own interval wider (and off-centre) against the combined one: the stored interval
    holds it, and exp(log(median) +- t(df) se_log) from the stored combined set gives exactly the stored
    interval (was 1.3-1.6x narrower in real runs)."""
    from edgebench.bench.latency_summary import _combine_sessions
    from edgebench.stats.variation import t_quantile

    earlier, _ = _run(tmp_path, 1.02)
    this, d = _run(tmp_path, 1.0)
    history = read_history(this, tmp_path, exclude=d)
    fig = this.latency["e2e"].model_copy(update=dict(ci_level=0.95, ci_method="own", runs=3, rel_ci_halfwidth=0.2,
                                                     se_log=0.004, df=30.0, ci_low_s=0.80, ci_high_s=1.05))
    _combine_sessions(fig, earlier_sessions(this, history), variation(history, "e2e"), "e2e")
    c = fig.combined
    assert c.ci_low_s <= 0.80 and c.ci_high_s >= 1.05            # this invocation's own is held
    assert fig.se_log == c.se_log and "widened to hold this invocation's own interval" in c.ci_method
    half = t_quantile(0.95, c.df) * c.se_log
    assert c.ci_low_s == pytest.approx(c.median_s * math.exp(-half), rel=1e-9)
    assert c.ci_high_s == pytest.approx(c.median_s * math.exp(half), rel=1e-9)


def test_a_session_at_a_shifted_level_is_left_out_of_the_pooled_variation_and_the_headline(tmp_path):
    """Six sessions within 0.3% and one 10% slower (a week under hidden load): that one is named, left
    out of the between-invocation component and of the sessions combined, and the bench warning names it."""
    from edgebench.bench.latency_summary import _shifted_warning
    from edgebench.bench.sessions import sessions_of, shifted_sessions

    runs = [_run(tmp_path, m)[0] for m in (1.0, 1.002, 0.998, 1.10, 1.001, 0.999)]
    this, d = _run(tmp_path, 1.0015)
    history = read_history(this, tmp_path, exclude=d)
    shifted = shifted_sessions(history)
    assert set(shifted) == {runs[3].run_id} and shifted[runs[3].run_id] < 0.01
    kept = variation(history, "e2e").session
    everything = variation(history, "e2e")
    assert len(history) == 6 and kept.units == 5            # the shifted session is not pooled
    assert runs[3].run_id not in {r.run_id for r in earlier_sessions(this, history)}
    assert runs[3].run_id in {r.run_id for r in earlier_sessions(this, history, skip_shifted=False)}
    assert runs[3].run_id not in {r.run_id for r in sessions_of(this, history)}
    fig = LatencyFigure(ci_method="combined")
    (w,) = _shifted_warning(this, history, fig)
    assert w.code == "session-differs" and runs[3].run_id in w.message and runs[3].run_id in fig.ci_method
    # pooled with it, the component would be far wider: what leaving it out protects
    from edgebench.stats.variation import SESSION_PRIOR, invocation_estimate, pooled_component

    with_it = pooled_component([[(invocation_estimate(r.figures["e2e"], everything.repeat).centre, 1e-6)
                                 for r in history]], SESSION_PRIOR)
    assert with_it.cv > 5 * kept.cv


def test_no_session_is_called_shifted_among_agreeing_sessions(tmp_path):
    for m in (1.0, 1.002, 0.998, 1.001, 0.999, 1.003):
        _run(tmp_path, m)
    this, d = _run(tmp_path, 1.0)
    from edgebench.bench.sessions import shifted_sessions

    assert shifted_sessions(read_history(this, tmp_path, exclude=d)) == {}
