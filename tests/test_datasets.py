"""Data set loaders: .npz, image folders, built-in digits; every bad input is one clear DataError."""
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import require_module

from edgebench.data.datasets import (
    Dataset,
    check_against_model,
    load_dataset,
    load_digits,
    load_image_folder,
    load_npz,
    validate_labels,
)
from edgebench.errors import DataError, UsageError

DIGITS_DIR = Path(__file__).resolve().parents[1] / "models" / "digits"


def _one_line(err: DataError) -> str:
    text = err.one_line()
    assert "\n" not in text and text
    return text


# ---------------------------------------------------------------- .npz

def test_npz_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.random((12, 4, 3)).astype(np.float32)
    y = np.arange(12) % 3
    path = tmp_path / "d.npz"
    np.savez(path, x=x, y=y, class_names=np.array(["a", "b", "c"]))
    ds = load_npz(path)
    assert ds.x.dtype == np.float32 and ds.y.dtype == np.int64
    assert np.array_equal(ds.x, x) and np.array_equal(ds.y, y)
    assert ds.class_names == ("a", "b", "c") and ds.num_classes == 3 and len(ds) == 12
    assert ds.sha256 == hashlib.sha256(x.tobytes()).hexdigest()
    d = ds.to_dict()
    json.dumps(d)
    assert d["count"] == 12 and d["shape"] == [4, 3] and d["preprocessing"]["scale"] is None


def test_npz_other_keys_and_declared_scaling(tmp_path):
    x = np.full((4, 2, 2, 1), 255, np.uint8)
    path = tmp_path / "u8.npz"
    np.savez(path, images=x, labels=np.array([0, 1, 0, 1]))
    ds = load_npz(path, x_key="images", y_key="labels", scale=1 / 255, mean=0.5, std=0.5)
    np.testing.assert_allclose(ds.x, 1.0)
    assert ds.preprocessing["stored_dtype"] == "uint8" and ds.preprocessing["std"] == [0.5]
    assert load_dataset(path, x_key="images", y_key="labels").x.max() == 255.0  # as stored: not guessed


def _npz(tmp_path, name="bad.npz", **arrays):
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("arrays, kwargs, pattern", [
    ({"x": np.zeros((4, 3))}, {}, r"no labels: no array 'y' \(arrays: x\)"),
    ({"x": np.zeros((4, 3)), "y": np.array([0.5, 1, 0, 1])}, {}, r"integer class indices"),
    ({"x": np.zeros((4, 3)), "y": np.array(["a", "b", "a", "b"])}, {}, r"integer class indices"),
    ({"x": np.zeros((4, 3)), "y": np.array([0, -1, 0, 1])}, {}, r"1 label\(s\) are negative"),
    ({"x": np.zeros((4, 3)), "y": np.array([0, 1, 2, 3])}, {"num_classes": 3}, r">= the 3 classes"),
    ({"x": np.zeros((4, 3)), "y": np.array([0, 1, 0])}, {}, r"3 labels for 4 inputs"),
    ({"x": np.zeros((4, 3)), "y": np.array([0, 1, 2, 3])}, {"num_classes": 10}, r"4 sample\(s\), fewer than its 10"),
    ({"x": np.zeros((4, 3)), "y": np.eye(4)}, {}, r"shape \(N,\)"),
    ({"x": np.array([[np.nan, 1.0], [0.0, 1.0]]), "y": np.array([0, 1])}, {}, r"non-finite"),
    ({"x": np.zeros(4), "y": np.array([0, 1, 0, 1])}, {}, r"batch \(N, \.\.\.\)"),
    ({"inputs": np.zeros((4, 3)), "y": np.array([0, 1, 0, 1])}, {}, r"no input array 'x'"),
])
def test_npz_bad_inputs_each_one_clear_line(tmp_path, arrays, kwargs, pattern):
    with pytest.raises(DataError) as err:
        load_npz(_npz(tmp_path, **arrays), **kwargs)
    assert re.search(pattern, _one_line(err.value)), err.value.one_line()


def test_npz_missing_and_corrupt_files(tmp_path):
    with pytest.raises(DataError, match="no data file"):
        load_npz(tmp_path / "nope.npz")
    bad = tmp_path / "corrupt.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(DataError, match="not a readable .npz"):
        load_npz(bad)


def test_validate_labels_accepts_integral_floats_and_column_vectors():
    assert validate_labels(np.array([0.0, 1.0, 2.0]), 3).dtype == np.int64
    assert validate_labels(np.array([[0], [1]]), 2).tolist() == [0, 1]
    with pytest.raises(DataError, match="no labels"):
        validate_labels(None, 3)
    with pytest.raises(DataError, match="integer"):
        validate_labels(np.array([True, False]), 2)


# ---------------------------------------------------------------- image folders

def _make_folder(root: Path, size=(10, 12), mode="L", per_class=3):
    from PIL import Image

    rng = np.random.default_rng(0)
    for cls in ("cat", "dog"):
        (root / cls).mkdir(parents=True)
        for i in range(per_class):
            shape = size if mode == "L" else size + (3,)
            Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8), mode).save(root / cls / f"{i}.png")
    return root


def test_image_folder_loads_with_declared_preprocessing(tmp_path):
    require_module("PIL")
    root = _make_folder(tmp_path / "imgs")
    ds = load_image_folder(root, size=(10, 12), scale=1 / 255)
    assert ds.x.shape == (6, 10, 12, 1) and ds.x.dtype == np.float32
    assert ds.y.tolist() == [0, 0, 0, 1, 1, 1] and ds.class_names == ("cat", "dog")
    assert 0.0 <= ds.x.min() and ds.x.max() <= 1.0
    assert ds.preprocessing["size"] == [10, 12] and ds.preprocessing["resize"] is None
    from PIL import Image
    raw = np.asarray(Image.open(root / "dog" / "2.png"), dtype=np.float32)
    np.testing.assert_allclose(ds.x[5, :, :, 0], raw / 255, rtol=1e-6)
    again = load_dataset(root, size=(10, 12), scale=1 / 255)
    assert again.sha256 == ds.sha256


def test_image_folder_resize_channels_and_normalization(tmp_path):
    require_module("PIL")
    root = _make_folder(tmp_path / "rgb", mode="RGB")
    ds = load_image_folder(root, resize=(8, 8), channels=3, scale=1 / 255,
                           mean=[0.5, 0.5, 0.5], std=[0.25, 0.25, 0.25], class_names=["dog", "cat"])
    assert ds.x.shape == (6, 8, 8, 3) and ds.class_names == ("dog", "cat")
    assert ds.y.tolist() == [0, 0, 0, 1, 1, 1]  # label 0 is "dog": the declared order
    from PIL import Image
    dog0 = np.asarray(Image.open(root / "dog" / "0.png").resize((8, 8), Image.BILINEAR), np.float32)
    np.testing.assert_allclose(ds.x[0], (dog0 / 255 - 0.5) / 0.25, rtol=1e-5, atol=1e-5)
    assert -2.0 <= ds.x.min() and ds.x.max() <= 2.0
    grey = load_image_folder(root, channels=1)
    assert grey.x.shape == (6, 10, 12, 1) and grey.preprocessing["mode"] == "L"


def test_image_folder_bad_inputs(tmp_path):
    require_module("PIL")
    from PIL import Image

    root = _make_folder(tmp_path / "imgs")
    with pytest.raises(DataError) as err:
        load_image_folder(root, size=(8, 8))
    assert "is 10x12, the declared size is 8x8" in _one_line(err.value) and "resize=(8, 8)" in err.value.hint

    Image.fromarray(np.zeros((5, 5), np.uint8), "L").save(root / "dog" / "small.png")
    with pytest.raises(DataError, match="dog/small.png is 5x5, the size of the first image is 10x12"):
        load_image_folder(root)
    (root / "dog" / "small.png").unlink()

    Image.fromarray(np.zeros((10, 12, 4), np.uint8), "RGBA").save(root / "cat" / "alpha.png")
    with pytest.raises(DataError, match="has mode RGBA"):
        load_image_folder(root)
    assert load_image_folder(root, channels=3).x.shape == (7, 10, 12, 3)
    (root / "cat" / "alpha.png").unlink()

    (root / "cat" / "notes.txt").write_text("hello")
    with pytest.raises(DataError, match="cat/notes.txt is not an image"):
        load_image_folder(root)
    (root / "cat" / "notes.txt").unlink()
    (root / "cat" / "broken.png").write_bytes(b"\x89PNG garbage")
    with pytest.raises(DataError, match="cannot decode cat/broken.png"):
        load_image_folder(root)
    (root / "cat" / "broken.png").unlink()
    (root / "cat" / ".DS_Store").write_bytes(b"x")  # hidden files are skipped
    assert len(load_image_folder(root)) == 6

    with pytest.raises(DataError, match="do not match the subfolders"):
        load_image_folder(root, class_names=["cat", "bird"])
    with pytest.raises(DataError, match="no class subfolders"):
        load_image_folder(tmp_path / "imgs" / "cat")
    with pytest.raises(UsageError):
        load_image_folder(root, channels=4)
    tiny = _make_folder(tmp_path / "tiny", per_class=1)
    (tiny / "dog" / "0.png").unlink()
    with pytest.raises(DataError, match=r"1 sample\(s\), fewer than its 2 classes"):
        load_image_folder(tiny)
    with pytest.raises(DataError, match="no images"):
        load_image_folder(_make_folder(tmp_path / "empty", per_class=0))


def test_image_folder_without_pillow(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    (tmp_path / "a").mkdir()
    with pytest.raises(DataError) as err:
        load_image_folder(tmp_path)
    assert "Pillow" in err.value.message and err.value.hint == "pip install pillow"


# ---------------------------------------------------------------- digits

def test_digits_matches_reference_build():
    require_module("sklearn")
    test = load_digits("test")
    train = load_digits("train")
    assert (len(train), len(test), len(load_digits("all"))) == (1257, 540, 1797)
    assert test.x.shape == (540, 8, 8, 1) and test.x.dtype == np.float32
    card = (DIGITS_DIR / "model_card.md").read_text()
    recorded = re.search(r"sha256 of the `x` array bytes `([0-9a-f]{64})`", card).group(1)
    assert test.sha256 == recorded
    with np.load(DIGITS_DIR / "digits_test.npz") as npz:
        assert np.array_equal(npz["y"], test.y) and npz["x"].tobytes() == test.x.tobytes()
    assert test.num_classes == 10 and 0.0 <= test.x.min() and test.x.max() == 1.0
    assert load_dataset("digits:test").sha256 == recorded
    with pytest.raises(UsageError, match="unknown digits split"):
        load_digits("validation")


# ---------------------------------------------------------------- against a model

def _ds(x_shape=(6, 8, 8, 1), labels=(0, 1, 2, 0, 1, 2), names=None):
    x = np.zeros(x_shape, np.float32)
    return Dataset(x=x, y=np.array(labels, np.int64), class_names=names, source="test")


def test_check_against_model():
    ds = _ds()
    for shape in [(1, 8, 8, 1), (8, 8, 1), (None, 8, 8, 1), (-1, 8, 8, 1), (6, 8, 8, 1), (1, -1, -1, 1)]:
        check_against_model(ds, shape, num_classes=3)
    with pytest.raises(DataError, match="shape 8x8x1, the model expects 1x32x32x3"):
        check_against_model(ds, (1, 32, 32, 3))
    with pytest.raises(DataError):
        check_against_model(_ds((6, 64)), (1, 8, 8, 1))
    with pytest.raises(DataError, match="2 label\\(s\\) are >= the model's 2 outputs"):
        check_against_model(ds, (1, 8, 8, 1), num_classes=2)
    with pytest.raises(DataError, match="fewer than the model's 10 classes"):
        check_against_model(ds, (1, 8, 8, 1), num_classes=10)
    with pytest.raises(DataError, match="4 classes, the model 3 outputs"):
        check_against_model(_ds(names=("a", "b", "c", "d")), (1, 8, 8, 1), num_classes=3)


def test_garbage_npz_is_a_data_error(tmp_path):
    import numpy as np
    import pytest

    from edgebench.data.datasets import load_dataset
    from edgebench.errors import DataError

    cases = {"text.npz": b"garbage\n", "zipsig.npz": b"PK\x03\x04not really a zip", "empty.npz": b""}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(DataError, match="npz file"):
            load_dataset(tmp_path / name)
    np.save(tmp_path / "single.npy", np.zeros((3, 2), np.float32))
    (tmp_path / "single.npz").write_bytes((tmp_path / "single.npy").read_bytes())
    with pytest.raises(DataError, match="single .npy array"):
        load_dataset(tmp_path / "single.npz")
