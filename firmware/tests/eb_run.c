/*
 * eb_run.c - run a model blob on the host with the firmware's INT8 engine.
 *
 *   eb_run [--arena BYTES] [--misalign] [--dump-layers] BLOB INPUTS.bin N OUT.bin
 *
 * Loads BLOB, initialises the engine with a static arena (BYTES of it, default
 * all), runs N inputs read back to back from INPUTS.bin (int8, the model's
 * input size each) and writes the N int8 outputs back to back to OUT.bin.
 * This is the bit-exactness harness of tests/test_firmware_engine.py.
 * --misalign places the blob at an odd address (the engine must not care).
 * --dump-layers writes, for each input, every layer's output tensor in layer
 * order instead of the model output (taken by the layer hook right after the
 * layer ran, before the planner lets a later layer reuse its bytes), so each
 * layer can be compared with the reference interpreter's intermediate tensors.
 *
 * Prints `layers=.. arena=.. in=.. out=..` on success. Exit status: 0 ok,
 * 1 usage or file error, 3 eb_model_init failed (stderr:
 * `eb_run: eb_model_init: <status>: <reason>`), 4 eb_model_invoke failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb_blob.h"
#include "eb_engine.h"

#define EB_RUN_BLOB_MAX (8u * 1024u * 1024u)
#define EB_RUN_ARENA_MAX (8u * 1024u * 1024u)

static uint8_t g_blob[EB_RUN_BLOB_MAX + 8];
static uint8_t g_arena[EB_RUN_ARENA_MAX];

static long read_file(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f) {
        fprintf(stderr, "eb_run: cannot open %s\n", path);
        return -1;
    }
    n = fread(buf, 1, cap, f);
    if (n == cap && fgetc(f) != EOF) {
        fprintf(stderr, "eb_run: %s is larger than %lu bytes\n", path, (unsigned long)cap);
        fclose(f);
        return -1;
    }
    fclose(f);
    return (long)n;
}

typedef struct {
    const uint8_t *blob;
    const uint8_t *arena;
    FILE *out;
    int failed;
} dump_ctx;

static uint32_t le(const uint8_t *p, int n)
{
    uint32_t v = 0;
    while (n-- > 0) {
        v = (v << 8) | p[n];
    }
    return v;
}

/* Layer hook: append the layer's output tensor (an arena tensor) to the file. */
static void dump_layer(void *ctx, uint32_t layer, uint32_t op)
{
    dump_ctx *d = (dump_ctx *)ctx;
    const uint8_t *rec = d->blob + le(d->blob + EB_HDR_LAYERS_OFF, 4) + layer * EB_LAYER_BYTES;
    const uint8_t *t = d->blob + le(d->blob + EB_HDR_TENSORS_OFF, 4) +
                       le(rec + EB_L_OUT, 2) * EB_TENSOR_BYTES;
    size_t n = le(t + EB_T_NBYTES, 4);
    (void)op;
    if (fwrite(d->arena + le(t + EB_T_OFFSET, 4), 1, n, d->out) != n) {
        d->failed = 1;
    }
}

static int usage(void)
{
    fprintf(stderr,
            "usage: eb_run [--arena BYTES] [--misalign] [--dump-layers] BLOB INPUTS.bin N OUT.bin\n");
    return 1;
}

int main(int argc, char **argv)
{
    size_t arena_len = EB_RUN_ARENA_MAX;
    int misalign = 0, dump = 0, a = 1;
    dump_ctx dc;
    uint8_t *blob;
    long blob_len, n, i;
    char err[160];
    eb_model m;
    eb_status st;
    size_t in_bytes, out_bytes;
    FILE *fin, *fout;

    while (a < argc && strncmp(argv[a], "--", 2) == 0) {
        if (strcmp(argv[a], "--arena") == 0 && a + 1 < argc) {
            arena_len = (size_t)strtoul(argv[a + 1], NULL, 10);
            if (arena_len > EB_RUN_ARENA_MAX) {
                arena_len = EB_RUN_ARENA_MAX;
            }
            a += 2;
        } else if (strcmp(argv[a], "--misalign") == 0) {
            misalign = 1;
            a += 1;
        } else if (strcmp(argv[a], "--dump-layers") == 0) {
            dump = 1;
            a += 1;
        } else {
            return usage();
        }
    }
    if (argc - a != 4) {
        return usage();
    }
    blob = g_blob + (misalign ? 1 : 0);
    blob_len = read_file(argv[a], blob, EB_RUN_BLOB_MAX);
    if (blob_len < 0) {
        return 1;
    }
    n = strtol(argv[a + 2], NULL, 10);
    if (n < 0) {
        return usage();
    }
    st = eb_model_init(&m, blob, (size_t)blob_len, g_arena, arena_len, err, sizeof err);
    if (st != EB_OK) {
        fprintf(stderr, "eb_run: eb_model_init: %s: %s\n", eb_status_name(st), err);
        return 3;
    }
    in_bytes = eb_model_input_bytes(&m);
    out_bytes = eb_model_output_bytes(&m);
    fin = fopen(argv[a + 1], "rb");
    if (!fin) {
        fprintf(stderr, "eb_run: cannot open %s\n", argv[a + 1]);
        return 1;
    }
    fout = fopen(argv[a + 3], "wb");
    if (!fout) {
        fprintf(stderr, "eb_run: cannot create %s\n", argv[a + 3]);
        fclose(fin);
        return 1;
    }
    for (i = 0; i < n; i++) {
        if (fread(eb_model_input(&m), 1, in_bytes, fin) != in_bytes) {
            fprintf(stderr, "eb_run: %s holds fewer than %ld inputs of %lu bytes\n", argv[a + 1],
                    n, (unsigned long)in_bytes);
            fclose(fin);
            fclose(fout);
            return 1;
        }
        dc.blob = blob;
        dc.arena = g_arena;
        dc.out = fout;
        dc.failed = 0;
        st = eb_model_invoke(&m, dump ? dump_layer : NULL, &dc);
        if (st != EB_OK) {
            fprintf(stderr, "eb_run: eb_model_invoke: %s\n", eb_status_name(st));
            fclose(fin);
            fclose(fout);
            return 4;
        }
        if (dc.failed || (!dump && fwrite(eb_model_output(&m), 1, out_bytes, fout) != out_bytes)) {
            fprintf(stderr, "eb_run: cannot write %s\n", argv[a + 3]);
            fclose(fin);
            fclose(fout);
            return 1;
        }
    }
    fclose(fin);
    if (fclose(fout) != 0) {
        fprintf(stderr, "eb_run: cannot write %s\n", argv[a + 3]);
        return 1;
    }
    printf("layers=%lu arena=%lu in=%lu out=%lu\n", (unsigned long)m.n_layers,
           (unsigned long)m.arena_used, (unsigned long)in_bytes, (unsigned long)out_bytes);
    return 0;
}
