/*
 * eb_parse.h - numbers in command words (eb_parse.c): used by the parser
 * (eb_proto.c, the frame word) and by the commands. No state, no output.
 */
#ifndef EB_PARSE_H
#define EB_PARSE_H

#include <stdint.h>

/* Strict unsigned decimal: 0 ok, -1 not a number, -2 larger than 2^32-1. */
int eb_parse_u32(const char *s, uint32_t *value);
/* 1 to 8 hex digits: 0 ok, -1 not. */
int eb_parse_hex32(const char *s, uint32_t *value);
/* The value of one hex digit, -1 if c is none. */
int eb_hex_digit(char c);

#endif /* EB_PARSE_H */
