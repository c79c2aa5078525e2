/*
 * startup.c - vector table of the MPS2 Cortex-M4F (AN386) and Cortex-M7 (AN500)
 * ports, with their hooks of the shared reset path and fault line
 * (cortex-m/reset.c, cortex-m/fault.c).
 *
 * Reset: the core loads SP and the reset vector from the table at 0x00000000
 * (VTOR resets to 0); the reset path enables the FPU, copies .data from its load
 * image in code RAM, zeroes .bss, paints the unused stack, (M7) enables the
 * caches here (eb_port_cortexm_before_main) and calls main().
 */
#include <stdint.h>
#include <string.h>

#include "cortexm_port.h"
#include "mps2_regs.h"

extern uint32_t __stack_top[];

void eb_port_mps2_default_handler(void);

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

/* ------------------------------------------------------------- faults */

/* The fault line (cortex-m/fault.c) writes through eb_port_write: make UART0
 * writable, also before eb_port_init. */
void eb_port_cortexm_fault_uart(void)
{
    const uint32_t b = MPS2_UART0_BASE;
    if (MPS2_UART_BAUDDIV(b) < 16u) {
        MPS2_UART_BAUDDIV(b) = MPS2_PCLK_HZ / 115200u;
    }
    MPS2_UART_CTRL(b) |= MPS2_UART_CTRL_TXEN;
}

void eb_port_mps2_default_handler(void)
{
    eb_port_cortexm_fault_handler();
}

/* ------------------------------------------------------- vector table */

typedef void (*eb_vector)(void);

#define MPS2_N_IRQ 32 /* AN386 and AN500 both wire 32 external interrupts */

__attribute__((section(".isr_vector"), used))
const eb_vector eb_port_mps2_vectors[16 + MPS2_N_IRQ] = {
    (eb_vector)(uintptr_t)__stack_top,  /* initial MSP */
    eb_port_cortexm_reset,              /* Reset */
    eb_port_cortexm_fault_handler,         /* NMI */
    eb_port_cortexm_fault_handler,         /* HardFault */
    eb_port_cortexm_fault_handler,         /* MemManage */
    eb_port_cortexm_fault_handler,         /* BusFault */
    eb_port_cortexm_fault_handler,         /* UsageFault */
    0, 0, 0, 0,                         /* reserved */
    eb_port_mps2_default_handler,       /* SVCall */
    eb_port_mps2_default_handler,       /* DebugMonitor */
    0,                                  /* reserved */
    eb_port_mps2_default_handler,       /* PendSV */
    eb_port_mps2_default_handler,       /* SysTick (unused: see eb_port_mps2.c) */
    /* External interrupts 0..31: none is enabled by this port. */
#define D4 eb_port_mps2_default_handler, eb_port_mps2_default_handler, \
           eb_port_mps2_default_handler, eb_port_mps2_default_handler
    D4, D4, D4, D4, D4, D4, D4, D4
#undef D4
};
