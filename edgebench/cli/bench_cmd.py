"""`edgebench bench MODEL --board B`: latency with CIs, cold start, warm-up, e2e breakdown."""
from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.progress import end_live_line
from edgebench.cli.render import print_run, progress_printer
from edgebench.cli.render.summary import print_summary, summarise_runs
from edgebench.cli.runargs import RunArgs
from edgebench.errors import UsageError

MLPERF = "MLPerf Tiny (--mlperf)"


def parse_range(text: Optional[str]):
    if not text:
        return None

    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"--input-range {text!r} is not LOW,HIGH", "e.g. --input-range 0,1") from None
    return lo, hi


def bench(
    models: Optional[List[Path]] = typer.Argument(
        None, help="The .tflite model(s) to benchmark (omit with --recover); two or more run interleaved "
                   "(A B A B repeats) in one invocation, so `compare` judges them without the variation between "
                   "invocations."),
    scenario: str = typer.Option("single-stream", help="single-stream, offline or fixed-rate."),
    kernels: str = opt.kernels(rich_help_panel=opt.RUNTIME),
    threads: int = opt.threads(rich_help_panel=opt.RUNTIME),
    delegate: Optional[str] = opt.delegate(rich_help_panel=opt.RUNTIME),
    rate: Optional[str] = opt.rate(help="Requests per second for --scenario fixed-rate: 50, 50/s, 2/min."),
    batch: int = typer.Option(
        1, callback=opt.within(R.BATCH), help="Batch size for --scenario offline (where the model allows it)."),
    inputs: Optional[Path] = opt.inputs(rich_help_panel=opt.RUNTIME),
    input_range: Optional[str] = typer.Option(
        None, rich_help_panel=opt.RUNTIME,
        help="LOW,HIGH for random inputs of float models (default 0,1)."),
    seed: int = opt.seed(rich_help_panel=opt.RUNTIME),
    target: float = opt.target_ci(
        rich_help_panel=opt.STOPPING,
        help="Stop when this invocation's 95% CI half-width of the median (across its runs) is within this "
             "fraction (the spread between invocations is combined afterwards, see --sessions)."),
    old_target: Optional[float] = opt.deprecated("--target", "--target-ci", callback=opt.within(R.TARGET)),
    min_samples: int = typer.Option(
        200, callback=opt.within(R.MIN_SAMPLES), rich_help_panel=opt.STOPPING,
        help="Minimum measured inferences per run."),
    min_time: float = typer.Option(
        1.0, callback=opt.within(R.MIN_TIME_S), rich_help_panel=opt.STOPPING,
        help="Minimum measuring time per run, seconds."),
    max_time: float = typer.Option(
        20.0, callback=opt.within(R.MAX_TIME_S), rich_help_panel=opt.STOPPING,
        help="Time budget for all runs, seconds (then the target is reported as not reached)."),
    repeat: int = typer.Option(
        3, callback=opt.within(R.REPEAT), rich_help_panel=opt.STOPPING,
        help="Independent runs (a fresh agent process and model load each); the interval combines within- and "
             "between-run variation."),
    max_repeats: int = typer.Option(
        10, callback=opt.within(R.MAX_REPEATS), rich_help_panel=opt.STOPPING,
        help="More runs are added, up to this many, while the interval is wider than --target-ci and the time budget "
             "allows."),
    sessions: int = typer.Option(
        10, callback=opt.within(R.SESSIONS), rich_help_panel=opt.STOPPING,
        help="Combine this invocation with up to SESSIONS-1 earlier complete runs of the same model and "
             "conditions in the runs folder (between-invocation variation); 1: this invocation only."),
    rounds: Optional[int] = typer.Option(
        None, "--rounds", callback=opt.within(R.ROUNDS), rich_help_panel=opt.STOPPING,
        help="A/B across invocations: two models (or one model with --image A --image B) in N blocks, each side a "
             "fresh invocation per block in a seeded balanced random order, compared paired by block "
             "(docs/statistics.md)."),
    max_slowdown: Optional[float] = typer.Option(
        None, "--max-slowdown", callback=opt.within(R.MAX_SLOWDOWN), rich_help_panel=opt.STOPPING,
        help="With --rounds: exit 2 when B is slower than X times A beyond the interval's doubt, 3 when X lies "
             "below the smallest slowdown the rounds can detect (cannot decide)."),
    mlperf: bool = typer.Option(False, "--mlperf", rich_help_panel=MLPERF,
                                help="MLPerf Tiny performance mode: drive the board with the plain DUT dialect "
                                     "(five windows of >= 10 s, median throughput)."),
    model_id: Optional[str] = opt.model_id(
        help="The m-model-[ID] the DUT should report (a mismatch is warned about); default: the "
             "MLPerf Tiny id of a recognised benchmark model, else the file name.", rich_help_panel=MLPERF),
    input_encoding: Optional[str] = opt.input_encoding(
        None, " Default: the reference firmware's for a recognised MLPerf Tiny model, else int8.",
        rich_help_panel=MLPERF),
    results: Optional[str] = opt.results(
        None, " Default: mse for a recognised ad01 autoencoder, else outputs.", rich_help_panel=MLPERF),
    *,
    run: RunArgs,                       # given by edgebench.cli.runargs.command
) -> None:
    """Benchmark a model's latency on a board until the median is known to the target precision."""
    started = time.monotonic()  # --max-time is a promise about the time to answer
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import get_err_console

    profile = run.profile()
    err = get_err_console()
    models = list(models or [])
    model = models[0]
    if len(models) > 1 and (mlperf or profile.mlperf_only):
        raise UsageError("several models run interleaved on one board: not with --mlperf", "give one model")
    if rounds is not None and (mlperf or profile.mlperf_only):
        raise UsageError("--rounds runs bench invocations: not with --mlperf", "drop --rounds")
    if mlperf or profile.mlperf_only:
        return _mlperf(model, profile, run, mlperf, scenario, rate, inputs, seed, model_id, input_encoding, results)
    given = [name for name, v in (("--model-id", model_id), ("--input-encoding", input_encoding),
                                  ("--results", results)) if v is not None]
    if given:
        raise UsageError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to --mlperf only "
                         "(the MLPerf Tiny dialect)", "add --mlperf, or drop them")
    if max_slowdown is not None and rounds is None:
        raise UsageError("--max-slowdown applies to --rounds here", "add --rounds N, or use edgebench compare")
    if rounds is None and len(run.images) > 1:
        raise UsageError("two --image compare two firmware builds: with --rounds only", "add --rounds N")
    for m in models:
        run.check_fit(m)      # a microcontroller: operators, model buffer, arena, before any upload
    # lazy: numpy, pydantic (import numpy 460 ms, pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.bench.latency import BenchOptions, run_benches

    opts = BenchOptions(scenario=scenario, kernels=kernels, threads=threads, delegate=delegate,
                        rate_hz=_rate(rate), batch=batch,
                        inputs=str(inputs) if inputs else None, input_range=parse_range(input_range), seed=seed,
                        target_rel_ci=opt.renamed(old_target, target, "--target", "--target-ci"),
                        min_samples=min_samples, min_time_s=min_time, max_time_s=max_time,
                        cpus=run.cpus, repeat=repeat, max_repeats=max(max_repeats, repeat), sessions=sessions)
    if rounds is not None:
        # lazy: numpy, rich (import numpy 460 ms, rich 52 ms measured), kept off `edgebench VERB --help`
        from edgebench.cli.bench_rounds import run_rounds_command

        return run_rounds_command(models, run, opts, rounds, seed, max_slowdown)
    with run.client() as client:  # with --image: one emulator for all runs
        done = run_benches(models, profile, opts, runs_root=run.runs_dir, url=run.url, client=client,
                           started=started, progress_for=lambda name: run.progress(
                               name, progress_printer(err, name), max_time_s=max_time, started=started))
    end_live_line(err)
    if len(done) == 1:
        run.show(*done[0])
        return
    for result, run_dir in done:      # each run on record (labels, index, shared store)
        run.record(result, run_dir)
    if run.json_out:
        # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
        from edgebench.cli.output import emit_json

        emit_json([r for r, _ in done])
        return
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import get_console

    out = get_console()
    for result, run_dir in done:      # their warnings once, grouped, in the summary
        print_run(out, result, run_dir, warnings=False)
        out.print()
    print_summary(out, summarise_runs(done))


def _rate(text: Optional[str]) -> Optional[float]:
    """--rate: a number (checked with the other options, see BenchOptions.validate) or a rate with a
    unit (50/s, 2/min: edgebench.stats.energy.parse_rate)."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        from edgebench.stats.energy import parse_rate  # lazy: numpy (via edgebench.stats), off VERB --help

        return parse_rate(text)


def _mlperf(model, profile, run, asked: bool, scenario, rate, inputs, seed, model_id, input_encoding, results):
    """MLPerf Tiny performance mode (--mlperf, or a board that speaks only that dialect)."""
    # lazy: numpy, pydantic, rich (import numpy 460 ms, pydantic 199 ms, rich 52 ms), kept off `edgebench VERB --help`
    from edgebench.bench.mlperf_mode import MlperfOptions, run_mlperf
    from edgebench.boards.profile import MCU_CLIENT
    from edgebench.cli.output import get_err_console

    if profile.client_kind != MCU_CLIENT:
        raise UsageError(f"--mlperf drives a microcontroller's MLPerf Tiny firmware; board {profile.name} is "
                         f"a {profile.kind} board", "drop --mlperf, or pick an MCU board (edgebench boards)")
    why = "--mlperf" if asked else f"board {profile.name} speaks only the MLPerf Tiny dialect, so it"
    if scenario != "single-stream" or rate is not None:
        raise UsageError(f"{why} runs MLPerf Tiny's own performance windows: --scenario and --rate "
                         "do not apply", "drop --scenario and --rate")
    err = get_err_console()
    opts = MlperfOptions(inputs=str(inputs) if inputs else None, seed=seed, model_id=model_id,
                         input_encoding=input_encoding, results=results)
    with run.client() as client:
        result, run_dir = run_mlperf(model, profile, opts, runs_root=run.runs_dir, url=run.url, client=client,
                                     progress=run.progress(model.name, progress_printer(err, model.name)))
    end_live_line(err)
    run.show(result, run_dir)
