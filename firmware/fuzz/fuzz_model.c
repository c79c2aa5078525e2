/*
 * fuzz_model.c - libFuzzer target for the device's model path: the blob parser
 * (eb_model_init) and the engine with every kernel (eb_model_invoke).
 *
 * Every input is a model blob (firmware/BLOB.md). Before the engine sees it,
 * the target writes the header's magic, format version, total length and
 * CRC-32 so that they are right: the integrity checks pass and the fuzzer's
 * mutations reach the contents (tensor and layer tables, geometry, offsets,
 * per-channel parameters, weights). A blob with a valid CRC and wrong contents
 * is what a converter bug, or a host that computed the CRC over damaged bytes,
 * would upload; the engine must refuse it or run it without touching memory it
 * does not own. Built with AddressSanitizer and UBSan (make -C firmware
 * fuzz-model), so any access outside the blob or the arena, signed overflow,
 * bad shift or misaligned load is a crash.
 *
 * The blob and the arena are heap blocks of exactly their size (ASan guards
 * both ends). The arena is as large as the header asks, capped at
 * FUZZ_ARENA_MAX (a larger request must be refused with EB_ERR_ARENA).
 *
 * Invariants checked besides the sanitizers: after a successful init the input
 * and output tensors lie inside the arena, and arena_used <= arena_len.
 *
 * Seeds: fuzz/corpus_model/ (blobs of the digits and KWS models, written by
 * fuzz/make_model_corpus.py). Reproduce a crash: ./fuzz_model crash-<sha>.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb_blob.h"
#include "eb_crc32.h"
#include "eb_engine.h"

#ifndef FUZZ_ARENA_MAX
#define FUZZ_ARENA_MAX (64u * 1024u)
#endif

static void put_u16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    put_u16(p, v & 0xFFFFu);
    put_u16(p + 2, v >> 16);
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static int inside(const uint8_t *p, size_t n, const uint8_t *base, size_t len)
{
    return p != NULL && p >= base && (size_t)(p - base) <= len && n <= len - (size_t)(p - base);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *blob, *arena;
    size_t arena_len, n_in, n_out, i;
    eb_model m;
    char err[96];
    eb_status st;
    int8_t *in;
    const int8_t *out;
    volatile int32_t sink = 0;

    if (size < EB_HDR_BYTES || size > 0xFFFFFFFFu) {
        return 0;
    }
    blob = (uint8_t *)malloc(size);
    if (blob == NULL) {
        return 0;
    }
    memcpy(blob, data, size);
    blob[EB_HDR_MAGIC + 0] = EB_BLOB_MAGIC0;
    blob[EB_HDR_MAGIC + 1] = EB_BLOB_MAGIC1;
    blob[EB_HDR_MAGIC + 2] = EB_BLOB_MAGIC2;
    blob[EB_HDR_MAGIC + 3] = EB_BLOB_MAGIC3;
    put_u16(blob + EB_HDR_VERSION, EB_BLOB_VERSION);
    put_u32(blob + EB_HDR_TOTAL_BYTES, (uint32_t)size);
    put_u32(blob + EB_HDR_CRC32, eb_crc32(blob + EB_HDR_CRC_START, size - EB_HDR_CRC_START));

    arena_len = get_u32(blob + EB_HDR_ARENA_BYTES);
    if (arena_len == 0u) {
        arena_len = 1u;
    }
    if (arena_len > FUZZ_ARENA_MAX) {
        arena_len = FUZZ_ARENA_MAX;
    }
    arena = (uint8_t *)malloc(arena_len);
    if (arena == NULL) {
        free(blob);
        return 0;
    }
    memset(arena, 0xA5, arena_len);

    st = eb_model_init(&m, blob, size, arena, arena_len, err, sizeof err);
    if (st == EB_OK) {
        if (m.arena_used > arena_len) {
            abort(); /* the plan does not fit the arena it accepted */
        }
        n_in = eb_model_input_bytes(&m);
        n_out = eb_model_output_bytes(&m);
        in = eb_model_input(&m);
        out = eb_model_output(&m);
        if (!inside((const uint8_t *)in, n_in, arena, arena_len) ||
            !inside((const uint8_t *)out, n_out, arena, arena_len)) {
            abort(); /* input or output tensor outside the arena */
        }
        for (i = 0; i < n_in; i++) {
            in[i] = (int8_t)(uint8_t)(i * 37u + size);
        }
        if (eb_model_invoke(&m, NULL, NULL) == EB_OK) {
            for (i = 0; i < n_out; i++) {
                sink += out[i];
            }
        }
        (void)eb_model_output_scale(&m);
        (void)eb_model_output_zero_point(&m);
    } else if (err[0] == '\0' || memchr(err, '\0', sizeof err) == NULL) {
        abort(); /* a refusal must say why, in a terminated string */
    }
    (void)sink;
    free(arena);
    free(blob);
    return 0;
}
