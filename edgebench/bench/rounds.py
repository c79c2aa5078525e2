"""A/B across invocations by design (level 4): ``edgebench bench A B --rounds N``.

Two sides that cannot share one process (two builds, runtimes, firmware images) are measured in
``N`` blocks ("rounds"); in each block each side runs once as a fresh invocation (a bench run of
its own: fresh agent processes and model loads, or a freshly started emulator with that side's
``--image``), in an order drawn from a seeded generator and balanced (as many A-first as B-first
blocks, one more of either when N is odd). The blocks are compared paired
(:mod:`edgebench.stats.paired`): drift of the machine that is slow against one block cancels.

Each side's run is an ordinary bench run in the runs folder (other verbs read it; it is not
combined with earlier sessions: ``sessions=1``, so a block holds that invocation's own figure);
a small record ``rounds.json`` in a folder of its own (``<stamp>-rounds-<A>-vs-<B>``, no
``run.json``, so listings of runs skip it) links them, with the order, the seed and the result.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from edgebench.errors import ResultError, UsageError
from edgebench.results.files import atomic_write
from edgebench.results.model import RunResult
from edgebench.results.store import new_run_dir
from edgebench.stats.paired import Block, gate, paired_blocks

#: the file of a rounds record, in its own folder under the runs folder
ROUNDS_JSON = "rounds.json"
FORMAT = "edgebench-rounds"
STAGE = "e2e"


@dataclass(frozen=True)
class Side:
    """One side of the comparison: a model, and the firmware image of an emulated board (or None)."""

    name: str            # "A" or "B"
    model: Path
    image: Optional[Path] = None

    def describe(self) -> str:
        return f"{Path(self.model).name}" + (f" on image {Path(self.image).name}" if self.image else "")


def plan_orders(rounds: int, seed: int) -> list:
    """The order of each block, ``"AB"`` or ``"BA"``: balanced (counts differ by at most one) and
    shuffled by ``seed``."""
    if rounds < 1:
        raise UsageError(f"--rounds must be at least 1, got {rounds}", "e.g. --rounds 4")
    rng = random.Random(seed)
    orders = ["AB", "BA"] * (rounds // 2)
    if rounds % 2:
        orders.append(rng.choice(["AB", "BA"]))
    rng.shuffle(orders)
    return orders


def sides_of(models: list, images: list) -> tuple:
    """The two sides from the command line: two models (one image or none for both), or one model
    with two images (the same model on two firmware builds)."""
    models, images = [Path(m) for m in models], [Path(i) for i in images]
    if len(images) > 2:
        raise UsageError(f"--rounds compares two sides; {len(images)} --image given", "give one or two --image")
    if len(models) == 2 and len(images) <= 1:
        img = images[0] if images else None
        return Side("A", models[0], img), Side("B", models[1], img)
    if len(models) == 1 and len(images) == 2:
        return Side("A", models[0], images[0]), Side("B", models[0], images[1])
    if len(models) == 2 and len(images) == 2:
        return Side("A", models[0], images[0]), Side("B", models[1], images[1])
    raise UsageError(f"--rounds compares two sides; got {len(models)} model(s) and {len(images)} image(s)",
                     "give two models (A B), or one model with --image A.elf --image B.elf")


def side_figure(result: RunResult) -> dict:
    """A side's figure of one block: the invocation's centre (mean log median of its repeats) and
    the standard error of that log within the invocation."""
    fig = result.stage(STAGE)
    own = fig.invocation or fig
    meds = [float(p.median_s) for p in fig.per_run or [] if p.median_s]
    median = math.exp(sum(math.log(m) for m in meds) / len(meds)) if meds else own.median_s
    if not median or median <= 0:
        raise ResultError(f"run {result.run_id} has no {STAGE} median", "see its warnings (edgebench runs ID)")
    return {"median_s": float(median), "se_log": float(own.se_log or 0.0), "df": own.df,
            "run_id": result.run_id, "label": result.label}


@dataclass
class RoundsResult:
    """The record of a rounds comparison: sides, the plan, each block's runs and figures, the result."""

    a: dict
    b: dict
    board: str
    seed: int
    orders: list
    blocks: list = field(default_factory=list)      # per round: {round, order, A: figure, B: figure, ratio}
    result: Optional[dict] = None                   # edgebench.stats.paired.PairedResult.to_dict()
    gate: Optional[dict] = None
    label: str = "measured"
    started_utc: str = ""
    elapsed_s: float = 0.0
    load_avg: Optional[list] = None                 # os.getloadavg() at the start and the end
    record: Optional[str] = None                    # the rounds.json path

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": 1, "label": self.label, "board": self.board, "stage": STAGE,
                "a": self.a, "b": self.b, "seed": self.seed, "orders": self.orders, "blocks": self.blocks,
                "result": self.result, "gate": self.gate, "started_utc": self.started_utc,
                "elapsed_s": self.elapsed_s, "load_avg": self.load_avg, "record": self.record}


Measure = Callable[[Side, int], tuple]


def bench_measure(profile, opts, runs_root, url=None, cpus=None) -> Measure:
    """The default measurement of one side in one block: a bench run of its own (fresh agent
    processes, or an emulator started with the side's image and closed after), this invocation only."""
    from edgebench.bench.latency import run_bench

    one = dataclasses.replace(opts, sessions=1)

    def measure(side: Side, k: int):
        if side.image is not None:
            from edgebench.boards.connect import open_client

            ctx = open_client(profile, url, cpus=cpus, image=side.image)
        else:
            ctx = nullcontext()
        with ctx as client:
            return run_bench(side.model, profile, one, runs_root, url, None, client, time.monotonic())

    return measure


def run_rounds(sides: tuple, rounds: int, board: str, runs_root, measure: Measure, seed: int = 0,
               max_slowdown: Optional[float] = None, progress: Optional[Callable[[dict], None]] = None,
               alpha: float = 0.05) -> RoundsResult:
    """Run ``rounds`` blocks of the two ``sides`` (each side measured by ``measure(side, round)``,
    which returns ``(RunResult, run_dir)``), compare them paired, store the record, return it."""
    a, b = sides
    orders = plan_orders(rounds, seed)
    t0 = time.monotonic()
    rec = RoundsResult(a=_side_dict(a), b=_side_dict(b), board=board, seed=seed, orders=orders,
                       started_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       load_avg=[list(os.getloadavg())])
    folder = _record_dir(runs_root, a, b, board)
    rec.record = str(folder / ROUNDS_JSON)
    labels = set()
    for k, order in enumerate(orders, 1):
        figs, dirs = {}, {}
        for name in order:
            side = a if name == "A" else b
            result, run_dir = measure(side, k)
            figs[name], dirs[name] = side_figure(result), str(run_dir)
            labels.add(figs[name]["label"])
        block = {"round": k, "order": order, "A": {**figs["A"], "run_dir": dirs["A"]},
                 "B": {**figs["B"], "run_dir": dirs["B"]},
                 "ratio": figs["B"]["median_s"] / figs["A"]["median_s"]}
        rec.blocks.append(block)
        _write(folder, rec)                      # a record after every block: an interrupted set keeps its blocks
        if progress is not None:
            progress({"event": "round-done", "round": k, "of": rounds, "order": order,
                      "a_median_s": figs["A"]["median_s"], "b_median_s": figs["B"]["median_s"],
                      "ratio": block["ratio"], "elapsed_s": time.monotonic() - t0})
    if len(labels) > 1:
        raise ResultError(f"the rounds' runs carry different labels ({', '.join(sorted(labels))})",
                          "compare runs of one kind of board")
    rec.label = labels.pop()
    blocks = [Block(x["A"]["median_s"], x["B"]["median_s"], x["A"]["se_log"], x["B"]["se_log"]) for x in rec.blocks]
    res = paired_blocks(blocks, alpha=alpha, label=rec.label)
    rec.result = res.to_dict()
    if max_slowdown is not None:
        rec.gate = gate(res, max_slowdown)
    rec.elapsed_s = time.monotonic() - t0
    rec.load_avg = [*(rec.load_avg or []), list(os.getloadavg())]
    _write(folder, rec)
    return rec


def _side_dict(side: Side) -> dict:
    return {"model": str(side.model), "image": str(side.image) if side.image else None}


def _record_dir(runs_root, a: Side, b: Side, board: str) -> Path:
    def tag(s: Side) -> str:
        return Path(s.image).stem if a.model == b.model and s.image else Path(s.model).stem

    return new_run_dir(runs_root, f"rounds-{tag(a)}-vs-{tag(b)}", board)


def _write(folder: Path, rec: RoundsResult) -> None:
    text = json.dumps(rec.to_dict(), indent=2) + "\n"
    atomic_write(folder / ROUNDS_JSON, lambda f: f.write(text.encode("utf-8")))


def read_rounds(path) -> dict:
    """A stored rounds record (the folder or its rounds.json)."""
    p = Path(path)
    p = p / ROUNDS_JSON if p.is_dir() else p
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultError(f"cannot read the rounds record {p}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ResultError(f"{p} is not an edgebench rounds record")
    return doc


__all__ = ["Side", "RoundsResult", "plan_orders", "sides_of", "side_figure", "bench_measure", "run_rounds",
           "read_rounds", "ROUNDS_JSON"]
