"""What a signal leaves behind: SIGINT, SIGTERM and SIGKILL during bench, accuracy, soak and
deploy, on the host board and on posix-sim (issue 9, "Figures for the closing note").

For each (board, verb, signal) the script starts the verb in a subprocess with its own runs
folder, waits until it is measuring (its live progress line shows samples), sends the signal
to the edgebench process alone (as ``kill`` would), and records:

* exit status and the last line edgebench printed on stderr;
* the run folder's state: status and reason in run.json, and what ``edgebench runs`` makes of
  it (a SIGKILLed run whose process is gone is ``abandoned``);
* the samples kept: rows in the run's Parquet files and journals;
* child processes of edgebench (agent, posix firmware, QEMU) still alive 5 s later, tracked by
  pid and start time (never by name: other people run QEMU on this machine);
* whether the next command works: the same verb again with short settings (exit status),
  and ``edgebench runs`` on the folder.

Deploy on the host board is refused by design (it is for microcontroller firmware) and
appears as such. Deploy to posix-sim may finish before the signal lands (the upload takes
about 10 ms over a pty): the row says so.

    .venv/bin/python benchmarks/signals_table.py [--boards host,posix-sim] [--verbs ...]
        [--signals INT,TERM,KILL] [--json out.json]

Figures here are measured on this machine at the time of the run; they describe edgebench's
behaviour, not a board's speed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from edgebench.results import store  # noqa: E402
from edgebench.transport.child import descendants, still_alive  # noqa: E402

INT8 = ROOT / "models" / "digits" / "digits_int8.tflite"
FP32 = ROOT / "models" / "digits" / "digits_fp32.tflite"
KWS = ROOT.parent / "shared" / "models" / "mlperf-tiny" / "kws_ref_model.tflite"   # a longer upload
PY = sys.executable
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
NO_GATES = ["--max-drop", "inf", "--max-ece", "inf", "--max-edge-drop", "inf"]


def commands(verb: str, board: str, runs: Path, data: Path) -> tuple:
    """(long argv to interrupt, a readiness regex on the output, short argv for the next command,
    seconds to wait after the output is ready before the signal)."""
    b = ["--board", board]
    if verb == "bench":
        return (["bench", INT8, *b, "--runs-dir", runs, "--min-time", "120", "--max-time", "300", "--repeat", "1"],
                r"n=[1-9]", ["bench", INT8, *b, "--runs-dir", runs, "--min-time", "0.5", "--max-time", "2",
                             "--repeat", "1"], 0.5)
    if verb == "accuracy":
        return (["accuracy", INT8, "--baseline", FP32, "--data", data, *b, "--runs-dir", runs, *NO_GATES],
                r"candidate \S+: [1-9][\d,]*/", ["accuracy", INT8, "--baseline", FP32, "--data", "digits", *b,
                                                  "--runs-dir", runs, *NO_GATES], 0.5)
    if verb == "soak":
        return (["soak", INT8, *b, "--runs-dir", runs, "--until", "max", "--max-duration", "300", "--window", "5"],
                r"n=[1-9]", ["soak", INT8, *b, "--runs-dir", runs, "--until", "max", "--max-duration", "3",
                             "--window", "1", "--burst", "0.5"], 0.5)
    if verb == "deploy":
        model = KWS if KWS.is_file() else INT8
        # under QEMU the upload starts ~1.5 s after "connecting" (emulator start) and lasts ~1.5 s
        return (["deploy", model, *b], r"connecting to", ["deploy", model, *b], 2.2 if "qemu" in board else 0.2)
    raise SystemExit(f"unknown verb {verb}")


# ---- one scenario ------------------------------------------------------------------------

def run_cli(argv: list, timeout_s: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "edgebench", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout_s, cwd=ROOT)


def interrupt(argv: list, ready: str, sig: int, delay_s: float, ready_timeout_s: float = 180) -> dict:
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": "200"}
    p = subprocess.Popen([PY, "-m", "edgebench", *map(str, argv)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=env, cwd=ROOT)
    os.set_blocking(p.stderr.fileno(), False)
    seen, kids, sent = b"", {}, False
    deadline = time.monotonic() + ready_timeout_s
    while time.monotonic() < deadline and p.poll() is None:
        try:
            seen += os.read(p.stderr.fileno(), 65536) or b""
        except BlockingIOError:
            pass
        kids.update(descendants(p.pid))
        if re.search(ready, ANSI.sub("", seen.decode(errors="replace"))):
            time.sleep(delay_s)                  # well inside the measurement
            kids.update(descendants(p.pid))
            if p.poll() is None:
                p.send_signal(sig)
                sent = True
            break
        time.sleep(0.05)
    if not sent and p.poll() is None:
        p.kill()
    os.set_blocking(p.stderr.fileno(), True)
    try:
        rest = p.communicate(timeout=120)[1] or b""
    except subprocess.TimeoutExpired:
        p.kill()
        rest = p.communicate()[1] or b""
    text = ANSI.sub("", (seen + rest).decode(errors="replace")).replace("\r", "\n")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    time.sleep(5.0)
    return {"signal_sent": sent, "exit": p.returncode, "last_line": lines[-1] if lines else "",
            "children_seen": sorted({name for _, name in kids.values()}),
            "children_left": sorted(still_alive(kids).values())}


def kept(runs: Path) -> dict:
    """Status, reason, what `runs` shows, and the rows kept, of the (first) run folder."""
    import pyarrow.parquet as pq

    dirs = store.find_runs(runs) if runs.is_dir() else []
    if not dirs:
        return {"run": None}
    d = dirs[0]
    raw = json.loads((d / store.RUN_JSON).read_text()) if (d / store.RUN_JSON).is_file() else {}
    rows = {p.name: pq.read_metadata(p).num_rows for p in sorted(d.glob("*.parquet"))}
    for name in sorted({p.name.split(".")[0] for p in d.glob(f"*{store.JOURNAL_SUFFIX}*")}):
        try:
            rows[f"journal {name}"] = len(store.read_journal(d, name))
        except Exception as exc:  # report what is there, even a damaged journal
            rows[f"journal {name}"] = f"unreadable ({type(exc).__name__})"
    try:
        shown = store.run_status(store.read_result(d))
    except Exception as exc:
        shown = f"unreadable ({type(exc).__name__})"
    return {"run": d.name, "status": raw.get("status"), "reason": raw.get("status_reason"),
            "runs_shows": shown, "rows": rows}


def scenario(board: str, verb: str, sig: int, work: Path, data: Path) -> dict:
    name = signal.Signals(sig).name
    runs = work / f"{board}-{verb}-{name}"
    row = {"board": board, "verb": verb, "signal": name}
    if verb == "deploy" and board == "host":
        p = run_cli(["deploy", INT8, "--board", board])
        return {**row, "note": "deploy is refused on a Linux board (exit %d): nothing to interrupt" % p.returncode}
    long_argv, ready, next_argv, delay_s = commands(verb, board, runs, data)
    row.update(interrupt(long_argv, ready, sig, delay_s))
    row.update(kept(runs))
    nxt = run_cli(next_argv)
    row["next_exit"] = nxt.returncode
    row["next_error"] = "" if nxt.returncode in (0,) else (nxt.stderr.strip().splitlines() or [""])[-1][:200]
    row["runs_cmd_exit"] = run_cli(["runs", "--runs-dir", runs]).returncode if runs.is_dir() else None
    return row


def markdown(rows: list) -> str:
    head = ("| board | verb | signal | exit | last line | run.json status (reason) | `runs` shows | rows kept "
            "| children left | next command |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if "note" in r:
            out.append(f"| {r['board']} | {r['verb']} | {r['signal']} | | {r['note']} | | | | | |")
            continue
        status = "no run folder" if r.get("run") is None else f"{r['status']} ({r.get('reason') or ''})"
        rows_kept = ", ".join(f"{k}: {v:,}" if isinstance(v, int) else f"{k}: {v}"
                              for k, v in (r.get("rows") or {}).items()) or "-"
        sent = "" if r["signal_sent"] else " (finished before the signal)"
        out.append(f"| {r['board']} | {r['verb']} | {r['signal']}{sent} | {r['exit']} | {r['last_line'][:90]} "
                   f"| {status} | {r.get('runs_shows', '-')} | {rows_kept} | {', '.join(r['children_left']) or 'none'} "
                   f"| {'works' if r['next_exit'] == 0 else 'FAILS (exit %s: %s)' % (r['next_exit'], r['next_error'])} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boards", default="host,posix-sim")
    ap.add_argument("--verbs", default="bench,accuracy,soak,deploy")
    ap.add_argument("--signals", default="INT,TERM,KILL")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = ap.parse_args()
    import numpy as np

    from edgebench.data.datasets import load_digits

    rows = []
    with tempfile.TemporaryDirectory(prefix="eb-signals-") as tmp:
        work = Path(tmp)
        ds = load_digits("test")                 # 40 copies of the test split: a run long enough to stop
        data = work / "digits_x40.npz"
        np.savez(data, x=np.concatenate([ds.x] * 40), y=np.concatenate([ds.y] * 40))
        for board in args.boards.split(","):
            for verb in args.verbs.split(","):
                for s in args.signals.split(","):
                    sig = getattr(signal, "SIG" + s.strip().upper().removeprefix("SIG"))
                    row = scenario(board, verb, sig, work, data)
                    print(json.dumps(row), file=sys.stderr, flush=True)
                    rows.append(row)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
