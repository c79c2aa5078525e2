"""The ONNX operators edgebench lowers: one table, one entry per operator (level 2).

Everything that names the supported operators reads :data:`OPS`: the lowering driver, the
error for an operator outside it, ``inspect model.onnx`` (its MAC counts and which nodes
would not convert) and docs/models.md's list (checked by a test). Besides these, any node
whose inputs are all constants is computed at conversion time (``lower._evaluate``), so the
shape arithmetic of exported graphs (Shape, Gather, Concat, Cast, ...) needs no entry.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from edgebench.quantize.onnx_lower import ops_more as mo
from edgebench.quantize.onnx_lower import ops_nn as nn
from edgebench.quantize.onnx_lower import ops_tensor as ts


@dataclass(frozen=True)
class Op:
    lower: Callable                       # (ctx, node, input values) -> output values
    macs: Optional[Callable] = None       # (attrs, input shapes, output shapes) -> MACs; None: no MACs
    check: Optional[Callable] = None      # (node, used value names, input shapes) -> reason it cannot lower, or None


OPS = {
    "Abs": Op(mo.abs_op),
    "Add": Op(ts.add),
    "AveragePool": Op(nn.average_pool, check=nn.spatial_check),
    "BatchNormalization": Op(nn.batch_norm),
    "Cast": Op(ts.cast),
    "Celu": Op(mo.celu),
    "Clip": Op(ts.clip),
    "Concat": Op(ts.concat),
    "Constant": Op(ts.constant),
    "Conv": Op(nn.conv, nn.conv_macs, nn.spatial_check),
    "ConvTranspose": Op(nn.conv_transpose, nn.conv_transpose_macs, nn.spatial_check),
    "Div": Op(ts.div),
    "Dropout": Op(ts.dropout, check=ts.dropout_check),
    "Elu": Op(mo.elu),
    "Exp": Op(mo.exp),
    "Flatten": Op(ts.flatten),
    "Gelu": Op(mo.gelu),
    "Gemm": Op(nn.gemm, nn.gemm_macs),
    "GlobalAveragePool": Op(nn.global_average_pool),
    "GlobalMaxPool": Op(nn.global_max_pool),
    "HardSigmoid": Op(ts.hard_sigmoid),
    "HardSwish": Op(ts.hard_swish),
    "Identity": Op(ts.identity_op),
    "LeakyRelu": Op(ts.leaky_relu),
    "Log": Op(mo.log),
    "LogSoftmax": Op(nn.log_softmax),
    "MatMul": Op(nn.matmul, nn.matmul_macs),
    "Max": Op(mo.max_op),
    "MaxPool": Op(nn.max_pool, check=nn.max_pool_check),
    "Min": Op(mo.min_op),
    "Mish": Op(mo.mish),
    "Mul": Op(ts.mul),
    "Neg": Op(mo.neg),
    "PRelu": Op(mo.prelu),
    "Pad": Op(ts.pad),
    "Reciprocal": Op(mo.reciprocal),
    "ReduceMean": Op(nn.reduce_mean),
    "Relu": Op(ts.relu),
    "Reshape": Op(ts.reshape),
    "Resize": Op(nn.resize),
    "Selu": Op(mo.selu),
    "Shape": Op(ts.shape_op),
    "Sigmoid": Op(ts.sigmoid),
    "Softmax": Op(nn.softmax),
    "Softplus": Op(mo.softplus),
    "Softsign": Op(mo.softsign),
    "Split": Op(mo.split),
    "Sqrt": Op(mo.sqrt),
    "Squeeze": Op(ts.squeeze),
    "Sub": Op(ts.sub),
    "Sum": Op(mo.sum_op),
    "Tanh": Op(ts.tanh),
    "ThresholdedRelu": Op(mo.thresholded_relu),
    "Transpose": Op(ts.transpose),
    "Unsqueeze": Op(ts.unsqueeze),
    "Upsample": Op(nn.resize),
}


def supported_list() -> str:
    return ", ".join(sorted(OPS)) + " (and any operator on constant inputs)"
