"""The verb table (edgebench.cli.verbs) and the run-kind table (edgebench.results.kinds): every
reference resolves, every part the tables promise exists, and nothing is silently dropped."""
import inspect
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest
import typer
from conftest import DIGITS_INT8
from typer.testing import CliRunner

from edgebench.cli import verbs
from edgebench.cli.app import ROOT_OPTIONS, app, commands, root_help
from edgebench.cli.runargs import RunArgs, RuntimeArgs, command
from edgebench.results import kinds

ROOT = Path(__file__).resolve().parents[1]


def test_every_declared_reference_resolves():
    for v in verbs.VERBS:
        assert callable(verbs.resolve(v.command)), v.name
        for ref in (v.printer, v.recover):
            if ref is not None:
                assert callable(verbs.resolve(ref)), (v.name, ref)
        assert v.panel in verbs.PANELS, v.name
        assert v.summary.endswith(".") and len(v.summary) <= 100, v.name
        if v.measures:
            assert v.kinds and (v.needs or "board" in v.shared) and v.usage.startswith(f"edgebench {v.name} "), \
                v.name      # selftest needs only its board
    assert len(set(verbs.names())) == len(verbs.VERBS)


def test_every_run_kind_is_written_by_a_verb_and_has_its_report_sections():
    from edgebench.cli.report_cmd import READERS
    from edgebench.report.html import SECTIONS

    for kind in kinds.KINDS:
        writer = verbs.for_kind(kind)
        assert writer is not None and writer.name == kind.verb, kind.name
        assert set(kind.sections) <= set(SECTIONS), kind.name
        assert set(READERS) <= set(SECTIONS)
    assert kinds.kind_of("a-kind-from-the-future").sections == ()        # shown, never misread


def test_every_run_kind_names_where_its_figures_are_and_each_is_a_typed_declaration():
    from edgebench.results.model import figure_type
    from edgebench.results.types import Figure

    for kind in kinds.KINDS:
        assert kind.figures, kind.name
        for path in kind.figures:
            assert issubclass(figure_type(path), Figure), (kind.name, path)
    assert figure_type("extra.accuracy.validation").__name__ == "Validation"
    with pytest.raises(KeyError):
        figure_type("extra.claim")          # a text, not a figure


def test_the_app_has_exactly_the_declared_verbs_each_with_its_shared_options():
    built = commands()
    assert list(built) == verbs.names()
    for v in verbs.VERBS:
        opts = {o for p in built[v.name].params for o in p.opts}
        for name in v.shared:
            spelled = "--json" if name == "json_out" else "--" + name.replace("_", "-")
            assert spelled in opts, (v.name, spelled)
        assert ("--recover" in opts) == bool(v.recover and "recover" in v.shared), v.name
        assert ("--farm" in opts) == v.farm, v.name


def _with_runtime(model: Optional[Path] = typer.Argument(None), first: int = typer.Option(1),  # noqa: B008
                  rt: RuntimeArgs = RuntimeArgs(), last: int = typer.Option(2), *, run: RunArgs) -> None:  # noqa: B008
    """A measuring verb's command function, as cli/*_cmd.py declare them (typer reads the defaults)."""
    _with_runtime.got = (first, rt, last, run)  # type: ignore[attr-defined]


def test_a_runtime_args_parameter_is_the_five_runtime_options_in_its_place():
    verb = verbs.Verb("fake", "tests:fake", "", verbs.MEASURE, shared=("runs_dir", "json_out"), needs=("model",))
    cmd = command(verb, _with_runtime)
    assert list(inspect.signature(cmd).parameters) == ["model", "first", "kernels", "threads", "delegate", "inputs",
                                                       "seed", "last", "runs_dir", "json_out"]
    one = typer.Typer()
    one.command()(cmd)
    res = CliRunner().invoke(one, [str(DIGITS_INT8), "--kernels", "reference", "--seed", "7", "--inputs", "x.npy",
                                   "--last", "3"])
    assert res.exit_code == 0, res.output
    first, rt, last, run = _with_runtime.got  # type: ignore[attr-defined]
    assert (first, last, run.runs_dir) == (1, 3, Path("runs"))
    assert rt == RuntimeArgs(kernels="reference", threads=1, delegate=None, inputs=Path("x.npy"), seed=7)
    assert rt.options() == {"kernels": "reference", "threads": 1, "delegate": None, "inputs": "x.npy", "seed": 7}
    res = CliRunner().invoke(one, [str(DIGITS_INT8), "--threads", "0"])
    assert res.exit_code == 2 and "--threads" in res.output      # the shared declaration's range check


def test_a_verb_whose_module_is_missing_is_an_error_not_a_missing_command(monkeypatch):
    from edgebench.cli import app as app_module

    ghost = verbs.Verb("ghost", "edgebench.cli.ghost_cmd:ghost", "Not written.", verbs.MEASURE)
    monkeypatch.setattr(verbs, "VERBS", verbs.VERBS + (ghost,))
    monkeypatch.setattr(verbs, "_BY_NAME", {**verbs._BY_NAME, "ghost": ghost})
    monkeypatch.setattr(app_module, "_APP", [])
    with pytest.raises(ModuleNotFoundError, match="ghost_cmd"):
        commands()


def test_root_help_is_the_same_with_or_without_typer_and_lists_every_verb():
    fast = subprocess.run([sys.executable, "-m", "edgebench", "--help"], capture_output=True, text=True,
                          timeout=60, env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"})
    assert fast.returncode == 0, fast.stderr
    through_typer = CliRunner().invoke(app, ["--debug", "--help"], env={"COLUMNS": "100"})
    assert through_typer.exit_code == 0
    assert fast.stdout == through_typer.stdout == root_help(100)
    for v in verbs.VERBS:
        assert f"  {v.name} " in fast.stdout, v.name
    group_options = {o for p in __import__("typer").main.get_command(app).params for o in p.opts}
    assert group_options | {"--help"} == {name for name, _ in ROOT_OPTIONS}


def test_help_imports_no_verb_module_and_no_typer():
    code = ("import sys\nfrom edgebench.cli.app import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('LOADED', sorted(m for m in sys.modules if m.endswith('_cmd') or m.split('.')[0] in "
            "('typer', 'rich', 'click', 'numpy')))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "LOADED []" in p.stdout, p.stdout + p.stderr


def test_a_verbs_help_loads_no_measuring_analysis_or_record_module():
    """`edgebench VERB --help` loads the verb's module and its options, never what runs or reads a run
    (bench, stats, mcu, the run record: 0.1-0.3 s each, measured). One process imports the CLI (itself
    loading none of them) and typer's help machinery, then forks a child per verb, so each verb starts
    from that state alone."""
    heavy = ("edgebench.bench", "edgebench.stats", "edgebench.mcu", "edgebench.results.model", "numpy")
    code = f"""import os, sys
from edgebench.cli.app import main
heavy = {heavy!r}
def loaded():
    return sorted(m for m in sys.modules if m.startswith(heavy))
print('CLI', loaded(), flush=True)
import typer.main, typer.rich_utils, rich.markdown, pydantic  # what every verb's help needs: once, here
for verb in sys.argv[1:]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        try:
            main([verb, '--help'])
        except SystemExit:
            pass
        os.write(w, repr(loaded()).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        print(verb, f.read(), flush=True)
    os.waitpid(pid, 0)
"""
    p = subprocess.run([sys.executable, "-c", code, *verbs.names()], capture_output=True, text=True, timeout=120)
    lines = dict(line.split(" ", 1) for line in p.stdout.splitlines() if " " in line)
    assert lines.get("CLI") == "[]", (p.stdout[-600:], p.stderr[-600:])
    for name in verbs.names():
        assert lines.get(name) == "[]", (name, lines.get(name), p.stderr[-600:])


def test_flags_are_shown_as_flags():
    text = CliRunner().invoke(app, ["bench", "--help"], env={"COLUMNS": "200"}).stdout
    for flag in ("--json", "--mlperf", "--help"):
        line = next(ln for ln in text.splitlines() if f" {flag} " in ln)
        assert "<bool>" not in line, line


def test_recover_refuses_a_run_of_another_kind_and_names_the_verb_for_it(tmp_path):
    from edgebench.bench.record import RunFolder, new_result

    folder = RunFolder(tmp_path, "m", "host")
    folder.start(new_result("soak"))
    res = CliRunner().invoke(app, ["bench", "--recover", str(folder.path)])
    assert res.exit_code == 1
    msg = f"{res.exception.message} ({res.exception.hint})"
    assert "is a soak run, not a bench run" in msg and f"edgebench soak --recover {folder.path}" in msg


def test_recover_of_another_kind_of_the_same_verb_does_not_send_the_user_back_to_it(tmp_path):
    from edgebench.bench.record import RunFolder, new_result

    folder = RunFolder(tmp_path, "m", "host")
    folder.start(new_result("mlperf-tiny"))      # bench stores it too, but --recover finishes bench runs only
    res = CliRunner().invoke(app, ["bench", "--recover", str(folder.path)])
    assert res.exit_code == 1
    msg = f"{res.exception.message} ({res.exception.hint})"
    assert "is a mlperf-tiny run, not a bench run" in msg and "--recover finishes bench runs only" in msg, msg


@pytest.mark.parametrize("args,needle", [
    (["bench"], "missing MODEL"),
    (["accuracy", str(DIGITS_INT8)], "missing --baseline, --data"),
    (["soak", str(DIGITS_INT8), "--recover", "x"], "give MODEL or --recover RUN_DIR, not both"),
    (["sweep", str(DIGITS_INT8), "--farm", "board=x", "--recover", "x"], "--farm runs new work"),
])
def test_the_shared_preamble_speaks_for_every_measuring_verb(args, needle):
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1 and needle in str(res.exception), (res.output, res.exception)


def test_one_option_vocabulary_across_verbs():
    """An option spelled the same on two verbs takes the same kind of value and is a flag on both or
    neither; a sweep's axes take comma-separated lists of the same values (a string)."""
    seen: dict = {}
    for name, cmd in commands().items():
        for p in cmd.params:
            if not p.opts[0].startswith("--") or p.opts[0] == "--help" or p.hidden:
                continue      # a hidden option is an old spelling kept working, not vocabulary
            what = "flag" if p.is_flag else p.bare_type()
            seen.setdefault(p.opts[0], {}).setdefault(what, set()).add(name)
    axes = {"--threads", "--duty"}        # sweep: "1,4", "0.01,0.1" (kernels, delegates, rates are strings anyway)
    repeatable = {"--image"}              # the measuring verbs take it twice for `bench --rounds` (two firmware builds)
    clashes = {opt: by for opt, by in seen.items() if len(by) > 1
               and not (opt in axes and by.get("str") == {"sweep"} and len(by) == 2)
               and not (opt in repeatable and set(by) == {"Path", "list[Path]"})}
    assert not clashes, clashes
    built = commands()
    for verb in ("bench", "soak", "sweep", "energy", "accuracy", "verify"):
        opts = {o for p in built[verb].params for o in p.opts}
        assert {"--cpus", "--runs-dir", "--json", "--seed", "--board", "--boards-dir", "--url"} <= opts, verb
        assert verb == "accuracy" or "--inputs" in opts, verb


def test_cli_docs_are_generated_from_the_app():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import cli_docs
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    text = cli_docs.render()
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == text, \
        "docs/cli.md is stale: run scripts/cli_docs.py (make docs)"
    for v in verbs.VERBS:
        assert f"### edgebench {v.name}\n" in text
    assert "| `--target-ci` | float |" in text and "<bool>" not in text
