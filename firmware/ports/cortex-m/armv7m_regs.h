/*
 * armv7m_regs.h - the Armv7-M core registers the Cortex-M ports touch: System
 * Control Block, NVIC, and the DWT cycle counter. Architecture addresses (Arm
 * DDI0403E, the Armv7-M Architecture Reference Manual), the same on every
 * Cortex-M3/M4/M7; not in a vendor SVD. Each define names its manual section,
 * which tests/test_port_registers.py lists beside the SVD-checked ones.
 */
#ifndef ARMV7M_REGS_H
#define ARMV7M_REGS_H

#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

#define SCB_VTOR   REG32(0xE000ED08u)  /* arm DDI0403E B3.2.5 vector table offset */
#define SCB_CPACR  REG32(0xE000ED88u)  /* arm DDI0403E B3.2.20 coprocessor access */
#define SCB_CFSR   REG32(0xE000ED28u)  /* arm DDI0403E B3.2.15 configurable fault status */
#define SCB_HFSR   REG32(0xE000ED2Cu)  /* arm DDI0403E B3.2.16 hard fault status */
#define SCB_BFAR   REG32(0xE000ED38u)  /* arm DDI0403E B3.2.18 bus fault address */
#define SCB_CPACR_CP10_CP11 (0xFu << 20) /* arm DDI0403E B3.2.20 CP10, CP11 full access */

#define NVIC_ISER(n) REG32(0xE000E100u + 4u * (n)) /* arm DDI0403E B3.4.4 set-enable */
#define NVIC_ICPR(n) REG32(0xE000E280u + 4u * (n)) /* arm DDI0403E B3.4.7 clear-pending */

/* Debug Exception and Monitor Control: TRCENA powers the DWT. */
#define DCB_DEMCR        REG32(0xE000EDFCu)  /* arm DDI0403E C1.6.5 DEMCR */
#define DCB_DEMCR_TRCENA (1u << 24)          /* arm DDI0403E C1.6.5 TRCENA */
/* Data Watchpoint and Trace unit: CYCCNT counts core clock cycles (HCLK). It
 * stops while the core sleeps (WFI), so a port timing with it never sleeps. */
#define DWT_CTRL          REG32(0xE0001000u) /* arm DDI0403E C1.8.7 DWT_CTRL */
#define DWT_CYCCNT        REG32(0xE0001004u) /* arm DDI0403E C1.8.8 DWT_CYCCNT */
#define DWT_CTRL_CYCCNTENA (1u << 0)         /* arm DDI0403E C1.8.7 CYCCNTENA */
#define DWT_CTRL_NOCYCCNT  (1u << 25)        /* arm DDI0403E C1.8.7 NOCYCCNT: no cycle counter */

#endif /* ARMV7M_REGS_H */
