/*
 * eb_port.h - the whole platform surface of the edgebench firmware.
 *
 * A port (firmware/ports/<name>/) implements these functions and nothing else;
 * the core owns the protocol, warm-up and timing. Prefix eb_port_ = board code.
 */
#ifndef EB_PORT_H
#define EB_PORT_H

#include <stddef.h>
#include <stdint.h>

/* Called once at start-up before anything else (clocks, UART, counter). */
void eb_port_init(void);

/* Blocking read of one byte from the host link; returns the byte (0..255),
 * or -1 when the link is closed (posix: EOF on the pty) - the core then exits. */
int eb_port_getc(void);

/* Write n bytes to the host link (blocking until queued). */
void eb_port_write(const uint8_t *data, size_t n);

/* Free-running tick counter and its frequency in Hz. The counter may wrap at
 * 2^eb_port_counter_bits(); the core computes differences modulo that width. */
uint32_t eb_port_counter(void);
uint32_t eb_port_counter_hz(void);
uint32_t eb_port_counter_bits(void);

/* The source of the clock eb_port_counter() counts and the documented bound of
 * its frequency error in ppm (eb-info clock, clock-ppm, clock-fallback):
 * "hse-bypass", "msi-lse" (MSI trimmed by the LSE crystal), "hsi", "msi" (an
 * untrimmed RC oscillator), "emulated" (an emulator's virtual clock), "host"
 * (the computer's clock); *ppm 0 when no bound applies. *fallback names the
 * source the port wanted but could not start ("none" when it got it): a port
 * never falls back silently. */
const char *eb_port_clock(uint32_t *ppm, const char **fallback);

/* Die temperature in milli-degrees Celsius; returns 0 on success, -1 if the
 * port has no sensor. */
int eb_port_temp_mc(int32_t *milli_c);

/* Optional GPIO marker for an external power monitor (energy mode): drive the
 * line low (level 0) at the start of a timed window and high at its end. Ports
 * without one implement it as a no-op. */
void eb_port_marker(int level);

/* Short port name ("posix", "mps2-an386", ...), and whether timings are real
 * cycles of a physical board (1) or emulated instruction counts (0). */
const char *eb_port_name(void);
int eb_port_timing_is_real(void);

#endif /* EB_PORT_H */
