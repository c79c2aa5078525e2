/*
 * eb_crc32.h - CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), the same
 * function as zlib's crc32() and Python's zlib.crc32/binascii.crc32.
 *
 * Incremental use: crc = 0; crc = eb_crc32_update(crc, p, n); ... ; crc is the
 * CRC of all bytes so far (no separate finalisation step).
 */
#ifndef EB_CRC32_H
#define EB_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t eb_crc32_update(uint32_t crc, const uint8_t *data, size_t n);

/* CRC-32 of one buffer: eb_crc32_update(0, data, n). */
uint32_t eb_crc32(const uint8_t *data, size_t n);

#endif /* EB_CRC32_H */
