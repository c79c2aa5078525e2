/*
 * startup_stm32.c - vector table, reset handler and fault line of the STM32
 * ports (Cortex-M4F: STM32F4, STM32L4+).
 *
 * Reset: the core loads SP and the reset vector from the table at the start of
 * flash (0x08000000, aliased at 0 when booting from flash). The reset handler
 * enables the FPU (CPACR CP10/CP11) before any C code can touch an FP register,
 * points VTOR at the table, copies .data from its load image in flash, zeroes
 * .bss, paints the unused stack (so its high-water mark can be read with a
 * debugger) and calls main(). Clocks are eb_port_init()'s job, not the reset
 * handler's: the core calls it first.
 *
 * Faults print one protocol-style line through the port's polled UART
 * (eb_port_stm32_raw_puts) and stop: e-[eb-fault exc=... pc=... lr=... cfsr=...].
 * The number of external interrupts comes from the port (STM32_N_IRQ).
 */
#include <stddef.h>
#include <stdint.h>

#include "armv7m_regs.h"
#include "stm32_port.h"

#ifndef STM32_N_IRQ
#error "STM32_N_IRQ (external interrupts of the chip) is set by the port's port.mk"
#endif

extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];
extern uint32_t __stack_top[], __stack_limit[];

#define STM32_STACK_PAINT 0x5AC35AC3u

int main(void);
void eb_port_stm32_reset(void);
void eb_port_stm32_cstart(void);
void eb_port_stm32_fault_handler(void);
void eb_port_stm32_fault_report(const uint32_t *frame, uint32_t exc_return);

typedef void (*eb_vector)(void);
extern const eb_vector eb_port_stm32_vectors[16 + STM32_N_IRQ];

__attribute__((naked, noreturn)) void eb_port_stm32_reset(void)
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
        "b    eb_port_stm32_cstart \n"
        ::: "r0", "r1", "memory");
}

__attribute__((noreturn, used)) void eb_port_stm32_cstart(void)
{
    volatile uint32_t *src = __data_load;
    volatile uint32_t *dst = __data_start;
    SCB_VTOR = (uint32_t)(uintptr_t)eb_port_stm32_vectors;
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
            *dst++ = STM32_STACK_PAINT;
        }
    }
    (void)main();
    for (;;) {
        __asm volatile("wfi");
    }
}

static void put_hex(const char *key, uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    char buf[24];
    size_t n = 0;
    int i;
    buf[n++] = ' ';
    while (*key && n < 10u) {
        buf[n++] = *key++;
    }
    buf[n++] = '=';
    for (i = 7; i >= 0; i--) {
        buf[n++] = digits[(v >> (4 * i)) & 0xFu];
    }
    buf[n] = '\0';
    eb_port_stm32_raw_puts(buf);
}

__attribute__((noreturn, used)) void eb_port_stm32_fault_report(const uint32_t *frame,
                                                                uint32_t exc_return)
{
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    eb_port_stm32_raw_puts("\r\ne-[eb-fault");
    put_hex("exc", ipsr & 0x1FFu);
    put_hex("pc", frame[6]);
    put_hex("lr", frame[5]);
    put_hex("cfsr", SCB_CFSR);
    put_hex("hfsr", SCB_HFSR);
    put_hex("bfar", SCB_BFAR);
    put_hex("excret", exc_return);
    eb_port_stm32_raw_puts("]\r\n");
    for (;;) {
        __asm volatile("wfi");
    }
}

__attribute__((naked)) void eb_port_stm32_fault_handler(void)
{
    __asm volatile(
        "tst   lr, #4      \n"
        "ite   eq          \n"
        "mrseq r0, msp     \n"
        "mrsne r0, psp     \n"
        "mov   r1, lr      \n"
        "b     eb_port_stm32_fault_report \n");
}

/* Every entry but the reset vector reports a fault: no interrupt handler runs
 * (the ports poll; an interrupt that only wakes WFI stays masked by PRIMASK). */
#define F eb_port_stm32_fault_handler
__attribute__((section(".isr_vector"), used))
const eb_vector eb_port_stm32_vectors[16 + STM32_N_IRQ] = {
    (eb_vector)(uintptr_t)__stack_top, /* initial MSP */
    eb_port_stm32_reset,               /* Reset */
    F, F, F, F, F,                     /* NMI, HardFault, MemManage, BusFault, UsageFault */
    0, 0, 0, 0,                        /* reserved */
    F, F, 0, F, F,                     /* SVCall, DebugMonitor, reserved, PendSV, SysTick */
    [16 ... 16 + STM32_N_IRQ - 1] = F, /* external interrupts */
};
#undef F
