/*
 * eb_timing.h - the timing harness of the edgebench firmware core (the role of
 * MLPerf Tiny's ee_ layer): the port's counter extended to 64 bits, the
 * `timestamp` lap (or GPIO edge in energy mode), warm-up runs, the timed
 * windows of `infer` and `eb-infer`, per-inference and per-layer ticks, and
 * the GPIO marker around the timed window of `eb-infer`.
 *
 * Replies go through the reply writer (eb_reply.h); nothing is flushed inside
 * a timed window.
 */
#ifndef EB_TIMING_H
#define EB_TIMING_H

#include <stddef.h>
#include <stdint.h>

#include "eb_engine.h"

/* Reset: the 64-bit tick count restarts from the counter's value now. */
void eb_timing_init(void);

/* The counter's wrap mask, and t1 - t0 modulo 2^counter_bits. */
uint32_t eb_timing_mask(void);
uint32_t eb_ticks_between(uint32_t t0, uint32_t t1);

/* `timestamp`: m-lap-us-<µs since start-up>; energy mode: a falling edge on
 * the marker line instead, like the reference. */
void eb_timing_timestamp(void);

/* The inputs of a run: the model, and the input bytes copied into its input
 * tensor before every inference (the engine may reuse that memory). */
typedef struct {
    eb_model *model;
    const uint8_t *input;
    size_t input_bytes;
} eb_timing_job;

/* `infer N W` (MLPerf): W untimed warm-up runs, then one window of N runs
 * between two m-lap-us lines. Returns 0, or -1 after printing why an inference
 * failed (the output tensor then holds no result). */
int eb_timing_infer(const eb_timing_job *job, uint32_t n, uint32_t w);

/* `eb-infer N W [layers]`: W then N runs timed one by one (m-eb-w-/m-eb-t-
 * lines), the GPIO marker low during the N; with layers one more run with
 * per-layer ticks (m-eb-layer-...). Returns as eb_timing_infer. */
int eb_timing_eb_infer(const eb_timing_job *job, uint32_t n, uint32_t w, int layers);

/* Static RAM of the harness (for eb-info's ram-bytes). */
size_t eb_timing_ram_bytes(void);

#endif /* EB_TIMING_H */
