"""`edgebench selftest --board B`: the first run on a newly flashed microcontroller.

Exit codes: 0 every check passed (or was skipped with its reason), 1 error, 2 a check failed.
"""
from __future__ import annotations

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.runargs import RunArgs
from edgebench.errors import GateFailed


def selftest(
    clock_s: float = typer.Option(10.0, "--clock-seconds", callback=opt.within(R.CLOCK_CHECK_S),
                                  help="How long the device clock is compared with the host's (at least 10 s)."),
    count: int = typer.Option(8, callback=opt.within(R.SELFTEST_COUNT), help="Inputs per bundled model in the bit-exact check."),
    *,
    run: RunArgs,                       # given by edgebench.cli.runargs.command
) -> None:
    """Check a board's firmware: protocol, device clock against the host's, bit-exact outputs, cycles per MAC."""
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console, get_err_console

    profile = run.profile()
    err = get_err_console()
    last = {"clock": -1.0}

    def show(ev: dict) -> None:
        if ev["event"] == "connect":
            err.print(f"[dim]connecting to {ev['board']}…[/]")
        elif ev["event"] == "clock" and ev["elapsed_s"] - last["clock"] >= 2.0:
            last["clock"] = ev["elapsed_s"]
            err.print(f"[dim]comparing the device clock with this computer's: {ev['elapsed_s']:.0f} of "
                      f"{ev['of_s']:.0f} s…[/]")
        elif ev["event"] == "verify":
            err.print(f"[dim]bit-exact check of {ev['model']}…[/]")
        elif ev["event"] == "timed":
            err.print(f"[dim]timing {ev['n']} inferences of {ev['model']}…[/]")

    # lazy: the firmware link and the run record (0.32 s measured), kept off `edgebench selftest --help`
    from edgebench.bench.selftest import SelftestOptions, run_selftest
    from edgebench.cli.render.selftest import print_selftest

    result = run_selftest(profile, SelftestOptions(clock_s=clock_s, count=count), url=run.url,
                          runs_root=run.runs_dir, progress=run.progress(profile.name, show), image=run.image)
    if run.json_out:
        emit_json(result)
    else:
        print_selftest(get_console(), result)
    if result.failed:
        bad = [c["name"] for c in result.checks if c["status"] == "fail"]
        raise GateFailed(f"{profile.name} failed the self-test: {', '.join(bad)}",
                         f"see the run in {result.run_dir} and docs/firmware-ports.md (bring-up)")
