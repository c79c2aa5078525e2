/*
 * startup.c - vector table, reset handler and fault reporting for the MPS2
 * Cortex-M4F (AN386) and Cortex-M7 (AN500) ports.
 *
 * Reset: the core loads SP and the reset vector from the table at 0x00000000
 * (VTOR resets to 0), then eb_port_mps2_reset() enables the FPU (CPACR CP10/CP11
 * full access) BEFORE any C code that might touch an FP register runs, and
 * eb_port_mps2_cstart() copies .data from its load image in code RAM, zeroes
 * .bss, paints the unused stack, (M7) enables the caches and calls main().
 * No C++ constructors, no
 * newlib crt0 (linked with -nostartfiles).
 */
#include <stdint.h>
#include <string.h>

#include "mps2_regs.h"

extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];
extern uint32_t __stack_top[], __stack_limit[];

/* Unused stack is painted with this word at reset, so a debugger (or QEMU's
 * monitor: benchmarks/firmware_footprint.py) can read the stack's high-water mark. */
#define EB_MPS2_STACK_PAINT 0x5AC35AC3u

int main(void);
void eb_port_mps2_reset(void);
void eb_port_mps2_cstart(void);
void eb_port_mps2_default_handler(void);
void eb_port_mps2_fault_handler(void);
void eb_port_mps2_fault_report(const uint32_t *frame, uint32_t exc_return);
void eb_port_mps2_raw_puts(const char *s);

/* ---------------------------------------------------------------- reset */

__attribute__((naked, noreturn)) void eb_port_mps2_reset(void)
{
    __asm volatile(
        "ldr  r0, =0xE000ED88   \n" /* CPACR */
        "ldr  r1, [r0]          \n"
        "orr  r1, r1, #(0xF << 20) \n" /* CP10, CP11: full access */
        "str  r1, [r0]          \n"
        "dsb                    \n"
        "isb                    \n"
        "ldr  r0, =__stack_top  \n" /* in case a debugger entered here */
        "mov  sp, r0            \n"
        "b    eb_port_mps2_cstart \n"
        ::: "r0", "r1", "memory");
}

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

__attribute__((noreturn, used)) void eb_port_mps2_cstart(void)
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
            *dst++ = EB_MPS2_STACK_PAINT;
        }
    }
#if defined(EB_MPS2_CORTEX_M7)
    mps2_m7_enable_caches();
#endif
    (void)main();
    for (;;) {
        __asm volatile("wfi");
    }
}

/* ------------------------------------------------------------- faults */

/* Polling output that works before/without eb_port_init (enables TX itself). */
void eb_port_mps2_raw_puts(const char *s)
{
    const uint32_t b = MPS2_UART0_BASE;
    if (MPS2_UART_BAUDDIV(b) < 16u) {
        MPS2_UART_BAUDDIV(b) = MPS2_PCLK_HZ / 115200u;
    }
    MPS2_UART_CTRL(b) |= MPS2_UART_CTRL_TXEN;
    while (*s) {
        while (MPS2_UART_STATE(b) & MPS2_UART_STATE_TXFULL) {
        }
        MPS2_UART_DATA(b) = (uint8_t)*s++;
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
    eb_port_mps2_raw_puts(buf);
}

/* One error line in the wire protocol's style, then stop: the host sees why the
 * board went silent instead of a bare timeout. */
__attribute__((noreturn, used)) void eb_port_mps2_fault_report(const uint32_t *frame,
                                                               uint32_t exc_return)
{
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    eb_port_mps2_raw_puts("\r\ne-[eb-fault");
    put_hex("exc", ipsr & 0x1FFu);
    put_hex("pc", frame[6]);
    put_hex("lr", frame[5]);
    put_hex("cfsr", SCB_CFSR);
    put_hex("hfsr", SCB_HFSR);
    put_hex("bfar", SCB_BFAR);
    put_hex("excret", exc_return);
    eb_port_mps2_raw_puts("]\r\n");
    for (;;) {
        __asm volatile("wfi");
    }
}

__attribute__((naked)) void eb_port_mps2_fault_handler(void)
{
    __asm volatile(
        "tst   lr, #4      \n"
        "ite   eq          \n"
        "mrseq r0, msp     \n"
        "mrsne r0, psp     \n"
        "mov   r1, lr      \n"
        "b     eb_port_mps2_fault_report \n");
}

void eb_port_mps2_default_handler(void)
{
    eb_port_mps2_fault_handler();
}

/* ------------------------------------------------------- vector table */

typedef void (*eb_vector)(void);

#define MPS2_N_IRQ 32 /* AN386 and AN500 both wire 32 external interrupts */

__attribute__((section(".isr_vector"), used))
const eb_vector eb_port_mps2_vectors[16 + MPS2_N_IRQ] = {
    (eb_vector)(uintptr_t)__stack_top,  /* initial MSP */
    eb_port_mps2_reset,                 /* Reset */
    eb_port_mps2_fault_handler,         /* NMI */
    eb_port_mps2_fault_handler,         /* HardFault */
    eb_port_mps2_fault_handler,         /* MemManage */
    eb_port_mps2_fault_handler,         /* BusFault */
    eb_port_mps2_fault_handler,         /* UsageFault */
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
