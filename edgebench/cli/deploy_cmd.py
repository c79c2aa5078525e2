"""`edgebench deploy MODEL --board B`: convert to a blob, upload with CRC frames, load it on the device."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench.cli import options as opt
from edgebench.errors import UsageError


def _bytes(n) -> str:
    return "–" if n is None else f"{int(n):,} bytes"


def deploy(
    model: Path = typer.Argument(..., help="The INT8 .tflite model to put on the board."),
    board: str = opt.board(..., help="Microcontroller board profile (see `edgebench boards`)."),
    url: Optional[str] = opt.url(help="The board's serial port (e.g. the pty `edgebench flash` printed)."),
    image: Optional[Path] = opt.image(),
    boards_dir: List[Path] = opt.boards_dir(),
    model_id: Optional[str] = opt.model_id(),
    input_encoding: str = opt.input_encoding(),
    results: str = opt.results(),
    json_out: bool = opt.json_flag("the deployment report"),
) -> None:
    """Convert a model to a firmware blob, upload it (CRC-checked frames), verify it and load it.

    The MLPerf Tiny options (--model-id, --input-encoding, --results) make the device behave
    like the benchmark's reference firmware for the MLCommons runner: docs/mlperf-tiny.md."""
    # lazy: pydantic, rich (import pydantic 199 ms, rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.boards.connect import open_client
    from edgebench.boards.profile import MCU_CLIENT
    from edgebench.cli.board import board_profile
    from edgebench.cli.output import emit_json, get_console, get_err_console

    profile = board_profile(board, boards_dir)
    if profile.client_kind != MCU_CLIENT:
        raise UsageError(f"board {profile.name} is a Linux board: deploy is for microcontroller firmware",
                         "edgebench bench/accuracy send the model to a Linux board themselves")
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.mcu.mlperf_ids import INPUT_ENCODINGS, RESULTS_MODES, check_choice, check_model_id
    from edgebench.modelfile import read_model

    if model_id is not None:
        check_model_id(model_id)          # before connecting: one clear line
    check_choice(input_encoding, INPUT_ENCODINGS, "--input-encoding")
    check_choice(results, RESULTS_MODES, "--results")
    model_file = read_model(model)  # missing, a directory, a device, not a valid TFLite model: one clear line
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.mcu.fit import RAM_PLACEMENT, check_fit

    check_fit(model, profile).raise_if_unfit(RAM_PLACEMENT)  # operators, model buffer, arena: before any upload
    if image is not None:
        # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
        from edgebench.boards.connect import check_image

        check_image(profile, url, image)
    err = get_err_console()
    err.print(f"[dim]connecting to {profile.name}…[/]")
    client = open_client(profile, url, image=image)
    try:
        from edgebench import board_protocol as bp  # lazy: numpy, kept off `edgebench VERB --help`

        bp.require(client, bp.DEPLOY, f"deploy to {profile.name}")
        report = client.deploy(model_file, model_id=model_id, input_encoding=input_encoding, results=results)
    finally:
        client.close()
    if json_out:
        emit_json(report)
        return
    out = get_console()
    up, ld = report.upload, report.loaded
    out.print(f"deployed {report.model['name']} to {profile.name} ({client.description})")
    out.print(f"  blob {_bytes(report.blob_bytes)} (model file {_bytes(report.model['bytes'])}), "
              f"peak arena {_bytes(report.peak_arena_bytes)}, flash {_bytes(report.flash_bytes)}")
    rate = up.get("bytes_per_s")
    out.print(f"  upload {_bytes(up['bytes'])} in {up['elapsed_s']:.3f} s"
              + (f" = {rate / 1e3:,.1f} kB/s" if rate else "")
              + f" ({up['frames']} frames of <= {up['payload_max']} bytes, window {up['window']}, "
              f"{up['retransmits']} retransmitted); CRC-32 {up['crc32']} verified by the device")
    out.print(f"  loaded: {ld['layers']} layers, arena {_bytes(ld['arena'])} of {_bytes(report.device.get('arena-bytes'))}, "
              f"input {_bytes(ld['in'])}, output {_bytes(ld['out'])}")
    mp = report.mlperf
    out.print(f"  MLPerf Tiny: profile% reports m-model-[{mp['model_id']}]; input {mp['input_encoding']}, "
              f"results {mp['results']}", markup=False)
    if mp.get("note"):
        out.print(f"  note: {mp['note']}", markup=False)
    if report.device.get("timing") == "emulated":
        out.print("  note: timing on this board is emulated (QEMU instruction counts): the MLCommons runner's "
                  "throughput from it is not a real board's speed (profile% says EMULATED)")
    if url is None and profile.transport.url == "emulator":
        out.print(f"  note: {profile.name} was started for this command and stopped after it, taking the model "
                  f"with it; keep one running with `edgebench flash --board {profile.name}` and pass --url")
