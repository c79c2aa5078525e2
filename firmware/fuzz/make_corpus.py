"""Write the seed corpus of the parser fuzz target (firmware/fuzz/corpus/).

Each seed is a host->device byte stream of valid commands, including complete
binary uploads (frames with correct CRCs, which a fuzzer would not find on its
own) of a blob for the fake engine (fuzz/fake_engine.c). Re-run after changing
the protocol:  python3 firmware/fuzz/make_corpus.py
"""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"
PAYLOAD = 64  # EB_FRAME_PAYLOAD_MAX of the fuzz build


def frame(seq: int, payload: bytes, sid: int = 0) -> bytes:
    head = struct.pack("<HH", seq & 0xFFFF, len(payload))
    return b"\xeb\x5a" + head + payload + struct.pack("<I", zlib.crc32(head + payload, sid))


def req(text: str, seq: int) -> bytes:
    """A framed request (protocol 2): text #seq:crc32%."""
    body = f"{text} #{seq}".encode()
    return body + f":{zlib.crc32(body):08x}%".encode()


def upload(target: str, data: bytes, crc: int | None = None, sid: int = 0) -> bytes:
    crc = zlib.crc32(data) if crc is None else crc
    text = f"eb-upload {target} {len(data)} {crc:08x}"
    out = req(text, sid) if sid else f"{text}%".encode()
    for seq, at in enumerate(range(0, len(data), PAYLOAD)):
        out += frame(seq, data[at:at + PAYLOAD], sid)
    return out


def fake_blob(n_in: int, n_out: int, layers: int, status: int = 0, fail_at: int = 0,
              scale: float = 1 / 256, zero_point: int = -128, ops: bytes = b"\x03\x04\x09") -> bytes:
    return (b"EBFZ" + bytes([n_in, n_out, layers, status, fail_at, 7, 0, 0])
            + struct.pack("<f", scale) + struct.pack("<b", zero_point) + ops)


def main() -> None:
    CORPUS.mkdir(exist_ok=True)
    blob = fake_blob(16, 10, 5)
    seeds = {
        "mlperf_basic": b"name%profile%help%timestamp%results%%",
        "db_load": b"db load 16%db 000102030405060708%db 090a0b0c0d0e0f%db print%",
        "db_errors": b"db%db load%db load 0%db load 99999%db 0%db zz%db load 2%db 0102%db 03%",
        "infer_errors": b"infer 0%infer 1 -1%infer abc%infer 1 2 3%infer%",
        "unknown": b"bogus%\x00\xff\x80]%" + b"x" * 200 + b"%",
        "upload_model": upload("model", blob) + b"eb-info%eb-model kws01%profile%",
        "full_session": (upload("model", blob) + b"eb-model%db load 16%db "
                         + bytes(range(16)).hex().encode() + b"%infer 3 1%results%eb-output%"
                         + b"eb-infer 3 2 layers%eb-infer 2 layers%eb-temp%eb-temp%"),
        "upload_input": (upload("model", blob) + b"eb-model%" + upload("input", bytes(16))
                         + b"eb-infer 40 0%"),
        "upload_bad_crc": upload("model", blob, crc=0xDEADBEEF) + b"eb-model%",
        "upload_nak": (b"eb-upload model 100 0%" + frame(0, bytes(64))[:-1] + b"\x00"
                       + frame(1, bytes(36)) + frame(0, bytes(64)) + frame(1, bytes(36))),
        "upload_abort": b"eb-upload input 8 0%" + frame(0xFFFF, b"") + b"name%",
        "model_errors": (upload("model", fake_blob(16, 10, 2, status=2) + b"bad]\x01version")
                         + b"eb-model%eb-model bad id%eb-model " + b"a" * 20 + b"%"),
        "infer_fail": (upload("model", fake_blob(4, 3, 200, fail_at=3, scale=float("nan")))
                       + b"eb-model%db load 4%db 01020304%infer 5 0%eb-infer 2 1 layers%"),
        "eb_usage": b"eb-upload%eb-upload disk 1 0%eb-upload model 0 0%eb-upload model 1 xyz%"
                    b"eb-infer%eb-infer 1 2 3 4%eb-output%",
        "framed_session": (req("eb-sync 1a2b", 7) + req("eb-info", 8) + upload("model", blob, sid=9)
                           + frame(1, blob[64:], 9) + req("eb-model", 10) + upload("input", bytes(16), sid=11)
                           + req("eb-infer 3 1 layers", 12) + req("eb-output", 13) + req("eb-temp", 14)
                           + b"eb-info #15:00000000%eb-info #x:1%eb-sync%eb-sync a b%"),
        "framed_abort": (req("eb-upload input 16 0", 20) + frame(0, bytes(8), 20) + b"noise%"
                         + req("eb-sync 99", 21) + req("eb-upload input 8 0", 22) + frame(0xFFFF, b"")
                         + frame(0, bytes(8), 5) + b"name%"),
    }
    for name, data in seeds.items():
        (CORPUS / name).write_bytes(data)
    print(f"wrote {len(seeds)} seeds to {CORPUS}")


if __name__ == "__main__":
    main()
