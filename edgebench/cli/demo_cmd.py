"""`edgebench demo`: the main job on the embedded default.

Benchmarks the bundled digits FP32 and INT8 models on a board (default: this
computer as the ``host`` board), prints both results with their CIs, the
speed ratio with its run-aware CI (runs interleaved), and the claim sentences. Then, where the Arm
toolchain and QEMU are installed, the INT8 model on the emulated Cortex-M4
board (``qemu-m4``): output bytes checked against the reference kernels, and
latency labelled emulated.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import List, Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.progress import end_live_line, reporter
from edgebench.cli.render import print_run, progress_printer
from edgebench.cli.render.summary import print_summary, summarise_runs
from edgebench.cli.render.verify import print_verify
from edgebench.data.bundled import bundled_model
from edgebench.errors import EdgebenchError, UsageError


def demo(
    board: str = opt.board(),
    kernels: str = opt.kernels(help="Kernel set for both models."),
    threads: int = opt.threads(),
    target: float = opt.target_ci(help="Target CI half-width as a fraction of the median."),
    old_target: Optional[float] = opt.deprecated("--target", "--target-ci", callback=opt.within(R.TARGET)),
    min_time: float = typer.Option(
        1.0, callback=opt.within(R.MIN_TIME_S), help="Minimum measuring time per run, seconds."),
    max_time: float = typer.Option(20.0, callback=opt.within(R.MAX_TIME_S), help="Time budget per model, seconds."),
    repeat: int = typer.Option(
        3, callback=opt.within(R.REPEAT), help="Runs per model, interleaved between the two models."),
    runs_dir: Path = opt.runs_dir(),
    url: Optional[str] = opt.url(),
    boards_dir: List[Path] = opt.boards_dir(),
    emulated: str = typer.Option("qemu-m4", help="Emulated board to run the INT8 model on too ('none' to skip)."),
    image: Optional[Path] = opt.image(
        help="Firmware image for the emulated board instead of building one (e.g. from `edgebench flash "
             "--board qemu-m4 --build-only`)."),
    json_out: bool = opt.json_flag("both runs and the comparison"),
    quiet: bool = opt.quiet(),
) -> None:
    """Benchmark the bundled digits FP32 and INT8 models and compare them honestly."""
    # lazy: numpy, pydantic, rich (import numpy 460 ms, pydantic 199 ms, rich 52 ms), kept off `edgebench VERB --help`
    from edgebench.bench.compare import compare
    from edgebench.bench.latency import BenchOptions, run_benches
    from edgebench.bench.sessions import read_history
    from edgebench.cli.board import board_profile
    from edgebench.cli.output import emit_json, get_console, get_err_console
    from edgebench.results.store import read_samples

    err, out = get_err_console(), get_console()
    target = opt.renamed(old_target, target, "--target", "--target-ci")
    profile = board_profile(board, boards_dir)
    if image is not None:  # a wrong image is said now, not after the host runs
        # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
        from edgebench.boards.connect import check_image

        if emulated == "none":
            raise UsageError("--image is the emulated board's firmware, and --emulated none skips that board",
                             "drop one of the two")
        check_image(board_profile(emulated, boards_dir), None, image)
    # Both models on the same CPU: the cores of a (virtual) machine can differ by tens of
    # percent, and a ratio between two cores would measure the cores, not the models.
    # Their runs alternate (FP32, INT8, FP32, ...), each a fresh process, so that drift of
    # the machine falls on both and the comparison pairs run k of one with run k of the other.
    cpus = _one_cpu() if profile.transport.type == "local" and threads == 1 else None
    opts = BenchOptions(kernels=kernels, threads=threads, target_rel_ci=target, repeat=repeat,
                        max_repeats=repeat, min_time_s=min_time, max_time_s=max_time, cpus=cpus)
    names = ("digits_fp32", "digits_int8")
    done = run_benches([bundled_model(name) for name in names], profile, opts, runs_root=runs_dir, url=url,
                       progress_for=lambda file: reporter(file.removesuffix(".tflite"), progress_printer(
                           err, file.removesuffix(".tflite")), max_time_s=max_time, quiet=quiet))
    end_live_line(err)
    runs = dict(zip(names, done))
    (fp32, d32), (int8, d8) = runs["digits_fp32"], runs["digits_int8"]
    s32, s8 = read_samples(d32), read_samples(d8)
    comp = compare(fp32, s32, int8, s8, stage="e2e", stages=("e2e", "invoke"),
                   history=read_history(fp32, d32.parent, later_too=True))
    answers = (f"INT8 vs FP32 on {profile.name}, end to end: {comp.sentence('e2e')}",)
    if not json_out:  # each part as soon as it is measured: a later step that fails cannot hide it
        for result, run_dir in runs.values():
            print_run(out, result, run_dir, warnings=False)   # warnings: once, grouped, in the summary
            out.print()
        out.print(f"[bold]INT8 vs FP32, end to end:[/] {comp.sentence('e2e')}")
        out.print(f"[bold]INT8 vs FP32, invoke only:[/] {comp.sentence('invoke')}")
        if comp.conditions_differ:
            out.print(f"[yellow]conditions differ:[/] {'; '.join(comp.conditions_differ)}")
        card = bundled_model("digits_int8").parent / "model_card.md"
        out.print(f"Accuracy of the pair on the digits test split (not measured by this command): {card}; to "
                  f"measure it here: edgebench accuracy {bundled_model('digits_int8')} --baseline "
                  f"{bundled_model('digits_fp32')} --data digits:test", markup=False, soft_wrap=True)
        out.print()
    host = {"fp32": fp32.to_dict(), "int8": int8.to_dict(), "comparison": comp.to_dict()}
    try:
        mcu = _emulated_board(emulated, boards_dir, runs_dir, min_time, max_time, err, None if json_out else out,
                              image, quiet)
    except EdgebenchError as exc:  # the host figures stand: --json still gets them, with what went wrong
        if json_out:
            emit_json({**host, "emulated": {"error": exc.one_line()}})
        else:
            print_summary(out, summarise_runs(list(runs.values()), answers))
        raise
    if not json_out:
        done = list(runs.values()) + ([] if mcu is None else [(mcu[1], mcu[2])])
        print_summary(out, summarise_runs(done, answers))
    if json_out:
        emit_json({**host, "emulated": None if mcu is None else {"verify": mcu[0].to_dict(),
                                                                 "bench": mcu[1].to_dict()}})


def _one_cpu() -> str | None:
    try:
        return str(min(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux: no pinning, and the settings say so (agent_cpus null)
        return None


def _emulated_board(name: str, boards_dir, runs_dir, min_time: float, max_time: float, err, out=None, image=None,
                    quiet: bool = False):
    """Verify and benchmark digits INT8 on an emulated microcontroller, or say why not; with a
    console ``out``, print the verification and the run as each finishes."""
    if name == "none":
        return None
    needed = ("qemu-system-arm",) if image else ("arm-none-eabi-gcc", "qemu-system-arm", "make")
    missing = [t for t in needed if shutil.which(t) is None]
    if missing:
        err.print(f"emulated board {name} skipped: {', '.join(missing)} not installed "
                  "(`make demo` installs them as root; or apt-get install gcc-arm-none-eabi "
                  "libnewlib-arm-none-eabi qemu-system-arm)")
        return None
    # lazy: numpy, pydantic (import numpy 460 ms, pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.bench.latency import BenchOptions, run_bench
    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.connect import open_client
    from edgebench.cli.board import board_profile
    from edgebench.data.bundled import bundled_model

    profile = board_profile(name, boards_dir)
    model = bundled_model("digits_int8")
    err.print(f"[dim]{name}: {'starting' if image else 'building the firmware and starting'} the emulator…[/]")
    with open_client(profile, image=image) as client:
        checked = run_verify(model, profile, VerifyOptions(count=16), client=client)
        if out is not None:
            print_verify(out, checked)
        result, run_dir = run_bench(model, profile, BenchOptions(min_time_s=min_time, max_time_s=max_time),
                                    runs_root=runs_dir, client=client,
                                    progress=reporter(f"digits_int8 on {name}", progress_printer(
                                        err, f"digits_int8 on {name}"), max_time_s=max_time, quiet=quiet))
    end_live_line(err)
    if out is not None:
        print_run(out, result, run_dir, warnings=False)
    return checked, result, run_dir
