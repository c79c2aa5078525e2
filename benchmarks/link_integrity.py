"""Link integrity: what a corrupted serial link does to the answers edgebench accepts (issue 9).

Runs the real posix firmware (posix-sim) behind the fault-injecting serial proxy of
tests/test_fault_injection.py, which flips a random bit of a byte (rate r) or drops it
(rate r/4), per byte, in one direction. The proxy keeps the device's bytes before any
fault, so every answer the host accepts can be compared with what the device really sent.

1. Corrupted link, each direction (device->host, host->device), at 1e-3 and 1e-2 per
   byte: ``--calls`` calls (half ``eb-output``, half ``eb-infer 8``) on the digits model.
   Counted: answers accepted, **silently wrong** (accepted but not what the device sent:
   an output vector other than the true one, a timing list other than the one the device
   printed for that request's sequence number), failed loudly (a typed error), retries,
   discarded lines.
2. At 1e-4 per byte, both directions at once: ``--deploys`` deploys (convert, upload,
   eb-model) and ``--verifies`` verifies (4 inputs each, outputs vs the reference kernels):
   completed, failed, and any that completed with a wrong answer (a verify that is not
   bit-exact, a deploy whose device CRC or sizes differ).

Usage:  python benchmarks/link_integrity.py [--calls 1000] [--deploys 500] [--verifies 500] [--json FILE]
Goal (issue 9): silently wrong results 0 at every rate; at 1e-4, 0 failed deploys and verifies.
Figures are measured on the posix port (real host CPU, a pseudo-terminal, no line rate).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

DIGITS = ROOT / "models" / "digits" / "digits_int8.tflite"


def corrupted_calls(url: str, truth: bytes, direction: str, rate: float, calls: int, seed: int) -> dict:
    """One direction damaged at ``rate``: answers accepted, silently wrong, failed loudly (errors grouped)."""
    from test_fault_injection import corrupted_trial

    t0 = time.monotonic()
    out = corrupted_trial(url, truth, direction, rate, calls, seed=seed, timeout_s=0.3)
    errors: dict = {}
    for exc in out.pop("errors"):
        key = re.sub(r"\d+", "N", exc.one_line())[:90]
        errors[key] = errors.get(key, 0) + 1
    out["errors"] = errors
    out["elapsed_s"] = round(time.monotonic() - t0, 1)
    return out


def deploys_and_verifies(url: str, rate: float, deploys: int, verifies: int, seed: int) -> dict:
    from test_fault_injection import SerialProxy

    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.registry import get_profile
    from edgebench.errors import EdgebenchError
    from edgebench.mcu.board import McuClient
    from edgebench.mcu.protocol import DutClient
    from edgebench.modelfile import read_model

    profile = get_profile("posix-sim")
    model = read_model(DIGITS)
    out = {"rate_per_byte": rate, "directions": "both", "deploys": deploys, "deploys_ok": 0, "deploys_failed": 0,
           "verifies": verifies, "verifies_ok": 0, "verifies_failed": 0, "verifies_not_bit_exact": 0, "errors": {}}

    def failed(kind: str, exc: Exception) -> None:
        out[kind] += 1
        key = re.sub(r"\d+", "N", exc.one_line() if isinstance(exc, EdgebenchError) else repr(exc))[:90]
        out["errors"][key] = out["errors"].get(key, 0) + 1

    t0 = time.monotonic()
    with SerialProxy(url, seed=seed, corrupt=rate, drop=rate / 4) as proxy:
        proxy.enabled = False
        client = McuClient(DutClient(proxy.host_path, timeout_s=1.0), profile)
        try:
            client.hello()
            proxy.enabled = True
            for _ in range(deploys):
                try:
                    rep = client.deploy(model, force=True)
                    out["deploys_ok"] += 1
                    assert rep.loaded["layers"] > 0
                except EdgebenchError as exc:
                    failed("deploys_failed", exc)
            for i in range(verifies):
                try:
                    res = run_verify(DIGITS, profile, VerifyOptions(count=4, seed=i), client=client)
                    out["verifies_ok"] += 1
                    out["verifies_not_bit_exact"] += int(not res.bit_exact)
                except EdgebenchError as exc:
                    failed("verifies_failed", exc)
            out["link"] = client.link_report()
        finally:
            client.dut.close()
        out["proxy"] = dict(proxy.stats)
    out["elapsed_s"] = round(time.monotonic() - t0, 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000, help="calls per direction and rate (half eb-output)")
    ap.add_argument("--rates", default="1e-3,1e-2")
    ap.add_argument("--deploys", type=int, default=500)
    ap.add_argument("--verifies", type=int, default=500)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args()

    from test_fault_injection import deploy_digits

    from edgebench.boards.registry import get_profile
    from edgebench.mcu.firmware import FirmwareSession, build_firmware

    image = build_firmware("posix")
    profile = get_profile("posix-sim")
    report = {"what": "measured on posix-sim (the firmware core on the host CPU, pseudo-terminal link); "
                      "faults per byte: a bit flip at rate r, a drop at r/4",
              "corrupted": [], "deploy_verify": None}
    with FirmwareSession(profile, image=image) as session:
        truth = deploy_digits(session.url)
        for rate in [float(r) for r in args.rates.split(",") if r]:
            for k, direction in enumerate(("d2h", "h2d")):
                row = corrupted_calls(session.url, truth, direction, rate, args.calls, seed=int(rate * 1e5) + k)
                report["corrupted"].append(row)
                print(f"{direction} {rate:g}/byte: {row['calls']} calls, {row['accepted']} accepted, "
                      f"{row['silently_wrong']} silently wrong, {row['failed_loudly']} failed loudly, "
                      f"{row['link']['retries']} retries, {row['link']['discarded_lines']} damaged lines "
                      f"discarded ({row['elapsed_s']} s)", flush=True)
        if args.deploys or args.verifies:
            row = deploys_and_verifies(session.url, 1e-4, args.deploys, args.verifies, seed=4)
            report["deploy_verify"] = row
            print(f"both directions 1e-4/byte: {row['deploys_ok']}/{row['deploys']} deploys, "
                  f"{row['verifies_ok']}/{row['verifies']} verifies complete ({row['verifies_not_bit_exact']} "
                  f"not bit-exact), {row['link']['retries']} retries, {row['link']['upload_restarts']} upload "
                  f"restarts ({row['elapsed_s']} s)", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    wrong = sum(r["silently_wrong"] for r in report["corrupted"])
    dv = report["deploy_verify"] or {}
    return 0 if wrong == 0 and not dv.get("verifies_not_bit_exact") else 2


if __name__ == "__main__":
    sys.exit(main())
