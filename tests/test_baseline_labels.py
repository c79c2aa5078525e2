"""accuracy: the baseline checked against the candidate's provenance sidecar (--baseline auto), and the
classes of an image folder numbered by a labels file or the model's names, the mapping stored and said."""
import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from edgebench.bench.accuracy import AccuracyOptions, resolve_baseline, run_accuracy
from edgebench.bench.accuracy_record import class_order_warnings
from edgebench.boards.registry import get_profile
from edgebench.data.labels import model_labels, read_labels
from edgebench.errors import DataError, ModelError
from edgebench.provenance import baseline_provenance

DIGITS = Path(__file__).resolve().parents[1] / "models" / "digits"
INT8, FP32 = DIGITS / "digits_int8.tflite", DIGITS / "digits_fp32.tflite"
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _sha(p) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def _copy(tmp_path, sidecar_edit=None, name="cand_int8.tflite") -> Path:
    """digits_int8 with its sidecar, under another name, the sidecar edited by ``sidecar_edit``."""
    m = tmp_path / name
    shutil.copy(INT8, m)
    sc = json.loads((DIGITS / "digits_int8.tflite.json").read_text())
    if sidecar_edit:
        sidecar_edit(sc)
    (tmp_path / (name + ".json")).write_text(json.dumps(sc))
    return m


# ---------------------------------------------------------------- provenance

def test_the_bundled_int8_sidecar_names_its_fp32_baseline():
    assert resolve_baseline(INT8, "auto") == FP32
    assert baseline_provenance(INT8, FP32, _sha(FP32))["status"] == "matches"


def test_a_baseline_other_than_the_sidecars_differs_and_names_both(tmp_path):
    other = tmp_path / "other_fp32.tflite"
    other.write_bytes(FP32.read_bytes())       # a different file: a changed byte past the flatbuffer
    with open(other, "ab") as f:
        f.write(b"\0" * 16)
    prov = baseline_provenance(INT8, other, _sha(other))
    assert prov["status"] == "differs" and prov["expected_sha256"] == _sha(FP32)
    assert prov["baseline_sha256"] == _sha(other) and prov["expected_file"].endswith("digits_fp32.tflite")


def test_no_sidecar_is_unchecked_and_a_common_source_is_accepted(tmp_path):
    bare = tmp_path / "bare.tflite"
    shutil.copy(INT8, bare)
    assert baseline_provenance(bare, FP32, _sha(FP32))["status"] == "unchecked"
    src = {"path": "m.keras", "sha256": "ab" * 32}
    cand = _copy(tmp_path, lambda sc: sc.update(baseline={"file": "x.tflite", "sha256": "cd" * 32}, derived_from=src))
    base = _copy(tmp_path, lambda sc: sc.update(derived_from=src), name="base_fp32.tflite")
    assert baseline_provenance(cand, base, _sha(base))["status"] == "same-source"
    other = _copy(tmp_path, lambda sc: sc.update(derived_from={"sha256": "ef" * 32}), name="b2_fp32.tflite")
    assert baseline_provenance(cand, other, _sha(other))["status"] == "differs"


@pytest.mark.parametrize("edit, words", [
    (None, "no such file"),
    (lambda sc: sc.pop("baseline"), "names no baseline file"),
    (lambda sc: sc.update(baseline={"file": "gone.tflite", "sha256": "ab" * 32}), "does not exist"),
    (lambda sc: sc.update(baseline={"file": "fp32.tflite", "sha256": "ab" * 32}), "is not the file"),
])
def test_baseline_auto_refuses_what_it_cannot_check(tmp_path, edit, words):
    shutil.copy(FP32, tmp_path / "fp32.tflite")
    model = _copy(tmp_path, edit)
    if edit is None:
        (tmp_path / "cand_int8.tflite.json").unlink()
    with pytest.raises(ModelError, match=words):
        resolve_baseline(model, "auto")


# ---------------------------------------------------------------- labels

def test_labels_files_and_labels_packed_in_the_model(tmp_path):
    f = tmp_path / "labels.txt"
    f.write_text("# classes\ncat\n\ndog\n")
    assert read_labels(f) == ("cat", "dog")
    f.write_text("cat\ncat\n")
    with pytest.raises(DataError, match="'cat' on lines 1 and 2"):
        read_labels(f)
    packed = tmp_path / "m.tflite"                   # TFLite metadata: a zip of associated files after the model
    packed.write_bytes(INT8.read_bytes())
    with zipfile.ZipFile(packed, "a") as z:
        z.writestr("labels.txt", "\n".join(WORDS) + "\n")
    assert model_labels(packed) == (WORDS, "labels.txt packed in m.tflite (TFLite metadata)")
    assert model_labels(INT8) is None
    assert model_labels(INT8, {"class_names": ["a", "b"]})[0] == ("a", "b")


def test_a_labels_file_that_reorders_the_folders_is_said():
    order = {"by": "labels file l.txt", "map": {"b": 0, "a": 1}, "sorted": ["a", "b"]}
    (w,) = class_order_warnings(order)
    assert w.code == "class-order" and "a 0→1" in w.message and "b 1→0" in w.message
    assert class_order_warnings({"by": "sorted folder names", "map": {"a": 0, "b": 1}, "sorted": ["a", "b"]}) == []


@pytest.fixture(scope="module")
def word_folder(tmp_path_factory):
    """200 digits test images in folders named by the digit's word: sorted names are not the model's order."""
    from PIL import Image

    root = tmp_path_factory.mktemp("words")
    d = np.load(DIGITS / "digits_test.npz")
    x, y = d["x"], d["y"]
    for c, word in enumerate(WORDS):
        (root / word).mkdir()
        for i in np.flatnonzero(y == c)[:20]:
            Image.fromarray(np.round(x[i, :, :, 0] * 240).astype(np.uint8), "L").save(root / word / f"{i:04d}.png")
    labels = root.parent / "labels.txt"
    labels.write_text("\n".join(WORDS) + "\n")
    return root, labels


def _acc(folder, tmp_path, model=INT8, labels=None):
    opts = AccuracyOptions(kernels="reference", labels=labels and str(labels), calib_fraction=0.5,
                           data_options={"scale": 1 / 240})
    result, _ = run_accuracy(model, FP32, str(folder), get_profile("host"), opts, runs_root=tmp_path / "runs")
    return result


@pytest.mark.slow
def test_image_folder_classes_follow_the_labels_file_and_the_mapping_is_stored(word_folder, tmp_path):
    folder, labels = word_folder
    wrong = _acc(folder, tmp_path)                   # sorted folder names: eight=0, five=1, ...
    right = _acc(folder, tmp_path, labels=labels)
    top1 = lambda r: r.extra.accuracy.accuracy.candidate.top1.accuracy  # noqa: E731
    assert top1(wrong) < 0.3 and top1(right) > 0.9
    order = right.scenario.inputs.class_order.to_dict()
    assert order["map"] == {w: i for i, w in enumerate(WORDS)} and order["by"] == f"labels file {labels}"
    assert wrong.scenario.inputs.class_order.by == "sorted folder names"
    assert [w.code for w in right.warnings].count("class-order") == 1
    assert "class-order" not in [w.code for w in wrong.warnings]
    # the model's own names (its sidecar here) number the folders without --labels
    named = _copy(tmp_path, lambda sc: sc.update(class_names=list(WORDS)))
    by_model = _acc(folder, tmp_path, model=named)
    assert top1(by_model) > 0.9 and (by_model.scenario.inputs.class_order.by or "").startswith("the model's sidecar")
    prov = by_model.extra.accuracy.baseline.provenance.to_dict()
    assert prov["status"] == "matches"


@pytest.mark.slow
def test_a_baseline_that_is_not_the_sidecars_is_a_warning_naming_both(word_folder, tmp_path):
    folder, labels = word_folder
    named = _copy(tmp_path, lambda sc: sc.update(baseline={"file": "digits_fp32.tflite", "sha256": "ab" * 32}))
    result = _acc(folder, tmp_path, model=named, labels=labels)
    (w,) = [w for w in result.warnings if w.code == "baseline-provenance"]
    assert f"digits_fp32.tflite (sha256 {_sha(FP32)[:12]}" in (w.message or "") and "abababababab" in (w.message or "")
    assert result.extra.accuracy.baseline.provenance.status == "differs"
