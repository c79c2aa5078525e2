"""Export small real architectures with the real exporters, for benchmarks/onnx_exports.py (issue #32's table).

The exporters are not edgebench dependencies: run this script with the Python of a separate
environment that has them, one exporter per run (nothing here imports edgebench):

    python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch onnx onnxscript
    /tmp/torchvenv/bin/python benchmarks/export_onnx.py torch            # torch.onnx.export, both exporters

    python3 -m venv /tmp/tf2onnxvenv           # + tensorflow (the TF of .venv, by a .pth file, or pip)
    /tmp/tf2onnxvenv/bin/pip install --no-deps tf2onnx
    /tmp/tf2onnxvenv/bin/python benchmarks/export_onnx.py tf2onnx

then ``.venv/bin/python benchmarks/onnx_exports.py --file benchmarks/data/exports/*.onnx --qemu``.

=====================  =====================================================================  ==================
file                   architecture (seeded random weights: nothing is trained here)          exporter
=====================  =====================================================================  ==================
pt_mnist_net_*         pytorch/examples mnist/main.py ``Net`` (conv 3x3, relu, conv 3x3, relu,  torch.onnx.export
                       max-pool 2, dropout, flatten, linear, relu, dropout, linear,
                       log_softmax), widths /4 and fc1 128 -> 16 so the file stays < 200 kB
pt_kws_dscnn_*         ARM-software/ML-KWS-for-MCU DS-CNN-S (conv 10x4 stride 2, 64 ch; 4x       torch.onnx.export
                       depthwise 3x3 + BN + ReLU, pointwise 64 + BN + ReLU; avg-pool; fc 12),
                       as a PyTorch port writes it (NCHW 1x49x10 MFCC)
keras_mnist_convnet    keras.io examples/vision/mnist_convnet (as published: Conv2D 32,         tf2onnx
                       MaxPool, Conv2D 64, MaxPool, Flatten, Dropout 0.5, Dense 10 softmax)
keras_kws_dscnn        the same DS-CNN-S in Keras, NHWC 49x10x1 as ARM's TensorFlow code         tf2onnx
=====================  =====================================================================  ==================

``*`` is ``dynamo`` (``torch.onnx.export(..., dynamo=True)``, the default exporter since
PyTorch 2.9) and ``torchscript`` (``dynamo=False``, the older TorchScript exporter). tf2onnx
1.17's ``from_keras`` fails on Keras 3 models (``KeyError: 'keras_tensor_N'``), so the Keras
model is exported with ``tf2onnx.convert.from_function`` on ``tf.function(model)``, which is
what ``python -m tf2onnx.convert --saved-model`` does with an exported Keras 3 model.
Each file carries its exporter's ``producer_name``/``producer_version``. Re-run, the PyTorch
files come out byte-identical; the tf2onnx ones differ only in generated node names (same
operators, same weights).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "exports"
SEED = 0
MAX_FILE_BYTES = 200_000


def torch_models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):               # pytorch/examples mnist/main.py, widths /4, fc1 16
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, 1)
            self.conv2 = nn.Conv2d(8, 16, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(16 * 12 * 12, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            return F.log_softmax(self.fc2(x), dim=1)

    class DSCNN(nn.Module):             # ARM ML-KWS-for-MCU DS-CNN-S: 64 channels, 4 DS blocks
        def __init__(self, ch: int = 64, blocks: int = 4, labels: int = 12):
            super().__init__()
            self.conv = nn.Conv2d(1, ch, (10, 4), stride=2, padding=(5, 1), bias=False)
            self.bn = nn.BatchNorm2d(ch)
            layers = []
            for _ in range(blocks):
                layers += [nn.Conv2d(ch, ch, 3, padding=1, groups=ch, bias=False), nn.BatchNorm2d(ch), nn.ReLU(),
                           nn.Conv2d(ch, ch, 1, bias=False), nn.BatchNorm2d(ch), nn.ReLU()]
            self.ds = nn.Sequential(*layers)
            self.pool = nn.AvgPool2d((25, 5))
            self.fc = nn.Linear(ch, labels)

        def forward(self, x):
            x = self.ds(F.relu(self.bn(self.conv(x))))
            return self.fc(torch.flatten(self.pool(x), 1))

    torch.manual_seed(SEED)
    nets = {"pt_mnist_net": (Net(), (1, 1, 28, 28)), "pt_kws_dscnn": (DSCNN(), (1, 1, 49, 10))}
    for net, _ in nets.values():        # BN statistics not the identity, as after training
        for mod in net.modules():
            if isinstance(mod, nn.BatchNorm2d):
                with torch.no_grad():
                    mod.running_mean.uniform_(-0.1, 0.1)
                    mod.running_var.uniform_(0.5, 1.5)
                    mod.weight.uniform_(0.5, 1.5)
                    mod.bias.uniform_(-0.1, 0.1)
        net.eval()
    return nets


def export_torch(out: Path) -> list:
    import torch

    written = []
    for name, (net, shape) in torch_models().items():
        x = torch.zeros(shape)
        for tag, dynamo in (("dynamo", True), ("torchscript", False)):
            path = out / f"{name}_{tag}.onnx"
            kw = {"external_data": False} if dynamo else {"opset_version": 17}
            torch.onnx.export(net, (x,), str(path), dynamo=dynamo, input_names=["input"], output_names=["output"],
                              **kw)
            written.append(path)
    return written


def keras_models():
    import keras
    from keras import layers

    keras.utils.set_random_seed(SEED)
    mnist = keras.Sequential([            # keras.io examples/vision/mnist_convnet, as published
        keras.Input(shape=(28, 28, 1)),
        layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(10, activation="softmax"),
    ])
    inp = keras.Input(shape=(49, 10, 1))
    x = layers.Conv2D(64, (10, 4), strides=(2, 2), padding="same", use_bias=False)(inp)
    x = layers.ReLU()(layers.BatchNormalization()(x))
    for _ in range(4):
        x = layers.ReLU()(layers.BatchNormalization()(layers.DepthwiseConv2D(3, padding="same", use_bias=False)(x)))
        x = layers.ReLU()(layers.BatchNormalization()(layers.Conv2D(64, 1, use_bias=False)(x)))
    x = layers.Flatten()(layers.AveragePooling2D(pool_size=(25, 5))(x))
    kws = keras.Model(inp, layers.Dense(12, activation="softmax")(x))
    rng = __import__("numpy").random.default_rng(SEED)
    for layer in kws.layers:            # BN statistics not the identity, as after training
        if isinstance(layer, layers.BatchNormalization):
            c = layer.gamma.shape[0]
            layer.set_weights([rng.uniform(0.5, 1.5, c), rng.uniform(-0.1, 0.1, c), rng.uniform(-0.1, 0.1, c),
                               rng.uniform(0.5, 1.5, c)])
    return {"keras_mnist_convnet": (mnist, (28, 28, 1)), "keras_kws_dscnn": (kws, (49, 10, 1))}


def export_tf2onnx(out: Path) -> list:
    import tensorflow as tf
    import tf2onnx

    written = []
    for name, (model, shape) in keras_models().items():
        path = out / f"{name}.onnx"
        spec = [tf.TensorSpec((None, *shape), tf.float32, name="input")]
        fn = tf.function(lambda x, m=model: m(x, training=False))
        tf2onnx.convert.from_function(fn, input_signature=spec, opset=13, output_path=str(path))
        written.append(path)
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("exporter", choices=("torch", "tf2onnx"))
    ap.add_argument("--out", type=Path, default=OUT, help=f"directory for the .onnx files (default {OUT})")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        written = export_torch(args.out) if args.exporter == "torch" else export_tf2onnx(args.out)
    except ImportError as exc:
        print(f"error: {args.exporter} exporter not importable in {sys.executable}: {exc}", file=sys.stderr)
        return 1
    for p in written:
        size = p.stat().st_size
        big = f"  (over {MAX_FILE_BYTES:,} bytes: do not commit)" if size > MAX_FILE_BYTES else ""
        print(f"{p}  {size:,} bytes{big}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
