"""TRANSPOSE, SLICE, STRIDED_SLICE as one strided gather, and SPLIT / SPLIT_V as one SLICE
per output (firmware: core/ops/eb_op_gather.c; level 2).

``out[i] = in[p0 + sum(i_k * p(k+1))]`` over the right-aligned 4-D output: the element
strides (may be negative) computed here. SPLIT / SPLIT_V are the converter's only operators
that become several layers.
"""
from __future__ import annotations

from math import prod

from edgebench.mcu import blob_quant as q
from edgebench.mcu.ops.common import TYPE_INT8, Layer, UnsupportedError, arg, const_ints

OPTIONS = {"TRANSPOSE": "TransposeOptionsT", "SLICE": "SliceOptionsT", "STRIDED_SLICE": "StridedSliceOptionsT",
           "SPLIT": "SplitOptionsT", "SPLIT_V": "SplitVOptionsT"}
NEEDS_OPTIONS: frozenset = frozenset()
#: TFLite operators written as SLICE layers (one per output)
ALIASES = {"SPLIT": "SLICE", "SPLIT_V": "SLICE"}


def lower(op: str, opts, ins: list, outs: list):
    """One Layer, or a list of them for SPLIT / SPLIT_V."""
    if op in ALIASES:
        return lower_split(op, opts, ins, outs)
    x, y = ins[0], outs[0]
    if op == "TRANSPOSE":
        return lower_transpose(x, arg(ins, 1), y)
    if op == "SLICE":
        return lower_slice(x, arg(ins, 1), arg(ins, 2), y)
    return lower_strided_slice(opts, x, arg(ins, 1), arg(ins, 2), arg(ins, 3), y)

def _gather_layer(op: str, x, y, base: int, strides: list) -> Layer:
    """out[i0, i1, i2, i3] = in[base + sum(i_k * strides[k])] over the right-aligned 4-D output
    (the reference copies the bytes whatever the quantization says; so does the engine)."""
    if x.type != y.type or y.type != TYPE_INT8:
        raise UnsupportedError(f"{op} of a non-int8 tensor")
    strides = [0] * (4 - len(strides)) + list(strides)
    return Layer(op, [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX), [int(base), *map(int, strides)])


def _in_strides(shape) -> list:
    st: list[int] = []
    acc = 1
    for d in reversed(shape):
        st.insert(0, acc)
        acc *= d
    return st


def lower_transpose(x, perm_t, y) -> Layer:
    perm = [int(v) for v in const_ints(perm_t, "the permutation")]
    r = len(x.shape)
    if r > 4 or sorted(perm) != list(range(r)):
        raise UnsupportedError(f"permutation {perm} of a rank-{r} input")
    if tuple(x.shape[p] for p in perm) != tuple(y.shape):
        raise UnsupportedError(f"permutation {perm} does not turn {x.shape} into {y.shape}")
    st = _in_strides(x.shape)
    return _gather_layer("TRANSPOSE", x, y, 0, [st[p] for p in perm])


def lower_slice(x, begin_t, size_t, y) -> Layer:
    r = len(x.shape)
    begin = [int(v) for v in const_ints(begin_t, "the begin")]
    size = [int(v) for v in const_ints(size_t, "the size")]
    if r > 4 or len(begin) != r or len(size) != r:
        raise UnsupportedError(f"begin {begin} / size {size} of a rank-{r} input")
    size = [d - b if s == -1 else s for d, b, s in zip(x.shape, begin, size)]
    if any(b < 0 or s < 0 or b + s > d for d, b, s in zip(x.shape, begin, size)) or tuple(size) != tuple(y.shape):
        raise UnsupportedError(f"begin {begin} / size {size} of {x.shape} do not give {y.shape}")
    st = _in_strides(x.shape)
    return _gather_layer("SLICE", x, y, sum(b * s for b, s in zip(begin, st)), st)


def lower_strided_slice(opts, x, begin_t, end_t, strides_t, y) -> Layer:
    r = len(x.shape)
    begin = [int(v) for v in const_ints(begin_t, "the begin")]
    end = [int(v) for v in const_ints(end_t, "the end")]
    step = [int(v) for v in const_ints(strides_t, "the strides")] if strides_t is not None else [1] * r
    masks = {k: int(getattr(opts, k, 0) or 0) for k in ("beginMask", "endMask", "ellipsisMask", "newAxisMask",
                                                         "shrinkAxisMask")}
    if masks["ellipsisMask"] or masks["newAxisMask"] or bool(getattr(opts, "offset", False)):
        raise UnsupportedError("ellipsis, new-axis or offset STRIDED_SLICE is not supported")
    if r > 4 or not (len(begin) == len(end) == len(step) == r) or 0 in step:
        raise UnsupportedError(f"begin/end/strides of length {len(begin)}/{len(end)}/{len(step)} for rank {r}")
    st = _in_strides(x.shape)
    base, out_strides, out_dims = 0, [], []
    for k, d in enumerate(x.shape):
        if masks["shrinkAxisMask"] >> k & 1:          # one index, the axis dropped
            if step[k] < 0:     # LiteRT's reference leaves such an output unwritten
                raise UnsupportedError(f"shrunk axis {k} with a negative stride")
            if masks["beginMask"] >> k & 1:           # TFLite's StartForAxis: the mask wins
                i = 0
            else:
                i = begin[k] + d if begin[k] < 0 else begin[k]
            if not 0 <= i < d:
                raise UnsupportedError(f"index {begin[k]} outside axis {k} of {x.shape}")
            base += i * st[k]
            continue
        b = None if masks["beginMask"] >> k & 1 else begin[k]
        e = None if masks["endMask"] >> k & 1 else end[k]
        start, stop, stp = slice(b, e, step[k]).indices(d)    # numpy's (and TF's) clamping
        n = len(range(start, stop, stp))
        base += start * st[k] if n else 0
        out_strides.append(st[k] * stp)
        out_dims.append(n)
    if tuple(out_dims) != tuple(y.shape) and prod(out_dims) != prod(y.shape):
        raise UnsupportedError(f"the slice of {x.shape} has shape {out_dims}, the output {y.shape}")
    if len(out_dims) > 4 or 0 in out_dims:
        raise UnsupportedError(f"slice shape {out_dims}")
    if tuple(out_dims) != tuple(y.shape):           # same elements, other rank: align to the output
        out_strides = _realign(out_dims, out_strides, list(y.shape))
    return _gather_layer("STRIDED_SLICE", x, y, base, out_strides)


def _realign(dims: list, strides: list, out_shape: list) -> list:
    """Strides for ``out_shape`` when it only differs from ``dims`` by axes of size 1."""
    kept = [s for d, s in zip(dims, strides) if d != 1]
    if [d for d in dims if d != 1] != [d for d in out_shape if d != 1]:
        raise UnsupportedError(f"slice shape {dims} does not match the output {out_shape}")
    it = iter(kept)
    return [0 if d == 1 else next(it) for d in out_shape]


def lower_split(op: str, opts, ins: list, outs: list) -> list:
    """SPLIT (inputs: axis, data) / SPLIT_V (data, sizes, axis): one SLICE gather per output,
    in output order (the outputs are copies of the input's bytes)."""
    x, axis_t = (ins[1], ins[0]) if op == "SPLIT" else (ins[0], ins[2] if len(ins) > 2 else None)
    if x is None or any(y is None for y in outs) or not outs:
        raise UnsupportedError(f"{op} with a missing input or output")
    axis = [int(v) for v in const_ints(axis_t, "the axis")]
    r = len(x.shape)
    if len(axis) != 1 or not -r <= axis[0] < r or r > 4:
        raise UnsupportedError(f"axis {axis} of a rank-{r} input")
    a = axis[0] % r
    if sum(y.shape[a] for y in outs) != x.shape[a] or any(
            len(y.shape) != r or any(d != e for k, (d, e) in enumerate(zip(y.shape, x.shape)) if k != a)
            for y in outs):
        raise UnsupportedError(f"outputs {[y.shape for y in outs]} do not split {x.shape} on axis {a}")
    st = _in_strides(x.shape)
    layers, offset = [], 0
    for y in outs:
        layers.append(_gather_layer("SLICE", x, y, offset * st[a], st))
        offset += y.shape[a]
    return layers
