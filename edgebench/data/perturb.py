"""Edge-case perturbations of model inputs, deterministic under a seed (level 2).

:func:`perturb` applies one family at a severity 1-5 to a float batch ``x``
(N, ...) whose values live in a declared range ``[lo, hi]`` (``value_range``)
and clips the result to that range. Randomness (noise, patch positions, rotation
and shift directions) comes only from ``numpy.random.default_rng(seed)``, drawn
per sample in batch order, so the same (x, family, severity, seed) gives the same
bytes, and the directions and positions do not change with severity.
``R = hi - lo``.

Image families (N x H x W x C, see :func:`families_for`):

==============  ==========================================  =====================================
family          operation                                   severity 1 / 2 / 3 / 4 / 5
==============  ==========================================  =====================================
low_light       ``lo + (x - lo) * f`` (darker)               f = 0.6 / 0.45 / 0.3 / 0.2 / 0.1
contrast        ``m + (x - m) * c``, m = per-image mean      c = 0.4 / 0.3 / 0.2 / 0.1 / 0.05
gaussian_noise  ``x + N(0, (s R)^2)`` per element            s = 0.08 / 0.12 / 0.18 / 0.26 / 0.38
blur            Gaussian filter over H and W (not N, C),     sigma = 0.5 / 1 / 1.5 / 2 / 3 pixels
                ``scipy.ndimage.gaussian_filter``, nearest
occlusion       a square of side ``round(a min(H, W))``      a = 0.1 / 0.2 / 0.3 / 0.4 / 0.5
                (at least 1 px) set to ``lo`` in all
                channels; position uniform per sample
rotation        ``scipy.ndimage.rotate`` over (H, W),        angle = 5 / 10 / 15 / 25 / 35 degrees
                reshape=False, bilinear, corners = ``lo``;
                direction (+/-) random per sample
==============  ==========================================  =====================================

The noise levels and contrast factors are those of ImageNet-C (Hendrycks &
Dietterich 2019) on a [0, 1] scale; blur and occlusion sizes are chosen for the
small inputs of edge models (8 to 96 pixels), not 224-pixel photographs.

Signal / feature families (any other shape; axis 1 is the first non-batch axis):

==============  ==========================================  =====================================
noise           ``x + N(0, (s R)^2)`` per element            s = 0.01 / 0.02 / 0.05 / 0.1 / 0.2
gain            ``x * g`` or ``x / g``, direction random     g = 1.25 / 1.5 / 2 / 3 / 4
                per sample (amplified values clip at the
                range: saturation)
time_shift      shift along axis 1 by ``round(t L)``         t = 0.05 / 0.1 / 0.2 / 0.3 / 0.4
                samples (L its length, at least 1),
                direction random per sample, vacated
                positions zero-filled (not wrapped)
==============  ==========================================  =====================================
"""
from __future__ import annotations

import numbers
from typing import Callable

import numpy as np

from edgebench.errors import DataError, UsageError

SEVERITIES = (1, 2, 3, 4, 5)
IMAGE_MIN_SIDE = 8
IMAGE_CHANNELS = (1, 3)

LOW_LIGHT_FACTOR = (0.6, 0.45, 0.3, 0.2, 0.1)
CONTRAST_FACTOR = (0.4, 0.3, 0.2, 0.1, 0.05)
IMAGE_NOISE_STD = (0.08, 0.12, 0.18, 0.26, 0.38)
BLUR_SIGMA_PX = (0.5, 1.0, 1.5, 2.0, 3.0)
OCCLUSION_SIDE = (0.1, 0.2, 0.3, 0.4, 0.5)
ROTATION_DEG = (5.0, 10.0, 15.0, 25.0, 35.0)
SIGNAL_NOISE_STD = (0.01, 0.02, 0.05, 0.1, 0.2)
GAIN = (1.25, 1.5, 2.0, 3.0, 4.0)
TIME_SHIFT = (0.05, 0.1, 0.2, 0.3, 0.4)

# Every family: f(x float64 (N, ...), level index 0..4, rng, lo, hi) -> float64 array.
Family = Callable[[np.ndarray, int, np.random.Generator, float, float], np.ndarray]


# ---------------------------------------------------------------- image families

def low_light(x, level, rng, lo, hi):
    return lo + (x - lo) * LOW_LIGHT_FACTOR[level]


def contrast(x, level, rng, lo, hi):
    mean = x.mean(axis=(1, 2, 3), keepdims=True)
    return mean + (x - mean) * CONTRAST_FACTOR[level]


def gaussian_noise(x, level, rng, lo, hi):
    return x + rng.normal(0.0, IMAGE_NOISE_STD[level] * (hi - lo), size=x.shape)


def blur(x, level, rng, lo, hi):
    # lazy: scipy, numpy (import scipy 481 ms, numpy 460 ms measured), loaded only where used
    from scipy.ndimage import gaussian_filter

    sigma = BLUR_SIGMA_PX[level]
    return gaussian_filter(x, sigma=(0.0, sigma, sigma, 0.0), mode="nearest")


def occlusion(x, level, rng, lo, hi):
    n, h, w = x.shape[:3]
    side = max(1, int(round(OCCLUSION_SIDE[level] * min(h, w))))
    corner = rng.random((n, 2))  # positions as fractions: the same under every severity
    out = x.copy()
    for i in range(n):
        top = int(corner[i, 0] * (h - side + 1))
        left = int(corner[i, 1] * (w - side + 1))
        out[i, top:top + side, left:left + side, :] = lo
    return out


def rotation(x, level, rng, lo, hi):
    # lazy: scipy, numpy (import scipy 481 ms, numpy 460 ms measured), loaded only where used
    from scipy.ndimage import rotate

    signs = np.where(rng.random(x.shape[0]) < 0.5, -1.0, 1.0)
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = rotate(x[i], signs[i] * ROTATION_DEG[level], axes=(1, 0), reshape=False,
                        order=1, mode="constant", cval=lo)
    return out


# ---------------------------------------------------------------- signal / feature families

def noise(x, level, rng, lo, hi):
    return x + rng.normal(0.0, SIGNAL_NOISE_STD[level] * (hi - lo), size=x.shape)


def gain(x, level, rng, lo, hi):
    up = rng.random(x.shape[0]) < 0.5
    factor = np.where(up, GAIN[level], 1.0 / GAIN[level]).reshape((-1,) + (1,) * (x.ndim - 1))
    return x * factor


def time_shift(x, level, rng, lo, hi):
    if x.ndim < 2:
        raise DataError(f"time_shift needs (N, L, ...) inputs, got shape {x.shape}")
    length = x.shape[1]
    shift = max(1, int(round(TIME_SHIFT[level] * length)))
    signs = np.where(rng.random(x.shape[0]) < 0.5, -1, 1)
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        if shift >= length:
            continue
        if signs[i] > 0:
            out[i, shift:] = x[i, :length - shift]
        else:
            out[i, :length - shift] = x[i, shift:]
    return out


FAMILIES: dict[str, dict[str, Family]] = {
    "image": {
        "low_light": low_light,
        "contrast": contrast,
        "gaussian_noise": gaussian_noise,
        "blur": blur,
        "occlusion": occlusion,
        "rotation": rotation,
    },
    "signal": {
        "noise": noise,
        "gain": gain,
        "time_shift": time_shift,
    },
}


def _all_families() -> dict[str, tuple[str, Family]]:
    return {name: (group, fn) for group, table in FAMILIES.items() for name, fn in table.items()}


def family_group(input_shape) -> str:
    """``"image"`` for a rank-4 shape (N, H, W, C) with C in (1, 3) and H, W >= 8, else ``"signal"``.

    ``input_shape`` includes the batch axis (e.g. a model's ``(1, 32, 32, 3)``).
    """
    shape = tuple(input_shape)
    if len(shape) == 4:
        _, h, w, c = shape
        if c in IMAGE_CHANNELS and h is not None and w is not None and h >= IMAGE_MIN_SIDE and w >= IMAGE_MIN_SIDE:
            return "image"
    return "signal"


def families_for(input_shape) -> tuple[str, ...]:
    """Names of the perturbation families that suit inputs of this shape (see :func:`family_group`)."""
    return tuple(FAMILIES[family_group(input_shape)])


def _check_severity(severity) -> int:
    if isinstance(severity, bool) or not isinstance(severity, numbers.Integral) or int(severity) not in SEVERITIES:
        raise UsageError(f"severity must be one of {', '.join(map(str, SEVERITIES))}, got {severity!r}")
    return int(severity)


def _check_range(value_range) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value_range)
    except (TypeError, ValueError):
        raise UsageError(f"value_range must be (low, high), got {value_range!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise UsageError(f"value_range must be finite with low < high, got {value_range!r}")
    return lo, hi


def perturb(x, family: str, severity: int, seed: int, value_range=(0.0, 1.0)) -> np.ndarray:
    """``x`` (N, ...) perturbed by ``family`` at ``severity`` (1-5), clipped to ``value_range``.

    Deterministic under ``seed``; returns a new array of ``x``'s float dtype
    (float32 for integer input). Raises UsageError for an unknown family, a
    severity outside 1-5 or a bad range or seed, DataError when ``x`` does not
    suit the family (image families need N x H x W x C).
    """
    known = _all_families()
    if family not in known:
        groups = "; ".join(f"{g}: {', '.join(t)}" for g, t in FAMILIES.items())
        raise UsageError(f"unknown perturbation family {family!r}", hint=f"choose one of {groups}")
    group, fn = known[family]
    level = _check_severity(severity) - 1
    lo, hi = _check_range(value_range)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise UsageError(f"seed must be an integer >= 0, got {seed!r}")
    arr = np.asarray(x)
    if arr.dtype.kind not in "fiu":
        raise DataError(f"inputs must be numeric, got dtype {arr.dtype}")
    if arr.ndim < 2 or arr.shape[0] < 1:
        raise DataError(f"inputs must be a batch (N, ...) with N >= 1, got shape {arr.shape}")
    if group == "image" and family_group(arr.shape) != "image":
        raise DataError(
            f"image family {family!r} needs N x H x W x C inputs with C in (1, 3) and H, W >= {IMAGE_MIN_SIDE}, "
            f"got shape {arr.shape}", hint=f"use a signal family: {', '.join(FAMILIES['signal'])}")
    out_dtype = arr.dtype if arr.dtype.kind == "f" else np.dtype(np.float32)
    rng = np.random.default_rng(int(seed))
    y = fn(arr.astype(np.float64), level, rng, lo, hi)
    return np.clip(y, lo, hi).astype(out_dtype)
