"""How a self-test looks on a terminal (``edgebench selftest`` and ``edgebench runs ID``)."""
from __future__ import annotations

from edgebench.bench.selftest import SelftestResult
from edgebench.results.conditions import BoardSection
from edgebench.results.figures.selftest import SelftestCheck


def print_selftest(console, result: SelftestResult) -> None:
    """One line per check: status, name, what was seen; the notes; where the run is."""
    # read as the declared types: the verb's SelftestResult holds dicts, one from a stored run the run's sections
    board = BoardSection.model_validate(result.board)
    firmware = result.firmware or {}      # a free-form mapping: what the firmware says of itself (eb-info)
    console.print(f"selftest of {board.name} ({result.label}): {firmware.get('port')} firmware",
                  markup=False, highlight=False)
    for c in (SelftestCheck.model_validate(x) for x in result.checks or []):
        console.print(f"  {str(c.status):<4}  {c.name}: {c.summary}", markup=False, highlight=False)
    for note in result.notes or []:
        console.print(f"note: {note}", markup=False, highlight=False)
    if result.run_dir:
        console.print(f"run stored in {result.run_dir} (attach it to a bug report)", markup=False, highlight=False)


def print_selftest_run(console, result, run_dir=None) -> None:
    """A stored ``selftest`` run (``edgebench runs ID``), as the verb printed it."""
    print_selftest(console, SelftestResult.from_run(result, run_dir))
