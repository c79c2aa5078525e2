"""layer-error per output channel: a channel whose range dwarfs the others' is named as the cause.

The model test builds a small Keras CNN, multiplies one channel of the first convolution by 100
and divides the matching input channel of the next by 100 (ReLU is positive-homogeneous: the FP32
model computes the same function), converts both the clean and the edited model with
``quantize_model`` and runs ``layer-error`` on each: the edited one names the layer and the channel.
"""
from __future__ import annotations

import numpy as np
import pytest

from edgebench.stats.layer_error import CRUSHED_DB, Accumulator, channel_figures

OUTLIER = 3


def test_channel_figures_name_the_widest_channel_and_the_crushed_ones():
    rng = np.random.default_rng(0)
    ref = rng.uniform(0, 1, (16, 4, 4, 6))
    ref[..., OUTLIER] *= 100
    scale = ref.max() / 255                         # one per-tensor scale over the whole range
    test = np.round(ref / scale) * scale
    a = Accumulator.empty()
    a.add(ref[:8], test[:8])
    a.add(ref[8:], test[8:])                        # accumulated over chunks
    ch = channel_figures(a)
    assert ch["widest"] == OUTLIER and ch["dominant"] and 0.9 < ch["widest_share"] < 1
    assert sorted(ch["crushed"]) == [0, 1, 2, 4, 5] and all(ch["sqnr_db"][k] < CRUSHED_DB for k in ch["crushed"])
    assert ch["sqnr_db"][OUTLIER] > 40
    clean = Accumulator.empty()
    ref[..., OUTLIER] /= 100
    scale = ref.max() / 255
    clean.add(ref, np.round(ref / scale) * scale)
    ch = channel_figures(clean)
    assert not ch["dominant"] and not ch["crushed"] and ch["widest_share"] < 0.3


def _models(tmp_path):
    from edgebench.quantize._tf import TensorFlowMissing, import_tensorflow

    try:
        import_tensorflow()
    except TensorFlowMissing as exc:
        from conftest import missing

        missing(exc.one_line())
    import keras

    keras.utils.set_random_seed(0)
    inp = keras.Input((12, 12, 3), name="image")
    x = keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="conv_1")(inp)
    x = keras.layers.Conv2D(8, 1, activation="relu", name="conv_2")(x)
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    out = keras.layers.Dense(4, name="logits")(x)
    clean = keras.Model(inp, out)
    edited = keras.models.clone_model(clean)
    edited.set_weights(clean.get_weights())
    w1, b1 = edited.get_layer("conv_1").get_weights()
    w1[..., OUTLIER] *= 100
    b1[OUTLIER] *= 100
    edited.get_layer("conv_1").set_weights([w1, b1])
    w2, b2 = edited.get_layer("conv_2").get_weights()
    w2[:, :, OUTLIER, :] /= 100
    edited.get_layer("conv_2").set_weights([w2, b2])
    x = np.random.default_rng(1).uniform(0, 1, (64, 12, 12, 3)).astype(np.float32)
    np.testing.assert_allclose(edited.predict(x[:8], verbose=0), clean.predict(x[:8], verbose=0), rtol=1e-4,
                               atol=1e-4)
    np.save(tmp_path / "calib.npy", x)
    paths = {}
    for name, m in (("clean", clean), ("edited", edited)):
        m.save(tmp_path / f"{name}.keras")
        paths[name] = tmp_path / f"{name}.keras"
    return paths


@pytest.mark.tensorflow
@pytest.mark.slow
def test_an_outlier_channel_is_named_with_its_layer(tmp_path):
    from edgebench.bench.layer_error import LayerErrorOptions, run_layer_error
    from edgebench.cli.render.profile import jump_text
    from edgebench.quantize import quantize_model

    paths = _models(tmp_path)
    found = {}
    for name, src in paths.items():
        r = quantize_model(src, tmp_path / "calib.npy", out=tmp_path / f"{name}_int8.tflite")
        result, _ = run_layer_error(r.int8.path, r.fp32.path, LayerErrorOptions(count=16),
                                    runs_root=tmp_path / "runs")
        found[name] = result.extra.layer_error
    s = found["edited"]
    co = s.channel_outlier
    assert co is not None and co["channel"] == OUTLIER and co["op"] == "CONV_2D" and "conv_1" in co["name"]
    assert co["share"] > 0.8 and co["crushed"] >= 4
    conv1 = next(r for r in s.layers or [] if r.index == co["index"])
    assert any(f"channel {OUTLIER} holds" in why for why in conv1.explained_by or [])
    assert jump_text(s)[0].startswith(f"outlier channel: channel {OUTLIER} of")
    assert found["clean"].channel_outlier is None
