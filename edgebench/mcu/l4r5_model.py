"""The STM32L4R5's clock, power and ADC behaviour for the unicorn board: ready bits with delays, the
AHB-prescaler rule of range 1 boost mode, ADC calibration/enable and temperature-sensor start-up.

:class:`edgebench.mcu.unicorn_board.UnicornBoard` stores the other registers as written; the ones
here have the documented behaviour a port can get wrong, so that a wrong sequence fails under the
emulator as it would (or might) on silicon. Real silicon is not here: this is a fake written from
the documents, each rule citing its source (RM0432 reference manual, DS12023 datasheet, AN4736):

* **time** is the core's: one executed instruction is one HCLK cycle (the board counts them with a
  block hook while a delay is pending, :meth:`L4R5Model.advance`). A Cortex-M4 takes at least one
  cycle per instruction, so the model's time runs no faster than silicon's: a wait the model
  accepts is at least as long on silicon, and a write it calls too early is too early there too.
* **ready bits** (RCC_CR HSIRDY, MSIRDY, PLLRDY, HSERDY; RCC_BDCR LSERDY) set a start-up time after
  their enable, and only when their source runs (the PLL's); ``SWS`` follows ``SW`` only to a ready
  source. The board has no HSE by default (``hse_hz`` None). The LSE's start-up is ``lse_startup_us``
  (default 2 ms, not the datasheet's typical 2 s: a boot would poll for minutes under the emulator;
  the port's bound covers both) and None models a board without the crystal. ``LSEON`` needs
  ``PWR_CR1.DBP`` (RM0432 5.1.6, backup-domain write protection).
* **range 1 boost mode** (RM0432 5.1.8, 6.2.9): switching SYSCLK above 80 MHz needs the AHB
  prescaler at /2 *before* the switch (a separate, earlier write); ``HPRE`` back to /1 no sooner than
  1 µs after. A switch in the same write as ``HPRE`` /2 is refused (``SWS`` keeps the old source:
  the port's bounded wait fails) and listed in :attr:`L4R5Model.violations`.
* **ADC** (RM0432 21.4.6–21.4.9): ``ADVREGEN`` needs ``DEEPPWD`` clear and 20 µs (tADCVREG_STUP);
  ``ADCAL`` takes 116 ADC clocks; ``ADEN`` written while ``ADCAL`` is set or within 4 ADC clocks
  after it clears is ignored (the bit reads 0, ``ADRDY`` never sets); ``ADRDY`` follows a kept
  ``ADEN``; a conversion ends (``EOC``) after its sampling time and 12.5 clocks.
* **temperature sensor** (DS12023 tSTART = 120 µs after ``TSEN``): channel 17 converts to the
  value of :attr:`L4R5Model.die_c` at the factory calibration the board maps (:data:`TS_CAL`), scaled
  to VDDA 3.3 V; sampled earlier it converts to 0 and the sample is listed in ``violations``.
"""
from __future__ import annotations

import heapq

RCC_CR, RCC_CFGR, RCC_PLLCFGR, RCC_BDCR = 0x4002_1000, 0x4002_1008, 0x4002_100C, 0x4002_1090
PWR_CR1 = 0x4000_7000
FLASH_ACR = 0x4002_2000
ADC1_ISR, ADC1_CR, ADC1_SMPR2, ADC1_SQR1, ADC1_DR = 0x5004_0000, 0x5004_0008, 0x5004_0018, 0x5004_0030, 0x5004_0040
ADC_CCR = 0x5004_0308
#: the registers whose writes or reads the model acts on
MODELLED = frozenset({RCC_CR, RCC_CFGR, RCC_PLLCFGR, RCC_BDCR, ADC1_ISR, ADC1_CR, ADC1_DR, ADC_CCR})

# RCC_CR bits (RM0432 6.4.1)
MSION, MSIRDY, MSIPLLEN = 1 << 0, 1 << 1, 1 << 2
HSION, HSIRDY, HSEON, HSERDY = 1 << 8, 1 << 10, 1 << 16, 1 << 17
PLLON, PLLRDY = 1 << 24, 1 << 25
LSEON, LSERDY, DBP = 1 << 0, 1 << 1, 1 << 8
# ADC (RM0432 21.6)
ADRDY, EOC = 1 << 0, 1 << 2
ADEN, ADSTART, ADVREGEN, DEEPPWD, ADCAL = 1 << 0, 1 << 2, 1 << 28, 1 << 29, 1 << 31
TSEN = 1 << 23

#: start-up times in µs: HSI16, MSI and PLL lock from DS12023's oscillator tables (maximum values),
#: the ADC regulator's tADCVREG_STUP, the sensor's tSTART, the 1 µs of the boost-mode rule
STARTUP_US = {"hsi": 1.2, "msi": 6.0, "pll": 40.0, "hse": 2000.0}
ADC_VREG_US, TS_START_US, BOOST_HPRE_US = 20.0, 120.0, 1.0
CAL_ADC_CLOCKS, ADEN_BLOCK_ADC_CLOCKS = 116, 4
#: (address, value) of the factory calibration the board maps: TS_CAL1 (30 °C) and TS_CAL2 (130 °C)
#: at VDDA 3.0 V, values in the range real parts carry (DS12023 gives the addresses, not the values)
TS_CAL = ((0x1FFF_75A8, 1036), (0x1FFF_75CA, 1378))
MSI_RANGES_HZ = (100e3, 200e3, 400e3, 800e3, 1e6, 2e6, 4e6, 8e6, 16e6, 24e6, 32e6, 48e6)
SMP_CYCLES = (2.5, 6.5, 12.5, 24.5, 47.5, 92.5, 247.5, 640.5)


class L4R5Model:
    """The documented behaviour of the RCC, PWR and ADC bits a port waits for, on the board's register
    dict ``regs`` ({word address: value}, shared with the board)."""

    def __init__(self, regs: dict, lse_startup_us: float | None = 2000.0, hse_hz: float | None = None,
                 die_c: float = 25.0):
        self.regs = regs
        self.lse_startup_us, self.hse_hz, self.die_c = lse_startup_us, hse_hz, die_c
        self.now_ns = 0.0
        self.violations: list = []
        self.trace: list = []                     # (ns, event) of what the model decided
        self._events: list = []                   # heap of (ns, seq, what)
        self._seq = 0
        self._vreg_ready = False
        self._cal_end_ns: float | None = None     # when ADCAL cleared (or will)
        self._tsen_ns: float | None = None
        self._switched_ns: float | None = None    # when SYSCLK went above 80 MHz
        self._msi_trimmed = False

    # -- time ------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """True while something waits for time to pass: the board must count instructions."""
        return bool(self._events)

    def advance(self, instructions: int) -> None:
        """``instructions`` executed: as many HCLK cycles passed."""
        self.now_ns += instructions * 1e9 / self.hclk_hz()
        self._due()

    def _after(self, us: float, what: str) -> None:
        self._seq += 1
        heapq.heappush(self._events, (self.now_ns + us * 1e3, self._seq, what))

    def _due(self) -> None:
        while self._events and self._events[0][0] <= self.now_ns:
            _, _, what = heapq.heappop(self._events)
            self._fire(what)

    def _fire(self, what: str) -> None:
        cr = self.regs.get(RCC_CR, 0)
        if what == "hsi" and cr & HSION:
            self.regs[RCC_CR] = cr | HSIRDY
        elif what == "msi" and cr & MSION:
            self.regs[RCC_CR] = cr | MSIRDY
        elif what == "hse" and cr & HSEON:
            self.regs[RCC_CR] = cr | HSERDY
        elif what == "pll" and cr & PLLON and self._pll_source_ready():
            self.regs[RCC_CR] = cr | PLLRDY
        elif what == "lse" and self.regs.get(RCC_BDCR, 0) & LSEON:
            self.regs[RCC_BDCR] = self.regs.get(RCC_BDCR, 0) | LSERDY
        elif what == "vreg":
            self._vreg_ready = bool(self.regs.get(ADC1_CR, 0) & ADVREGEN)
        elif what == "adcal":
            self.regs[ADC1_CR] = self.regs.get(ADC1_CR, 0) & ~ADCAL
            self._cal_end_ns = self.now_ns
            self._after(ADEN_BLOCK_ADC_CLOCKS * self._adc_clock_us(), "aden-window")
        elif what == "adrdy" and self.regs.get(ADC1_CR, 0) & ADEN:
            self.regs[ADC1_ISR] = self.regs.get(ADC1_ISR, 0) | ADRDY
        elif what == "eoc":
            self._convert()
        # "aden-window", "tsen", "boost": markers that keep time counted until they pass
        self.trace.append((self.now_ns, what))

    # -- clocks ----------------------------------------------------------------------
    def _source_hz(self, sw: int) -> float | None:
        cr = self.regs.get(RCC_CR, 0)
        if sw == 0:
            return self._msi_hz() if cr & MSIRDY else None
        if sw == 1:
            return 16e6 if cr & HSIRDY else None
        if sw == 2:
            return self.hse_hz if cr & HSERDY and self.hse_hz else None
        return self._pll_hz() if cr & PLLRDY else None

    def _msi_hz(self) -> float:
        cr = self.regs.get(RCC_CR, 0)
        return MSI_RANGES_HZ[min((cr >> 4) & 0xF, 11)] if cr & (1 << 3) else 4e6

    def _pll_input_hz(self) -> float | None:
        src = self.regs.get(RCC_PLLCFGR, 0) & 0x3
        cr = self.regs.get(RCC_CR, 0)
        if src == 1 and cr & MSIRDY:
            return self._msi_hz()
        if src == 2 and cr & HSIRDY:
            return 16e6
        if src == 3 and cr & HSERDY and self.hse_hz:
            return self.hse_hz
        return None

    def _pll_source_ready(self) -> bool:
        return self._pll_input_hz() is not None

    def _pll_hz(self) -> float:
        cfg = self.regs.get(RCC_PLLCFGR, 0)
        m, n, r = ((cfg >> 4) & 0xF) + 1, (cfg >> 8) & 0x7F, 2 * (((cfg >> 25) & 0x3) + 1)
        return (self._pll_input_hz() or 0.0) / m * n / r

    def sysclk_hz(self) -> float:
        return self._source_hz((self.regs.get(RCC_CFGR, 0) >> 2) & 0x3) or 4e6

    def hclk_hz(self) -> float:
        hpre = (self.regs.get(RCC_CFGR, 0) >> 4) & 0xF
        return self.sysclk_hz() / ((2 << (hpre & 0x7)) if hpre & 0x8 else 1)

    def clock_source(self) -> str:
        """What SYSCLK runs from: msi-lse, msi, hsi, hse, or pll(<its input>)."""
        sws = (self.regs.get(RCC_CFGR, 0) >> 2) & 0x3
        msi = "msi-lse" if self._msi_trimmed else "msi"
        if sws == 3:
            return "pll(" + {1: msi, 2: "hsi", 3: "hse"}.get(self.regs.get(RCC_PLLCFGR, 0) & 0x3, "none") + ")"
        return {0: msi, 1: "hsi", 2: "hse"}[sws]

    # -- register access --------------------------------------------------------------
    def read(self, addr: int) -> int:
        self._due()
        value = self.regs.get(addr, 0)
        if addr == ADC1_DR:                         # reading DR clears EOC (RM0432 21.6.1)
            self.regs[ADC1_ISR] = self.regs.get(ADC1_ISR, 0) & ~EOC
        return value

    def write(self, addr: int, old: int, new: int) -> int:
        """The value ``addr`` holds after software wrote ``new`` over ``old``."""
        self._due()
        handler = {RCC_CR: self._w_rcc_cr, RCC_CFGR: self._w_rcc_cfgr, RCC_PLLCFGR: self._w_pllcfgr,
                   RCC_BDCR: self._w_bdcr, ADC1_CR: self._w_adc_cr, ADC1_ISR: self._w_adc_isr,
                   ADC_CCR: self._w_adc_ccr}.get(addr)
        return new if handler is None else handler(old, new)

    def _w_rcc_cr(self, old: int, new: int) -> int:
        rdy = old & (MSIRDY | HSIRDY | HSERDY | PLLRDY)
        for on, ready, name in ((MSION, MSIRDY, "msi"), (HSION, HSIRDY, "hsi"), (HSEON, HSERDY, "hse"),
                                (PLLON, PLLRDY, "pll")):
            if new & on and not old & on:
                if name != "hse" or self.hse_hz:
                    self._after(STARTUP_US[name], name)
            elif not new & on:
                rdy &= ~ready
        if not new & MSIPLLEN:
            self._msi_trimmed = False
        elif not old & MSIPLLEN:
            # RM0432 6.4.1: MSIPLLEN only once the LSE is ready, else the MSI is not trimmed
            self._msi_trimmed = bool(self.regs.get(RCC_BDCR, 0) & LSERDY)
            if not self._msi_trimmed:
                self.violations.append("MSIPLLEN set before LSERDY: the MSI is not trimmed (RM0432 6.4.1)")
        return (new & ~(MSIRDY | HSIRDY | HSERDY | PLLRDY)) | rdy

    def _w_pllcfgr(self, old: int, new: int) -> int:
        if self.regs.get(RCC_CR, 0) & PLLON:
            self.violations.append("RCC_PLLCFGR written while the PLL is on: ignored (RM0432 6.4.4)")
            return old
        return new

    def _w_rcc_cfgr(self, old: int, new: int) -> int:
        sws = (old >> 2) & 0x3
        sw = new & 0x3
        hpre_old, hpre_new = (old >> 4) & 0xF, (new >> 4) & 0xF
        if sw != sws:
            hz = self._source_hz(sw)
            if hz is None:
                sw = sws                                     # not ready: the switch waits (never here)
            elif hz > 80e6 and not (hpre_old & 0x8 and hpre_new & 0x8):
                self.violations.append(
                    f"SYSCLK switched to {hz / 1e6:g} MHz without the AHB prescaler at /2 in an earlier write "
                    "(RM0432 5.1.8, 6.2.9): switch refused")
                sw = sws
            elif hz > 80e6:
                self._switched_ns = self.now_ns
                self._after(BOOST_HPRE_US, "boost")
            elif hz <= 80e6:
                self._switched_ns = None
        elif (hpre_old & 0x8 and not hpre_new & 0x8 and self._switched_ns is not None
              and self.now_ns - self._switched_ns < BOOST_HPRE_US * 1e3):
            self.violations.append(f"AHB prescaler back to /1 {(self.now_ns - self._switched_ns) / 1e3:.2f} µs "
                                   "after the switch above 80 MHz, not 1 µs (RM0432 5.1.8)")
        return (new & ~0xC) | (sw << 2)

    def _w_bdcr(self, old: int, new: int) -> int:
        if not self.regs.get(PWR_CR1, 0) & DBP:
            self.violations.append("RCC_BDCR written with PWR_CR1.DBP clear: ignored (RM0432 5.1.6)")
            return old
        if new & LSEON and not old & LSEON and self.lse_startup_us is not None:
            self._after(self.lse_startup_us, "lse")
        rdy = old & LSERDY if new & LSEON else 0
        return (new & ~LSERDY) | rdy

    # -- ADC ---------------------------------------------------------------------------
    def _adc_clock_us(self) -> float:
        ckmode = (self.regs.get(ADC_CCR, 0) >> 16) & 0x3
        return {0: 1, 1: 1, 2: 2, 3: 4}[ckmode] * 1e6 / self.hclk_hz()

    def _w_adc_ccr(self, old: int, new: int) -> int:
        if new & TSEN and not old & TSEN:
            self._tsen_ns = self.now_ns
            self._after(TS_START_US, "tsen")
        elif not new & TSEN:
            self._tsen_ns = None
        return new

    def _w_adc_isr(self, old: int, new: int) -> int:
        return old & ~new                                     # write 1 to clear

    def _w_adc_cr(self, old: int, new: int) -> int:
        if new & ADVREGEN and not old & ADVREGEN:
            if new & DEEPPWD:
                self.violations.append("ADVREGEN set in deep power-down (RM0432 21.4.6)")
            else:
                self._after(ADC_VREG_US, "vreg")
        if new & ADCAL and not old & ADCAL:
            self._cal_end_ns = None
            if not self._vreg_ready:
                self.violations.append("ADCAL before the ADC regulator's 20 µs (RM0432 21.4.6)")
            self._after(CAL_ADC_CLOCKS * self._adc_clock_us(), "adcal")
        elif old & ADCAL:
            new |= ADCAL                                      # software cannot clear it
        if new & ADEN and not old & ADEN:
            window_ns = ADEN_BLOCK_ADC_CLOCKS * self._adc_clock_us() * 1e3
            if new & ADCAL or (self._cal_end_ns is not None and self.now_ns - self._cal_end_ns < window_ns):
                new &= ~ADEN                                  # RM0432 21.4.8: ignored
                self.trace.append((self.now_ns, "aden-ignored"))
            else:
                self._after(2 * self._adc_clock_us(), "adrdy")
        if new & ADSTART and not old & ADSTART:
            if self.regs.get(ADC1_ISR, 0) & ADRDY and new & ADEN:
                smp = (self.regs.get(ADC1_SMPR2, 0) >> 21) & 0x7
                self._after((SMP_CYCLES[smp] + 12.5) * self._adc_clock_us(), "eoc")
            else:
                new &= ~ADSTART
        return new

    def _convert(self) -> None:
        self.regs[ADC1_CR] = self.regs.get(ADC1_CR, 0) & ~ADSTART
        channel = (self.regs.get(ADC1_SQR1, 0) >> 6) & 0x1F
        value = 0
        if channel == 17 and self._tsen_ns is not None:
            since_us = (self.now_ns - self._tsen_ns) / 1e3
            if since_us < TS_START_US:
                self.violations.append(f"temperature sensor sampled {since_us:.1f} µs after TSEN, not "
                                       f"{TS_START_US:g} (DS12023 tSTART)")
            else:
                (_, cal1), (_, cal2) = TS_CAL
                at_3v0 = cal1 + (self.die_c - 30.0) * (cal2 - cal1) / 100.0
                value = int(round(at_3v0 * 3.0 / 3.3))       # the Nucleo's VDDA is 3.3 V
        self.regs[ADC1_DR] = value
        self.regs[ADC1_ISR] = self.regs.get(ADC1_ISR, 0) | EOC


__all__ = ["L4R5Model", "MODELLED", "TS_CAL"]
