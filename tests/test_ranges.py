"""Numeric option ranges (issue 22, item 7): declared once (edgebench.ranges), checked on the
command line as the option is parsed and by the library's option dataclasses, one line naming
the range; slow fixed-rate schedules continue across chunks instead of failing."""
from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

import pytest
from conftest import DIGITS_INT8

from edgebench import ranges as R
from edgebench.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]


def _numeric_options():
    from edgebench.cli.app import commands

    for name, cmd in sorted(commands().items()):
        for p in cmd.params:
            td = getattr(p, "type_descriptor", None)
            ann = td.annotation if td is not None else None
            args = typing.get_args(ann) or (ann,)
            if any(a in (int, float) for a in args) and bool not in args and p.opts[0].startswith("--"):
                yield name, p


def test_every_numeric_option_declares_its_range():
    missing = [f"{verb} {p.opts[0]}" for verb, p in _numeric_options()
               if not isinstance(getattr(p.callback, "range", None), R.Range)]
    assert not missing, f"numeric options without a range (edgebench.ranges + opt.within): {missing}"
    assert len(list(_numeric_options())) > 50


@pytest.mark.slow  # seven commands in subprocesses (test_the_library_checks_the_same_ranges stays in the lane)
@pytest.mark.parametrize("args,needle", [
    (["bench", DIGITS_INT8, "--scenario", "fixed-rate", "--rate", "1e-320"],
     "--rate must be a finite number from 0.0001 to 1,000,000 inferences per second, got 1e-320"),
    (["energy", DIGITS_INT8, "--board", "sim-pi5", "--duty", "1e-320"], "'--duty': must be a finite number from 1e-06 to 1"),
    (["soak", DIGITS_INT8, "--board", "sim-pi5", "--window", "1e-320"], "'--window': must be a finite number from 1 to"),
    (["bench", DIGITS_INT8, "--threads", "0"], "'--threads': must be a whole number from 1 to 1024, got 0"),
    (["bench", DIGITS_INT8, "--target", "nan"], "'--target': must be a finite number above 0 and at most 1"),
    (["verify", DIGITS_INT8, "--seed", "-1"], "'--seed': must be a whole number from 0 to 4,294,967,295, got -1"),
    (["accuracy", DIGITS_INT8, "--max-ece", "-0.1"], "'--max-ece': must be a number of at least 0 (inf: no limit)"),
])
def test_out_of_range_options_are_one_line_naming_the_range(tmp_path, args, needle):
    p = subprocess.run([sys.executable, "-m", "edgebench", *map(str, args), "--runs-dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0], p.stderr
    assert not list(tmp_path.iterdir())                  # refused before anything was written


def test_the_library_checks_the_same_ranges():
    from edgebench.bench.energy import EnergyOptions
    from edgebench.bench.latency import BenchOptions
    from edgebench.bench.soak import SoakOptions

    with pytest.raises(UsageError, match="--rate must be a finite number from 0.0001 .* got 1e-320"):
        BenchOptions(scenario="fixed-rate", rate_hz=1e-320).validate()
    with pytest.raises(UsageError, match="--duty must be a finite number from 1e-06 to 1"):
        EnergyOptions(duty=1e-320).validate()
    with pytest.raises(UsageError, match="--window must be a finite number from 1 to"):
        SoakOptions(window_s=1e-320).validate()
    with pytest.raises(UsageError, match="sends fewer than 2 requests within --max-time 20 s"):
        BenchOptions(scenario="fixed-rate", rate_hz=0.01).validate()


def test_range_wording():
    assert R.Range(1, 5, integer=True).problem(2.5) == "must be a whole number from 1 to 5, got 2.5"
    assert R.Range(0.0, 1.0, low_open=True).problem(0.0) == "must be a finite number above 0 and at most 1, got 0"
    assert R.Range(0.0, None, inf_ok=True).problem(float("inf")) is None
    assert R.Range(0.0, None).problem(float("inf")) is not None and R.Range(1, 2).problem(True) is not None


@pytest.mark.slow  # 45 s of schedule on the simulated board (it runs at the host's pace)
def test_a_schedule_slower_than_one_request_per_10_s_continues_across_chunks(tmp_path):
    """Requests due further ahead than run(start_ns=) may reach (10 s) used to fail with an
    internal 'start_ns must be ... at most 10 s ahead'; now the schedule waits for them."""
    from edgebench.bench.latency import BenchOptions, run_bench
    from edgebench.boards.registry import get_profile

    opts = BenchOptions(scenario="fixed-rate", rate_hz=0.05, max_time_s=45, min_samples=2, repeat=1,
                        max_repeats=1, sessions=1)
    result, _ = run_bench(DIGITS_INT8, get_profile("sim-pi5"), opts, runs_root=tmp_path)
    assert result.status == "complete" and result.latency["e2e"].n + result.warmup.n_warmup >= 2
