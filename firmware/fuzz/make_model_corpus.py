"""Write the seed corpus of the model-path fuzz target (firmware/fuzz/corpus_model/).

Seeds are real blobs from the host converter (edgebench.mcu.convert): the digits
model (CONV_2D, MAX_POOL_2D, RESHAPE, FULLY_CONNECTED, SOFTMAX) and MLPerf Tiny's
KWS DS-CNN (adds DEPTHWISE_CONV_2D and AVERAGE_POOL_2D), each whole and with its
layer table cut short (the engine then runs a prefix of the graph: cheaper
executions, and a header whose counts disagree with the tables); and one small
single-operator model of every engine version 1 kind (conv, depthwise, fully connected,
pools, ADD, softmax, a chain), made by the test suite's seeded synthetic model builders
(tests/test_firmware_engine.py), so that every kernel is reached from the first
execution, and one of every engine version 2 operator (tests/test_firmware_ops.py:
MEAN, PAD, CONCATENATION, MUL, SUB, LOGISTIC, RESIZE_*, TRANSPOSE_CONV...), whose kernels
were made UBSan-clean on any blob with the help of these seeds. ``--v1-only`` leaves the
version 2 seeds out. The fuzz target
(fuzz_model.c) rewrites each input's header CRC, so mutations of these seeds
reach the engine. Re-run after changing the blob format or the converter:

    .venv/bin/python firmware/fuzz/make_model_corpus.py [--v1-only]
"""
from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = HERE / "corpus_model"
MODELS = {
    "digits": ROOT / "models" / "digits" / "digits_int8.tflite",
    "kws": ROOT.parent / "shared" / "models" / "mlperf-tiny" / "kws_ref_model.tflite",
}


def with_layers(blob: bytes, n_layers: int) -> bytes:
    """The blob with its header's layer count lowered (CRC recomputed)."""
    out = bytearray(blob)
    struct.pack_into("<H", out, 18, n_layers)
    struct.pack_into("<I", out, 12, zlib.crc32(bytes(out[16:])))
    return bytes(out)


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from edgebench.mcu import convert

    CORPUS.mkdir(exist_ok=True)
    for name, path in MODELS.items():
        if not path.is_file():
            print(f"skipped {name}: {path} not found", file=sys.stderr)
            continue
        blob = convert(path).data
        n = struct.unpack_from("<H", blob, 18)[0]
        seeds = {f"{name}": blob, f"{name}_1layer": with_layers(blob, 1)}
        if n > 2:
            seeds[f"{name}_{n // 2}layers"] = with_layers(blob, n // 2)
        for seed, data in seeds.items():
            (CORPUS / f"{seed}.ebnn").write_bytes(data)
            print(f"{seed}.ebnn: {len(data):,} bytes")
    for kind, blob in synthetic_blobs(convert, "--v1-only" not in sys.argv[1:]):
        (CORPUS / f"synth_{kind.lower()}.ebnn").write_bytes(blob)
        print(f"synth_{kind.lower()}.ebnn: {len(blob):,} bytes")
    return 0


def synthetic_blobs(convert, engine_v2: bool):
    """(kind, blob) of one seeded synthetic model per operator kind the tests build."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "tests"))
    import test_firmware_engine

    sets = [test_firmware_engine.SYNTH]
    if engine_v2:
        import test_firmware_ops

        sets.append(test_firmware_ops.SYNTH)
    for builders in sets:
        for kind in sorted(builders):
            model, _ = builders[kind](np.random.default_rng(sum(map(ord, kind))))
            yield kind, convert(model, name=kind).data


if __name__ == "__main__":
    sys.exit(main())
