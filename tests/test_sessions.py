"""Between-invocation variation: the sessions interval (level 1), finding earlier sessions of the
same measurement in a runs folder (level 4), and two real `bench` invocations in one folder."""
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from edgebench.bench.latency import BenchOptions, run_bench
from edgebench.bench.record import new_result
from edgebench.bench.sessions import earlier_sessions, same_measurement
from edgebench.boards.registry import get_profile
from edgebench.errors import UsageError
from edgebench.results import store
from edgebench.stats.dependence import sessions_interval

INT8 = Path(__file__).resolve().parents[1] / "models" / "digits" / "digits_int8.tflite"


# ---------------------------------------------------------------- the interval (level 1)
def test_one_session_is_this_invocations_interval():
    iv = sessions_interval(1.0, (0.99, 1.01))
    assert (iv.low, iv.high, iv.runs, iv.between_run_cv) == (0.99, 1.01, 1, None)
    assert iv.rerun_low is None and "not measured" in iv.method


def test_sessions_interval_by_hand():
    # three sessions with narrow own intervals: Student t (df 2) on the log medians decides
    meds = [1.0, 1.05, 0.95]
    iv = sessions_interval(meds[0], (0.999, 1.001), meds[1:], [(1.049, 1.051), (0.949, 0.951)])
    logs = np.log(meds)
    s = np.std(logs, ddof=1)
    half = 4.302652729911275 * s / math.sqrt(3)
    centre = math.exp(logs.mean())
    assert iv.low == pytest.approx(centre * math.exp(-half)) and iv.high == pytest.approx(centre * math.exp(half))
    pred = 4.302652729911275 * s * math.sqrt(1 + 1 / 3)
    assert iv.rerun_low == pytest.approx(centre * math.exp(-pred))
    assert iv.runs == 3 and iv.between_run_cv == pytest.approx(s)
    assert "3 sessions" in iv.method and "df 2" in iv.method


def test_sessions_that_agree_by_chance_do_not_make_a_re_run_exact():
    # two sessions with the same median (a coarse clock makes this common): the prediction keeps
    # the sessions' own uncertainty and the clock's tick
    iv = sessions_interval(5.829e-6, (5.80e-6, 5.86e-6), [5.829e-6], [(5.80e-6, 5.86e-6)], resolution_s=1e-9)
    assert iv.between_run_cv == 0.0
    assert iv.rerun_low < 5.80e-6 and iv.rerun_high > 5.86e-6


def test_session_standard_errors_are_read_with_the_t_they_were_made_with():
    # each session's interval: Student t on 3 repeat medians (t = 4.303 at df 2), standard error 1%
    half = 4.302652729911275 * 0.01
    iv_ = (math.exp(-half), math.exp(half))
    told = sessions_interval(1.0, iv_, [1.0], [iv_], runs=[3, 3])
    assert math.log(told.high) == pytest.approx(12.706204736174696 * 0.01 / math.sqrt(2), rel=1e-6)
    # without the counts the half-width over z would take the standard error as 2.2%: twice as wide
    untold = sessions_interval(1.0, iv_, [1.0], [iv_])
    assert math.log(untold.high) == pytest.approx(12.706204736174696 * half / 1.959963984540054 / math.sqrt(2),
                                                  rel=1e-6)


def test_sessions_interval_never_narrower_than_this_invocation():
    # earlier sessions agree closely, this one is far off and uncertain: its own interval is kept
    iv = sessions_interval(2.0, (1.5, 2.6), [1.0, 1.0001], [(0.9999, 1.0001), (1.0, 1.0002)])
    assert iv.low <= 1.5 and iv.high >= 2.6


def _simulated_sessions(rng, count, session_cv, within_rel=0.002):
    """``count`` invocations: each median carries a session effect; its own interval sees only
    the within-invocation spread (as the repeats inside one invocation do)."""
    out = []
    for _ in range(count):
        m = math.exp(session_cv * rng.standard_normal() + within_rel / 2 * rng.standard_normal())
        out.append((m, (m * math.exp(-within_rel), m * math.exp(within_rel))))
    return out


def test_sessions_interval_covers_where_one_invocation_does_not():
    """Seeded simulation with a known long-run median of 1: the invocation's own interval misses
    it most of the time under a 3% session effect; combining five sessions covers it."""
    rng = np.random.default_rng(8)
    reps, own_hits, hits = 300, 0, 0
    for _ in range(reps):
        runs = _simulated_sessions(rng, 5, 0.03)
        (m, iv0), earlier = runs[-1], runs[:-1]
        own_hits += iv0[0] <= 1.0 <= iv0[1]
        iv = sessions_interval(m, iv0, [e[0] for e in earlier], [e[1] for e in earlier])
        hits += iv.low <= 1.0 <= iv.high
    assert own_hits / reps < 0.3
    assert hits / reps >= 0.92


def test_prediction_interval_covers_the_next_invocation():
    rng = np.random.default_rng(9)
    reps, hits = 400, 0
    for _ in range(reps):
        runs = _simulated_sessions(rng, 4, 0.03)
        iv = sessions_interval(runs[-1][0], runs[-1][1], [r[0] for r in runs[:-1]], [r[1] for r in runs[:-1]])
        nxt = _simulated_sessions(rng, 1, 0.03)[0][0]
        hits += iv.rerun_low <= nxt <= iv.rerun_high
    assert 0.91 <= hits / reps <= 0.99


# ---------------------------------------------------------------- finding earlier sessions (level 4)
def _run(root, median, sha="a" * 64, status="complete", created=None, **over):
    r = new_result("bench")
    r.model = {"name": "m", "sha256": sha, "precision": "int8"}
    r.board = {"name": "host"}
    r.runtime = {"name": "ai-edge-litert", "version": "2.3.0", "kernels": "xnnpack", "threads": 1}
    r.scenario = {"name": "single-stream", "batch": 1}
    r.settings = {"agent_cpus": "0"}
    r.status = status
    r.latency = {"e2e": {"median_s": median, "ci_low_s": median * 0.99, "ci_high_s": median * 1.01}}
    if created:
        r.created_utc = created
    for k, v in over.items():
        setattr(r, k, v)
    d = store.new_run_dir(root, "m", "host")
    store.write_result(d, r)
    return r, d


def test_earlier_sessions_pick_only_the_same_measurement(tmp_path):
    keep1, _ = _run(tmp_path, 1.0)
    _run(tmp_path, 2.0, sha="b" * 64)                         # another model
    _run(tmp_path, 3.0, status="incomplete")                 # not complete
    _run(tmp_path, 4.0, created="2020-01-01T00:00:00+00:00")  # too old
    _run(tmp_path, 5.0, runtime={"name": "ai-edge-litert", "version": "2.3.0", "kernels": "reference",
                                 "threads": 1})                # other kernels
    _run(tmp_path, 6.0, settings={"agent_cpus": "1"})        # other pinning
    combined, combined_dir = _run(tmp_path, 1.1)
    combined.latency["e2e"]["invocation"] = {"median_s": 1.2, "ci_low_s": 1.19, "ci_high_s": 1.21}
    store.write_result(combined_dir, combined)
    this, this_dir = _run(tmp_path, 1.05)
    found = earlier_sessions(this, tmp_path, 10, exclude=this_dir)
    assert [f["run_id"] for f in found] == [combined.run_id, keep1.run_id]       # newest first
    assert found[0]["latency"]["e2e"]["median_s"] == 1.2                          # its invocation-only figure
    assert earlier_sessions(this, tmp_path, 2, exclude=this_dir)[0]["run_id"] == combined.run_id
    assert len(earlier_sessions(this, tmp_path, 2, exclude=this_dir)) == 1
    assert earlier_sessions(this, tmp_path, 1, exclude=this_dir) == []


def test_same_measurement_needs_the_same_batch():
    a, b = new_result("bench"), new_result("bench")
    for r in (a, b):
        r.model, r.scenario = {"sha256": "x"}, {"name": "offline", "batch": 8}
    assert same_measurement(a, b)
    b.scenario = {"name": "offline", "batch": 4}
    assert not same_measurement(a, b)


def test_bad_sessions_option():
    with pytest.raises(UsageError, match="--sessions"):
        BenchOptions(sessions=0).validate()


# ---------------------------------------------------------------- two real invocations
@pytest.mark.slow
def test_second_invocation_combines_the_first(tmp_path):
    host = get_profile("host")
    opts = dict(min_samples=50, min_time_s=0.3, max_time_s=2.0, chunk_time_s=0.1, repeat=2, max_repeats=2)
    first, _ = run_bench(INT8, host, BenchOptions(**opts), runs_root=tmp_path)
    e1 = first.latency["e2e"]
    assert e1["sessions"] == 1 and "single-session" in {w["code"] for w in first.warnings}
    assert "one session" in first.extra["claim"]
    second, d2 = run_bench(INT8, host, BenchOptions(**opts), runs_root=tmp_path)
    e2 = second.latency["e2e"]
    assert e2["sessions"] == 2 and e2["session_runs"] == [first.run_id]
    assert e2["session_medians_s"] == [e2["invocation"]["median_s"], e1["invocation"]["median_s"]]
    assert e2["ci_low_s"] <= e2["invocation"]["ci_low_s"] and e2["ci_high_s"] >= e2["invocation"]["ci_high_s"]
    assert e2["rerun_low_s"] < e2["rerun_high_s"] and e2["between_session_cv"] is not None
    assert "combines 2 sessions" in second.extra["claim"]
    assert "single-session" not in {w["code"] for w in second.warnings}
    # the stored run says the same, and the stop rule judged the invocation's own interval
    stored = store.read_result(d2)
    assert stored.latency["e2e"]["sessions"] == 2
    assert stored.stopping["rel_ci_halfwidth"] == e2["invocation"]["rel_ci_halfwidth"]
    # --sessions 1: this invocation only
    third, _ = run_bench(INT8, host, dataclasses.replace(BenchOptions(**opts), sessions=1), runs_root=tmp_path)
    assert third.latency["e2e"]["sessions"] == 1
