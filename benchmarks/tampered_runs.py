"""Tampered run folders through runs, report, check, compare and load_runs (issue 22 item 4).

    python benchmarks/tampered_runs.py                 # a sample of 70 tampered runs, 5 commands each
    python benchmarks/tampered_runs.py --all           # every field of every fixture run, every tamper

Each case is a runs folder holding one good run (tests/data/runs/bench-host-int8.json) and one
fixture run with one field tampered (tests/run_tamper.py: wrong type, 2 MB string, 5,000-deep
nesting, missing, null). The commands: ``runs`` (the listing), ``runs RUN``, ``report RUN --md``,
``check RUN``, ``compare GOOD RUN``, and ``edgebench.load_runs()``. A finding is a traceback, an
"unexpected" error, an exit code other than 0, 1, 2, or a listing that lost the good run. Prints
the counts and the first findings; the goal is 0.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import run_tamper as rt  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="every field of every fixture, every tamper")
    ap.add_argument("--readers", action="store_true",
                    help="every tamper the schema accepts of a key the readers read (the rest are refused on load)")
    ap.add_argument("--runs", type=int, default=70, help="tampered runs in the sample (default 70)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    docs = rt.fixtures()
    good = docs["bench-host-int8"]
    everything = [(name, path, how) for name, doc in docs.items()
                  for path in rt.key_paths(doc) for how in rt.TAMPERS]
    if args.readers:
        chosen = rt.accepted_cases(docs, rt.read_paths(docs))
    else:
        chosen = everything if args.all else random.Random(args.seed).sample(everything, args.runs)
    counts: Counter = Counter()
    examples: dict = {}
    t0 = time.perf_counter()
    for k, (name, path, how) in enumerate(chosen):
        text = rt.tamper(docs[name], path, how)
        with tempfile.TemporaryDirectory() as tmp:
            for what, problem in rt.one_case(Path(tmp), name, text, None if args.readers else ("bench-host-int8", good)):
                counts[what] += 1
                examples.setdefault(f"{what}: {problem[:120]}", f"{name} {'.'.join(map(str, path))} {how}")
        if (k + 1) % 50 == 0:
            print(f"{k + 1}/{len(chosen)} cases, {sum(counts.values())} findings, "
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    n_commands = len(chosen) * 6
    print(f"{len(chosen)} tampered runs, {n_commands} commands (5 verbs + load_runs): "
          f"{sum(counts.values())} findings {dict(counts)} in {time.perf_counter() - t0:.0f} s")
    for problem, case in list(examples.items())[:40]:
        print(f"  {problem}   <- {case}")
    return 1 if counts else 0


if __name__ == "__main__":
    sys.exit(main())
