/*
 * stm32l4r5_regs.h - the STM32L4R5 registers and bits the nucleo-l4r5zi port
 * touches, written from RM0432 (STM32L4+ reference manual). Each define says
 * where it was checked: "svd STM32L4x5 <PERIPHERAL>.<REGISTER>[.<FIELD>]"
 * against the STM32L4x5 SVD pyOCD ships (the L4+ keeps those registers at the
 * same addresses; tests/test_port_registers.py checks them), "rm RM0432
 * <section>" where the L4+ differs from that SVD or adds bits (4-bit PLLM and
 * LATENCY, PWR_CR5 boost mode), "ds DS12023" for the datasheet's calibration
 * addresses.
 */
#ifndef STM32L4R5_REGS_H
#define STM32L4R5_REGS_H

#include "armv7m_regs.h"

/* Reset and clock control */
#define RCC_CR          REG32(0x40021000u) /* svd STM32L4x5 RCC.CR */
#define RCC_CFGR        REG32(0x40021008u) /* svd STM32L4x5 RCC.CFGR */
#define RCC_PLLCFGR     REG32(0x4002100Cu) /* svd STM32L4x5 RCC.PLLCFGR */
#define RCC_AHB2ENR     REG32(0x4002104Cu) /* svd STM32L4x5 RCC.AHB2ENR */
#define RCC_APB1ENR1    REG32(0x40021058u) /* svd STM32L4x5 RCC.APB1ENR1 */
#define RCC_APB1ENR2    REG32(0x4002105Cu) /* svd STM32L4x5 RCC.APB1ENR2 */
#define RCC_CCIPR       REG32(0x40021088u) /* svd STM32L4x5 RCC.CCIPR */
#define RCC_BDCR        REG32(0x40021090u) /* svd STM32L4x5 RCC.BDCR */
#define RCC_CR_MSION    (1u << 0)          /* svd STM32L4x5 RCC.CR.MSION */
#define RCC_CR_MSIRDY   (1u << 1)          /* svd STM32L4x5 RCC.CR.MSIRDY */
#define RCC_CR_MSIPLLEN (1u << 2)          /* svd STM32L4x5 RCC.CR.MSIPLLEN */
#define RCC_BDCR_LSEON  (1u << 0)          /* svd STM32L4x5 RCC.BDCR.LSEON */
#define RCC_BDCR_LSERDY (1u << 1)          /* svd STM32L4x5 RCC.BDCR.LSERDY */
#define RCC_CR_HSION    (1u << 8)          /* svd STM32L4x5 RCC.CR.HSION */
#define RCC_CR_HSIRDY   (1u << 10)         /* svd STM32L4x5 RCC.CR.HSIRDY */
#define RCC_CR_PLLON    (1u << 24)         /* svd STM32L4x5 RCC.CR.PLLON */
#define RCC_CR_PLLRDY   (1u << 25)         /* svd STM32L4x5 RCC.CR.PLLRDY */
#define RCC_CFGR_SW     (0x3u << 0)        /* svd STM32L4x5 RCC.CFGR.SW */
#define RCC_CFGR_SWS    (0x3u << 2)        /* svd STM32L4x5 RCC.CFGR.SWS */
#define RCC_CFGR_SWS_POS 2u
#define RCC_CFGR_SW_HSI 1u
#define RCC_CFGR_SW_PLL 3u
#define RCC_CFGR_HPRE   (0xFu << 4)        /* svd STM32L4x5 RCC.CFGR.HPRE */
#define RCC_CFGR_HPRE_DIV2 (0x8u << 4)     /* rm RM0432 6.4.3 HPRE = 1000: SYSCLK / 2 */
#define RCC_CFGR_PPRE1  (0x7u << 8)        /* svd STM32L4x5 RCC.CFGR.PPRE1 */
#define RCC_CFGR_PPRE2  (0x7u << 11)       /* svd STM32L4x5 RCC.CFGR.PPRE2 */
#define RCC_PLLCFGR_PLLSRC (0x3u << 0)     /* svd STM32L4x5 RCC.PLLCFGR.PLLSRC */
#define RCC_PLLCFGR_PLLSRC_HSI 2u
#define RCC_PLLCFGR_PLLSRC_MSI 1u          /* rm RM0432 6.4.4 PLLSRC = 01: MSI */
#define RCC_PLLCFGR_PLLM (0xFu << 4)       /* rm RM0432 6.4.4 PLLM[3:0] (L4x5 SVD: 3 bits) */
#define RCC_PLLCFGR_PLLM_POS 4u
#define RCC_PLLCFGR_PLLN (0x7Fu << 8)      /* svd STM32L4x5 RCC.PLLCFGR.PLLN */
#define RCC_PLLCFGR_PLLN_POS 8u
#define RCC_PLLCFGR_PLLREN (1u << 24)      /* svd STM32L4x5 RCC.PLLCFGR.PLLREN */
#define RCC_PLLCFGR_PLLR (0x3u << 25)      /* svd STM32L4x5 RCC.PLLCFGR.PLLR */
#define RCC_AHB2ENR_GPIOFEN (1u << 5)      /* svd STM32L4x5 RCC.AHB2ENR.GPIOFEN */
#define RCC_AHB2ENR_GPIOGEN (1u << 6)      /* svd STM32L4x5 RCC.AHB2ENR.GPIOGEN */
#define RCC_AHB2ENR_ADCEN   (1u << 13)     /* svd STM32L4x5 RCC.AHB2ENR.ADCEN */
#define RCC_APB1ENR1_PWREN  (1u << 28)     /* svd STM32L4x5 RCC.APB1ENR1.PWREN */
#define RCC_APB1ENR2_LPUART1EN (1u << 0)   /* svd STM32L4x5 RCC.APB1ENR2.LPUART1EN */
#define RCC_CCIPR_LPUART1SEL (0x3u << 10)  /* svd STM32L4x5 RCC.CCIPR.LPUART1SEL */
#define RCC_CCIPR_LPUART1SEL_HSI (2u << 10) /* rm RM0432 6.4.31 LPUART1SEL = 10: HSI16 */
#define RCC_CCIPR_ADCSEL     (0x3u << 28)  /* svd STM32L4x5 RCC.CCIPR.ADCSEL */
#define RCC_CCIPR_ADCSEL_SYSCLK (3u << 28)  /* rm RM0432 6.4.31 ADCSEL = 11: SYSCLK */

/* Power control: range 1 boost mode (120 MHz) and VDDIO2 (port G). */
#define PWR_CR1         REG32(0x40007000u) /* svd STM32L4x5 PWR.CR1 */
#define PWR_CR2         REG32(0x40007004u) /* svd STM32L4x5 PWR.CR2 */
#define PWR_SR2         REG32(0x40007014u) /* svd STM32L4x5 PWR.SR2 */
#define PWR_CR5         REG32(0x40007080u) /* rm RM0432 6.4.20 PWR_CR5 (L4+ only) */
#define PWR_CR1_VOS     (0x3u << 9)        /* svd STM32L4x5 PWR.CR1.VOS */
#define PWR_CR1_DBP     (1u << 8)          /* svd STM32L4x5 PWR.CR1.DBP */
#define PWR_CR1_VOS_RANGE1 (1u << 9)       /* rm RM0432 6.4.1 VOS = 01: range 1 */
#define PWR_CR2_IOSV    (1u << 9)          /* svd STM32L4x5 PWR.CR2.IOSV */
#define PWR_SR2_VOSF    (1u << 10)         /* svd STM32L4x5 PWR.SR2.VOSF */
#define PWR_CR5_R1MODE  (1u << 8)          /* rm RM0432 6.4.20 R1MODE: 0 = range 1 boost mode */

/* Flash interface */
#define FLASH_ACR         REG32(0x40022000u) /* svd STM32L4x5 FLASH.ACR */
#define FLASH_ACR_LATENCY (0xFu << 0)        /* rm RM0432 3.7.1 LATENCY[3:0] (L4x5 SVD: 3 bits) */
#define FLASH_ACR_PRFTEN  (1u << 8)          /* svd STM32L4x5 FLASH.ACR.PRFTEN */
#define FLASH_ACR_ICEN    (1u << 9)          /* svd STM32L4x5 FLASH.ACR.ICEN */
#define FLASH_ACR_DCEN    (1u << 10)         /* svd STM32L4x5 FLASH.ACR.DCEN */

/* GPIO: PG7 LPUART1_TX, PG8 LPUART1_RX (AF8); PF13 marker (Arduino D7). */
#define GPIOG_MODER   REG32(0x48001800u) /* svd STM32L4x5 GPIOG.MODER */
#define GPIOG_AFRL    REG32(0x48001820u) /* svd STM32L4x5 GPIOG.AFRL */
#define GPIOG_AFRH    REG32(0x48001824u) /* svd STM32L4x5 GPIOG.AFRH */
#define GPIOF_MODER   REG32(0x48001400u) /* svd STM32L4x5 GPIOF.MODER */
#define GPIOF_OSPEEDR REG32(0x48001408u) /* svd STM32L4x5 GPIOF.OSPEEDR */
#define GPIOF_BSRR    REG32(0x48001418u) /* svd STM32L4x5 GPIOF.BSRR */
#define GPIO_MODE_OUT 1u
#define GPIO_MODE_AF  2u
#define GPIO_AF_LPUART1 8u               /* rm RM0432 / DS12023 table 17 (alternate functions): PG7, PG8 AF8 */

/* LPUART1: the ST-LINK virtual COM port of the NUCLEO-L4R5ZI. */
#define LPUART1_CR1   REG32(0x40008000u) /* svd STM32L4x5 LPUART1.CR1 */
#define LPUART1_BRR   REG32(0x4000800Cu) /* svd STM32L4x5 LPUART1.BRR */
#define LPUART1_ISR   REG32(0x4000801Cu) /* svd STM32L4x5 LPUART1.ISR */
#define LPUART1_ICR   REG32(0x40008020u) /* svd STM32L4x5 LPUART1.ICR */
#define LPUART1_RDR   REG32(0x40008024u) /* svd STM32L4x5 LPUART1.RDR */
#define LPUART1_TDR   REG32(0x40008028u) /* svd STM32L4x5 LPUART1.TDR */
#define LPUART_CR1_UE (1u << 0)          /* svd STM32L4x5 LPUART1.CR1.UE */
#define LPUART_CR1_RE (1u << 2)          /* svd STM32L4x5 LPUART1.CR1.RE */
#define LPUART_CR1_TE (1u << 3)          /* svd STM32L4x5 LPUART1.CR1.TE */
#define LPUART_ISR_ORE  (1u << 3)        /* svd STM32L4x5 LPUART1.ISR.ORE */
#define LPUART_ISR_RXNE (1u << 5)        /* svd STM32L4x5 LPUART1.ISR.RXNE */
#define LPUART_ISR_TXE  (1u << 7)        /* svd STM32L4x5 LPUART1.ISR.TXE */
#define LPUART_ICR_ORECF (1u << 3)       /* svd STM32L4x5 LPUART1.ICR.ORECF */

/* ADC1 and the internal temperature sensor (ADC1_IN17). */
#define ADC1_ISR      REG32(0x50040000u) /* svd STM32L4x5 ADC1.ISR */
#define ADC1_CR       REG32(0x50040008u) /* svd STM32L4x5 ADC1.CR */
#define ADC1_SMPR2    REG32(0x50040018u) /* svd STM32L4x5 ADC1.SMPR2 */
#define ADC1_SQR1     REG32(0x50040030u) /* svd STM32L4x5 ADC1.SQR1 */
#define ADC1_DR       REG32(0x50040040u) /* svd STM32L4x5 ADC1.DR */
#define ADC_CCR       REG32(0x50040308u) /* svd STM32L4x5 ADC123_Common.CCR */
#define ADC_ISR_ADRDY (1u << 0)          /* svd STM32L4x5 ADC1.ISR.ADRDY */
#define ADC_ISR_EOC   (1u << 2)          /* svd STM32L4x5 ADC1.ISR.EOC */
#define ADC_CR_ADEN   (1u << 0)          /* svd STM32L4x5 ADC1.CR.ADEN */
#define ADC_CR_ADSTART (1u << 2)         /* svd STM32L4x5 ADC1.CR.ADSTART */
#define ADC_CR_ADVREGEN (1u << 28)       /* svd STM32L4x5 ADC1.CR.ADVREGEN */
#define ADC_CR_DEEPPWD (1u << 29)        /* svd STM32L4x5 ADC1.CR.DEEPPWD */
#define ADC_CR_ADCAL  (1u << 31)         /* svd STM32L4x5 ADC1.CR.ADCAL */
#define ADC_SMPR2_SMP17 (0x7u << 21)     /* svd STM32L4x5 ADC1.SMPR2.SMP17 */
#define ADC_SQR1_SQ1  (0x1Fu << 6)       /* svd STM32L4x5 ADC1.SQR1.SQ1 */
#define ADC_CCR_CKMODE_DIV4 (3u << 16)   /* svd STM32L4x5 ADC123_Common.CCR.CKMODE: 11 = HCLK / 4 */
#define ADC_CCR_TSEN  (1u << 23)         /* svd STM32L4x5 ADC123_Common.CCR.TSEN */
#define ADC_TEMP_CHANNEL 17u             /* rm RM0432 21.4.32 temperature sensor on ADC1_IN17 */
/* Factory calibration (ds DS12023, "temperature sensor calibration values"):
 * raw readings at 30 and 130 C with VDDA = 3.0 V; the Nucleo runs VDDA at 3.3 V. */
#define TS_CAL1       (*(volatile const uint16_t *)0x1FFF75A8u)
#define TS_CAL2       (*(volatile const uint16_t *)0x1FFF75CAu)
#define TS_CAL2_C     130

#endif /* STM32L4R5_REGS_H */
