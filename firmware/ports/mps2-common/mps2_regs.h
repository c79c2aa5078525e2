/*
 * mps2_regs.h - the few MPS2 (AN386 Cortex-M4F / AN500 Cortex-M7) registers the
 * edgebench port touches. Addresses are the same on both FPGA images (QEMU
 * hw/arm/mps2.c; Arm AN386 / AN500): CMSDK APB timer 0 at 0x40000000, UART0 at
 * 0x40004000, peripheral clock 25 MHz; System Control Block of the Armv7-M core.
 */
#ifndef MPS2_REGS_H
#define MPS2_REGS_H

#include <stdint.h>

#define MPS2_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* Peripheral (APB) clock feeding UART and timers, in Hz. */
#define MPS2_PCLK_HZ 25000000u

/* CMSDK APB UART (Arm DDI0479C, section 4.3). */
#define MPS2_UART0_BASE      0x40004000u
#define MPS2_UART_DATA(b)    MPS2_REG((b) + 0x00u)
#define MPS2_UART_STATE(b)   MPS2_REG((b) + 0x04u)
#define MPS2_UART_CTRL(b)    MPS2_REG((b) + 0x08u)
#define MPS2_UART_INTSTAT(b) MPS2_REG((b) + 0x0Cu)
#define MPS2_UART_BAUDDIV(b) MPS2_REG((b) + 0x10u)
#define MPS2_UART_STATE_TXFULL  (1u << 0)
#define MPS2_UART_STATE_RXFULL  (1u << 1)
#define MPS2_UART_STATE_TXOVR   (1u << 2)
#define MPS2_UART_STATE_RXOVR   (1u << 3)
#define MPS2_UART_CTRL_TXEN     (1u << 0)
#define MPS2_UART_CTRL_RXEN     (1u << 1)
#define MPS2_UART_CTRL_RXIRQEN  (1u << 3)
#define MPS2_UART_INT_RX        (1u << 1)
#define MPS2_UART0_RX_IRQ       0u   /* NVIC line of UART0 RX (AN386, AN500) */

/* CMSDK APB timer (Arm DDI0479C, section 4.4): 32-bit down-counter. */
#define MPS2_TIMER0_BASE     0x40000000u
#define MPS2_TIMER_CTRL(b)   MPS2_REG((b) + 0x00u)
#define MPS2_TIMER_VALUE(b)  MPS2_REG((b) + 0x04u)
#define MPS2_TIMER_RELOAD(b) MPS2_REG((b) + 0x08u)
#define MPS2_TIMER_INTCLR(b) MPS2_REG((b) + 0x0Cu)
#define MPS2_TIMER_CTRL_EN   (1u << 0)

/* Armv7-M NVIC. */
#define NVIC_ISER0 MPS2_REG(0xE000E100u)  /* set-enable, IRQ 0..31 */
#define NVIC_ICPR0 MPS2_REG(0xE000E280u)  /* clear-pending, IRQ 0..31 */

/* Armv7-M System Control Block. */
#define SCB_CPACR  MPS2_REG(0xE000ED88u)  /* coprocessor access control */
#define SCB_CCR    MPS2_REG(0xE000ED14u)  /* configuration and control */
#define SCB_VTOR   MPS2_REG(0xE000ED08u)
#define SCB_CFSR   MPS2_REG(0xE000ED28u)  /* configurable fault status */
#define SCB_HFSR   MPS2_REG(0xE000ED2Cu)
#define SCB_MMFAR  MPS2_REG(0xE000ED34u)
#define SCB_BFAR   MPS2_REG(0xE000ED38u)
#define SCB_ICIALLU MPS2_REG(0xE000EF50u) /* M7: invalidate I-cache */
#define SCB_DCISW   MPS2_REG(0xE000EF60u) /* M7: invalidate D-cache by set/way */
#define SCB_CCSIDR  MPS2_REG(0xE000ED80u)
#define SCB_CSSELR  MPS2_REG(0xE000ED84u)
#define SCB_CCR_IC  (1u << 17)
#define SCB_CCR_DC  (1u << 16)

#endif /* MPS2_REGS_H */
