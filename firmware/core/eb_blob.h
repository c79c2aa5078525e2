/*
 * eb_blob.h - layout of the model blob read by the INT8 engine (format 1).
 *
 * Private to the engine (eb_engine.c) and its tests; everything else uses
 * eb_engine.h. The format is documented in firmware/BLOB.md and written on the
 * host by edgebench/mcu/blob.py - keep the three in step. All integers are
 * little-endian; records are read with byte loads, so the blob needs no
 * particular alignment in memory.
 */
#ifndef EB_BLOB_H
#define EB_BLOB_H

#include <stdint.h>

#define EB_BLOB_MAGIC0 'E'
#define EB_BLOB_MAGIC1 'B'
#define EB_BLOB_MAGIC2 'N'
#define EB_BLOB_MAGIC3 'N'
#define EB_BLOB_VERSION 1u

/* Header: 64 bytes. */
#define EB_HDR_BYTES 64u
#define EB_HDR_MAGIC 0u          /* 4 bytes "EBNN" */
#define EB_HDR_VERSION 4u        /* u16 format version */
#define EB_HDR_HEADER_BYTES 6u   /* u16 header size (64) */
#define EB_HDR_TOTAL_BYTES 8u    /* u32 size of the whole blob */
#define EB_HDR_CRC32 12u         /* u32 CRC-32 (zlib) of bytes [16, total) */
#define EB_HDR_CRC_START 16u
#define EB_HDR_N_TENSORS 16u     /* u16 */
#define EB_HDR_N_LAYERS 18u      /* u16 */
#define EB_HDR_TENSORS_OFF 20u   /* u32 offset of the tensor table */
#define EB_HDR_LAYERS_OFF 24u    /* u32 offset of the layer table */
#define EB_HDR_DATA_OFF 28u      /* u32 offset of the constant data */
#define EB_HDR_DATA_BYTES 32u    /* u32 size of the constant data */
#define EB_HDR_ARENA_BYTES 36u   /* u32 arena the model needs (planned peak) */
#define EB_HDR_INPUT 40u         /* u16 tensor index of the model input */
#define EB_HDR_OUTPUT 42u        /* u16 tensor index of the model output */
#define EB_HDR_FLAGS 44u         /* u32, 0 in format 1 */
#define EB_HDR_SOURCE_SHA 48u    /* 16 bytes: first half of the .tflite sha256 */

/* Tensor record: 40 bytes. */
#define EB_TENSOR_BYTES 40u
#define EB_T_DTYPE 0u            /* u8: EB_DTYPE_* */
#define EB_T_RANK 1u             /* u8: 1..4 */
#define EB_T_FLAGS 2u            /* u8: EB_TFLAG_* */
#define EB_T_DIMS 4u             /* 4 x i32, right-aligned, leading 1s */
#define EB_T_OFFSET 20u          /* u32: arena offset, or blob offset if constant */
#define EB_T_NBYTES 24u          /* u32 */
#define EB_T_SCALE 28u           /* f32 (per-tensor scale; 0 if none) */
#define EB_T_ZERO_POINT 32u      /* i32 */

#define EB_DTYPE_INT8 1u
#define EB_DTYPE_INT32 2u
#define EB_TFLAG_CONST 1u
#define EB_TFLAG_INPUT 2u
#define EB_TFLAG_OUTPUT 4u

/* Layer record: 96 bytes. */
#define EB_LAYER_BYTES 96u
#define EB_L_OP 0u               /* u8: TFLite BuiltinOperator code */
#define EB_L_N_INPUTS 1u         /* u8 */
#define EB_L_OUT 2u              /* u16 output tensor */
#define EB_L_IN 4u               /* 3 x u16 input tensors, EB_NO_TENSOR if absent */
#define EB_L_STRIDE_H 12u        /* u16 */
#define EB_L_STRIDE_W 14u
#define EB_L_DIL_H 16u
#define EB_L_DIL_W 18u
#define EB_L_PAD_H 20u           /* u16: padding before the first row */
#define EB_L_PAD_W 22u           /* u16: padding before the first column */
#define EB_L_FILTER_H 24u        /* u16 (pooling window; copy of the filter for convs) */
#define EB_L_FILTER_W 26u
#define EB_L_DEPTH_MULT 28u      /* u16 */
#define EB_L_ACT_MIN 32u         /* i32 fused activation clamp */
#define EB_L_ACT_MAX 36u
#define EB_L_CHAN_OFF 40u        /* u32 blob offset of per-channel arrays */
#define EB_L_N_CHAN 44u          /* u32 channels in those arrays */
#define EB_L_SCRATCH_OFF 48u     /* u32 arena offset of the layer's scratch */
#define EB_L_SCRATCH_BYTES 52u   /* u32 */
#define EB_L_P 56u               /* 10 x i32 operator parameters */
#define EB_L_N_P 10u

#define EB_NO_TENSOR 0xFFFFu
#define EB_CONCAT_MAX 12u        /* CONCATENATION inputs: 3 in the record's slots + 9 in p[] */

/* Operator codes: TFLite's BuiltinOperator values. */
#define EB_OP_ADD 0u
#define EB_OP_AVERAGE_POOL_2D 1u
#define EB_OP_CONV_2D 3u
#define EB_OP_DEPTHWISE_CONV_2D 4u
#define EB_OP_FULLY_CONNECTED 9u
#define EB_OP_MAX_POOL_2D 17u
#define EB_OP_RESHAPE 22u
#define EB_OP_SOFTMAX 25u
/* engine version 2 */
#define EB_OP_CONCATENATION 2u
#define EB_OP_LOGISTIC 14u
#define EB_OP_TANH 28u
#define EB_OP_TRANSPOSE_CONV 67u
#define EB_OP_TRANSPOSE 39u
#define EB_OP_STRIDED_SLICE 45u
#define EB_OP_SLICE 65u
#define EB_OP_RESIZE_BILINEAR 23u
#define EB_OP_RESIZE_NEAREST_NEIGHBOR 97u
#define EB_OP_HARD_SWISH 117u
#define EB_OP_MUL 18u
#define EB_OP_RELU 19u
#define EB_OP_RELU_N1_TO_1 20u
#define EB_OP_RELU6 21u
#define EB_OP_PAD 34u
#define EB_OP_MEAN 40u
#define EB_OP_SUB 41u
#define EB_OP_MAXIMUM 55u
#define EB_OP_MINIMUM 57u
#define EB_OP_PADV2 60u
#define EB_OP_LEAKY_RELU 98u
#define EB_OP_QUANTIZE 114u

/* Operator parameters p[]:
 *   CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED: p0 input offset (-input zero
 *     point), p1 output offset (output zero point); per-channel arrays at
 *     EB_L_CHAN_OFF: i32 bias'[C], i32 multiplier[C], i32 shift[C], where
 *     bias' = bias + input_offset * sum(filter weights of the channel).
 *   ADD: p0 input1 offset, p1 input2 offset, p2 output offset, p3 left shift,
 *     p4/p5 input1 multiplier/shift, p6/p7 input2 multiplier/shift,
 *     p8/p9 output multiplier/shift.
 *   SOFTMAX: p0 input multiplier, p1 input left shift, p2 diff_min.
 *   pooling, RESHAPE: none.
 * Engine version 2 (eb_engine_ops.c):
 *   SUB, MUL, MAXIMUM, MINIMUM: as ADD (MUL: p0, p1, p2, p8/p9 only;
 *     MAXIMUM/MINIMUM: none).
 *   QUANTIZE, RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU: p0 input zero point,
 *     p1 output zero point, p2/p3 multiplier/shift, p4/p5 multiplier/shift
 *     for negative inputs (LEAKY_RELU's alpha; equal to p2/p3 otherwise).
 *   MEAN: p0 0, p1 axis mask (bit 0 N .. bit 3 C), p2/p3 input/output zero
 *     point, p4/p5 multiplier/shift (1/count folded in).
 *   PAD, PADV2: p0..p3 padding before N, H, W, C; p4 the pad value.
 *   CONCATENATION: n inputs (n <= EB_CONCAT_MAX): in[0..2], then p1..p9;
 *     p0 the axis (0 N .. 3 C).
 *   LOGISTIC, TANH, HARD_SWISH: no p[]; EB_L_CHAN_OFF points at a 256-byte int8
 *     table indexed by x + 128 (EB_L_N_CHAN is not used).
 *   RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR: p0 1 nearest / 0 bilinear; the
 *     per-channel arrays (n = OH + OW): i32 lower[n], upper[n], fraction[n].
 *   TRANSPOSE_CONV: data, filter [OC, KH, KW, IC] (plain); stride, padding and
 *     filter size in the geometry fields; p0 input offset, p1 output zero
 *     point; per-channel arrays i32 bias[OC] (not folded), multiplier, shift.
 *   TRANSPOSE, SLICE, STRIDED_SLICE: p0 base, p1..p4 element strides (may be
 *     negative) of the right-aligned 4-D output: out[i] = in[p0 + sum i_k p(k+1)]. */

#endif /* EB_BLOB_H */
