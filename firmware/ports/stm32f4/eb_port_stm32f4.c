/*
 * eb_port_stm32f4.c - eb_port.h for STM32F4 boards: the NUCLEO-F446RE and
 * NUCLEO-F411RE, and QEMU's netduinoplus2 (an STM32F405) for emulated runs.
 * One driver; each board's port.mk selects its configuration with -D:
 *
 *   STM32F4_BOARD_NAME   eb_port_name()
 *   STM32F4_PLL_M/N/P/Q  the PLL from the 16 MHz HSI (PLL_N 0: no PLL, run on HSI);
 *                        from the 8 MHz HSE, M is halved (the same VCO input)
 *   STM32F4_HSE_BYPASS   1: the PLL's source is an 8 MHz clock on OSC_IN (HSE
 *                        bypass): the ST-LINK's MCO on the Nucleo-64 boards
 *   STM32F4_FLASH_WS     flash wait states at that clock (RM0390 table 5, RM0383 table 6)
 *   STM32F4_OVERDRIVE    1: enable the regulator's over-drive (F446 above 168 MHz)
 *   STM32F4_PPRE1/2      APB1/APB2 dividers (1, 2, 4, 8, 16)
 *   STM32F4_COUNTER_TIM2 1: TIM2 is the tick counter (QEMU: no DWT); else the DWT cycle counter
 *   STM32F4_TIM2_PSC, STM32F4_TIM2_HZ   its prescaler and resulting rate (QEMU configuration)
 *   STM32F4_RX_WFI       1: wait for input in WFI (QEMU); else poll (DWT CYCCNT stops in WFI)
 *   STM32F4_TEMP         1: the internal sensor on ADC1_IN18 with the factory calibration
 *   STM32F4_MARKER_PA8   1: PA8 (Arduino D7, the MLPerf Tiny energy set-up's timestamp pin)
 *   STM32F4_TIMING_REAL  eb_port_timing_is_real()
 *
 * Host link: USART2 on PA2/PA3 (AF7), the ST-LINK virtual COM port of the
 * Nucleo-64 boards, 8N1 at EB_STM32_BAUD (115200; 9600 in energy mode), polled.
 *
 * Clocks: on the Nucleo-64 boards the ST-LINK feeds its 8 MHz MCO (from its
 * crystal) to OSC_IN (UM1724 6.7.1); the port sets HSEBYP then HSEON (HSEBYP is
 * writable only while the HSE is off, RM0383/RM0390 6.3.1), waits for HSERDY
 * and clocks the PLL from it. If the HSE does not start (solder bridges changed,
 * an ST-LINK without MCO) the port runs the same PLL from the HSI (+-1 % at
 * 25 C) and says so: eb-info clock hsi, clock-fallback hse-bypass.
 * Every ready bit is waited for with a bound (stm32_port.h). If the PLL
 * does not lock or the switch to it is not confirmed, the port stays on the HSI
 * (16 MHz) and says so the only way a host can check: eb-info counter-hz is
 * the clock really in use (DWT counts core cycles), and edgebench selftest
 * compares it with the profile and the device clock with the host's.
 */
#include <stddef.h>
#include <stdint.h>

#include "eb_config.h"
#include "cortexm_port.h"
#include "eb_port.h"
#include "stm32_port.h"
#include "stm32f4_regs.h"

#ifndef STM32F4_BOARD_NAME
#error "STM32F4_BOARD_NAME is set by the board's port.mk"
#endif
#ifndef STM32F4_HSE_BYPASS
#define STM32F4_HSE_BYPASS 0
#endif

#define HSE_HZ 8000000u
/* Accuracy bounds in ppm: the HSI +-1 % at 25 C (DS10314 / DS10693, HSI
 * user-trimmed accuracy); the ST-LINK's 8 MHz crystal a conservative 50 ppm
 * (tolerance and drift of a common HC-49 crystal: an estimate, not a datasheet). */
#define HSI_PPM 10000u
#define HSE_PPM 50u

static struct {
    uint32_t sysclk_hz;
    uint32_t pclk1_hz;
    uint32_t pclk2_hz;
    const char *source;
    const char *fallback;
    uint32_t ppm;
} g_clk;

static uint32_t ppre_bits(uint32_t div)
{
    switch (div) {
    case 2u: return 4u;
    case 4u: return 5u;
    case 8u: return 6u;
    case 16u: return 7u;
    default: return 0u;
    }
}

static void set_bus_dividers(uint32_t ppre1, uint32_t ppre2)
{
    RCC_CFGR = (RCC_CFGR & ~(RCC_CFGR_HPRE | RCC_CFGR_PPRE1 | RCC_CFGR_PPRE2)) |
               (ppre_bits(ppre1) << RCC_CFGR_PPRE1_POS) | (ppre_bits(ppre2) << RCC_CFGR_PPRE2_POS);
    g_clk.pclk1_hz = g_clk.sysclk_hz / ppre1;
    g_clk.pclk2_hz = g_clk.sysclk_hz / ppre2;
}

#if STM32F4_PLL_N
/* Back to the reset clock: HSI, no dividers (the flash wait states stay: more
 * than needed is safe). */
static void run_on_hsi(void)
{
    RCC_CFGR = (RCC_CFGR & ~RCC_CFGR_SW) | RCC_CFGR_SW_HSI;
    (void)stm32_wait(&RCC_CFGR, RCC_CFGR_SWS, RCC_CFGR_SW_HSI << RCC_CFGR_SWS_POS);
    g_clk.sysclk_hz = HSI_HZ;
    g_clk.source = "hsi";
    g_clk.ppm = HSI_PPM;
    set_bus_dividers(1u, 1u);
}
#endif

#if STM32F4_HSE_BYPASS
/* 1 when the external 8 MHz clock runs in bypass; off again when it does not. */
static int hse_bypass_on(void)
{
    RCC_CR &= ~RCC_CR_HSEON;
    (void)stm32_wait(&RCC_CR, RCC_CR_HSERDY, 0u);
    RCC_CR |= RCC_CR_HSEBYP;                   /* only while HSEON = 0 (RM0383 6.3.1) */
    RCC_CR |= RCC_CR_HSEON;
    if (stm32_wait(&RCC_CR, RCC_CR_HSERDY, RCC_CR_HSERDY)) {
        return 1;
    }
    RCC_CR &= ~RCC_CR_HSEON;
    RCC_CR &= ~RCC_CR_HSEBYP;
    return 0;
}
#endif

static void clock_init(void)
{
    g_clk.sysclk_hz = HSI_HZ;
    g_clk.source = STM32F4_TIMING_REAL ? "hsi" : "emulated";
    g_clk.fallback = "none";
    g_clk.ppm = STM32F4_TIMING_REAL ? HSI_PPM : 0u;
    set_bus_dividers(1u, 1u);
#if STM32F4_PLL_N
    {
        int ok, hse = 0;
        uint32_t pll_m = STM32F4_PLL_M, src_hz = HSI_HZ;
#if STM32F4_HSE_BYPASS
        hse = hse_bypass_on();
        if (hse) {
            pll_m = STM32F4_PLL_M * HSE_HZ / HSI_HZ;   /* the same VCO input */
            src_hz = HSE_HZ;
        } else {
            g_clk.fallback = "hse-bypass";     /* reported in eb-info, never silent */
        }
#endif
        RCC_CR |= RCC_CR_HSION;
        ok = stm32_wait(&RCC_CR, RCC_CR_HSIRDY, RCC_CR_HSIRDY);
        RCC_APB1ENR |= RCC_APB1ENR_PWREN;
        (void)RCC_APB1ENR;                         /* the enable takes two bus cycles */
        PWR_CR |= PWR_CR_VOS;                      /* voltage scale 1 */
        RCC_CR &= ~RCC_CR_PLLON;
        RCC_PLLCFGR = (RCC_PLLCFGR & ~(RCC_PLLCFGR_PLLM | RCC_PLLCFGR_PLLN | RCC_PLLCFGR_PLLP |
                                       RCC_PLLCFGR_PLLSRC | RCC_PLLCFGR_PLLQ)) |
                      (pll_m << RCC_PLLCFGR_PLLM_POS) | (hse ? RCC_PLLCFGR_PLLSRC : 0u) |
                      ((uint32_t)STM32F4_PLL_N << RCC_PLLCFGR_PLLN_POS) |
                      ((uint32_t)(STM32F4_PLL_P / 2 - 1) << RCC_PLLCFGR_PLLP_POS) |
                      ((uint32_t)STM32F4_PLL_Q << RCC_PLLCFGR_PLLQ_POS); /* PLLSRC 1: HSE */
        RCC_CR |= RCC_CR_PLLON;
        ok = ok && stm32_wait(&RCC_CR, RCC_CR_PLLRDY, RCC_CR_PLLRDY);
        ok = ok && stm32_wait(&PWR_CSR, PWR_CSR_VOSRDY, PWR_CSR_VOSRDY);
#if STM32F4_OVERDRIVE
        if (ok) {
            PWR_CR |= PWR_CR_ODEN;
            ok = stm32_wait(&PWR_CSR, PWR_CSR_ODRDY, PWR_CSR_ODRDY);
            PWR_CR |= PWR_CR_ODSWEN;
            ok = ok && stm32_wait(&PWR_CSR, PWR_CSR_ODSWRDY, PWR_CSR_ODSWRDY);
        }
#endif
        if (ok) {
            /* Wait states before the faster clock, checked by reading back. */
            FLASH_ACR = STM32F4_FLASH_WS | FLASH_ACR_PRFTEN | FLASH_ACR_ICEN | FLASH_ACR_DCEN;
            ok = (FLASH_ACR & FLASH_ACR_LATENCY) == STM32F4_FLASH_WS;
        }
        if (ok) {
            g_clk.sysclk_hz = (src_hz / pll_m) * STM32F4_PLL_N / STM32F4_PLL_P;
            if (hse) {
                g_clk.source = "hse-bypass";
                g_clk.ppm = HSE_PPM;
            }
            set_bus_dividers(STM32F4_PPRE1, STM32F4_PPRE2);
            RCC_CFGR = (RCC_CFGR & ~RCC_CFGR_SW) | RCC_CFGR_SW_PLL;
            ok = stm32_wait(&RCC_CFGR, RCC_CFGR_SWS, RCC_CFGR_SW_PLL << RCC_CFGR_SWS_POS);
        }
        if (!ok) {
            run_on_hsi();    /* not confirmed: counter-hz then says 16 MHz */
            g_clk.fallback = (STM32F4_HSE_BYPASS && !hse) ? "hse-bypass,pll" : "pll";
        }
    }
#endif
}

/* USART2 on PA2 (TX) / PA3 (RX), 8N1, oversampling 16: BRR = PCLK1 / baud. */
static void usart2_init(void)
{
    RCC_AHB1ENR |= RCC_AHB1ENR_GPIOAEN;
    RCC_APB1ENR |= RCC_APB1ENR_USART2EN;
    (void)RCC_APB1ENR;
    GPIOA_MODER = (GPIOA_MODER & ~((3u << 4) | (3u << 6))) | (GPIO_MODE_AF << 4) | (GPIO_MODE_AF << 6);
    GPIOA_AFRL = (GPIOA_AFRL & ~((0xFu << 8) | (0xFu << 12))) |
                 (GPIO_AF_USART2 << 8) | (GPIO_AF_USART2 << 12);
    USART2_CR1 = 0u;
    USART2_BRR = (g_clk.pclk1_hz + EB_STM32_BAUD / 2u) / EB_STM32_BAUD;
    USART2_CR1 = USART_CR1_UE | USART_CR1_TE | USART_CR1_RE
#if STM32F4_RX_WFI
                 | USART_CR1_RXNEIE
#endif
        ;
}

static void counter_init(void)
{
#if STM32F4_COUNTER_TIM2
    RCC_APB1ENR |= RCC_APB1ENR_TIM2EN;
    (void)RCC_APB1ENR;
    TIM2_CR1 = 0u;
    TIM2_PSC = STM32F4_TIM2_PSC;
    TIM2_ARR = 0xFFFFFFFFu;
    TIM2_EGR = TIM_EGR_UG;       /* load the prescaler */
    TIM2_CNT = 0u;
    TIM2_CR1 = TIM_CR1_CEN;
#else
    DCB_DEMCR |= DCB_DEMCR_TRCENA;
    DWT_CYCCNT = 0u;
    DWT_CTRL |= DWT_CTRL_CYCCNTENA;
#endif
}

void eb_port_init(void)
{
    __asm volatile("cpsid i" ::: "memory");    /* no handler ever runs: the port polls */
    clock_init();
    usart2_init();
    counter_init();
#if STM32F4_RX_WFI
    /* The RX interrupt only wakes WFI in eb_port_getc (masked by PRIMASK). */
    NVIC_ICPR(USART2_IRQ / 32u) = 1u << (USART2_IRQ % 32u);
    NVIC_ISER(USART2_IRQ / 32u) = 1u << (USART2_IRQ % 32u);
#endif
#if STM32F4_MARKER_PA8
    GPIOA_BSRR = 1u << 8;                       /* idle high */
    GPIOA_OSPEEDR |= 3u << 16;
    GPIOA_MODER = (GPIOA_MODER & ~(3u << 16)) | (GPIO_MODE_OUT << 16);
#endif
}

int eb_port_getc(void)
{
    uint32_t c;
    while (!(USART2_SR & USART_SR_RXNE)) {
        if (USART2_SR & USART_SR_ORE) {
            (void)USART2_DR;                     /* SR then DR read clears an overrun */
        }
#if STM32F4_RX_WFI
        __asm volatile("wfi" ::: "memory");
#endif
    }
    c = USART2_DR & 0xFFu;
#if STM32F4_RX_WFI
    NVIC_ICPR(USART2_IRQ / 32u) = 1u << (USART2_IRQ % 32u);
#endif
    return (int)c;                               /* a UART never closes: never -1 */
}

void eb_port_write(const uint8_t *data, size_t n)
{
    stm32_uart_write(&USART2_SR, USART_SR_TXE, &USART2_DR, data, n);
}

/* After .data/.bss and VTOR (cortex-m/reset.c), before main(): nothing here;
 * clocks are eb_port_init()'s job, the first thing the core calls. */
void eb_port_cortexm_before_main(void)
{
}

void eb_port_cortexm_fault_uart(void)
{
    if (!(USART2_CR1 & USART_CR1_UE)) {        /* a fault before eb_port_init */
        g_clk.sysclk_hz = g_clk.sysclk_hz ? g_clk.sysclk_hz : HSI_HZ;
        g_clk.pclk1_hz = g_clk.pclk1_hz ? g_clk.pclk1_hz : HSI_HZ;
        usart2_init();
    }
}

uint32_t eb_port_counter(void)
{
#if STM32F4_COUNTER_TIM2
    return TIM2_CNT;
#else
    return DWT_CYCCNT;
#endif
}

uint32_t eb_port_counter_hz(void)
{
#if STM32F4_COUNTER_TIM2
    return STM32F4_TIM2_HZ;
#else
    return g_clk.sysclk_hz;                      /* the core clock really in use */
#endif
}

uint32_t eb_port_counter_bits(void)
{
    return 32u;
}

const char *eb_port_clock(uint32_t *ppm, const char **fallback)
{
    *ppm = g_clk.ppm;
    *fallback = g_clk.fallback ? g_clk.fallback : "none";
    return g_clk.source ? g_clk.source : "hsi";
}

int eb_port_temp_mc(int32_t *milli_c)
{
#if STM32F4_TEMP
    uint32_t cal1 = TS_CAL1, cal2 = TS_CAL2, raw;
    if (cal2 <= cal1 || cal2 >= 4096u) {
        return -1;                               /* no plausible factory calibration */
    }
    RCC_APB2ENR |= RCC_APB2ENR_ADC1EN;
    (void)RCC_APB2ENR;
    ADC_CCR = (ADC_CCR & ~ADC_CCR_VBATE) | ADC_CCR_TSVREFE | ADC_CCR_ADCPRE_DIV4;
    ADC1_SMPR1 |= 7u << 24;                      /* channel 18: 480 cycles (>= 10 us) */
    ADC1_SQR1 = 0u;                              /* one conversion */
    ADC1_SQR3 = ADC_TEMP_CHANNEL;
    if (!(ADC1_CR2 & ADC_CR2_ADON)) {
        ADC1_CR2 |= ADC_CR2_ADON;
        {
            volatile uint32_t i;                 /* tSTAB (3 us) and the sensor's start-up (10 us) */
            for (i = 0; i < g_clk.sysclk_hz / 50000u; i++) {
            }
        }
    }
    ADC1_CR2 |= ADC_CR2_SWSTART;
    if (!stm32_wait(&ADC1_SR, ADC_SR_EOC, ADC_SR_EOC)) {
        return -1;
    }
    raw = ADC1_DR & 0xFFFu;
    *milli_c = 30000 + (int32_t)(((int64_t)80000 * ((int32_t)raw - (int32_t)cal1)) /
                                 (int32_t)(cal2 - cal1));
    return 0;
#else
    (void)milli_c;
    return -1;
#endif
}

void eb_port_marker(int level)
{
#if STM32F4_MARKER_PA8
    GPIOA_BSRR = level ? (1u << 8) : (1u << 24);
#else
    (void)level;
#endif
}

const char *eb_port_name(void)
{
    return STM32F4_BOARD_NAME;
}

int eb_port_timing_is_real(void)
{
    return STM32F4_TIMING_REAL;
}
