"""How a self-test looks on a terminal (``edgebench selftest`` and ``edgebench runs ID``)."""
from __future__ import annotations


def print_selftest(console, result) -> None:
    """One line per check: status, name, what was seen; the notes; where the run is."""
    console.print(f"selftest of {result.board.get('name')} ({result.label}): {result.firmware.get('port')} firmware",
                  markup=False, highlight=False)
    for c in result.checks:
        console.print(f"  {c['status']:<4}  {c['name']}: {c['summary']}", markup=False, highlight=False)
    for note in result.notes:
        console.print(f"note: {note}", markup=False, highlight=False)
    if result.run_dir:
        console.print(f"run stored in {result.run_dir} (attach it to a bug report)", markup=False, highlight=False)


def print_selftest_run(console, result, run_dir=None) -> None:
    """A stored ``selftest`` run (``edgebench runs ID``), as the verb printed it."""
    from edgebench.bench.selftest import SelftestResult

    print_selftest(console, SelftestResult.from_run(result, run_dir))
