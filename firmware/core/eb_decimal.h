/*
 * eb_decimal.h - the decimal digits of a uint32_t, without printf: the engine's
 * error messages (eb_layer.c, eb_msg_u32) and the MPS2 smoke program
 * (ports/mps2-common/smoke/smoke.c, which links no core source: header only).
 */
#ifndef EB_DECIMAL_H
#define EB_DECIMAL_H

#include <stdint.h>

/* EB_DEC_U32_MAX digits at the most (4294967295) */
#define EB_DEC_U32_MAX 10

/* Writes the digits of v backwards, the last just before end (at most
 * EB_DEC_U32_MAX bytes below it, no '\0'); returns the first. */
static inline char *eb_dec_u32(uint32_t v, char *end)
{
    do {
        *--end = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    return end;
}

#endif /* EB_DECIMAL_H */
