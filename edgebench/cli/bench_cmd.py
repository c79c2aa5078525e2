"""`edgebench bench MODEL --board B`: latency with CIs, cold start, warm-up, e2e breakdown."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.app import app
from edgebench.cli.render import print_run, progress_printer
from edgebench.errors import UsageError


def parse_range(text: Optional[str]):
    if not text:
        return None

    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"--input-range {text!r} is not LOW,HIGH", "e.g. --input-range 0,1") from None
    return lo, hi


@app.command()
def bench(
    model: Optional[Path] = typer.Argument(None, help="The .tflite model to benchmark (omit with --recover)."),
    board: str = opt.board(rich_help_panel=opt.BOARD),
    scenario: str = typer.Option("single-stream", help="single-stream, offline or fixed-rate."),
    kernels: str = opt.kernels(rich_help_panel=opt.RUNTIME),
    threads: int = opt.threads(rich_help_panel=opt.RUNTIME),
    delegate: Optional[str] = opt.delegate(rich_help_panel=opt.RUNTIME),
    rate: Optional[float] = typer.Option(
        None, callback=opt.within(R.RATE_HZ), help="Requests per second for --scenario fixed-rate."),
    batch: int = typer.Option(
        1, callback=opt.within(R.BATCH), help="Batch size for --scenario offline (where the model allows it)."),
    inputs: Optional[Path] = opt.inputs(rich_help_panel=opt.RUNTIME),
    input_range: Optional[str] = typer.Option(
        None, rich_help_panel=opt.RUNTIME,
        help="LOW,HIGH for random inputs of float models (default 0,1)."),
    seed: int = opt.seed(rich_help_panel=opt.RUNTIME),
    target: float = typer.Option(
        0.01, callback=opt.within(R.TARGET), rich_help_panel=opt.STOPPING,
        help="Stop when this invocation's 95% CI half-width of the median (across its runs) is within this "
             "fraction (the spread between invocations is combined afterwards, see --sessions)."),
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
        help="More runs are added, up to this many, while the interval is wider than --target and the time budget "
             "allows."),
    sessions: int = typer.Option(
        10, callback=opt.within(R.SESSIONS), rich_help_panel=opt.STOPPING,
        help="Combine this invocation with up to SESSIONS-1 earlier complete runs of the same model and "
             "conditions in the runs folder (between-invocation variation); 1: this invocation only."),
    cpus: Optional[str] = opt.cpus(rich_help_panel=opt.BOARD),
    runs_dir: Path = opt.runs_dir(rich_help_panel=opt.OUTPUT),
    url: Optional[str] = opt.url(rich_help_panel=opt.BOARD),
    image: Optional[Path] = opt.image(rich_help_panel=opt.BOARD),
    boards_dir: List[Path] = opt.boards_dir(rich_help_panel=opt.BOARD),
    farm: Optional[str] = opt.farm(rich_help_panel=opt.BOARD),
    mlperf: bool = typer.Option(False, "--mlperf", help="MLPerf Tiny performance mode: drive the board with the "
                                "plain DUT dialect (five windows of >= 10 s, median throughput)."),
    model_id: Optional[str] = opt.model_id(
        help="--mlperf: the m-model-[ID] the DUT should report (a mismatch is warned about); default: the "
             "MLPerf Tiny id of a recognised benchmark model, else the file name."),
    input_encoding: Optional[str] = opt.input_encoding(
        None, " --mlperf only; default: the reference firmware's for a recognised MLPerf Tiny model, else int8."),
    results: Optional[str] = opt.results(
        None, " --mlperf only; default: mse for a recognised ad01 autoencoder, else outputs."),
    recover: Optional[Path] = opt.recover("bench", " (keeps the repeats it had written)", rich_help_panel=opt.OUTPUT),
    json_out: bool = opt.json_flag("the run", rich_help_panel=opt.OUTPUT),
) -> None:
    """Benchmark a model's latency on a board until the median is known to the target precision."""
    import time

    started = time.monotonic()  # --max-time is a promise about the time to answer
    from edgebench.bench.latency import BenchOptions, recover_bench, run_bench
    from edgebench.boards.registry import get_profile
    from edgebench.cli.output import emit_json, get_console, get_err_console

    err = get_err_console()
    if farm is not None:   # the same command on every matching place of a labgrid farm (cli/farm_fanout.py)
        from edgebench.cli.farm_fanout import fan_out

        if recover is not None:
            raise UsageError("--farm runs new work; --recover resumes one run", "give one of the two")
        return fan_out("bench", farm, board, runs_dir, json_out)
    if recover is not None:
        if model is not None:
            raise UsageError("give a model to benchmark or --recover RUN_DIR, not both")
        result = recover_bench(recover)
        emit_json(result) if json_out else print_run(get_console(), result, recover)
        return
    if model is None:
        raise UsageError("missing the model to benchmark", "edgebench bench MODEL.tflite --board BOARD")
    profile = get_profile(board, extra_dirs=tuple(boards_dir))
    from edgebench.boards.mcu import mlperf_only

    if mlperf and profile.kind != "mcu":
        raise UsageError(f"--mlperf drives a microcontroller's MLPerf Tiny firmware; board {profile.name} is "
                         f"a {profile.kind} board", "drop --mlperf, or pick an MCU board (edgebench boards)")
    if mlperf or mlperf_only(profile):
        from edgebench.bench.mlperf_mode import MlperfOptions, run_mlperf

        why = "--mlperf" if mlperf else f"board {profile.name} speaks only the MLPerf Tiny dialect, so it"
        if scenario != "single-stream" or rate is not None:
            raise UsageError(f"{why} runs MLPerf Tiny's own performance windows: --scenario and --rate "
                             "do not apply", "drop --scenario and --rate")

        from contextlib import nullcontext

        from edgebench.boards.connect import board_client

        with board_client(profile, url, image=image) if image else nullcontext() as client:
            result, run_dir = run_mlperf(model, profile, MlperfOptions(inputs=str(inputs) if inputs else None,
                                                                       seed=seed, model_id=model_id,
                                                                       input_encoding=input_encoding,
                                                                       results=results),
                                         runs_root=runs_dir, url=url, client=client,
                                         progress=progress_printer(err, model.name))
        err.print()
        if json_out:
            emit_json(result)
        else:
            print_run(get_console(), result, run_dir)
        return
    given = [name for name, v in (("--model-id", model_id), ("--input-encoding", input_encoding),
                                  ("--results", results)) if v is not None]
    if given:
        raise UsageError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to --mlperf only "
                         "(the MLPerf Tiny dialect)", "add --mlperf, or drop them")
    if profile.kind == "mcu" and Path(model).is_file():
        from edgebench.mcu.fit import check_fit

        check_fit(model, profile).raise_if_unfit()  # operators, model buffer, arena: before any upload
    opts = BenchOptions(scenario=scenario, kernels=kernels, threads=threads, delegate=delegate,
                        rate_hz=rate, batch=batch, inputs=str(inputs) if inputs else None,
                        input_range=parse_range(input_range), seed=seed, target_rel_ci=target,
                        min_samples=min_samples, min_time_s=min_time, max_time_s=max_time, cpus=cpus,
                        repeat=repeat, max_repeats=max(max_repeats, repeat), sessions=sessions)
    from contextlib import nullcontext

    from edgebench.boards.connect import board_client

    with board_client(profile, url, image=image) if image else nullcontext() as client:  # one emulator, all runs
        result, run_dir = run_bench(model, profile, opts, runs_root=runs_dir, url=url, client=client, started=started,
                                    progress=progress_printer(err, model.name))
    err.print()
    if json_out:
        emit_json(result)
    else:
        print_run(get_console(), result, run_dir)
