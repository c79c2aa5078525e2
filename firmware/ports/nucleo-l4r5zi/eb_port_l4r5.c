/*
 * eb_port_l4r5.c - eb_port.h for the ST NUCLEO-L4R5ZI (STM32L4R5ZI, Cortex-M4F),
 * the MLPerf Tiny reference board. Written from RM0432.
 *
 * Clock: 120 MHz from the MSI (4 MHz, its reset range) through the PLL (M 1,
 *   N 60, R 2: 240 MHz VCO) in range 1 boost mode (PWR_CR5.R1MODE = 0) with 5
 *   flash wait states (RM0432 table 12). The MSI is trimmed by the board's
 *   32.768 kHz LSE crystal (X2) in the MSI's PLL mode (RCC_CR.MSIPLLEN, RM0432
 *   6.2.3): LSEON in the backup domain (PWR_CR1.DBP first), LSERDY awaited up to
 *   about 5 s (its start-up is about 2 s, DS12023; it keeps running across a
 *   reset), then MSIPLLEN. Trimmed, the MSI is "better than +-0.25 %" (AN4736);
 *   untrimmed (no LSE) +-0.6 % at 30 C, and eb-info then says clock msi with
 *   clock-fallback msi-lse. The switch to the PLL is ST's (HAL_RCC_ClockConfig,
 *   RM0432 5.1.8 / 6.2.9): AHB /2 in one write, SW = PLL in the next, AHB back
 *   to /1 after 1 us. Every ready bit is awaited with a bound (stm32_port.h); if
 *   the PLL is not confirmed the core runs on the HSI16 (clock hsi, fallback pll)
 *   and eb-info counter-hz says 16000000: the clock really in use.
 * Host link: LPUART1 on PG7 (TX) / PG8 (RX), AF8, the ST-LINK virtual COM port.
 *   Port G is powered from VDDIO2, which must be declared valid (PWR_CR2.IOSV)
 *   before its pins work. The LPUART is clocked from the HSI (CCIPR), so its baud
 *   rate does not depend on the PLL. Polled, 8N1, 115200 (9600 in energy mode).
 * Counter: the DWT cycle counter: core cycles at 120 MHz (wraps every 35.8 s).
 *   The port never sleeps (CYCCNT stops in WFI): input is polled.
 * Temperature: ADC1_IN17 with the factory calibration. Marker: PF13 (Arduino D7,
 *   the MLPerf Tiny energy set-up's timestamp pin).
 */
#include <stddef.h>
#include <stdint.h>

#include "eb_config.h"
#include "cortexm_port.h"
#include "eb_port.h"
#include "stm32_port.h"
#include "stm32l4r5_regs.h"

#define MSI_HZ 4000000u
#define PLL_M 1u
#define PLL_N 60u
#define PLL_R 2u
#define FLASH_WS_120MHZ 5u
/* Accuracy bounds in ppm: AN4736 (STM32L4 RC oscillators): MSI in PLL mode with
 * the LSE "better than +-0.25 %"; MSI +-0.6 % and HSI16 +-0.5 % at 30 C. */
#define MSI_LSE_PPM 2500u
#define MSI_PPM 6000u
#define HSI_PPM 5000u
/* LSE start-up: typically 2 s (DS12023 tSU(LSE)); ST's HAL waits 5 s. About
 * 6 cycles per poll at the 4 MHz reset clock: 3.4 M polls is about 5 s. */
#define LSE_WAIT_TRIES 3400000u
/* Temperature sensor start-up before its first sample (DS12023 tSTART, ST's
 * LL_ADC_DELAY_TEMPSENSOR_STAB_US). */
#define TS_START_US 120u

static uint32_t g_sysclk_hz = MSI_HZ;   /* the reset clock: MSI 4 MHz */
static int g_hsi_ok;
static const char *g_clock = "msi";
static const char *g_clock_fallback = "none";
static uint32_t g_clock_ppm = MSI_PPM;

static void spin_us(uint32_t us)
{
    volatile uint32_t i;
    for (i = 0; i < us * (g_sysclk_hz / 4000000u + 1u); i++) {
    }
}

/* The LSE crystal and the MSI's PLL mode: 1 when the MSI is trimmed by it. */
static int msi_trim_by_lse(void)
{
    PWR_CR1 |= PWR_CR1_DBP;                  /* RCC_BDCR is write-protected (RM0432 5.1.6) */
    if (!(RCC_BDCR & RCC_BDCR_LSERDY)) {     /* already running after a reset */
        RCC_BDCR |= RCC_BDCR_LSEON;
        if (!stm32_wait_n(&RCC_BDCR, RCC_BDCR_LSERDY, RCC_BDCR_LSERDY, LSE_WAIT_TRIES)) {
            RCC_BDCR &= ~RCC_BDCR_LSEON;
            return 0;
        }
    }
    /* MSIPLLEN only once the LSE is ready (RM0432 6.4.1 RCC_CR.MSIPLLEN). */
    RCC_CR |= RCC_CR_MSIPLLEN;
    return stm32_wait(&RCC_CR, RCC_CR_MSIRDY, RCC_CR_MSIRDY);
}

static void clock_init(void)
{
    int ok;
    RCC_APB1ENR1 |= RCC_APB1ENR1_PWREN;
    (void)RCC_APB1ENR1;                      /* the enable takes two bus cycles */
    RCC_CR |= RCC_CR_HSION;                  /* the LPUART's kernel clock */
    g_hsi_ok = stm32_wait(&RCC_CR, RCC_CR_HSIRDY, RCC_CR_HSIRDY);
    if (msi_trim_by_lse()) {
        g_clock = "msi-lse";
        g_clock_ppm = MSI_LSE_PPM;
    } else {
        g_clock_fallback = "msi-lse";        /* reported in eb-info, never silent */
    }
    PWR_CR1 = (PWR_CR1 & ~PWR_CR1_VOS) | PWR_CR1_VOS_RANGE1;
    ok = stm32_wait(&PWR_SR2, PWR_SR2_VOSF, 0u);
    PWR_CR5 &= ~PWR_CR5_R1MODE;              /* range 1 boost mode, needed above 80 MHz */
    FLASH_ACR = FLASH_WS_120MHZ | FLASH_ACR_PRFTEN | FLASH_ACR_ICEN | FLASH_ACR_DCEN;
    ok = ok && (FLASH_ACR & FLASH_ACR_LATENCY) == FLASH_WS_120MHZ;
    RCC_CR &= ~RCC_CR_PLLON;
    ok = ok && stm32_wait(&RCC_CR, RCC_CR_PLLRDY, 0u);
    RCC_PLLCFGR = RCC_PLLCFGR_PLLSRC_MSI | ((PLL_M - 1u) << RCC_PLLCFGR_PLLM_POS) |
                  (PLL_N << RCC_PLLCFGR_PLLN_POS) | RCC_PLLCFGR_PLLREN; /* PLLR 00: / 2 */
    RCC_CR |= RCC_CR_PLLON;
    ok = ok && stm32_wait(&RCC_CR, RCC_CR_PLLRDY, RCC_CR_PLLRDY);
    if (ok) {
        /* ST's sequence (RM0432 5.1.8, 6.2.9; HAL_RCC_ClockConfig): AHB /2 first,
         * then the switch in a second write, then AHB /1 after >= 1 us. */
        RCC_CFGR = (RCC_CFGR & ~(RCC_CFGR_HPRE | RCC_CFGR_PPRE1 | RCC_CFGR_PPRE2)) | RCC_CFGR_HPRE_DIV2;
        RCC_CFGR = (RCC_CFGR & ~RCC_CFGR_SW) | RCC_CFGR_SW_PLL;
        ok = stm32_wait(&RCC_CFGR, RCC_CFGR_SWS, RCC_CFGR_SW_PLL << RCC_CFGR_SWS_POS);
        g_sysclk_hz = ok ? (MSI_HZ / PLL_M) * PLL_N / PLL_R : g_sysclk_hz;
        spin_us(1u);                         /* >= 1 us at HCLK / 2 before / 1 */
        RCC_CFGR &= ~RCC_CFGR_HPRE;
    }
    if (!ok) {
        RCC_CFGR = (RCC_CFGR & ~(RCC_CFGR_HPRE | RCC_CFGR_SW)) | RCC_CFGR_SW_HSI;
        ok = stm32_wait(&RCC_CFGR, RCC_CFGR_SWS, RCC_CFGR_SW_HSI << RCC_CFGR_SWS_POS);
        g_sysclk_hz = ok ? HSI_HZ : MSI_HZ;
        g_clock_fallback = "pll";
        if (ok) {
            g_clock = "hsi";
            g_clock_ppm = HSI_PPM;
        }
    }
}

static void lpuart1_init(void)
{
    uint32_t fck = g_hsi_ok ? HSI_HZ : g_sysclk_hz;
    RCC_APB1ENR1 |= RCC_APB1ENR1_PWREN;
    PWR_CR2 |= PWR_CR2_IOSV;                 /* VDDIO2 valid: port G works */
    RCC_AHB2ENR |= RCC_AHB2ENR_GPIOGEN;
    RCC_APB1ENR2 |= RCC_APB1ENR2_LPUART1EN;
    (void)RCC_APB1ENR2;
    RCC_CCIPR = (RCC_CCIPR & ~RCC_CCIPR_LPUART1SEL) | (g_hsi_ok ? RCC_CCIPR_LPUART1SEL_HSI : 0u);
    GPIOG_MODER = (GPIOG_MODER & ~((3u << 14) | (3u << 16))) | (GPIO_MODE_AF << 14) | (GPIO_MODE_AF << 16);
    GPIOG_AFRL = (GPIOG_AFRL & ~(0xFu << 28)) | (GPIO_AF_LPUART1 << 28);   /* PG7 */
    GPIOG_AFRH = (GPIOG_AFRH & ~0xFu) | GPIO_AF_LPUART1;                   /* PG8 */
    LPUART1_CR1 = 0u;
    /* LPUART: BRR = 256 * fck / baud (RM0432 53.4.7), within 0x300..0xFFFFF. */
    LPUART1_BRR = (uint32_t)(((uint64_t)fck * 256u + EB_STM32_BAUD / 2u) / EB_STM32_BAUD);
    LPUART1_CR1 = LPUART_CR1_UE | LPUART_CR1_TE | LPUART_CR1_RE;
}

void eb_port_init(void)
{
    __asm volatile("cpsid i" ::: "memory");  /* no handler ever runs: the port polls */
    clock_init();
    lpuart1_init();
    DCB_DEMCR |= DCB_DEMCR_TRCENA;
    DWT_CYCCNT = 0u;
    DWT_CTRL |= DWT_CTRL_CYCCNTENA;
    RCC_AHB2ENR |= RCC_AHB2ENR_GPIOFEN;      /* PF13 marker, idle high */
    (void)RCC_AHB2ENR;
    GPIOF_BSRR = 1u << 13;
    GPIOF_OSPEEDR |= 3u << 26;
    GPIOF_MODER = (GPIOF_MODER & ~(3u << 26)) | (GPIO_MODE_OUT << 26);
}

int eb_port_getc(void)
{
    for (;;) {
        uint32_t isr = LPUART1_ISR;
        if (isr & LPUART_ISR_RXNE) {
            return (int)(LPUART1_RDR & 0xFFu);   /* a UART never closes: never -1 */
        }
        if (isr & LPUART_ISR_ORE) {
            LPUART1_ICR = LPUART_ICR_ORECF;
        }
    }
}

void eb_port_write(const uint8_t *data, size_t n)
{
    stm32_uart_write(&LPUART1_ISR, LPUART_ISR_TXE, &LPUART1_TDR, data, n);
}

/* After .data/.bss and VTOR (cortex-m/reset.c), before main(): nothing here;
 * clocks are eb_port_init()'s job, the first thing the core calls. */
void eb_port_cortexm_before_main(void)
{
}

void eb_port_cortexm_fault_uart(void)
{
    if (!(LPUART1_CR1 & LPUART_CR1_UE)) {    /* a fault before eb_port_init */
        lpuart1_init();
    }
}

uint32_t eb_port_counter(void)
{
    return DWT_CYCCNT;
}

uint32_t eb_port_counter_hz(void)
{
    return g_sysclk_hz;
}

uint32_t eb_port_counter_bits(void)
{
    return 32u;
}

const char *eb_port_clock(uint32_t *ppm, const char **fallback)
{
    *ppm = g_clock_ppm;
    *fallback = g_clock_fallback;
    return g_clock;
}

/* The ADC's first use: out of deep power-down, regulator on (20 us), calibrate,
 * enable, let the temperature sensor start. 1 when ready; a step that does not
 * finish leaves the sensor unused. */
static int adc_ready(void)
{
    uint32_t i;
    if ((ADC1_CR & ADC_CR_ADEN) && (ADC1_ISR & ADC_ISR_ADRDY)) {
        return 1;
    }
    RCC_AHB2ENR |= RCC_AHB2ENR_ADCEN;
    RCC_CCIPR = (RCC_CCIPR & ~RCC_CCIPR_ADCSEL) | RCC_CCIPR_ADCSEL_SYSCLK;
    (void)RCC_AHB2ENR;
    ADC_CCR |= ADC_CCR_CKMODE_DIV4 | ADC_CCR_TSEN;   /* HCLK / 4 = 30 MHz */
    ADC1_CR &= ~ADC_CR_DEEPPWD;
    ADC1_CR |= ADC_CR_ADVREGEN;
    spin_us(25u);                                    /* tADCVREG_STUP 20 us */
    ADC1_CR |= ADC_CR_ADCAL;
    if (!stm32_wait(&ADC1_CR, ADC_CR_ADCAL, 0u)) {
        return 0;
    }
    /* ADEN is ignored when set within 4 ADC clocks after ADCAL clears (RM0432
     * 21.4.8): set it again until ADRDY, as ST's HAL (ADC_Enable) does. */
    ADC1_ISR = ADC_ISR_ADRDY;                        /* write 1 to clear */
    for (i = 0; i < STM32_WAIT_TRIES && !(ADC1_ISR & ADC_ISR_ADRDY); i++) {
        if (!(ADC1_CR & ADC_CR_ADEN)) {
            ADC1_CR |= ADC_CR_ADEN;
        }
    }
    if (!(ADC1_ISR & ADC_ISR_ADRDY)) {
        return 0;
    }
    spin_us(TS_START_US);                            /* the sensor's start-up after TSEN */
    return 1;
}

int eb_port_temp_mc(int32_t *milli_c)
{
    uint32_t cal1 = TS_CAL1, cal2 = TS_CAL2, raw;
    if (cal2 <= cal1 || cal2 >= 4096u || !adc_ready()) {
        return -1;
    }
    ADC1_SMPR2 |= ADC_SMPR2_SMP17;                   /* 640.5 cycles: 21 us >= 5 us */
    ADC1_SQR1 = ADC_TEMP_CHANNEL << 6;               /* one conversion of channel 17 */
    ADC1_CR |= ADC_CR_ADSTART;
    if (!stm32_wait(&ADC1_ISR, ADC_ISR_EOC, ADC_ISR_EOC)) {
        return -1;
    }
    raw = (ADC1_DR & 0xFFFu) * 33u / 30u;            /* to the calibration's VDDA of 3.0 V */
    *milli_c = 30000 + (int32_t)(((int64_t)(TS_CAL2_C - 30) * 1000 * ((int32_t)raw - (int32_t)cal1)) /
                                 (int32_t)(cal2 - cal1));
    return 0;
}

void eb_port_marker(int level)
{
    GPIOF_BSRR = level ? (1u << 13) : (1u << 29);
}

const char *eb_port_name(void)
{
    return "nucleo-l4r5zi";
}

int eb_port_timing_is_real(void)
{
    return 1;
}
