"""The verbs of the command line (level 5), each declared once as a :class:`Verb`.

Everything that treats verbs one by one iterates over :data:`VERBS`: the registration of the
commands on the app (:mod:`edgebench.cli.app`, which imports a verb's module only when that
verb runs, so ``edgebench --help`` imports none of them), the top-level help, ``runs ID``
(which prints a stored run with the printer of the verb that made it), ``--recover`` and its
run-kind validation, ``--farm``, and docs/cli.md (``scripts/cli_docs.py``). What a stored run
of each kind *holds* (for ``report``, ``check`` and the tables below the CLI) is declared in
:mod:`edgebench.results.kinds`, which a verb names.

References to code are ``"module:attribute"`` strings, resolved on use: this module imports
nothing heavy, and the table can name functions of every layer without loading them.

Adding a verb (docs/architecture.md, "Adding a verb"): its command function in
``edgebench/cli/<verb>_cmd.py``, its orchestration in ``edgebench/bench/<verb>.py`` (through
the run skeleton, ``bench/record.py``), one :class:`Verb` here — and, if it stores runs of a
new kind, one ``RunKind`` in ``results/kinds.py``.
"""
from __future__ import annotations

import importlib
from collections import namedtuple

from edgebench.results import kinds as rk

# Panels of `edgebench --help`, in order.
START, MEASURE, RESULTS, MODELS, BOARDS = "Start here", "Measure", "Runs and results", "Models", "Boards"
PANELS = (START, MEASURE, RESULTS, MODELS, BOARDS)

# The options a measuring verb takes from RunArgs (edgebench.cli.runargs), in the order --help lists them.
WHERE = ("board", "url", "image", "cpus", "boards_dir", "farm")   # which board, reached how
STORE = ("runs_dir", "store", "label", "recover", "json_out", "quiet")   # where runs go, finishing one, output


# The field names are a literal in the call: the one form of namedtuple() mypy reads.
class Verb(namedtuple("Verb", ("name", "command", "summary", "panel", "kinds", "printer", "recover", "recover_keeps",
                               "farm", "shared", "needs", "usage", "what", "board"),
                      defaults=((), None, None, "", False, (), (), "", "the result", "host"))):
    """One command: where its code is, how it is listed, and what it stores (a named tuple: this
    module is read by ``edgebench --help``, which imports neither dataclasses nor typing).

    * ``name``: the command, ``edgebench NAME``; ``command``: ``"module:function"``, the typer
      command function; ``summary``: its line in ``edgebench --help``; ``panel``: its group there;
    * ``kinds``: the run kinds it stores (:mod:`edgebench.results.kinds`); ``--recover`` finishes
      ``kinds[0]``;
    * ``printer``: ``"module:function(console, result, run_dir)"`` showing a stored run of its kinds;
    * ``recover``: ``"module:function(run_dir) -> RunResult"`` finishing a run left ``running``;
      ``recover_keeps``: what a recovered run keeps (the ``--recover`` help);
    * ``farm``: takes ``--farm`` (the command on every matching place of a labgrid farm);
    * ``shared``: the :class:`~edgebench.cli.runargs.RunArgs` options it takes (names of
      :data:`WHERE` and :data:`STORE`); empty: it declares all its options itself;
    * ``needs``: what a new run needs (names of its parameters), which ``--recover`` replaces;
      ``usage``: a complete command line, for the message when one is missing; ``what``: what
      ``--json`` prints; ``board``: the default of ``--board`` (None: it must be given, or ``--farm``).
    """

    __slots__ = ()

    @property
    def measures(self) -> bool:
        """Takes the shared run options (board, runs folder, --recover...): a measuring verb."""
        return bool(self.shared)


MEASURING = WHERE + STORE
LOCAL = ("board", "url", "cpus", "boards_dir", "runs_dir", "recover", "json_out", "quiet")  # no farm, no emulator image

VERBS: tuple = (
    Verb("demo", "edgebench.cli.demo_cmd:demo", "Benchmark the bundled digits FP32 and INT8 models and compare "
         "them honestly.", START),
    Verb("bench", "edgebench.cli.bench_cmd:bench", "Latency of a model on a board, until the median is known to "
         "the target precision.", MEASURE, kinds=(rk.BENCH, rk.MLPERF),
         printer="edgebench.cli.render:print_run", recover="edgebench.bench.latency:recover_bench",
         recover_keeps=" (keeps the repeats it had written)", farm=True, shared=MEASURING, needs=("models",),
         usage="edgebench bench MODEL.tflite --board BOARD", what="the run"),
    Verb("soak", "edgebench.cli.soak_cmd:soak", "Run a model until the board reaches thermal steady state; burst "
         "vs sustained.", MEASURE, kinds=(rk.SOAK,), printer="edgebench.cli.render.thermal:print_soak",
         recover="edgebench.bench.soak:recover_run", farm=True, shared=MEASURING, needs=("model",),
         usage="edgebench soak MODEL.tflite --board BOARD", what="the run"),
    Verb("sweep", "edgebench.cli.sweep_cmd:sweep", "Soak to steady state at every point of a grid (duty, rate, "
         "variant, kernels, threads).", MEASURE, kinds=(rk.SWEEP,),
         printer="edgebench.cli.render.thermal:print_sweep", recover="edgebench.bench.sweep:recover_sweep",
         recover_keeps=" (keeps its finished points, recovers the one it was in)", farm=True, shared=MEASURING,
         needs=("model",), usage="edgebench sweep MODEL.tflite --board BOARD", what="the stored sweep run"),
    Verb("energy", "edgebench.cli.energy_cmd:energy", "Energy per inference, idle power and wake-up energy at a "
         "rate or duty cycle.", MEASURE, kinds=(rk.ENERGY,), printer="edgebench.cli.render.energy:print_energy",
         recover="edgebench.bench.energy_journal:recover_energy",
         recover_keeps=", from its journal (power samples and inference windows)",
         shared=LOCAL, needs=("model",), usage="edgebench energy MODEL.tflite --board BOARD --rate 1/s",
         what="the run"),
    Verb("accuracy", "edgebench.cli.accuracy_cmd:accuracy", "Accuracy on a board against the FP32 baseline, with "
         "edge cases and gates.", MEASURE, kinds=(rk.ACCURACY,),
         printer="edgebench.cli.render.accuracy:print_accuracy", recover="edgebench.bench.accuracy:recover_accuracy",
         recover_keeps=", from the outputs it journalled", shared=LOCAL, needs=("model", "baseline", "data"),
         usage="edgebench accuracy MODEL.tflite --baseline FP32.tflite --data TEST", what="the stored run"),
    Verb("profile", "edgebench.cli.profile_cmd:profile", "Time every layer of a model on a board: a per-layer "
         "table, the sum against the whole.", MEASURE, kinds=(rk.PROFILE,),
         printer="edgebench.cli.render.profile:print_profile", recover="edgebench.bench.record:recover_profile",
         recover_keeps=" (keeps the repeats it had finished)",
         shared=("board", "url", "image", "boards_dir", "runs_dir", "recover", "json_out", "quiet"), needs=("model",),
         usage="edgebench profile MODEL.tflite --board BOARD", what="the run"),
    Verb("layer-error", "edgebench.cli.layer_error_cmd:layer_error", "Every layer of an INT8 model against its "
         "FP32 baseline: SQNR, where the error jumps.", MEASURE, kinds=(rk.LAYER_ERROR,),
         printer="edgebench.cli.render.profile:print_layer_error",
         recover="edgebench.bench.record:recover_layer_error", recover_keeps=" (keeps its stored comparison)",
         shared=("runs_dir", "recover", "json_out", "quiet"), needs=("model", "baseline"),
         usage="edgebench layer-error INT8.tflite --baseline FP32.tflite", what="the run"),
    Verb("verify", "edgebench.cli.verify_cmd:verify", "The board's outputs against the host's reference kernels: "
         "differing bytes and LSB.", MEASURE, kinds=(rk.VERIFY,),
         printer="edgebench.cli.render.verify:print_verify_run", farm=True,
         shared=WHERE + ("runs_dir", "json_out", "quiet"), needs=("model",), usage="edgebench verify MODEL.tflite --board BOARD",
         what="the comparison", board=None),
    Verb("runs", "edgebench.cli.runs_cmd:runs", "List stored runs, or show one in full; --csv/--parquet export "
         "the table.", RESULTS),
    Verb("report", "edgebench.cli.report_cmd:report", "One self-contained HTML (or Markdown) report of runs: claim, "
         "conditions, checks, plots.", RESULTS),
    Verb("compare", "edgebench.cli.compare_cmd:compare", "Compare two runs: ratio of medians per stage with its "
         "run- and session-aware interval.", RESULTS),
    Verb("history", "edgebench.cli.history_cmd:history", "A model's figure on a board over time or commits, "
         "with its change points.", RESULTS),
    Verb("check", "edgebench.cli.check_cmd:check", "Check runs against the ways benchmark results fool an "
         "audience.", RESULTS),
    Verb("ack", "edgebench.cli.ack_cmd:ack", "Acknowledge a known warning for a runs folder: still recorded, "
         "printed as one folded line.", RESULTS),
    Verb("battery", "edgebench.cli.battery_cmd:battery", "Battery life at a duty cycle, from a stored run or from "
         "given figures.", RESULTS),
    Verb("push", "edgebench.cli.push_cmd:push", "Send queued runs (and named run folders) to the lab's shared "
         "results store; nothing is lost.", RESULTS),
    Verb("quantize", "edgebench.cli.quantize_cmd:quantize_command", "An FP32 .tflite baseline and a calibrated "
         "full-integer INT8 .tflite, each with a sidecar.", MODELS),
    Verb("inspect", "edgebench.cli.inspect_cmd:inspect_command", "Operators, tensors, quantization, MACs and peak "
         "memory of a model; --board: does it fit.", MODELS),
    Verb("compile", "edgebench.cli.compile_cmd:compile_command", "Compile for the Edge TPU and keep the "
         "compiler's report in the sidecar.", MODELS),
    Verb("boards", "edgebench.cli.boards_cmd:boards", "Known boards: how each is reached, its runtimes, what it "
         "can measure.", BOARDS),
    Verb("flash", "edgebench.cli.flash_cmd:flash", "Build and start an emulated board's firmware, or flash a "
         "real board.", BOARDS),
    Verb("selftest", "edgebench.cli.selftest_cmd:selftest", "First run on a flashed microcontroller: protocol, clock, "
         "bit-exact outputs, cycles per MAC.", BOARDS, kinds=(rk.SELFTEST,),
         printer="edgebench.cli.render.selftest:print_selftest_run",
         recover="edgebench.bench.record:recover_selftest", recover_keeps=" (keeps its stored checks)",
         shared=("board", "url", "image", "boards_dir", "runs_dir", "recover", "json_out", "quiet"),
         usage="edgebench selftest --board BOARD", what="the checks", board=None),
    Verb("deploy", "edgebench.cli.deploy_cmd:deploy", "Put a model on a microcontroller: blob, CRC-checked upload, "
         "load.", BOARDS),
    Verb("schema", "edgebench.cli.schema_cmd:schema", "The JSON Schema of run.json, a board profile, farm.json or "
         "a model's sidecar.", RESULTS),
    Verb("farm", "edgebench.cli.farm_cmd:farm", "The places of a labgrid farm: tags, holders, board profiles.",
         BOARDS),
)

_BY_NAME = {v.name: v for v in VERBS}


def get(name: str) -> Verb:
    """The verb called ``name`` (KeyError for a name no verb has)."""
    return _BY_NAME[name]


def names() -> list:
    return [v.name for v in VERBS]


def for_kind(kind):
    """The verb that stores runs of ``kind`` (a RunKind or its name); None for a kind no verb here writes."""
    name = kind if isinstance(kind, str) else kind.name
    return next((v for v in VERBS if any(k.name == name for k in v.kinds)), None)


def printer(verb):
    """How a stored run of ``verb``'s kinds is shown: ``(console, result, run_dir)``; the plain run
    summary for a verb without a printer of its own, or a kind no verb here writes (None)."""
    return resolve((verb.printer if verb is not None else None) or "edgebench.cli.render:print_run")


def resolve(ref: str):
    """``"package.module:attribute"`` -> the attribute (the module imported now)."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


__all__ = ["Verb", "VERBS", "PANELS", "WHERE", "STORE", "MEASURING", "get", "names", "for_kind", "printer",
           "resolve"]
