/*
 * eb_timing.c - the timing harness (eb_timing.h): warm-up, timed windows,
 * per-inference and per-layer ticks, the GPIO marker. Ticks are the port's
 * counter, differences taken modulo 2^eb_port_counter_bits().
 */
#include "eb_timing.h"

#include <string.h>

#include "eb_config.h"
#include "eb_port.h"
#include "eb_reply.h"

#define EB_SAMPLES_PER_LINE 32u /* tick samples per m-eb-t-[...] line */

static uint32_t g_samples[EB_SAMPLES_PER_LINE];
static struct {
    uint32_t index[EB_LAYERS_MAX];
    uint32_t op[EB_LAYERS_MAX];
    uint32_t ticks[EB_LAYERS_MAX];
} g_layers;

static struct {
    /* 64-bit extension of the port counter */
    uint64_t ticks64;
    uint32_t last_counter;
    /* per-layer timing of one inference */
    uint32_t layer_prev;
    uint32_t layer_n;
    uint32_t layer_dropped;
} T;

void eb_timing_init(void)
{
    memset(&T, 0, sizeof T);
    T.last_counter = eb_port_counter();
}

size_t eb_timing_ram_bytes(void)
{
    return sizeof g_samples + sizeof g_layers + sizeof T;
}

uint32_t eb_timing_mask(void)
{
    uint32_t bits = eb_port_counter_bits();
    return (bits == 0u || bits >= 32u) ? 0xFFFFFFFFu : ((1u << bits) - 1u);
}

uint32_t eb_ticks_between(uint32_t t0, uint32_t t1)
{
    return (t1 - t0) & eb_timing_mask();
}

/* Ticks since start-up, extended to 64 bits. Exact as long as it is called at
 * least once per counter wrap; the core calls it after every inference. */
static uint64_t now_ticks64(void)
{
    uint32_t c = eb_port_counter();
    T.ticks64 += eb_ticks_between(T.last_counter, c);
    T.last_counter = c;
    return T.ticks64;
}

#if !EB_CFG_ENERGY_MODE
static uint64_t ticks_to_us(uint64_t ticks)
{
    uint64_t hz = eb_port_counter_hz();
    if (hz == 0u) {
        hz = 1u;
    }
    return (ticks / hz) * 1000000u + ((ticks % hz) * 1000000u) / hz;
}
#endif

void eb_timing_timestamp(void)
{
#if EB_CFG_ENERGY_MODE
    volatile uint32_t spin;
    eb_port_marker(0);
    for (spin = 0; spin < 10000u; spin++) {
    }
    eb_port_marker(1);
#else
    uint64_t us = ticks_to_us(now_ticks64());
    eb_out_str("m-lap-us-");
    eb_out_u64(us);
    eb_out_eol();
#endif
}

/* Copy the input into the input tensor (reloaded before every run). */
static void load_input(const eb_timing_job *job)
{
    memcpy(eb_model_input(job->model), job->input, job->input_bytes);
}

static int report_invoke(eb_status st)
{
    if (st == EB_OK) {
        return 0;
    }
    eb_out_str("e-[Inference failed: ");
    eb_out_text(eb_status_name(st) != NULL ? eb_status_name(st) : "error", 32u);
    eb_out_line("]");
    return -1;
}

/* `count` runs back to back, untimed one by one. */
static int plain_runs(const eb_timing_job *job, uint32_t count)
{
    uint32_t i;
    for (i = 0; i < count; i++) {
        load_input(job);
        if (report_invoke(eb_model_invoke(job->model, NULL, NULL)) != 0) {
            return -1;
        }
        (void)now_ticks64();
    }
    return 0;
}

int eb_timing_infer(const eb_timing_job *job, uint32_t n, uint32_t w)
{
    eb_out_str("m-warmup-start-");
    eb_out_u32(w);
    eb_out_eol();
    eb_out_flush();
    if (plain_runs(job, w) != 0) {
        return -1;
    }
    eb_out_line("m-warmup-done");
    eb_out_str("m-infer-start-");
    eb_out_u32(n);
    eb_out_eol();
    eb_out_flush();
    /* Both m-lap-us lines stay in the reply buffer until the window closes,
     * so the link's transmit time is not part of the measurement. */
    eb_timing_timestamp();
    if (plain_runs(job, n) != 0) {
        return -1;
    }
    eb_timing_timestamp();
    eb_out_line("m-infer-done");
    return 0;
}

static void flush_samples(const char *prefix, uint32_t n)
{
    uint32_t i;
    eb_out_str(prefix);
    for (i = 0; i < n; i++) {
        if (i > 0u) {
            eb_out_bytes(",", 1u);
        }
        eb_out_u32(g_samples[i]);
    }
    eb_out_line("]");
    eb_out_flush(); /* between inferences, never inside a timed window */
}

/* Run `count` inferences, each timed on its own; prints m-eb-w-/m-eb-t- lines. */
static int timed_runs(const eb_timing_job *job, uint32_t count, const char *prefix)
{
    uint32_t i;
    uint32_t k = 0u;
    for (i = 0; i < count; i++) {
        uint32_t t0;
        uint32_t t1;
        eb_status st;
        load_input(job);
        t0 = eb_port_counter();
        st = eb_model_invoke(job->model, NULL, NULL);
        t1 = eb_port_counter();
        (void)now_ticks64();
        if (report_invoke(st) != 0) {
            return -1;
        }
        g_samples[k++] = eb_ticks_between(t0, t1);
        if (k == EB_SAMPLES_PER_LINE) {
            flush_samples(prefix, k);
            k = 0u;
        }
    }
    if (k > 0u) {
        flush_samples(prefix, k);
    }
    return 0;
}

static void layer_hook(void *ctx, uint32_t layer_index, uint32_t op_code)
{
    uint32_t now = eb_port_counter();
    (void)ctx;
    if (T.layer_n < EB_LAYERS_MAX) {
        g_layers.index[T.layer_n] = layer_index;
        g_layers.op[T.layer_n] = op_code;
        g_layers.ticks[T.layer_n] = eb_ticks_between(T.layer_prev, now);
        T.layer_n++;
    } else {
        T.layer_dropped++;
    }
    T.layer_prev = eb_port_counter(); /* the hook's own time is not counted */
}

/* One more run with the layer hook; prints m-eb-layer-<i>-[<op>,<ticks>]. */
static int layer_run(const eb_timing_job *job)
{
    uint32_t i;
    T.layer_n = 0u;
    T.layer_dropped = 0u;
    load_input(job);
    T.layer_prev = eb_port_counter();
    if (report_invoke(eb_model_invoke(job->model, layer_hook, NULL)) != 0) {
        return -1;
    }
    (void)now_ticks64();
    for (i = 0; i < T.layer_n; i++) {
        eb_out_str("m-eb-layer-");
        eb_out_u32(g_layers.index[i]);
        eb_out_str("-[");
        eb_out_u32(g_layers.op[i]);
        eb_out_bytes(",", 1u);
        eb_out_u32(g_layers.ticks[i]);
        eb_out_line("]");
    }
    if (T.layer_dropped > 0u) {
        eb_out_str("m-eb-layers-dropped-");
        eb_out_u32(T.layer_dropped);
        eb_out_eol();
    }
    return 0;
}

int eb_timing_eb_infer(const eb_timing_job *job, uint32_t n, uint32_t w, int layers)
{
    eb_out_flush();
    if (timed_runs(job, w, "m-eb-w-[") != 0) {
        return -1;
    }
    eb_port_marker(0);
    if (timed_runs(job, n, "m-eb-t-[") != 0) {
        eb_port_marker(1);
        return -1;
    }
    eb_port_marker(1);
    if (layers && layer_run(job) != 0) {
        return -1;
    }
    eb_out_line("m-eb-infer-done");
    return 0;
}
