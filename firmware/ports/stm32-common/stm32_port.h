/*
 * stm32_port.h - what the STM32 ports share: the bounded register wait every
 * clock and peripheral bring-up uses, and the polled UART transmit loop (the
 * F4's USART and the L4's LPUART differ in registers, not in the loop).
 *
 * Bounded waits: a ready bit that never sets (a clock that does not start, a
 * peripheral an emulator does not model) must not hang the board silently. The
 * port then falls back to a state it can vouch for and reports the clock it
 * really runs at (eb-info counter-hz), so the host sees the difference
 * (edgebench selftest compares it with the board profile and the host clock).
 */
#ifndef STM32_PORT_H
#define STM32_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "eb_config.h"

/* The host link's baud rate: MLPerf Tiny's performance mode runs at 115200,
 * its energy mode at 9600 (through the energy monitor's isolated UART). */
#ifndef EB_STM32_BAUD
#if EB_CFG_ENERGY_MODE
#define EB_STM32_BAUD 9600u
#else
#define EB_STM32_BAUD 115200u
#endif
#endif

/* The 16 MHz internal RC oscillator every STM32 here can fall back to. */
#define HSI_HZ 16000000u

/* Loop iterations of a bounded wait: at 180 MHz and a few cycles per poll,
 * about 10 ms; the longest documented start-up (PLL lock, ADC regulator) is
 * well under 1 ms. */
#define STM32_WAIT_TRIES 500000u

/* 1 when (*reg & mask) == want within `tries` polls, else 0. */
static inline int stm32_wait_n(volatile uint32_t *reg, uint32_t mask, uint32_t want, uint32_t tries)
{
    uint32_t i;
    for (i = 0; i < tries; i++) {
        if ((*reg & mask) == want) {
            return 1;
        }
    }
    return 0;
}

/* 1 when (*reg & mask) == want within STM32_WAIT_TRIES polls, else 0. */
static inline int stm32_wait(volatile uint32_t *reg, uint32_t mask, uint32_t want)
{
    return stm32_wait_n(reg, mask, want, STM32_WAIT_TRIES);
}

/* Write n bytes: wait for `txe` in *status before each write to *data. */
static inline void stm32_uart_write(volatile uint32_t *status, uint32_t txe, volatile uint32_t *data,
                                    const uint8_t *bytes, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        while (!(*status & txe)) {
        }
        *data = bytes[i];
    }
}

#endif /* STM32_PORT_H */
