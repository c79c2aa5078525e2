/*
 * cortexm_port.h - what the Cortex-M ports (MPS2 under QEMU, STM32) share:
 * the reset path (reset.c) and the fault line (fault.c). A port's vector table
 * (in section .isr_vector, which the linker script starts with the symbol
 * __vector_table) points its reset entry at eb_port_cortexm_reset and its fault
 * entries at eb_port_cortexm_fault_handler, and the port provides the two hooks
 * below.
 */
#ifndef CORTEXM_PORT_H
#define CORTEXM_PORT_H

#include <stdint.h>

/* Reset: FPU on (CPACR CP10/CP11) before any C code can touch an FP register,
 * SP from the linker script, then eb_port_cortexm_cstart: .data copied, .bss
 * zeroed, the unused stack painted with EB_STACK_PAINT (a debugger, or QEMU's
 * monitor in benchmarks/firmware_footprint.py, reads its high-water mark), VTOR
 * pointed at the linker script's __vector_table (the start of .isr_vector), the
 * port's eb_port_cortexm_before_main(), main(). */
#define EB_STACK_PAINT 0x5AC35AC3u
void eb_port_cortexm_reset(void);
void eb_port_cortexm_cstart(void);

/* Faults: one protocol-style line, then stop:
 * e-[eb-fault exc=... pc=... lr=... cfsr=... hfsr=... bfar=... excret=...] */
void eb_port_cortexm_fault_handler(void);
void eb_port_cortexm_fault_report(const uint32_t *frame, uint32_t exc_return);

/* Provided by the port, in its eb_port.h implementation (not beside its vector
 * table, which points at the reset path and fault line: dependencies point one
 * way, table -> reset/fault -> these hooks): what must happen after .data/.bss
 * and before main() (caches); and making the host link writable with
 * eb_port_write(), also when a fault came before eb_port_init(). */
void eb_port_cortexm_before_main(void);
void eb_port_cortexm_fault_uart(void);

#endif /* CORTEXM_PORT_H */
