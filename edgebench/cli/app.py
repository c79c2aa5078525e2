"""The edgebench command line (level 5): the only layer that prints or exits.

Each verb lives in its own module under ``edgebench.cli`` and registers itself
on :data:`app` through :func:`verb`. Heavy imports stay inside the verb
functions so that ``edgebench --help`` starts fast.

Errors from ``edgebench.errors`` become one line on stderr and the error's
exit code (1 error, 2 gate failed); ``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import sys

import typer

from edgebench import __version__
from typer.exceptions import TyperException

from edgebench.errors import EdgebenchError

app = typer.Typer(
    name="edgebench",
    help="Honest benchmarks of ML models on edge hardware: latency with confidence "
    "intervals, thermal soak, energy and INT8 accuracy, each figure with its conditions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"edgebench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    _state["debug"] = debug


def debug_enabled() -> bool:
    return _state["debug"]



def _try_register() -> None:
    import importlib

    for name in ("boards_cmd", "bench_cmd", "runs_cmd", "demo_cmd", "inspect_cmd", "compile_cmd", "accuracy_cmd", "quantize_cmd", "flash_cmd", "deploy_cmd", "verify_cmd", "soak_cmd", "energy_cmd", "battery_cmd", "sweep_cmd"):
        try:
            importlib.import_module(f"edgebench.cli.{name}")
        except ModuleNotFoundError as exc:  # a verb not written yet
            if exc.name != f"edgebench.cli.{name}":
                raise


_try_register()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app and map errors to exit codes."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        rc = app(args=args, standalone_mode=False)
        if isinstance(rc, int) and rc:  # typer turns Ctrl-C into 130 without raising
            if rc == 130:
                print("interrupted", file=sys.stderr)
            sys.exit(rc)
    except EdgebenchError as exc:
        if debug:
            raise
        print(f"error: {exc.one_line()}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit:
        raise
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        print("aborted", file=sys.stderr)
        sys.exit(1)
    except TyperException as exc:  # usage errors: unknown option, bad value, missing argument
        if debug:
            raise
        verb = next((a for a in args if not a.startswith("-")), None)
        known = verb is not None and "No such command" not in exc.format_message()
        where = f"edgebench {verb} --help" if known else "edgebench --help"
        print(f"error: {' '.join(exc.format_message().split())} (see {where})", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:  # anything unexpected: still one line unless --debug
        if debug:
            raise
        print(f"error: unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)",
              file=sys.stderr)
        sys.exit(1)

if __name__ == "__main__":  # pragma: no cover
    main()
