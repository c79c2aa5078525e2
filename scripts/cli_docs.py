"""Write docs/cli.md from the command line itself: every verb of edgebench.cli.verbs.VERBS with its
arguments and options as the app declares them (names, values, defaults, help, panels).

    .venv/bin/python scripts/cli_docs.py            # rewrite docs/cli.md
    .venv/bin/python scripts/cli_docs.py --check    # exit 1 if docs/cli.md is stale

tests/test_verbs.py fails when docs/cli.md differs from what this writes.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "docs" / "cli.md"

HEADER = """\
# Command-line reference

Generated from the app by `scripts/cli_docs.py` (do not edit: `make docs` or the script rewrites
it, and a test fails when it is stale). Where each part of a verb lives, and how to add one:
[architecture.md](architecture.md), "Adding a verb".

Exit codes: 0 ok, 1 an error (one line on stderr; `--debug` anywhere on the line shows the
traceback), 2 a result failed a gate, 75 a labgrid place stayed busy, 128+N a stop signal
(130 for Ctrl-C).

One vocabulary: an option has the same name, value type and meaning on every verb that takes it
(`tests/test_verbs.py` checks); a sweep's axes (`--threads`, `--duty`, `--kernels`, `--delegate`,
`--rate`) take comma-separated lists of the same values. The measuring verbs share their board and
runs-folder options (`Verb.shared` in `edgebench/cli/verbs.py`), declared once in
`edgebench/cli/options.py`.

Progress: the long verbs (bench, soak, sweep, energy, accuracy, verify, profile, layer-error,
selftest, quantize, demo) draw a live view on stderr when it is a terminal; when it is a file or a
pipe (a CI log) they print one plain line per finished step instead — a repeat, a window, a slice,
a point: what finished, its figure, the time spent and left against `--max-time` — and a heartbeat
at most every 5 s while a step runs, so a stuck job and a slow one look different. `--quiet`
prints neither (`edgebench/cli/progress.py`, one table of event -> line for every verb).
"""


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _value(p) -> str:
    if getattr(p, "is_flag", False):
        return "flag"
    if p.metavar:
        return p.metavar
    return p.bare_type() + (" (repeatable)" if getattr(p, "multiple", False) else "")


def _default(p) -> str:
    d = p.default
    if getattr(p, "is_flag", False):
        return "off" if not d else "on"
    if d is None or d == [] or d == ():
        return "required" if p.required else "–"
    return f"`{d}`"


def render() -> str:
    from edgebench import __version__  # noqa: F401 - the docs describe this version's app
    from edgebench.cli.app import ROOT_OPTIONS, commands
    from edgebench.cli.verbs import PANELS, VERBS

    built = commands()
    out = [HEADER, "## edgebench", "", "| option | meaning |", "| --- | --- |"]
    out += [f"| `{name}` | {_cell(text)} |" for name, text in ROOT_OPTIONS]
    out.append("")
    for panel in PANELS:
        verbs = [v for v in VERBS if v.panel == panel]
        out += [f"## {panel}", ""]
        out += [f"- [`{v.name}`](#edgebench-{v.name}): {v.summary}" for v in verbs]
        out.append("")
        for v in verbs:
            cmd = built[v.name]
            args = [p for p in cmd.params if not p.opts[0].startswith("-")]
            usage = " ".join(["edgebench", v.name, "[OPTIONS]"] + [
                (p.opts[0].upper() if p.required else f"[{p.opts[0].upper()}]") + ("..." if p.nargs == -1 else "")
                for p in args])
            out += [f"### edgebench {v.name}", "", f"`{usage}`", ""]
            out += [" ".join(line.split()) if line.strip() else "" for line in (cmd.help or "").split("\n\n")]
            out.append("")
            if args:
                out += ["| argument | value | help |", "| --- | --- | --- |"]
                out += [f"| `{p.opts[0].upper()}` | {_value(p)} | {_cell(p.help or '')} |" for p in args]
                out.append("")
            opts = [p for p in cmd.params if p.opts[0].startswith("-") and not p.hidden]
            groups: dict = {}
            for p in opts:
                groups.setdefault(getattr(p, "rich_help_panel", None) or "Options", []).append(p)
            for title, params in sorted(groups.items(), key=lambda kv: kv[0] != "Options"):
                out += [f"{title}:", "", "| option | value | default | help |", "| --- | --- | --- | --- |"]
                for p in params:
                    names = ", ".join(f"`{o}`" for o in p.opts + list(getattr(p, "secondary_opts", [])))
                    out.append(f"| {names} | {_value(p)} | {_default(p)} | {_cell(p.help or '')} |")
                out.append("")
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/cli.md is not what this writes")
    args = ap.parse_args()
    text = render()
    if args.check:
        if TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET.relative_to(ROOT)} is stale: run scripts/cli_docs.py", file=sys.stderr)
            sys.exit(1)
        return
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)} ({len(text.splitlines())} lines)")


if __name__ == "__main__":
    main()
