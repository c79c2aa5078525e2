/*
 * eb_port_mps2.c - eb_port.h for the Arm MPS2 FPGA images AN386 (Cortex-M4F) and
 * AN500 (Cortex-M7), as emulated by qemu-system-arm (-M mps2-an386 / mps2-an500).
 *
 * Host link: CMSDK APB UART0 at 0x40004000, polled, 8N1, 115200 baud divisor for
 *   the 25 MHz peripheral clock (QEMU ignores the divisor; a real board uses it).
 * Counter: CMSDK APB timer 0 at 0x40000000, a 32-bit down-counter clocked at
 *   PCLK = 25 MHz, free-running from RELOAD = 0xFFFFFFFF with its interrupt off.
 *   eb_port_counter() returns 0xFFFFFFFF - VALUE, an up-counter that wraps at
 *   2^32 (every 171.8 s). Why not the DWT cycle counter: QEMU does not implement
 *   DWT_CYCCNT. Why not SysTick: it is 24 bits wide (wraps every 0.67 s at 25 MHz)
 *   and widening it needs an overflow interrupt and a race-free read sequence;
 *   the APB timer gives 32 bits in one load.
 * Under QEMU with -icount shift=N the counter advances with virtual time, i.e.
 *   with the number of emulated instructions (2^N ns each): timings are
 *   `emulated` (eb_port_timing_is_real() == 0). On a real MPS2 board the same
 *   binary would measure real 25 MHz ticks, but the firmware cannot tell the two
 *   apart, so the port (and its board profiles) always says emulated.
 * No die temperature sensor; the energy-mode marker is a no-op.
 *
 * Also the port's two hooks of the reset path and fault line every Cortex-M port
 * shares (cortex-m/cortexm_port.h): the M7's caches before main(), and UART0
 * made writable for a fault line. They live here, below cortex-m/reset.c and
 * fault.c, not in startup.c, whose vector table points at those two.
 */
#include <stddef.h>
#include <stdint.h>

#include "cortexm_port.h"
#include "eb_port.h"
#include "mps2_regs.h"

#ifndef EB_MPS2_BAUD
#define EB_MPS2_BAUD 115200u
#endif

#if defined(EB_MPS2_AN386)
#define EB_MPS2_NAME "mps2-an386"
#elif defined(EB_MPS2_AN500)
#define EB_MPS2_NAME "mps2-an500"
#else
#error "define EB_MPS2_AN386 or EB_MPS2_AN500 (set by the port's port.mk)"
#endif

#if defined(EB_MPS2_CORTEX_M7)
/* Armv7-M cache enable (Cortex-M7 TRM, section 4.1): invalidate, then enable.
 * QEMU does not model caches (the maintenance registers are no-ops there); on a
 * real AN500 board this is what makes the M7 run at its speed. */
static void mps2_m7_enable_caches(void)
{
    uint32_t ccsidr, sets, ways, s, w;
    __asm volatile("dsb\n isb" ::: "memory");
    SCB_ICIALLU = 0u;
    SCB_CSSELR = 0u;                     /* level 1 data cache */
    __asm volatile("dsb" ::: "memory");
    ccsidr = SCB_CCSIDR;
    sets = (ccsidr >> 13) & 0x7FFFu;
    ways = (ccsidr >> 3) & 0x3FFu;
    for (s = 0; s <= sets; s++) {
        for (w = 0; w <= ways; w++) {
            SCB_DCISW = (s << 5) | (w << 30);
        }
    }
    __asm volatile("dsb" ::: "memory");
    SCB_CCR |= SCB_CCR_IC | SCB_CCR_DC;
    __asm volatile("dsb\n isb" ::: "memory");
}
#endif

/* After .data/.bss (cortex-m/reset.c), before main(): the M7's caches. */
void eb_port_cortexm_before_main(void)
{
#if defined(EB_MPS2_CORTEX_M7)
    mps2_m7_enable_caches();
#endif
}

/* The fault line (cortex-m/fault.c) writes through eb_port_write: make UART0
 * writable, also before eb_port_init. */
void eb_port_cortexm_fault_uart(void)
{
    const uint32_t b = MPS2_UART0_BASE;
    if (MPS2_UART_BAUDDIV(b) < 16u) {
        MPS2_UART_BAUDDIV(b) = MPS2_PCLK_HZ / EB_MPS2_BAUD;
    }
    MPS2_UART_CTRL(b) |= MPS2_UART_CTRL_TXEN;
}

void eb_port_init(void)
{
    const uint32_t u = MPS2_UART0_BASE;
    const uint32_t t = MPS2_TIMER0_BASE;

    /* UART0: divisor first (QEMU ignores a divisor below 16), then TX+RX on,
     * no interrupts; clear any stale overrun flags. */
    MPS2_UART_CTRL(u) = 0u;
    MPS2_UART_BAUDDIV(u) = MPS2_PCLK_HZ / EB_MPS2_BAUD; /* 217 at 115200 */
    MPS2_UART_STATE(u) = MPS2_UART_STATE_TXOVR | MPS2_UART_STATE_RXOVR;
    MPS2_UART_CTRL(u) = MPS2_UART_CTRL_TXEN | MPS2_UART_CTRL_RXEN | MPS2_UART_CTRL_RXIRQEN;

    /* The RX interrupt only wakes WFI in eb_port_getc(): it is enabled in the
     * NVIC but masked by PRIMASK, so no handler ever runs. */
    __asm volatile("cpsid i" ::: "memory");
    NVIC_ICPR0 = 1u << MPS2_UART0_RX_IRQ;
    NVIC_ISER0 = 1u << MPS2_UART0_RX_IRQ;

    /* Timer 0: stop, full 32-bit period, run without interrupt. */
    MPS2_TIMER_CTRL(t) = 0u;
    MPS2_TIMER_RELOAD(t) = 0xFFFFFFFFu;
    MPS2_TIMER_VALUE(t) = 0xFFFFFFFFu;
    MPS2_TIMER_INTCLR(t) = 1u;
    MPS2_TIMER_CTRL(t) = MPS2_TIMER_CTRL_EN;
}

/* Waits in WFI, woken by the (masked) UART0 RX interrupt, rather than spinning
 * on the STATE register. On a real board that saves power; under QEMU 7.2 it is
 * needed: its CMSDK UART model does not tell the character back-end when the
 * guest has emptied the 1-byte RX buffer (no qemu_chr_fe_accept_input()), so
 * the next host byte is only read when QEMU's main loop wakes for another
 * reason - and an idle (WFI) CPU under -icount is such a reason, a spinning one
 * is not (observed: input stalls forever). A byte arriving between the STATE
 * check and WFI leaves the interrupt pending, and WFI then returns at once. */
int eb_port_getc(void)
{
    const uint32_t u = MPS2_UART0_BASE;
    uint32_t c;
    while (!(MPS2_UART_STATE(u) & MPS2_UART_STATE_RXFULL)) {
        __asm volatile("wfi" ::: "memory");
    }
    c = MPS2_UART_DATA(u) & 0xFFu;
    MPS2_UART_INTSTAT(u) = MPS2_UART_INT_RX;   /* W1C */
    NVIC_ICPR0 = 1u << MPS2_UART0_RX_IRQ;
    /* A UART cannot tell that the host went away: never returns -1. */
    return (int)c;
}

void eb_port_write(const uint8_t *data, size_t n)
{
    const uint32_t u = MPS2_UART0_BASE;
    size_t i;
    for (i = 0; i < n; i++) {
        while (MPS2_UART_STATE(u) & MPS2_UART_STATE_TXFULL) {
        }
        MPS2_UART_DATA(u) = data[i];
    }
}

uint32_t eb_port_counter(void)
{
    return 0xFFFFFFFFu - MPS2_TIMER_VALUE(MPS2_TIMER0_BASE);
}

uint32_t eb_port_counter_hz(void)
{
    return MPS2_PCLK_HZ;
}

uint32_t eb_port_counter_bits(void)
{
    return 32u;
}

int eb_port_temp_mc(int32_t *milli_c)
{
    (void)milli_c;
    return -1; /* no die temperature sensor on MPS2 */
}

void eb_port_marker(int level)
{
    (void)level; /* no marker line wired: energy mode is not supported here */
}

const char *eb_port_name(void)
{
    return EB_MPS2_NAME;
}

int eb_port_timing_is_real(void)
{
    return 0;
}

const char *eb_port_clock(uint32_t *ppm, const char **fallback)
{
    *ppm = 0u;                   /* QEMU's virtual clock: no oscillator, no bound */
    *fallback = "none";
    return "emulated";
}
