/*
 * fuzz_proto.c - libFuzzer target for the firmware command parser.
 *
 * Every input is a byte stream from the host: it is fed to a freshly reset
 * parser (eb_proto_init) through a port double that serves a fake counter and
 * checks every reply byte instead of sending it. Built with AddressSanitizer
 * and UBSan (make -C firmware fuzz), so any write past a buffer, overflow or
 * undefined shift is a crash. Linked with fuzz/fake_engine.c (a test double),
 * never with the real engine.
 *
 * Invariant checked on the replies: only printable ASCII in CRLF-terminated
 * lines (user text echoed in errors must be sanitised).
 *
 * Reproduce a crash: ./fuzz_proto crash-<sha>   or feed the file to the posix
 * firmware with `eb-firmware --stdio < crash-<sha>`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb_port.h"
#include "eb_proto.h"

static struct {
    uint32_t counter;
    uint32_t rng;
    int pending_cr;
    unsigned temp_calls;
} F;

void eb_port_init(void)
{
}

int eb_port_getc(void)
{
    return -1;
}

void eb_port_write(const uint8_t *data, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        uint8_t c = data[i];
        if (F.pending_cr) {
            if (c != '\n') {
                abort(); /* CR not followed by LF */
            }
            F.pending_cr = 0;
        } else if (c == '\r') {
            F.pending_cr = 1;
        } else if (c < 0x20 || c > 0x7E) {
            abort(); /* unprintable byte or bare LF in a reply */
        }
    }
}

uint32_t eb_port_counter(void)
{
    /* A 20-bit counter moving by pseudo-random steps: wraps often. */
    F.rng = F.rng * 1664525u + 1013904223u;
    F.counter = (F.counter + (F.rng >> 20)) & 0xFFFFFu;
    return F.counter;
}

uint32_t eb_port_counter_hz(void)
{
    return 32768u;
}

uint32_t eb_port_counter_bits(void)
{
    return 20u;
}

int eb_port_temp_mc(int32_t *milli_c)
{
    if ((F.temp_calls++ & 1u) != 0u) {
        return -1;
    }
    *milli_c = -40500;
    return 0;
}

void eb_port_marker(int level)
{
    (void)level;
}

const char *eb_port_name(void)
{
    return "fuzz";
}

int eb_port_timing_is_real(void)
{
    return 0;
}

const char *eb_port_clock(uint32_t *ppm, const char **fallback)
{
    /* A port that wanted a crystal and fell back to an RC oscillator with the
     * widest bound a port states: eb-info formats every field. */
    *ppm = 0xFFFFFFFFu;
    *fallback = "hse-bypass";
    return "hsi";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    memset(&F, 0, sizeof F);
    F.counter = 0xFFF00u; /* close to the wrap */
    eb_proto_init();
    eb_proto_feed_buf(data, size);
    if (F.pending_cr) {
        abort(); /* a reply ended in the middle of its CRLF */
    }
    return 0;
}
