"""`bench A B --rounds N`: A/B across invocations in seeded balanced blocks, compared paired by block.

The host board runs the real agent (tiny bundled digits models); a planted slowdown is measured on
the simulated board (edgebench.sim: no hardware), two profiles whose simulated latency differs.
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from edgebench.bench.latency import BenchOptions, run_bench
from edgebench.bench.rounds import ROUNDS_JSON, Side, plan_orders, read_rounds, run_rounds, sides_of
from edgebench.boards.registry import get_profile
from edgebench.errors import DataError, UsageError
from edgebench.results import store
from edgebench.stats.paired import NO_VERDICT, Block, gate, paired_blocks

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "models" / "digits"
INT8, FP32 = DIGITS / "digits_int8.tflite", DIGITS / "digits_fp32.tflite"


# --- the plan -------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", range(1, 10))
def test_orders_are_balanced_and_seeded(n):
    orders = plan_orders(n, seed=5)
    assert len(orders) == n and set(orders) <= {"AB", "BA"}
    assert abs(orders.count("AB") - orders.count("BA")) <= 1
    assert plan_orders(n, seed=5) == orders          # recorded seed -> the same plan


def test_orders_are_random_across_seeds():
    plans = {tuple(plan_orders(6, seed=s)) for s in range(20)}
    assert len(plans) > 5                              # not one fixed ABBA pattern


def test_sides_from_models_or_images():
    a, b = sides_of(["a.tflite", "b.tflite"], [])
    assert (a.model, b.model, a.image) == (Path("a.tflite"), Path("b.tflite"), None)
    a, b = sides_of(["m.tflite"], ["a.elf", "b.elf"])
    assert a.model == b.model and (a.image, b.image) == (Path("a.elf"), Path("b.elf"))
    with pytest.raises(UsageError, match="two sides"):
        sides_of(["m.tflite"], [])
    with pytest.raises(UsageError, match="two sides"):
        sides_of(["a", "b", "c"], [])


# --- the statistics -------------------------------------------------------------------------------

def _blocks(ratio, n, cv, seed):
    rng = np.random.default_rng(seed)
    return [Block(1e-3 * math.exp(rng.normal(0, cv)), 1e-3 * ratio * math.exp(rng.normal(0, cv)), 0.002, 0.002)
            for _ in range(n)]


def test_drift_common_to_a_block_cancels():
    # the machine gets 30% slower over the set; B is 5% slower than A in every block
    blocks = [Block(1e-3 * (1 + 0.06 * k), 1.05e-3 * (1 + 0.06 * k) * (1 + 0.003 * (-1) ** k), 0.001, 0.001)
              for k in range(5)]
    r = paired_blocks(blocks)
    assert r.verdict == "B larger" and r.ci_low > 1.03 and abs(r.ratio - 1.05) < 0.005
    assert r.df == 4 and r.fallback is None and r.mde["ratio"] < 1.03


def test_aa_blocks_not_called_and_interval_holds_one():
    r = paired_blocks(_blocks(1.0, 5, 0.02, seed=3))
    assert r.verdict == "no difference resolved" and r.ci_low < 1.0 < r.ci_high


def test_within_block_terms_are_a_floor():
    # identical figures in every block: the blocks' spread is 0, the invocations' own errors are not
    r = paired_blocks([Block(1.0, 1.0, 0.01, 0.01)] * 4)
    assert r.se_log == pytest.approx(math.sqrt(2 * 0.01 ** 2 / 4))
    assert r.ci_low < 1.0 < r.ci_high


def test_fewer_than_three_blocks_say_the_fallback():
    r = paired_blocks(_blocks(1.5, 2, 0.01, seed=1))
    assert r.fallback and "t on 3 df instead of t(1)" in r.fallback and r.df == 3   # 1 of the blocks + the prior's 2
    assert r.verdict == NO_VERDICT
    g = gate(r, 1.05)
    assert g["undecided"] or g["failed"]             # never a silent pass
    one = paired_blocks(_blocks(1.0, 1, 0.01, seed=1))
    assert one.df == 2 and one.between_block_sd_log is None and "t(0)" in one.fallback


def test_gate_fails_on_lower_bound_and_cannot_decide_below_mde():
    big = paired_blocks(_blocks(1.2, 5, 0.01, seed=2))
    assert gate(big, 1.05)["failed"] and not gate(big, 1.05)["undecided"]
    noisy = paired_blocks(_blocks(1.0, 4, 0.06, seed=2))
    g = gate(noisy, 1.02)
    assert not g["failed"] and g["undecided"] and g["mde_ratio"] > 1.02
    assert not gate(noisy, 1.5)["undecided"]            # a threshold above the MDE decides: passed
    with pytest.raises(DataError):
        gate(noisy, 0.9)


def test_rounds_that_resolve_nothing_say_so_instead_of_a_huge_percentage():
    """Three wildly noisy rounds: the detectable ratio lies beyond MDE_LIMIT, so no figure is quoted (it
    once printed "detects >= 1e5 %"), and a gate on them cannot decide, whatever its threshold."""
    from edgebench.cli.bench_rounds import summary_lines
    from edgebench.stats.power import MDE_LIMIT

    r = paired_blocks(_blocks(1.0, 3, 3.0, seed=4))
    assert r.mde["beyond_limit"] and r.mde["ratio"] is None and r.mde["limit_ratio"] == MDE_LIMIT
    g = gate(r, 5.0)
    assert g["mde_beyond_limit"] and (g["undecided"] or g["failed"])
    doc = {"result": r.to_dict(), "a": {"model": "a.tflite"}, "b": {"model": "b.tflite"}, "board": "sim",
           "label": "simulated", "orders": ["AB", "BA", "AB"], "seed": 1, "gate": g, "record": "x"}
    text = "\n".join(summary_lines(doc))
    assert f"detects no difference up to +{100 * (MDE_LIMIT - 1):.0f}%" in text and "detects >=" not in text


def test_bad_figures_refused():
    with pytest.raises(DataError):
        paired_blocks([])
    with pytest.raises(DataError):
        paired_blocks([Block(0.0, 1.0)])


# --- orchestration with a planted slowdown (simulated board) --------------------------------------

def _sim_profile(tmp_path, name, latency_s):
    src = yaml.safe_load((ROOT / "boards" / "sim-pi5.yaml").read_text())
    src["name"] = name
    src["simulated"]["latency_s"] = latency_s
    (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(src))
    return get_profile(name, extra_dirs=(tmp_path,))


def _sim_measure(profiles, runs):
    opts = BenchOptions(min_samples=50, min_time_s=0.2, max_time_s=1.0, repeat=2, max_repeats=2, sessions=1)
    calls = []

    def measure(side, k):
        calls.append((k, side.name))
        return run_bench(side.model, profiles[side.name], opts, runs_root=runs)

    return measure, calls


@pytest.mark.slow
def test_planted_slowdown_on_a_sim_board_is_detected_and_runs_are_stored(tmp_path):
    profiles = {"A": _sim_profile(tmp_path, "sim-a", 0.005), "B": _sim_profile(tmp_path, "sim-b", 0.0055)}
    runs = tmp_path / "runs"
    measure, calls = _sim_measure(profiles, runs)
    events = []
    rec = run_rounds((Side("A", INT8), Side("B", INT8)), 4, "sim", runs, measure, seed=11, max_slowdown=1.05,
                     progress=events.append)
    assert rec.label == "simulated"
    r = rec.result
    assert r["verdict"] == "B larger" and r["ci_low"] > 1.05 and rec.gate["failed"]
    from edgebench.cli.bench_rounds import summary_lines

    assert "B is slower than A" in "\n".join(summary_lines(rec.to_dict()))
    # the recorded order is the order run, balanced
    assert [s for _, s in calls] == list("".join(rec.orders))
    assert rec.orders == plan_orders(4, 11) and rec.orders.count("AB") == 2
    assert [e["round"] for e in events] == [1, 2, 3, 4]
    # each side's run is an ordinary run in the folder; the record links them
    found = {str(p) for p in store.find_runs(runs)}
    assert len(found) == 8
    doc = read_rounds(Path(rec.record).parent)
    assert doc == json.loads(json.dumps(rec.to_dict()))
    for blk in doc["blocks"]:
        for side in "AB":
            assert blk[side]["run_dir"] in found
            assert store.read_result(blk[side]["run_dir"]).run_id == blk[side]["run_id"]


@pytest.mark.slow
def test_aa_on_a_sim_board_is_not_called(tmp_path):
    profiles = {"A": _sim_profile(tmp_path, "sim-a", 0.005)}
    profiles["B"] = profiles["A"]
    measure, _ = _sim_measure(profiles, tmp_path / "runs")
    rec = run_rounds((Side("A", INT8), Side("B", INT8)), 3, "sim", tmp_path / "runs", measure, seed=2)
    assert rec.result["verdict"] == "no difference resolved" and rec.gate is None
    from edgebench.cli.bench_rounds import summary_lines

    text = "\n".join(summary_lines(rec.to_dict()))
    assert "(simulated), 3 rounds" in text and "no difference resolved" in text and "detects >= " in text
    assert "gate" not in text and "fewer than 3 rounds" not in text


# --- the command line, host board -----------------------------------------------------------------

@pytest.mark.slow
def test_rounds_on_host_end_to_end(tmp_path, cli):
    runs = tmp_path / "runs"
    res = cli("bench", INT8, INT8, "--rounds", "2", "--repeat", "1", "--min-samples", "30", "--min-time", "0.2",
              "--max-time", "1", "--runs-dir", runs, "--max-slowdown", "1.05", "--json", "--seed", "4")
    assert res.returncode == 3, res.stderr                    # 2 rounds: no verdict, the gate cannot decide
    doc = json.loads(res.stdout)
    assert doc["format"] == "edgebench-rounds" and doc["label"] == "measured" and doc["seed"] == 4
    assert doc["orders"] == plan_orders(2, 4) and sorted(doc["orders"]) == ["AB", "BA"]
    assert doc["result"]["fallback"] and doc["result"]["verdict"] == NO_VERDICT
    assert doc["gate"]["undecided"] and not doc["gate"]["failed"]
    assert (Path(doc["record"]).name == ROUNDS_JSON) and Path(doc["record"]).is_file()
    assert len(store.find_runs(runs)) == 4
    err = res.stderr.strip().splitlines()
    assert any(ln.startswith("round 2/2 (") for ln in err)
    assert err[-1].startswith("error: --max-slowdown 1.05 is below what 2 rounds detect")
    listed = cli("runs", "--runs-dir", runs, "--json")      # other verbs read the rounds' runs
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 4


@pytest.mark.parametrize("args, message", [
    (("bench", INT8, "--rounds", "3"), "--rounds compares two sides"),
    (("bench", INT8, FP32, "--max-slowdown", "1.05"), "--max-slowdown applies to --rounds"),
    (("bench", INT8, FP32, "--rounds", "0"), "--rounds"),
    (("bench", INT8, FP32, "--rounds", "3", "--max-slowdown", "0.9"), "--max-slowdown is a slowdown ratio"),
    (("bench", INT8, "--image", "a.elf", "--image", "b.elf"), "two --image"),
])
def test_bad_input_is_one_line(tmp_path, cli, args, message):
    res = cli(*args, "--runs-dir", tmp_path / "runs")
    assert res.returncode in (1, 2) and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr
    assert not (tmp_path / "runs").exists() or not store.find_runs(tmp_path / "runs")


@pytest.mark.qemu
def test_two_firmware_images_compared_in_rounds(tmp_path, cli, posix_firmware_bin):
    """One model on two firmware images (copies of the posix build): each round starts each side's
    image afresh; the record names both images and links four runs."""
    import shutil

    a, b = tmp_path / "fw-a", tmp_path / "fw-b"
    shutil.copy2(posix_firmware_bin, a)
    shutil.copy2(posix_firmware_bin, b)
    runs = tmp_path / "runs"
    res = cli("bench", INT8, "--board", "posix-sim", "--image", a, "--image", b, "--rounds", "2", "--repeat", "1",
              "--min-samples", "20", "--min-time", "0.2", "--max-time", "1", "--runs-dir", runs, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert (doc["a"]["image"], doc["b"]["image"]) == (str(a), str(b)) and doc["a"]["model"] == doc["b"]["model"]
    assert len(doc["blocks"]) == 2 and len(store.find_runs(runs)) == 4
    assert doc["result"]["verdict"] == NO_VERDICT and doc["result"]["fallback"]
