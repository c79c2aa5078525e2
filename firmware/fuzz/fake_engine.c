/*
 * fake_engine.c - TEST DOUBLE of eb_engine.h for the parser fuzz target ONLY.
 *
 * Not an inference engine: it lets the fuzzer reach every path of the command
 * parser (model loaded or not, errors from eb_model_init with arbitrary text,
 * failing invocations, any number of layers, odd output scales) without the
 * real engine's cost. Never linked into a firmware image (see firmware/Makefile).
 *
 * Fake blob: "EBFZ", in_bytes:u8, out_bytes:u8, n_layers:u8, status:u8,
 * fail_at:u8, step:u8, reserved[2], scale:f32 (optional), zero_point:i8
 * (optional), op codes... A non-zero status makes eb_model_init fail with that
 * eb_status and an error text copied raw from the blob.
 */
#include <string.h>

#include "eb_engine.h"
#include "eb_kernels.h"

typedef struct {
    uint8_t in_bytes;
    uint8_t out_bytes;
    uint8_t fail_at;
    uint8_t step;
    uint32_t invocations;
    float scale;
    int32_t zero_point;
} fake_state;

static fake_state g_fake;

eb_status eb_model_init(eb_model *m, const uint8_t *blob, size_t blob_len, uint8_t *arena,
                        size_t arena_len, char *err, size_t err_len)
{
    size_t need;
    memset(m, 0, sizeof *m);
    memset(&g_fake, 0, sizeof g_fake);
    if (err_len > 0) {
        err[0] = '\0';
    }
    if (blob_len < 12 || memcmp(blob, "EBFZ", 4) != 0) {
        return EB_ERR_MAGIC;
    }
    if (blob[7] != 0) {
        if (err_len > 0) {
            size_t n = blob_len - 8 < err_len - 1 ? blob_len - 8 : err_len - 1;
            memcpy(err, blob + 8, n); /* arbitrary bytes: the parser must sanitise */
            err[n] = '\0';
        }
        return (eb_status)(1 + blob[7] % 7);
    }
    if (blob[4] == 0 || blob[5] == 0) {
        return EB_ERR_INVALID;
    }
    need = (size_t)blob[4] + blob[5];
    if (need > arena_len) {
        return EB_ERR_ARENA;
    }
    g_fake.in_bytes = blob[4];
    g_fake.out_bytes = blob[5];
    g_fake.fail_at = blob[8];
    g_fake.step = blob[9];
    g_fake.scale = 0.00390625f;
    if (blob_len >= 16) {
        memcpy(&g_fake.scale, blob + 12, sizeof g_fake.scale);
    }
    g_fake.zero_point = blob_len >= 17 ? (int8_t)blob[16] : -128;
    m->blob = blob;
    m->blob_len = blob_len;
    m->arena = arena;
    m->arena_len = arena_len;
    m->arena_used = need;
    m->n_layers = blob[6];
    m->priv_header = blob;
    return EB_OK;
}

size_t eb_model_input_bytes(const eb_model *m)
{
    (void)m;
    return g_fake.in_bytes;
}

size_t eb_model_output_bytes(const eb_model *m)
{
    (void)m;
    return g_fake.out_bytes;
}

int8_t *eb_model_input(eb_model *m)
{
    return (int8_t *)m->arena;
}

const int8_t *eb_model_output(const eb_model *m)
{
    return (const int8_t *)(m->arena + g_fake.in_bytes);
}

float eb_model_output_scale(const eb_model *m)
{
    (void)m;
    return g_fake.scale;
}

int32_t eb_model_output_zero_point(const eb_model *m)
{
    (void)m;
    return g_fake.zero_point;
}

float eb_model_input_scale(const eb_model *m)
{
    (void)m;
    return g_fake.scale;
}

int32_t eb_model_input_zero_point(const eb_model *m)
{
    (void)m;
    return g_fake.zero_point;
}

eb_status eb_model_invoke(eb_model *m, eb_layer_hook hook, void *hook_ctx)
{
    uint32_t l;
    size_t i;
    unsigned sum = 0;
    const uint8_t *ops = m->blob + 17;
    size_t n_ops = m->blob_len > 17 ? m->blob_len - 17 : 0;
    g_fake.invocations++;
    if (g_fake.fail_at != 0 && g_fake.invocations == g_fake.fail_at) {
        return EB_ERR_INVALID;
    }
    for (i = 0; i < g_fake.in_bytes; i++) {
        sum += m->arena[i];
    }
    for (i = 0; i < g_fake.out_bytes; i++) {
        m->arena[g_fake.in_bytes + i] = (uint8_t)(sum + i * g_fake.step);
    }
    for (l = 0; l < m->n_layers; l++) {
        if (hook != NULL) {
            hook(hook_ctx, l, n_ops > 0 ? ops[l % n_ops] : 0u);
        }
    }
    return EB_OK;
}

const char *eb_status_name(eb_status s)
{
    static const char *const names[] = {"EB_OK", "EB_ERR_MAGIC", "EB_ERR_VERSION",
                                        "EB_ERR_CRC", "EB_ERR_TRUNCATED", "EB_ERR_ARENA",
                                        "EB_ERR_OP", "EB_ERR_INVALID"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "EB_ERR_UNKNOWN";
}

/* eb_kernels.h: the fake engine has no kernels, so no kernel scratch RAM to report. */
size_t eb_kernels_ram_bytes(void)
{
    return 0u;
}
