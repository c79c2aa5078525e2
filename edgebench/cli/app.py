"""The edgebench command line (level 5): the only layer that prints or exits.

The verbs are declared in :data:`edgebench.cli.verbs.VERBS`; the app registers each from
there, importing a verb's module only when that verb runs (or its help is asked for), so
``edgebench --help`` imports none of them. ``edgebench`` and ``edgebench --help`` are printed
from the table by :func:`root_help` without loading typer at all (``main``'s fast path): the
same text the typer group prints.

Errors from ``edgebench.errors`` become one line on stderr and the error's exit code
(1 error, 2 gate failed); ``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import errno
import os
import sys
import warnings

from edgebench import __version__
from edgebench.cli import invocation
from edgebench.cli.verbs import PANELS, VERBS, get, names, resolve
from edgebench.errors import EdgebenchError, InputWarning

HELP = ("Honest benchmarks of ML models on edge hardware: latency with confidence intervals, thermal soak, "
        "energy and INT8 accuracy, each figure with its conditions.")
# The root options, as `edgebench --help` lists them (a test checks them against the typer group's).
ROOT_OPTIONS = (
    ("--debug", "Show tracebacks for errors (allowed anywhere on the line)."),
    ("--version", "Print the version and exit."),
    ("--install-completion", "Install completion for the current shell."),
    ("--show-completion", "Show completion for the current shell, to copy it or customize the installation."),
    ("--help", "Show this message and exit."),
)


def _width() -> int:
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(1).columns
    except OSError:
        return 100


def _wrap(text: str, width: int) -> list:
    """Words of ``text`` in lines of at most ``width`` characters (textwrap without its imports)."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + [line] if line else lines


def root_help(width: int | None = None) -> str:
    """`edgebench --help`: usage, the root options and every verb by panel, from the verb table."""
    width = max(60, min(width or _width(), 120))

    def rows(title: str, items: list) -> list:
        pad = max(len(name) for name, _ in items) + 4
        out = [f"{title}:"]
        for name, text in items:
            lines = _wrap(text, width - pad) or [""]
            out.append(f"  {name.ljust(pad - 2)}{lines[0]}")
            out += [" " * pad + ln for ln in lines[1:]]
        return out + [""]

    out = ["Usage: edgebench [OPTIONS] COMMAND [ARGS]...", ""]
    out += ["  " + ln for ln in _wrap(HELP, width - 2)] + [""]
    out += rows("Options", list(ROOT_OPTIONS))
    for panel in PANELS:
        items = [(v.name, v.summary) for v in VERBS if v.panel == panel]
        if items:
            out += rows(panel, items)
    out.append("Each command's options: edgebench COMMAND --help; all of them: docs/cli.md.")
    return "\n".join(out) + "\n"


def _version(value: bool) -> None:
    # lazy: typer (import typer 146 ms measured), which `edgebench --help` does without
    import typer

    if value:
        typer.echo(f"edgebench {__version__}")
        raise typer.Exit()


def _build_app():
    """The typer app: the root options, and a group that builds each verb's command on first use."""
    # lazy: typer (import typer 146 ms measured), which `edgebench --help` does without
    import typer
    from typer.core import TyperCommand, TyperGroup

    from edgebench.cli import options

    def flags_as_flags(params: list) -> list:
        for p in params:   # a flag takes no value: no "<bool>" beside it in --help
            if getattr(p, "is_flag", False) and p.metavar is None:
                p.metavar = ""
        return params

    class VerbCommand(TyperCommand):
        def get_params(self, ctx):
            return flags_as_flags(super().get_params(ctx))

    class VerbGroup(TyperGroup):
        """The root group: the verbs of the table, each built when first named."""

        def list_commands(self, ctx):
            return names()

        def get_command(self, ctx, name):
            if name not in self.commands and name in names():
                self.commands[name] = command_of(get(name))
            return self.commands.get(name)

        def get_params(self, ctx):
            return flags_as_flags(super().get_params(ctx))

        def format_help(self, ctx, formatter):
            formatter.write(root_help())

    def command_of(verb):
        # lazy: typer (import typer 146 ms measured), which `edgebench --help` does without
        from typer.main import get_command_from_info
        from typer.models import CommandInfo

        func = resolve(verb.command)     # ImportError / AttributeError: a verb declared without its code
        if verb.measures:
            # lazy: typer (import typer 146 ms measured), which `edgebench --help` does without
            from edgebench.cli.runargs import command

            func = command(verb, func)
        info = CommandInfo(name=verb.name, callback=func, cls=VerbCommand)
        return get_command_from_info(info, pretty_exceptions_short=built.pretty_exceptions_short,
                                     rich_markup_mode=built.rich_markup_mode)

    built = typer.Typer(name="edgebench", help=HELP, cls=VerbGroup, no_args_is_help=True, add_completion=True,
                        pretty_exceptions_enable=False)

    @built.callback()
    def _root(debug: bool = options.debug(), version: bool = options.version(_version)) -> None:
        pass    # --debug is read by main() before typer runs (_hoist_debug); declared here for the help and parsing

    return built


_APP: list = []


def get_app():
    """The typer app (built on first use)."""
    if not _APP:
        _APP.append(_build_app())
    return _APP[0]


def __getattr__(name: str):  # PEP 562: `from edgebench.cli.app import app` builds it then
    if name == "app":
        return get_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def commands() -> dict:
    """Every verb's click command, by name (each verb's module imported): for docs and tests."""
    # lazy: typer (import typer 146 ms measured), which `edgebench --help` does without
    import typer
    import typer.main
    from typer.core import TyperGroup

    group = typer.main.get_command(get_app())
    assert isinstance(group, TyperGroup)     # the root command holds the verbs
    ctx = typer.Context(group)
    return {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}


def _disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and (exc.errno in (errno.ENOSPC, errno.EDQUOT)
                                         or "No space left on device" in str(exc))


def _say(line: str) -> None:
    """One line on stderr (control characters of untrusted text in it made visible); a closed
    terminal (SIGHUP) must not turn it into a traceback."""
    # lazy: rich (import rich 52 ms measured), which `edgebench --help` does without
    from edgebench.cli.output import safe_text

    try:
        print(safe_text(line), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _interrupted() -> None:
    """Exit after Ctrl-C (130) or a stop signal (128+N), with one line on stderr."""
    from edgebench.cli import signals  # lazy: signal imports enum, which `edgebench --help` does without

    got = signals.received()
    if got is None:
        _say("interrupted")
        sys.exit(130)
    name, number = got
    _say(f"stopped by {name}")
    sys.exit(signals.exit_code(number))


def _show_warnings() -> None:
    """edgebench's own warnings (InputWarning, ...) become one ``warning:`` line on stderr."""
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
    args = list(sys.argv[1:] if argv is None else argv)
    completing = "_EDGEBENCH_COMPLETE" in os.environ        # the shell asks typer for completions
    if args in ([], ["--help"]) and not completing:   # the root help needs only the verb table: no typer
        sys.stdout.write(root_help())
        sys.stdout.flush()
        sys.exit(1 if not args else 0)   # no command given is a usage error, as typer's no_args_is_help says
    from edgebench.cli import signals  # lazy: signal imports enum, which `edgebench --help` does without

    signals.install()
    _show_warnings()
    debug, args = _hoist_debug(args)
    invocation.STATE["argv"] = list(args)          # a --farm fan-out reruns this command line per place
    # lazy: typer (import typer 146 ms measured), which `edgebench --help` does without
    import typer
    from typer.exceptions import TyperException

    try:
        try:
            rc = get_app()(args=args, prog_name="edgebench", standalone_mode=False)
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
                import traceback  # lazy: only for --debug; `edgebench --help` does without it

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
            if _disk_full(exc):   # a write no typed error covered (a library's own file): still one clear line
                _say("error: no space left on the device (or the quota reached) while writing: free some space "
                     "(or write to another disk) and run again")
                sys.exit(1)
            _say(f"error: unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)")
            sys.exit(1)
    except KeyboardInterrupt:  # a second signal while the first error or interrupt was reported
        _interrupted()
    finally:
        for line in _farm_lines():  # the labgrid place is released in every exit path
            _say(f"warning: {line}")


if __name__ == "__main__":  # pragma: no cover
    main()
