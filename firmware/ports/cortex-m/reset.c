/*
 * reset.c - the reset path of the Cortex-M ports (declared in cortexm_port.h).
 * No C++ constructors, no newlib crt0 (the ports link with -nostartfiles).
 * It needs the linker script's symbols, main() and the port's
 * eb_port_cortexm_before_main(), never the port's vector table: the table's
 * address is the linker's __vector_table, so the table (which points at
 * eb_port_cortexm_reset) and this file do not need each other.
 */
#include <stdint.h>

#include "armv7m_regs.h"
#include "cortexm_port.h"

extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];
extern uint32_t __stack_top[], __stack_limit[];
extern const uint32_t __vector_table[];

int main(void);

__attribute__((naked, noreturn)) void eb_port_cortexm_reset(void)
{
    __asm volatile(
        "ldr  r0, =0xE000ED88      \n" /* CPACR */
        "ldr  r1, [r0]             \n"
        "orr  r1, r1, #(0xF << 20) \n" /* CP10, CP11: full access */
        "str  r1, [r0]             \n"
        "dsb                       \n"
        "isb                       \n"
        "ldr  r0, =__stack_top     \n" /* in case a debugger entered here */
        "mov  sp, r0               \n"
        "b    eb_port_cortexm_cstart \n"
        ::: "r0", "r1", "memory");
}

__attribute__((noreturn, used)) void eb_port_cortexm_cstart(void)
{
    volatile uint32_t *src = __data_load;
    volatile uint32_t *dst = __data_start;
    /* Word loops through volatile pointers: no library call, no FP registers. */
    while (dst < __data_end) {
        *dst++ = *src++;
    }
    for (dst = __bss_start; dst < __bss_end;) {
        *dst++ = 0u;
    }
    {
        uint32_t sp;
        __asm volatile("mov %0, sp" : "=r"(sp));
        for (dst = __stack_limit; (uintptr_t)dst < sp - 64u;) {
            *dst++ = EB_STACK_PAINT;
        }
    }
    /* The image's vector table, wherever the boot put VTOR (0: flash aliased
     * there on an STM32 booting from it; the table itself on MPS2). */
    SCB_VTOR = (uint32_t)(uintptr_t)__vector_table;
    __asm volatile("dsb\n isb" ::: "memory");
    eb_port_cortexm_before_main();
    (void)main();
    for (;;) {
        __asm volatile("wfi");
    }
}
