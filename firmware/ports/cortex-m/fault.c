/*
 * fault.c - the fault line of the Cortex-M ports (MPS2 under QEMU, STM32): every
 * fault vector points at eb_port_cortexm_fault_handler, which prints one line in
 * the wire protocol's style and stops, so the host sees why the board went
 * silent instead of a bare timeout:
 *   e-[eb-fault exc=... pc=... lr=... cfsr=... hfsr=... bfar=... excret=...]
 * The port provides eb_port_cortexm_fault_uart() (cortexm_port.h) and eb_port_write().
 */
#include <stddef.h>
#include <stdint.h>

#include "armv7m_regs.h"
#include "cortexm_port.h"
#include "eb_port.h"

static void puts_raw(const char *s)
{
    size_t n = 0;
    while (s[n] != '\0') {
        n++;
    }
    eb_port_write((const uint8_t *)s, n);
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
    puts_raw(buf);
}

__attribute__((noreturn, used)) void eb_port_cortexm_fault_report(const uint32_t *frame,
                                                                  uint32_t exc_return)
{
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    eb_port_cortexm_fault_uart();
    puts_raw("\r\ne-[eb-fault");
    put_hex("exc", ipsr & 0x1FFu);
    put_hex("pc", frame[6]);
    put_hex("lr", frame[5]);
    put_hex("cfsr", SCB_CFSR);
    put_hex("hfsr", SCB_HFSR);
    put_hex("bfar", SCB_BFAR);
    put_hex("excret", exc_return);
    puts_raw("]\r\n");
    for (;;) {
        __asm volatile("wfi");
    }
}

/* The stacked frame is on MSP or PSP, as bit 2 of EXC_RETURN says. */
__attribute__((naked)) void eb_port_cortexm_fault_handler(void)
{
    __asm volatile(
        "tst   lr, #4      \n"
        "ite   eq          \n"
        "mrseq r0, msp     \n"
        "mrsne r0, psp     \n"
        "mov   r1, lr      \n"
        "b     eb_port_cortexm_fault_report \n");
}
