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
