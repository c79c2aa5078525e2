/*
 * startup.c - vector table of the MPS2 Cortex-M4F (AN386) and Cortex-M7 (AN500)
 * ports: its entries point at the shared reset path and fault line
 * (cortex-m/reset.c, cortex-m/fault.c). The port's hooks of those two
 * (eb_port_cortexm_before_main, eb_port_cortexm_fault_uart) are in
 * eb_port_mps2.c, below them: the table needs the shared code, the shared code
 * needs the hooks, and nothing needs the table.
 *
 * Reset: the core loads SP and the reset vector from the table at 0x00000000
 * (VTOR resets to 0); the reset path enables the FPU, copies .data from its load
 * image in code RAM, zeroes .bss, paints the unused stack, points VTOR at this
 * table, (M7) enables the caches (eb_port_cortexm_before_main) and calls main().
 */
#include <stdint.h>

#include "cortexm_port.h"

extern uint32_t __stack_top[];

void eb_port_mps2_default_handler(void);

/* Every other exception (none is enabled) is reported as a fault too. */
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
