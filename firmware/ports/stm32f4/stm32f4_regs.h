/*
 * stm32f4_regs.h - the STM32F4 registers and bits the stm32f4 port touches.
 *
 * Written from RM0090 (STM32F405/407/415/417/427/429/437/439), RM0390
 * (STM32F446) and RM0383 (STM32F411). Every address and bit carries where it
 * was checked: "svd <file> <PERIPHERAL>.<REGISTER>[.<FIELD>]" against the vendor
 * SVD that pyOCD ships (pyocd/debug/svd/svd_data.zip; a field name with trailing
 * digits stands for all its numbered bits, e.g. PLLN = PLLN0..PLLN8), checked by
 * tests/test_port_registers.py; "rm <manual> <section>" where the bit is not in
 * that SVD (the F446/F411-only voltage scaling and over-drive bits).
 */
#ifndef STM32F4_REGS_H
#define STM32F4_REGS_H

#include "armv7m_regs.h"

/* Reset and clock control */
#define RCC_CR         REG32(0x40023800u) /* svd STM32F41x RCC.CR */
#define RCC_PLLCFGR    REG32(0x40023804u) /* svd STM32F41x RCC.PLLCFGR */
#define RCC_CFGR       REG32(0x40023808u) /* svd STM32F41x RCC.CFGR */
#define RCC_AHB1ENR    REG32(0x40023830u) /* svd STM32F41x RCC.AHB1ENR */
#define RCC_APB1ENR    REG32(0x40023840u) /* svd STM32F41x RCC.APB1ENR */
#define RCC_APB2ENR    REG32(0x40023844u) /* svd STM32F41x RCC.APB2ENR */
#define RCC_CR_HSION   (1u << 0)          /* svd STM32F41x RCC.CR.HSION */
#define RCC_CR_HSIRDY  (1u << 1)          /* svd STM32F41x RCC.CR.HSIRDY */
#define RCC_CR_HSEON   (1u << 16)         /* svd STM32F41x RCC.CR.HSEON */
#define RCC_CR_HSERDY  (1u << 17)         /* svd STM32F41x RCC.CR.HSERDY */
#define RCC_CR_HSEBYP  (1u << 18)         /* svd STM32F41x RCC.CR.HSEBYP */
#define RCC_CR_PLLON   (1u << 24)         /* svd STM32F41x RCC.CR.PLLON */
#define RCC_CR_PLLRDY  (1u << 25)         /* svd STM32F41x RCC.CR.PLLRDY */
#define RCC_PLLCFGR_PLLM_POS 0u
#define RCC_PLLCFGR_PLLM     (0x3Fu << 0)  /* svd STM32F41x RCC.PLLCFGR.PLLM */
#define RCC_PLLCFGR_PLLN_POS 6u
#define RCC_PLLCFGR_PLLN     (0x1FFu << 6) /* svd STM32F41x RCC.PLLCFGR.PLLN */
#define RCC_PLLCFGR_PLLP_POS 16u
#define RCC_PLLCFGR_PLLP     (0x3u << 16)  /* svd STM32F41x RCC.PLLCFGR.PLLP */
#define RCC_PLLCFGR_PLLSRC   (1u << 22)    /* svd STM32F41x RCC.PLLCFGR.PLLSRC */
#define RCC_PLLCFGR_PLLQ_POS 24u
#define RCC_PLLCFGR_PLLQ     (0xFu << 24)  /* svd STM32F41x RCC.PLLCFGR.PLLQ */
#define RCC_CFGR_SW          (0x3u << 0)   /* svd STM32F41x RCC.CFGR.SW */
#define RCC_CFGR_SW_HSI      0u
#define RCC_CFGR_SW_PLL      2u
#define RCC_CFGR_SWS         (0x3u << 2)   /* svd STM32F41x RCC.CFGR.SWS */
#define RCC_CFGR_SWS_POS     2u
#define RCC_CFGR_HPRE        (0xFu << 4)   /* svd STM32F41x RCC.CFGR.HPRE */
#define RCC_CFGR_PPRE1_POS   10u
#define RCC_CFGR_PPRE1       (0x7u << 10)  /* svd STM32F41x RCC.CFGR.PPRE1 */
#define RCC_CFGR_PPRE2_POS   13u
#define RCC_CFGR_PPRE2       (0x7u << 13)  /* svd STM32F41x RCC.CFGR.PPRE2 */
#define RCC_AHB1ENR_GPIOAEN  (1u << 0)     /* svd STM32F41x RCC.AHB1ENR.GPIOAEN */
#define RCC_APB1ENR_TIM2EN   (1u << 0)     /* svd STM32F41x RCC.APB1ENR.TIM2EN */
#define RCC_APB1ENR_USART2EN (1u << 17)    /* svd STM32F41x RCC.APB1ENR.USART2EN */
#define RCC_APB1ENR_PWREN    (1u << 28)    /* svd STM32F41x RCC.APB1ENR.PWREN */
#define RCC_APB2ENR_ADC1EN   (1u << 8)     /* svd STM32F41x RCC.APB2ENR.ADC1EN */

/* Power control: regulator voltage scale 1 (and over-drive on the F446). */
#define PWR_CR         REG32(0x40007000u) /* svd STM32F41x PWR.CR */
#define PWR_CSR        REG32(0x40007004u) /* svd STM32F41x PWR.CSR */
#define PWR_CR_VOS     (0x3u << 14)       /* rm RM0390 5.4.1 VOS[1:0] (RM0383 5.4.1) */
#define PWR_CR_ODEN    (1u << 16)         /* rm RM0390 5.4.1 ODEN */
#define PWR_CR_ODSWEN  (1u << 17)         /* rm RM0390 5.4.1 ODSWEN */
#define PWR_CSR_VOSRDY (1u << 14)         /* svd STM32F41x PWR.CSR.VOSRDY */
#define PWR_CSR_ODRDY  (1u << 16)         /* rm RM0390 5.4.2 ODRDY */
#define PWR_CSR_ODSWRDY (1u << 17)        /* rm RM0390 5.4.2 ODSWRDY */

/* Flash interface: wait states, prefetch and caches. */
#define FLASH_ACR         REG32(0x40023C00u) /* svd STM32F41x FLASH.ACR */
#define FLASH_ACR_LATENCY (0xFu << 0)        /* rm RM0390 3.8.1 LATENCY[3:0] (F41x SVD: 3 bits) */
#define FLASH_ACR_PRFTEN  (1u << 8)          /* svd STM32F41x FLASH.ACR.PRFTEN */
#define FLASH_ACR_ICEN    (1u << 9)          /* svd STM32F41x FLASH.ACR.ICEN */
#define FLASH_ACR_DCEN    (1u << 10)         /* svd STM32F41x FLASH.ACR.DCEN */

/* GPIO port A: PA2 USART2_TX, PA3 USART2_RX (AF7), PA8 marker (Arduino D7). */
#define GPIOA_MODER   REG32(0x40020000u) /* svd STM32F41x GPIOA.MODER */
#define GPIOA_OSPEEDR REG32(0x40020008u) /* svd STM32F41x GPIOA.OSPEEDR */
#define GPIOA_BSRR    REG32(0x40020018u) /* svd STM32F41x GPIOA.BSRR */
#define GPIOA_AFRL    REG32(0x40020020u) /* svd STM32F41x GPIOA.AFRL */
#define GPIO_MODE_OUT 1u
#define GPIO_MODE_AF  2u
#define GPIO_AF_USART2 7u                /* rm RM0390 table 11 (alternate functions): USART2 = AF7 */

/* USART2: the ST-LINK virtual COM port on the Nucleo-64 boards. */
#define USART2_SR     REG32(0x40004400u) /* svd STM32F41x USART2.SR */
#define USART2_DR     REG32(0x40004404u) /* svd STM32F41x USART2.DR */
#define USART2_BRR    REG32(0x40004408u) /* svd STM32F41x USART2.BRR */
#define USART2_CR1    REG32(0x4000440Cu) /* svd STM32F41x USART2.CR1 */
#define USART_SR_ORE  (1u << 3)          /* svd STM32F41x USART2.SR.ORE */
#define USART_SR_RXNE (1u << 5)          /* svd STM32F41x USART2.SR.RXNE */
#define USART_SR_TXE  (1u << 7)          /* svd STM32F41x USART2.SR.TXE */
#define USART_CR1_RE  (1u << 2)          /* svd STM32F41x USART2.CR1.RE */
#define USART_CR1_TE  (1u << 3)          /* svd STM32F41x USART2.CR1.TE */
#define USART_CR1_RXNEIE (1u << 5)       /* svd STM32F41x USART2.CR1.RXNEIE */
#define USART_CR1_UE  (1u << 13)         /* svd STM32F41x USART2.CR1.UE */
#define USART2_IRQ    38u                /* rm RM0090 table 61 (vector table): USART2 global interrupt */

/* TIM2: a 32-bit timer, the counter of the QEMU configuration (no DWT there). */
#define TIM2_CR1      REG32(0x40000000u) /* svd STM32F41x TIM2.CR1 */
#define TIM2_EGR      REG32(0x40000014u) /* svd STM32F41x TIM2.EGR */
#define TIM2_CNT      REG32(0x40000024u) /* svd STM32F41x TIM2.CNT */
#define TIM2_PSC      REG32(0x40000028u) /* svd STM32F41x TIM2.PSC */
#define TIM2_ARR      REG32(0x4000002Cu) /* svd STM32F41x TIM2.ARR */
#define TIM_CR1_CEN   (1u << 0)          /* svd STM32F41x TIM2.CR1.CEN */
#define TIM_EGR_UG    (1u << 0)          /* svd STM32F41x TIM2.EGR.UG */

/* ADC1 and the internal temperature sensor (ADC1_IN18 on F411/F446). */
#define ADC1_SR       REG32(0x40012000u) /* svd STM32F41x ADC1.SR */
#define ADC1_CR2      REG32(0x40012008u) /* svd STM32F41x ADC1.CR2 */
#define ADC1_SMPR1    REG32(0x4001200Cu) /* svd STM32F41x ADC1.SMPR1 */
#define ADC1_SQR1     REG32(0x4001202Cu) /* svd STM32F41x ADC1.SQR1 */
#define ADC1_SQR3     REG32(0x40012034u) /* svd STM32F41x ADC1.SQR3 */
#define ADC1_DR       REG32(0x4001204Cu) /* svd STM32F41x ADC1.DR */
#define ADC_SR_EOC    (1u << 1)          /* svd STM32F41x ADC1.SR.EOC */
#define ADC_CR2_ADON  (1u << 0)          /* svd STM32F41x ADC1.CR2.ADON */
#define ADC_CR2_SWSTART (1u << 30)       /* svd STM32F41x ADC1.CR2.SWSTART */
#define ADC_CCR       REG32(0x40012304u) /* rm RM0390 13.13.16 ADC_CCR (common base 0x40012300 + 0x04) */
#define ADC_CCR_ADCPRE_DIV4 (1u << 16)   /* rm RM0390 13.13.16 ADCPRE = 01: PCLK2 / 4 */
#define ADC_CCR_VBATE (1u << 22)         /* rm RM0390 13.13.16 VBATE */
#define ADC_CCR_TSVREFE (1u << 23)       /* rm RM0390 13.13.16 TSVREFE */
#define ADC_TEMP_CHANNEL 18u             /* rm RM0390 13.10 temperature sensor on ADC1_IN18 */
/* Factory calibration of the sensor (datasheets DS10693 F446 and DS10314 F411,
 * "temperature sensor calibration values"): raw readings at 30 and 110 C,
 * VDDA = 3.3 V. */
#define TS_CAL1       (*(volatile const uint16_t *)0x1FFF7A2Cu)
#define TS_CAL2       (*(volatile const uint16_t *)0x1FFF7A2Eu)

#endif /* STM32F4_REGS_H */
