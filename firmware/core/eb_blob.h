/*
 * eb_blob.h - layout of the model blob read by the INT8 engine (format 1).
 *
 * Private to the engine (eb_engine.c, eb_layer.h, ops/) and its tests; everything else uses
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
#define EB_BLOB_VERSION 3u

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

/* Operator codes (TFLite's BuiltinOperator values) are those of the operator
 * table, eb_ops.def (EB_OP_* in eb_ops.h); each operator's p[] and per-channel
 * arrays are documented in firmware/BLOB.md and in its source, ops/eb_op_<family>.c. */

#endif /* EB_BLOB_H */
