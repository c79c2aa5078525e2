/*
 * smoke.c - bring-up program for the MPS2 ports, independent of the firmware
 * core: proves the startup code, UART0 and the tick counter under QEMU, and
 * measures how many emulated instructions one counter tick is.
 *
 * Commands end with '%', CR or LF (like the MLPerf Tiny dialect, replies are CRLF
 * lines and every command ends with "m-ready"):
 *   name            m-smoke-name-[<eb_port_name()>]
 *   info            m-smoke-info-[hz=<counter Hz>,bits=<width>,real=<0|1>,temp=<rc>]
 *   ticks           m-smoke-ticks-[<eb_port_counter()>]
 *   cal <N>         runs a loop of exactly 2*N Thumb instructions (subs+bne) between
 *                   two counter reads: m-smoke-cal-[<N>,<ticks>]
 *   fpu             one single-precision FP computation (proves CPACR set-up)
 *   fault           executes an undefined instruction: the port's fault handler
 *                   prints e-[eb-fault exc=... pc=...] and stops
 *   exit            semihosting SYS_EXIT (needs -semihosting-config enable=on)
 *   anything else   echoed as m-smoke-echo-[<line>]
 */
#include <stddef.h>
#include <stdint.h>

#include "eb_decimal.h"
#include "eb_port.h"

static void put(const char *s)
{
    size_t n = 0;
    while (s[n]) {
        n++;
    }
    eb_port_write((const uint8_t *)s, n);
}

static void put_u32(uint32_t v)
{
    char buf[EB_DEC_U32_MAX + 1];
    buf[EB_DEC_U32_MAX] = '\0';
    put(eb_dec_u32(v, buf + EB_DEC_U32_MAX));
}

static int starts(const char *line, const char *word)
{
    while (*word) {
        if (*line++ != *word++) {
            return 0;
        }
    }
    return *line == '\0' || *line == ' ';
}

static uint32_t parse_u32(const char *s)
{
    uint32_t v = 0;
    while (*s == ' ') {
        s++;
    }
    while (*s >= '0' && *s <= '9') {
        v = v * 10u + (uint32_t)(*s++ - '0');
    }
    return v;
}

/* Exactly 2 instructions per iteration (subs, bne); n >= 1. */
static uint32_t timed_loop(uint32_t n)
{
    uint32_t t0, t1;
    t0 = eb_port_counter();
    __asm volatile(
        "1: subs %0, %0, #1 \n"
        "   bne 1b          \n"
        : "+r"(n)::"cc");
    t1 = eb_port_counter();
    return t1 - t0;
}

static void semihosting_exit(uint32_t code)
{
    register uint32_t r0 __asm("r0") = 0x18u;      /* SYS_EXIT */
    register uint32_t r1 __asm("r1") = code ? 0x20024u /* RunTimeErrorUnknown */
                                            : 0x20026u; /* ApplicationExit */
    __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}

static volatile float fpu_in = 1.5f;

int main(void)
{
    char line[64];
    size_t n = 0;

    eb_port_init();
    for (;;) {
        int c = eb_port_getc();
        if (c < 0) {
            return 0;
        }
        if (c != '%' && c != '\r' && c != '\n') {
            if (n < sizeof line - 1) {
                line[n++] = (char)c;
            }
            continue;
        }
        if (n == 0) {
            continue;
        }
        line[n] = '\0';
        n = 0;
        if (starts(line, "name")) {
            put("m-smoke-name-[");
            put(eb_port_name());
            put("]\r\n");
        } else if (starts(line, "info")) {
            int32_t mc;
            int rc = eb_port_temp_mc(&mc);
            put("m-smoke-info-[hz=");
            put_u32(eb_port_counter_hz());
            put(",bits=");
            put_u32(eb_port_counter_bits());
            put(",real=");
            put_u32((uint32_t)eb_port_timing_is_real());
            put(rc == 0 ? ",temp=yes]\r\n" : ",temp=no]\r\n");
        } else if (starts(line, "ticks")) {
            put("m-smoke-ticks-[");
            put_u32(eb_port_counter());
            put("]\r\n");
        } else if (starts(line, "cal")) {
            uint32_t iters = parse_u32(line + 3);
            uint32_t ticks;
            if (iters == 0u) {
                put("e-[smoke-cal-needs-N>0]\r\n");
            } else {
                ticks = timed_loop(iters);
                put("m-smoke-cal-[");
                put_u32(iters);
                put(",");
                put_u32(ticks);
                put("]\r\n");
            }
        } else if (starts(line, "fpu")) {
            float x = fpu_in * 3.0f + 0.25f; /* 4.75 */
            put("m-smoke-fpu-[");
            put_u32((uint32_t)(x * 100.0f));
            put("]\r\n");
        } else if (starts(line, "fault")) {
            __asm volatile("udf #0" ::: "memory");
        } else if (starts(line, "exit")) {
            put("m-smoke-exit\r\n");
            semihosting_exit(0u);
        } else {
            put("m-smoke-echo-[");
            put(line);
            put("]\r\n");
        }
        put("m-ready\r\n");
    }
}
