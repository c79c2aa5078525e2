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

from edgebench.cli import options
from edgebench.errors import EdgebenchError, InputWarning

app = typer.Typer(
    name="edgebench",
    help="Honest benchmarks of ML models on edge hardware: latency with confidence "
    "intervals, thermal soak, energy and INT8 accuracy, each figure with its conditions.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"edgebench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = options.debug(),
    version: bool = options.version(_version),
) -> None:
    _state["debug"] = debug


def debug_enabled() -> bool:
    return _state["debug"]



def _try_register() -> None:
    import importlib

    for name in ("boards_cmd", "bench_cmd", "runs_cmd", "demo_cmd", "inspect_cmd", "compile_cmd", "accuracy_cmd", "quantize_cmd", "flash_cmd", "deploy_cmd", "verify_cmd", "soak_cmd", "energy_cmd", "battery_cmd", "sweep_cmd", "report_cmd", "compare_cmd", "check_cmd", "farm_cmd", "profile_cmd", "layer_error_cmd"):
        try:
            importlib.import_module(f"edgebench.cli.{name}")
        except ModuleNotFoundError as exc:  # a verb not written yet
            if exc.name != f"edgebench.cli.{name}":
                raise


_try_register()


def _say(line: str) -> None:
    """One line on stderr; a closed terminal (SIGHUP) must not turn it into a traceback."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _interrupted() -> None:
    """Exit after Ctrl-C (130) or a stop signal (128+N), with one line on stderr."""
    from edgebench.cli import signals

    got = signals.received()
    if got is None:
        _say("interrupted")
        sys.exit(130)
    name, number = got
    _say(f"stopped by {name}")
    sys.exit(signals.exit_code(number))


def _show_warnings() -> None:
    """edgebench's own warnings (InputWarning, ...) become one ``warning:`` line on stderr."""
    import warnings

    original = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, InputWarning):
            _say(f"warning: {' '.join(str(message).split())}")
        else:
            original(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    warnings.simplefilter("always", InputWarning)


def _farm_lines(error: EdgebenchError | None = None) -> list:
    """Release a labgrid place this command holds (edgebench.farm.lease, loaded only if one was
    used); the lines to print: ``error`` with the place and any release failure, as one line."""
    lease = sys.modules.get("edgebench.farm.lease")
    lines = lease.released_line(error) if lease is not None else []
    return lines or ([error.one_line()] if error is not None else [])


def _hoist_debug(args: list) -> tuple:
    """``--debug`` anywhere on the line (before a ``--``) is the root option: move it to the front."""
    end = args.index("--") if "--" in args else len(args)
    debug = "--debug" in args[:end]
    if debug:
        args = ["--debug"] + [a for a in args[:end] if a != "--debug"] + args[end:]
    return debug, args


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app and map errors to exit codes.

    SIGTERM and SIGHUP act like Ctrl-C in every verb (:mod:`edgebench.cli.signals`):
    what was measured is kept, the run says which signal stopped it, and the exit
    code is 128+N (130 for Ctrl-C).
    """
    from edgebench.cli import signals

    signals.install()
    _show_warnings()
    args = list(sys.argv[1:] if argv is None else argv)
    debug, args = _hoist_debug(args)
    _state["argv"] = list(args)          # a --farm fan-out reruns this command line per place
    try:
        try:
            rc = app(args=args, prog_name="edgebench", standalone_mode=False)
            if isinstance(rc, int) and rc:  # typer turns Ctrl-C into 130 without raising
                if rc == 130:
                    _interrupted()
                sys.exit(rc)
        except EdgebenchError as exc:
            if debug:
                raise
            for line in _farm_lines(exc):
                _say(f"error: {line}")
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            if debug:
                import traceback

                traceback.print_exc()
            _interrupted()
        except SystemExit as exc:
            got = signals.received()
            if exc.code == 130 and got is not None:  # a verb that printed its own line and exited 130
                sys.exit(signals.exit_code(got[1]))
            raise
        except typer.Exit as exc:
            sys.exit(exc.exit_code)
        except typer.Abort:
            _say("aborted")
            sys.exit(1)
        except TyperException as exc:  # usage errors: unknown option, bad value, missing argument
            if debug:
                raise
            if type(exc).__name__ == "NoArgsIsHelpError":  # the help was shown: nothing is wrong to report
                sys.exit(1)
            verb = next((a for a in args if not a.startswith("-")), None)
            known = verb is not None and "No such command" not in exc.format_message()
            where = f"edgebench {verb} --help" if known else "edgebench --help"
            _say(f"error: {' '.join(exc.format_message().split())} (see {where})")
            sys.exit(1)
        except Exception as exc:  # anything unexpected: still one line unless --debug
            if debug:
                raise
            _say(f"error: unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)")
            sys.exit(1)
    except KeyboardInterrupt:  # a second signal while the first error or interrupt was reported
        _interrupted()
    finally:
        for line in _farm_lines():  # the labgrid place is released in every exit path
            _say(f"warning: {line}")


if __name__ == "__main__":  # pragma: no cover
    main()
