"""`edgebench bench A B --rounds N` (level 5): the rounds of :mod:`edgebench.bench.rounds`, their
progress lines, the paired result, its minimum detectable ratio and the ``--max-slowdown`` gate.

Exit status: 0 done (gate passed or none), 2 the gate failed (the slowdown interval lies wholly
above the threshold), 3 the gate cannot decide (its threshold lies below the minimum detectable
ratio: more rounds are needed).
"""
from __future__ import annotations

import math
from pathlib import Path

from edgebench.bench.rounds import bench_measure, run_rounds, sides_of
from edgebench.errors import GateFailed, GateUndecided, UsageError
from edgebench.report import format as fmt


def run_rounds_command(models, run, opts, rounds: int, seed: int, max_slowdown) -> None:
    """Measure the two sides in ``rounds`` blocks, print (or ``--json``) the record, apply the gate."""
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console, get_err_console

    if run.recover is not None:
        raise UsageError("--rounds runs new work; --recover resumes one run", "give one of the two")
    if max_slowdown is not None and max_slowdown < 1.0:
        raise UsageError(f"--max-slowdown is a slowdown ratio >= 1, got {max_slowdown:g}", "e.g. --max-slowdown 1.05")
    sides = sides_of(list(models), list(run.images))
    profile = run.profile()
    for side in sides:
        run.check_fit(side.model)
    opts.validate()
    err = get_err_console()

    def progress(ev: dict) -> None:
        if not run.quiet:
            err.print(round_line(ev), markup=False, highlight=False, soft_wrap=True)

    if not run.quiet:
        err.print(f"rounds: {rounds} blocks of A = {sides[0].describe()} and B = {sides[1].describe()}, each a "
                  f"fresh invocation, order seeded ({seed})", markup=False, highlight=False, soft_wrap=True)
    rec = run_rounds(sides, rounds, profile.name, run.runs_dir,
                     bench_measure(profile, opts, run.runs_dir, url=run.url, cpus=run.cpus),
                     seed=seed, max_slowdown=max_slowdown, progress=progress)
    if run.json_out:
        emit_json(rec)
    else:
        out = get_console()
        for line in summary_lines(rec.to_dict()):
            out.print(line, markup=False, highlight=False, soft_wrap=True)
    g = rec.gate
    if g and g["failed"]:
        raise GateFailed(f"B is slower than {g['max_slowdown']:g}x A: slowdown {g['slowdown']:.3f} (95% CI "
                         f"{g['slowdown_ci_low']:.3f}-{g['slowdown_ci_high']:.3f})", hint=f"record {rec.record}")
    if g and g["undecided"]:
        from edgebench.stats.power import limit_text  # lazy: kept off `edgebench VERB --help` (stats)

        detect = (f"{rounds} rounds detect no slowdown up to {limit_text(rec.to_dict()['result']['mde'])}"
                  if g.get("mde_beyond_limit") else
                  f"--max-slowdown {g['max_slowdown']:g} is below what {rounds} rounds detect "
                  f"({g['mde_ratio']:.3f} with 80% power)"
                  if g.get("mde_ratio") is not None and g["max_slowdown"] < g["mde_ratio"] else
                  f"{rounds} rounds give no verdict (fewer than 3 rounds)")
        raise GateUndecided(f"{detect}: cannot decide", hint=_more_rounds_hint(rec.to_dict(), g["max_slowdown"]))


def round_line(ev: dict) -> str:
    return (f"round {ev['round']}/{ev['of']} ({' then '.join(ev['order'])}): A {fmt.duration(ev['a_median_s'])}, "
            f"B {fmt.duration(ev['b_median_s'])}, B/A {ev['ratio']:.4f} ({fmt.duration(ev['elapsed_s'])} so far)")


def summary_lines(doc: dict) -> list:
    """The printed result of a rounds record (a :meth:`RoundsResult.to_dict`)."""
    r = doc["result"]
    a, b = doc["a"], doc["b"]
    name = {"B larger": "B is slower than A", "B smaller": "B is faster than A"}.get(r["verdict"], r["verdict"])
    lines = [f"A = {_side(a)}, B = {_side(b)} on {doc['board']} ({doc['label']}), {r['blocks']} rounds, "
             f"orders {' '.join(doc['orders'])} (seed {doc['seed']})",
             f"B/A latency ratio {r['ratio']:.4f} (95% CI {r['ci_low']:.4f}-{r['ci_high']:.4f}): {name}",
             f"  {r['method']}"]
    if r.get("fallback"):
        lines.append(f"  fewer than 3 rounds: {r['fallback']}")
    if r.get("mde") and r["mde"].get("beyond_limit"):
        from edgebench.stats.power import limit_text  # lazy: kept off `edgebench VERB --help` (stats)

        lines.append(f"  this comparison detects no difference up to {limit_text(r['mde'])} (80% power, alpha "
                     f"{r['mde']['alpha']:g}): too few rounds, or too noisy")
    elif r.get("mde"):
        pct = r["mde"]["percent"]
        lines.append(f"  this comparison detects >= {pct:.{1 if pct >= 1 else 3}f}% (80% power, alpha "
                     f"{r['mde']['alpha']:g})")
    g = doc.get("gate")
    if g:
        state = "FAILED" if g["failed"] else ("cannot decide" if g["undecided"] else "passed")
        lines.append(f"gate --max-slowdown {g['max_slowdown']:g}: {state} (slowdown {g['slowdown']:.3f}, "
                     f"95% CI {g['slowdown_ci_low']:.3f}-{g['slowdown_ci_high']:.3f})")
    lines.append(f"record {doc['record']}")
    return lines


def _side(s: dict) -> str:
    return Path(s["model"]).name + (f" (image {Path(s['image']).name})" if s.get("image") else "")


def _more_rounds_hint(doc: dict, target: float) -> str:
    """How many rounds would detect ``target``, with the spread these rounds showed."""
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.stats.power import detectable

    r = doc["result"]
    n = r["blocks"]
    var_block = (r["se_log"] ** 2) * n            # the variance of one block's log ratio, as estimated
    for more in range(n + 1, 201):
        if detectable(math.sqrt(var_block / more), more - 1).ratio <= target:
            return f"about {more} rounds would detect {target:g} (now {n})"
    return "more than 200 rounds would be needed at this spread: reduce the noise (pin with --cpus, a quiet board)"


__all__ = ["run_rounds_command", "round_line", "summary_lines"]
