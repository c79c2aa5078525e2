/*
 * eb_parse.c - numbers in command words: strict decimal and hex, as the
 * parser's frame word and the commands' arguments need them.
 */
#include "eb_parse.h"

#include <stddef.h>

int eb_parse_u32(const char *s, uint32_t *value)
{
    uint32_t v = 0u;
    int overflow = 0;
    if (*s == '\0') {
        return -1;
    }
    for (; *s != '\0'; s++) {
        uint32_t d;
        if (*s < '0' || *s > '9') {
            return -1;
        }
        d = (uint32_t)(*s - '0');
        if (v > (0xFFFFFFFFu - d) / 10u) {
            overflow = 1;
        } else {
            v = v * 10u + d;
        }
    }
    if (overflow) {
        return -2;
    }
    *value = v;
    return 0;
}

int eb_hex_digit(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

int eb_parse_hex32(const char *s, uint32_t *value)
{
    uint32_t v = 0u;
    size_t n = 0u;
    for (; *s != '\0'; s++, n++) {
        int d = eb_hex_digit(*s);
        if (d < 0 || n == 8u) {
            return -1;
        }
        v = (v << 4) | (uint32_t)d;
    }
    if (n == 0u) {
        return -1;
    }
    *value = v;
    return 0;
}
