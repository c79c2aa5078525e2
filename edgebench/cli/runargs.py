"""What every measuring verb shares (level 5): its board and runs-folder options, and the steps
before and after its own work.

A measuring verb (``Verb.shared`` in :mod:`edgebench.cli.verbs`) declares only its own options;
its command function takes one more parameter, ``run: RunArgs``. When the app builds the verb's
command (``VerbGroup`` in :mod:`edgebench.cli.app`), :func:`command` gives the function the options named in
``Verb.shared`` — ``--board``, ``--url``, ``--image``, ``--cpus``, ``--boards-dir``, ``--farm``,
``--runs-dir``, ``--recover``, ``--json``, ``--quiet``, declared once in :mod:`edgebench.cli.options` — and
collects their values into a :class:`RunArgs`. Before the function runs, :func:`command` does
what every measuring verb does first:

1. ``--farm TAGS``: the same command line on every matching labgrid place
   (:mod:`edgebench.cli.farm_fanout`); the function does not run here;
2. ``--recover RUN_DIR``: the run folder's kind checked against the verb's (one line naming the
   verb that wrote it otherwise), finished by the verb's ``recover`` and shown by its printer;
3. a missing input (the model, ...): one line with the verb's usage.

The function then measures, and ends with :meth:`RunArgs.show` (``--json`` or the verb's printer).

A verb that takes the runtime options as they are (``--kernels``, ``--threads``, ``--delegate``,
``--inputs``, ``--seed``) declares them as one parameter of type :class:`RuntimeArgs`, in the place
its ``--help`` lists them.
"""
from __future__ import annotations

# The imports inside functions below are for start-up: `edgebench --help` reads this module, and
# edgebench.results.model (pydantic) alone takes 0.25 s to import (-X importtime) against the help's 0.05 s.
import functools
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, List, Optional

from edgebench.cli import options as opt
from edgebench.errors import UsageError


@dataclass
class RunArgs:
    """The shared options of one measuring verb's command line (None / defaults where it has none)."""

    verb: Any                                   # its edgebench.cli.verbs.Verb
    board: Optional[str] = "host"
    url: Optional[str] = None
    image: Optional[Path] = None                # the one --image (None with none, or with two: see images)
    images: list = field(default_factory=list)  # every --image given (two: `bench A B --rounds N` only)
    cpus: Optional[str] = None
    boards_dir: list = field(default_factory=list)
    farm: Optional[str] = None
    runs_dir: Path = Path("runs")
    store: Optional[str] = None
    label: list = field(default_factory=list)
    recover: Optional[Path] = None
    json_out: bool = False
    quiet: bool = False
    _profile: Any = field(default=None, repr=False)
    _recorded: Optional[str] = field(default=None, repr=False)
    _labels: dict = field(default_factory=dict, repr=False)

    def profile(self):
        """The board profile ``--board`` names (read once; a labgrid place is held from here on:
        :func:`edgebench.cli.board.board_profile`)."""
        if self._profile is None:
            from edgebench.cli.board import board_profile

            if self.board is None:
                raise UsageError("missing option --board",
                                 self.verb.usage + (" (or --farm TAGS)" if "farm" in self.verb.shared else ""))
            self._profile = board_profile(self.board, self.boards_dir)
        return self._profile

    def check_fit(self, model) -> None:
        """On a microcontroller: the model's operators, buffer and arena checked against the board before
        anything is started or uploaded (:mod:`edgebench.mcu.fit`); other boards have nothing to check."""
        from edgebench.boards.profile import MCU_CLIENT

        profile = self.profile()
        if profile.client_kind == MCU_CLIENT and model is not None and Path(model).is_file():
            from edgebench.mcu.fit import check_fit

            check_fit(model, profile).raise_if_unfit()

    def client(self):
        """A context manager: with ``--image``, one client on the emulated board started with that image,
        kept for the whole command (every repeat, both halves of a comparison); else None, and the
        verb's library function opens the board itself (a fresh agent per repeat)."""
        from contextlib import nullcontext

        if len(self.images) > 1:
            raise UsageError(f"{len(self.images)} --image given; one emulator runs one image",
                             "give one --image (two: edgebench bench MODEL --rounds N --image A --image B)")
        if self.image is None:
            return nullcontext()
        from edgebench.boards.connect import open_client

        return open_client(self.profile(), self.url, cpus=self.cpus, image=self.image)

    def progress(self, label: str = "", live=None, stop=None, max_time_s=None, started=None):
        """The verb's progress callback (:func:`edgebench.cli.progress.reporter`): its ``live`` view on a
        terminal, one plain line per finished step in a log, nothing with ``--quiet``."""
        from edgebench.cli.progress import reporter

        return reporter(label, live, stop, max_time_s=max_time_s, quiet=self.quiet, started=started)

    def show(self, result, run_dir=None, json_obj=None) -> None:
        """The verb's output: ``--json`` (``json_obj``, else the result's ``to_dict()``), else its printer.
        First the run is put on record (:meth:`record`)."""
        from edgebench.cli.output import emit_json, get_console
        from edgebench.cli.verbs import printer

        if run_dir is not None:
            self.record(result, run_dir)
            if json_obj is not None:
                self.record(json_obj, run_dir)      # already on record: only its labels shown

        if self.json_out:
            emit_json(result if json_obj is None else json_obj)
        else:
            printer(self.verb)(get_console(), result, run_dir)


    def record(self, result, run_dir) -> None:
        """Put a finished run on record: its labels (``--label``, default ``commit=``) into its run.json,
        then appended to the runs folder's index and to the shared store (``--store`` /
        ``$EDGEBENCH_STORE``); a store that fails gives a warning and a queued run, never a lost one."""
        from edgebench.results.model import RunResult
        from edgebench.store.record import label_run, put_on_record

        if self._recorded == str(run_dir):
            if isinstance(result, RunResult):
                result.extra.labels = self._labels
            return
        self._labels = label_run(run_dir, self.label)
        if isinstance(result, RunResult):
            result.extra.labels = self._labels
        put_on_record(run_dir, self.store)
        self._recorded = str(run_dir)


@dataclass
class RuntimeArgs:
    """How the model runs on the board: ``--kernels``, ``--threads``, ``--delegate``, ``--inputs``,
    ``--seed``, in the "How the model runs" panel with their common help. A verb that takes the five
    as they are declares one parameter ``rt: RuntimeArgs = RuntimeArgs()``; :func:`command` puts the
    options in its place and gives the function their values in one :class:`RuntimeArgs`."""

    kernels: str = "xnnpack"
    threads: int = 1
    delegate: Optional[str] = None
    inputs: Optional[Path] = None
    seed: int = 0

    def options(self) -> dict:
        """The fields of a verb's library options (``BenchOptions``, ``SoakOptions``, ...) they set."""
        return dict(kernels=self.kernels, threads=self.threads, delegate=self.delegate,
                    inputs=str(self.inputs) if self.inputs else None, seed=self.seed)


def _runtime_declarations() -> dict:
    return {
        "kernels": (str, opt.kernels(rich_help_panel=opt.RUNTIME)),
        "threads": (int, opt.threads(rich_help_panel=opt.RUNTIME)),
        "delegate": (Optional[str], opt.delegate(rich_help_panel=opt.RUNTIME)),
        "inputs": (Optional[Path], opt.inputs(rich_help_panel=opt.RUNTIME)),
        "seed": (int, opt.seed(rich_help_panel=opt.RUNTIME)),
    }


# The shared options: name -> (annotation, the typer declaration for a verb). Each factory of
# edgebench.cli.options fixes the spelling and help; the panel groups them in the verb's --help.
def _declarations(verb) -> dict:
    return {
        "board": (Optional[str], opt.board(verb.board, rich_help_panel=opt.BOARD)),
        "url": (Optional[str], opt.url(rich_help_panel=opt.BOARD)),
        "image": (Optional[List[Path]], opt.image(opt.IMAGE_HELP + " Twice (`bench --rounds` only): A's image, then "
                                                   "B's, compared in blocks.", rich_help_panel=opt.BOARD)),
        "cpus": (Optional[str], opt.cpus(rich_help_panel=opt.BOARD)),
        "boards_dir": (List[Path], opt.boards_dir(rich_help_panel=opt.BOARD)),
        "farm": (Optional[str], opt.farm(rich_help_panel=opt.BOARD)),
        "runs_dir": (Path, opt.runs_dir(rich_help_panel=opt.OUTPUT)),
        "store": (Optional[str], opt.store(rich_help_panel=opt.OUTPUT)),
        "label": (List[str], opt.label(rich_help_panel=opt.OUTPUT)),
        "recover": (Optional[Path], opt.recover(verb.name, verb.recover_keeps, rich_help_panel=opt.OUTPUT)),
        "json_out": (bool, opt.json_flag(verb.what, rich_help_panel=opt.OUTPUT)),
        "quiet": (bool, opt.quiet(rich_help_panel=opt.OUTPUT)),
    }


def command(verb, func: Callable) -> Callable:
    """``func`` (with a ``run: RunArgs`` parameter) as a typer command taking ``verb.shared`` options,
    preceded by the farm / recover / missing-input steps (module doc)."""
    declared = _declarations(verb)
    unknown = set(verb.shared) - set(declared)
    if unknown:
        raise ValueError(f"verb {verb.name}: unknown shared options {sorted(unknown)}")
    if verb.recover is None and "recover" in verb.shared or not verb.farm and "farm" in verb.shared:
        raise ValueError(f"verb {verb.name}: --recover needs Verb.recover, --farm needs Verb.farm")
    sig = inspect.signature(func, eval_str=True)
    own = [p for name, p in sig.parameters.items() if name != "run"]
    if len(own) == len(sig.parameters):
        raise ValueError(f"{func.__module__}.{func.__name__} takes no `run: RunArgs` parameter")
    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=declared[name][1],
                               annotation=declared[name][0]) for name in verb.shared]
    groups = [p.name for p in own if p.annotation is RuntimeArgs]     # the runtime options go in its place
    if len(groups) > 1:
        raise ValueError(f"{func.__module__}.{func.__name__}: one RuntimeArgs parameter at most, got {groups}")
    runtime = _runtime_declarations() if groups else {}

    @functools.wraps(func)
    def wrapper(**values):
        for name in groups:
            values[name] = RuntimeArgs(**{option: values.pop(option) for option in runtime})
        given = {name: values.pop(name) for name in verb.shared}
        if "image" in given:       # --image may be given twice (bench --rounds): the list, and the one
            images = list(given["image"] or [])
            given.update(image=images[0] if len(images) == 1 else None, images=images)
        run = RunArgs(verb, **given)
        if before(verb, run, values):
            func(**values, run=run)

    params = []
    for p in own:
        if p.name in groups:
            params += [inspect.Parameter(option, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
                       for option, (annotation, default) in runtime.items()]
        else:
            params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY))
    params += extra
    setattr(wrapper, "__signature__", sig.replace(parameters=params))   # noqa: B010 (mypy: not on a functools wrapper)
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__    # typer must read the signature above, not the function's own
    return wrapper


def before(verb, run: RunArgs, values: dict) -> bool:
    """The steps before a measuring verb's own work (module doc); False when one of them did the work."""
    given = [name for name in verb.needs if values.get(name) not in (None, [], ())]
    if run.farm is not None:
        from edgebench.cli.farm_fanout import fan_out

        if run.recover is not None:
            raise UsageError("--farm runs new work; --recover resumes one run", "give one of the two")
        fan_out(verb.name, run.farm, run.board, run.runs_dir, run.json_out)
        return False
    if run.recover is not None:
        if given:
            raise UsageError(f"give {_spelled(verb.needs)} or --recover RUN_DIR, not both", verb.usage)
        recover(verb, run)
        return False
    missing = [name for name in verb.needs if values.get(name) in (None, [], ())]
    if missing:
        raise UsageError(f"missing {_spelled(missing)}", verb.usage)
    return True


def recover(verb, run: RunArgs) -> None:
    """``--recover RUN_DIR``: check the folder holds a run of the verb's kind, finish it, show it."""
    from edgebench.cli.verbs import for_kind, resolve
    from edgebench.results import kinds
    from edgebench.results.store import read_result, read_unfinished

    kind = kinds.kind_of(read_unfinished(run.recover))   # a damaged run.json: the journal's copy says
    if kind.name != verb.kinds[0].name:
        other = for_kind(kind)
        hint = (f"edgebench {other.name} --recover {run.recover}"
                if other is not None and other.recover and other.name != verb.name
                else f"edgebench {verb.name} --recover finishes {verb.kinds[0].name} runs only")
        raise UsageError(f"{run.recover} is a {kind.name} run, not a {verb.kinds[0].name} run", hint)
    result = resolve(verb.recover)(run.recover)
    run.show(result, run.recover, json_obj=read_result(run.recover) if run.json_out else None)


def _spelled(names) -> str:
    """Parameter names as a user types them: the model argument as MODEL, options as --name."""
    return ", ".join("MODEL" if n in ("model", "models") else f"--{n.replace('_', '-')}" for n in names)


__all__ = ["RunArgs", "RuntimeArgs", "command", "before", "recover"]
