"""Edge-case perturbations: determinism, ranges, severities, validation."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter

from edgebench.data.perturb import FAMILIES, SEVERITIES, families_for, family_group, perturb
from edgebench.errors import DataError, UsageError

IMAGE_FAMILIES = tuple(FAMILIES["image"])
SIGNAL_FAMILIES = tuple(FAMILIES["signal"])
RANDOM_FAMILIES = ("gaussian_noise", "occlusion", "rotation", "noise", "gain", "time_shift")


@pytest.fixture(scope="module")
def images():
    """Smooth random images, 12 x 16 x 16 x 3, in [0, 1] (structure for blur/rotation to act on)."""
    rng = np.random.default_rng(0)
    x = gaussian_filter(rng.random((12, 16, 16, 3)), sigma=(0, 2, 2, 0))
    x = (x - x.min()) / (x.max() - x.min())
    return x.astype(np.float32)


@pytest.fixture(scope="module")
def signals():
    """Twelve 1-D signals (N x 256 x 1) in [-1, 1]: a broad pulse near the middle of each.

    Not periodic (a periodic signal shifted by its period is unchanged, which would
    make the shift's MSE non-monotone for reasons of the test signal, not the shift).
    """
    t = np.arange(256, dtype=np.float64)
    x = np.stack([(0.8 if i % 2 else -0.6) * np.exp(-0.5 * ((t - 120 - 4 * (i % 4)) / (30 + 5 * (i % 3))) ** 2)
                  for i in range(12)])[..., None]
    return x.astype(np.float32)


def _data(family, images, signals):
    if family in IMAGE_FAMILIES:
        return images, (0.0, 1.0)
    return signals, (-1.0, 1.0)


def test_family_selection():
    assert family_group((1, 32, 32, 3)) == "image"
    assert family_group((1, 8, 8, 1)) == "image"
    assert family_group((None, 8, 8, 1)) == "image"
    assert family_group((1, 7, 8, 1)) == "signal"
    assert family_group((1, 32, 32, 4)) == "signal"
    assert family_group((1, 490)) == "signal"
    assert families_for((1, 96, 96, 1)) == IMAGE_FAMILIES
    assert families_for((1, 16000, 1)) == SIGNAL_FAMILIES
    assert set(IMAGE_FAMILIES) == {"low_light", "contrast", "gaussian_noise", "blur", "occlusion", "rotation"}
    assert set(SIGNAL_FAMILIES) == {"noise", "gain", "time_shift"}


@pytest.mark.parametrize("family", IMAGE_FAMILIES + SIGNAL_FAMILIES)
def test_deterministic_clipped_and_shaped(family, images, signals):
    x, value_range = _data(family, images, signals)
    a = perturb(x, family, 3, seed=7, value_range=value_range)
    b = perturb(x, family, 3, seed=7, value_range=value_range)
    assert a.shape == x.shape and a.dtype == x.dtype
    assert a.tobytes() == b.tobytes()
    assert a.min() >= value_range[0] and a.max() <= value_range[1]
    assert not np.array_equal(a, x)
    assert np.array_equal(x, _data(family, images, signals)[0])  # input untouched


@pytest.mark.parametrize("family", RANDOM_FAMILIES)
def test_random_families_differ_across_seeds(family, images, signals):
    x, value_range = _data(family, images, signals)
    a = perturb(x, family, 3, seed=1, value_range=value_range)
    b = perturb(x, family, 3, seed=2, value_range=value_range)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("family", ("low_light", "contrast", "blur"))
def test_deterministic_families_ignore_seed(family, images):
    assert np.array_equal(perturb(images, family, 2, seed=1), perturb(images, family, 2, seed=99))


@pytest.mark.parametrize("family", IMAGE_FAMILIES + SIGNAL_FAMILIES)
def test_distortion_grows_with_severity(family, images, signals):
    x, value_range = _data(family, images, signals)
    mse = [float(np.mean((perturb(x, family, s, seed=5, value_range=value_range) - x) ** 2)) for s in SEVERITIES]
    assert all(a < b for a, b in zip(mse, mse[1:])), mse


def test_output_clipped_to_declared_range(images):
    noisy = perturb(images, "gaussian_noise", 5, seed=0)
    assert noisy.min() == 0.0 and noisy.max() == 1.0  # severity 5 noise certainly saturates
    loud = perturb(np.full((4, 10), 0.9, np.float32), "gain", 5, seed=0, value_range=(-1.0, 1.0))
    assert set(np.unique(loud)) <= {np.float32(0.9 / 4), np.float32(1.0)}


def test_parameters_behave_as_documented(images, signals):
    dark = perturb(images, "low_light", 1, seed=0)
    np.testing.assert_allclose(dark, images * 0.6, rtol=1e-6)
    occluded = perturb(images, "occlusion", 5, seed=0)  # side round(0.5 * 16) = 8 -> 64 px x 3 channels
    assert all(int(np.sum(occluded[i] == 0.0)) >= 8 * 8 * 3 for i in range(len(images)))
    shifted = perturb(signals, "time_shift", 2, seed=0, value_range=(-1, 1))  # round(0.1 * 256) = 26 samples
    for i in range(len(signals)):
        head, tail = shifted[i, :26, 0], shifted[i, -26:, 0]
        assert np.all(head == 0) or np.all(tail == 0)  # vacated positions are zero, not wrapped
        right = np.array_equal(shifted[i, 26:], signals[i, :-26])
        left = np.array_equal(shifted[i, :-26], signals[i, 26:])
        assert right or left


@pytest.mark.parametrize("severity", [0, 6, -1, 2.5, True, "3"])
def test_bad_severity(severity, images):
    with pytest.raises(UsageError, match="1, 2, 3, 4, 5"):
        perturb(images, "blur", severity, seed=0)


def test_bad_family_names_choices(images):
    with pytest.raises(UsageError) as err:
        perturb(images, "fog", 1, seed=0)
    assert "low_light" in err.value.hint and "time_shift" in err.value.hint


def test_bad_inputs(images, signals):
    with pytest.raises(DataError, match="N x H x W x C"):
        perturb(signals, "rotation", 1, seed=0)
    with pytest.raises(UsageError):
        perturb(images, "blur", 1, seed=0, value_range=(1.0, 0.0))
    with pytest.raises(UsageError):
        perturb(images, "blur", 1, seed=-3)
    with pytest.raises(DataError):
        perturb(np.zeros(5), "noise", 1, seed=0)


def test_integer_input_gives_float32(signals):
    x = np.arange(40, dtype=np.int16).reshape(4, 10)
    out = perturb(x, "noise", 1, seed=0, value_range=(0, 40))
    assert out.dtype == np.float32
