"""Upload rate: model bytes/s of the binary upload vs the raw byte rate of the same link and the hex `db` path.

Runs the real posix firmware and talks to it through the serial proxy of
tests/test_fault_injection.py, which can pace both directions like a UART
(115200 baud 8N1 = 11,520 bytes/s). For each link:

* raw:    bytes/s the link itself delivers (a one-way blast through the same proxy into a
          bare pseudo-terminal, nothing answering);
* binary: model blob bytes / wall time of ``eb-upload model`` (command, CRC frames with
          acknowledgements, the device's CRC answer) - what ``edgebench deploy`` does;
* hex:    bytes / wall time of MLPerf Tiny's ``db load N`` + ``db <hex>`` chunks, with the
          reference firmware's 32-byte chunks and with the longest chunk this firmware's
          512-byte command line takes (254 bytes).

Usage:  python benchmarks/upload_rate.py [--model PATH] [--baud 115200 ...] [--json]
Target (issue 4): binary >= 90% of raw.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import tty
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

KWS = ROOT.parent / "shared" / "models" / "mlperf-tiny" / "kws_ref_model.tflite"


class ProxyProcess:
    """tests/test_fault_injection.SerialProxy in its own process (no GIL shared with the host)."""

    def __init__(self, device_path: str, bytes_per_s: float):
        import subprocess

        code = ("import sys, time; sys.path.insert(0, sys.argv[1]); from test_fault_injection import SerialProxy; "
                "p = SerialProxy(sys.argv[2], bytes_per_s=float(sys.argv[3])); print(p.start(), flush=True); "
                "sys.stdin.read(); p.stop()")
        self.proc = subprocess.Popen([sys.executable, "-c", code, str(ROOT / "tests"), device_path, str(bytes_per_s)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.host_path = self.proc.stdout.readline().strip()

    def stop(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def raw_rate(bytes_per_s: float | None, n: int) -> float:
    """One-way bytes/s through the proxy (or a bare pty) into a sink."""
    import serial

    dev_master, dev_slave = os.openpty()
    tty.setraw(dev_slave)
    got = bytearray()
    done = threading.Event()

    def sink():
        while len(got) < n:
            got.extend(os.read(dev_master, 65536))
        done.set()

    threading.Thread(target=sink, daemon=True).start()
    proxy = None
    if bytes_per_s:
        proxy = ProxyProcess(os.ttyname(dev_slave), bytes_per_s=bytes_per_s)
        path = proxy.host_path
        port = serial.Serial(path, 115200, timeout=1, write_timeout=60)
    else:
        # no proxy: the host writes straight into the device's pty, as it does with the firmware
        port = None
        path = os.ttyname(dev_slave)
    data = os.urandom(n)
    t0 = time.perf_counter()
    if port is not None:
        port.write(data)
    else:
        w_slave = dev_slave  # a pty pair: write the slave, read the master
        view = memoryview(data)
        while view:
            k = os.write(w_slave, view[:4096])
            view = view[k:]
    done.wait(timeout=max(30.0, 3 * n / (bytes_per_s or 1e6)))
    elapsed = time.perf_counter() - t0
    if port is not None:
        port.close()
    if proxy is not None:
        proxy.stop()
    os.close(dev_slave)
    os.close(dev_master)
    return len(got) / elapsed


def measure(url: str, blob: bytes, reps: int, hex_chunks: tuple, window: int = 4) -> dict:
    from edgebench.mcu.protocol import DutClient

    dut = DutClient(url, timeout_s=10.0)
    dut.sync()
    info = dut.info()
    up = [dut.upload("model", blob, window=window) for _ in range(reps)]
    for u in up:
        print(f"  {url}: {u.bytes_per_s:,.0f} B/s, {u.frames} frames, {u.retransmits} retransmitted, "
              f"{u.timeouts} timeouts, {u.naks} NAKs, {u.elapsed_s:.3f} s", file=sys.stderr)
    binary = statistics.median(s.bytes_per_s for s in up)
    n_hex = min(len(blob), int(info["input-max-bytes"]))
    hexes = {}
    for chunk in hex_chunks:
        t = [dut.db_load(blob[:n_hex], chunk_bytes=chunk)["elapsed_s"] for _ in range(max(1, reps // 2))]
        hexes[chunk] = n_hex / statistics.median(t)
    dut.close()
    last = up[-1]
    return {"binary_bytes_per_s": binary, "frames": last.frames, "payload_max": last.payload_max,
            "window": last.window, "retransmits": sum(s.retransmits for s in up),
            "wire_overhead": last.wire_bytes / last.bytes - 1, "hex_bytes": n_hex,
            "hex_bytes_per_s": hexes}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=KWS)
    ap.add_argument("--baud", type=int, action="append", help="UART rates to emulate (default 115200, 921600)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--window", type=int, default=4, help="frames in flight (the protocol's default is 4)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    bauds = args.baud or [115200, 921600]

    from edgebench.boards.registry import get_profile
    from edgebench.mcu.blob import convert
    from edgebench.mcu.firmware import FirmwareSession, build_firmware

    blob = convert(args.model.read_bytes()).data
    image = build_firmware("posix")
    rows = []
    with FirmwareSession(get_profile("posix-sim"), image=image) as fw:
        links = [("pty (no rate limit)", None)] + [(f"UART {b} baud 8N1 (proxy)", b / 10) for b in bauds]
        for name, rate in links:
            raw = raw_rate(rate, n=int(min(2_000_000, (rate or 4e6) * 2)))
            if rate:
                with ProxyProcess(fw.url, bytes_per_s=rate) as proxy:
                    m = measure(proxy.host_path, blob, args.reps, (32, 254), args.window)
            else:
                m = measure(fw.url, blob, args.reps, (32, 254), args.window)
            rows.append({"link": name, "raw_bytes_per_s": raw, **m,
                         "binary_pct_of_raw": 100 * m["binary_bytes_per_s"] / raw,
                         "hex32_pct_of_raw": 100 * m["hex_bytes_per_s"][32] / raw,
                         "hex254_pct_of_raw": 100 * m["hex_bytes_per_s"][254] / raw})
    report = {"model": args.model.name, "blob_bytes": len(blob), "rows": rows, "target_pct_of_raw": 90}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"model {args.model.name}: blob {len(blob):,} bytes; binary upload vs raw link rate and the hex db path")
    print(f"{'link':30} {'raw B/s':>12} {'binary B/s':>12} {'% raw':>7} {'db hex32 B/s':>13} {'% raw':>6} "
          f"{'db hex254 B/s':>14} {'% raw':>6}")
    for r in rows:
        print(f"{r['link']:30} {r['raw_bytes_per_s']:12,.0f} {r['binary_bytes_per_s']:12,.0f} "
              f"{r['binary_pct_of_raw']:6.1f}% {r['hex_bytes_per_s'][32]:13,.0f} {r['hex32_pct_of_raw']:5.1f}% "
              f"{r['hex_bytes_per_s'][254]:14,.0f} {r['hex254_pct_of_raw']:5.1f}%")
    print(f"(binary: {rows[-1]['frames']} frames, payload <= {rows[-1]['payload_max']}, window {rows[-1]['window']}, "
          f"wire overhead {100 * rows[-1]['wire_overhead']:.2f}%; hex: {rows[-1]['hex_bytes']:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
