/*
 * startup_stm32.c - the vector table of the STM32 ports (Cortex-M4F: STM32F4,
 * STM32L4+), pointing at the shared reset path and fault line
 * (cortex-m/reset.c, cortex-m/fault.c). The port's hooks of those two are in
 * its eb_port.h implementation (eb_port_stm32f4.c, eb_port_l4r5.c), below them.
 *
 * Reset: the core loads SP and the reset vector from the table at the start of
 * flash (0x08000000, aliased at 0 when booting from flash); the reset path
 * enables the FPU, copies .data, zeroes .bss, paints the stack, points VTOR at
 * the table (the linker script's __vector_table) and calls main(). Clocks are
 * eb_port_init()'s job, not the reset path's: the core calls it first.
 *
 * Faults print one protocol-style line and stop (cortex-m/fault.c).
 * The number of external interrupts comes from the port (STM32_N_IRQ).
 */
#include <stdint.h>

#include "cortexm_port.h"

#ifndef STM32_N_IRQ
#error "STM32_N_IRQ (external interrupts of the chip) is set by the port's port.mk"
#endif

extern uint32_t __stack_top[];

typedef void (*eb_vector)(void);
extern const eb_vector eb_port_stm32_vectors[16 + STM32_N_IRQ];

/* Every entry but the reset vector reports a fault: no interrupt handler runs
 * (the ports poll; an interrupt that only wakes WFI stays masked by PRIMASK). */
#define F eb_port_cortexm_fault_handler
__attribute__((section(".isr_vector"), used))
const eb_vector eb_port_stm32_vectors[16 + STM32_N_IRQ] = {
    (eb_vector)(uintptr_t)__stack_top, /* initial MSP */
    eb_port_cortexm_reset,             /* Reset */
    F, F, F, F, F,                     /* NMI, HardFault, MemManage, BusFault, UsageFault */
    0, 0, 0, 0,                        /* reserved */
    F, F, 0, F, F,                     /* SVCall, DebugMonitor, reserved, PendSV, SysTick */
    [16 ... 16 + STM32_N_IRQ - 1] = F, /* external interrupts */
};
#undef F
