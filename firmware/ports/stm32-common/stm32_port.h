/*
 * stm32_port.h - what the STM32 ports share: the bounded register wait every
 * clock and peripheral bring-up uses.
 *
 * Bounded waits: a ready bit that never sets (a clock that does not start, a
 * peripheral an emulator does not model) must not hang the board silently. The
 * port then falls back to a state it can vouch for and reports the clock it
 * really runs at (eb-info counter-hz), so the host sees the difference
 * (edgebench selftest compares it with the board profile and the host clock).
 */
#ifndef STM32_PORT_H
#define STM32_PORT_H

#include <stdint.h>

/* Loop iterations of a bounded wait: at 180 MHz and a few cycles per poll,
 * about 10 ms; the longest documented start-up (PLL lock, ADC regulator) is
 * well under 1 ms. */
#define STM32_WAIT_TRIES 500000u

/* 1 when (*reg & mask) == want within STM32_WAIT_TRIES polls, else 0. */
static inline int stm32_wait(volatile uint32_t *reg, uint32_t mask, uint32_t want)
{
    uint32_t i;
    for (i = 0; i < STM32_WAIT_TRIES; i++) {
        if ((*reg & mask) == want) {
            return 1;
        }
    }
    return 0;
}

#endif /* STM32_PORT_H */
