#!/usr/bin/env python3
"""A fake ST X-NUCLEO-LPM01A (PowerShield) on a pseudo-terminal.

Run it as a process; it prints the path of the pty's device on its first
stdout line, then answers on that device as the instrument's ASCII protocol
does (see ``edgebench/power/lpm01a.py`` for the protocol and its sources):

* commands end with CR/LF or LF; replies are ``PowerShield > ack <command>``
  or ``PowerShield > error <command>`` followed by ``Error detail: <reason>``;
* ``htc`` must come first (host takes control); ``hrc`` releases it;
* arguments are checked as the instrument documents them: ``volt`` 1.8-3.3 V,
  ``freq`` from the list 100k..1, ``acqtime`` 0/inf or 100u..100 s,
  ``output current|energy``, ``format ascii_dec|bin_hexa``, ``trigsrc sw|d7``,
  ``eventsrc d7 [ris|fal]``, ``pwr on|off|auto [status|nostatus]``; numbers
  take the units ``u``, ``m``, ``k`` or a power of ten ``-xx``/``+xx``;
  ascii_dec is refused above 10 kHz (and energy output above 10 kHz);
* ``start`` streams samples in real time at the configured frequency, one
  ``DDDDsEE`` line each (current in A, or energy per sample period in J),
  a ``TimeStamp: 001s 000ms, buff 00%`` line after each second of samples,
  and ``event <n> ris`` lines where the target's marker pulses (at the start
  and at the end of each inference window, the MLPerf Tiny convention);
* ``stop`` (or the end of ``acqtime``) ends with a summary and
  ``PowerShield > Acquisition completed``.

The target it "measures" draws a known current profile, in acquisition time:
``--idle-a`` everywhere, ``--active-a`` during ``--windows`` inference windows
of ``--window-s`` every ``--period-s`` starting at ``--lead-s``. The energy of
each window is therefore ``active_a x volt x window_s`` exactly (profile edges
fall on sample boundaries when the times are multiples of 1/freq).

``--stall-after-s S`` makes it go silent S seconds into an acquisition (no
samples, no replies), as an instrument whose USB link hangs.

Only what edgebench uses is implemented; ``bin_hexa`` is accepted but streams
nothing (this fake does not emulate the binary format).
"""
from __future__ import annotations

import argparse
import os
import select
import sys
import time
import tty

# The instrument's DDDDsEE number format, written by the driver's own encoder (the tests check the
# driver's decoder against it: tests/test_power_lpm01a.py::test_sample_format)
from edgebench.power.lpm01a import encode_sample

PROMPT = "PowerShield > "
FREQS = {"100k": 100000, "50k": 50000, "20k": 20000, "10k": 10000, "5k": 5000, "2k": 2000, "1k": 1000,
         "500": 500, "200": 200, "100": 100, "50": 50, "20": 20, "10": 10, "5": 5, "2": 2, "1": 1}


def parse_number(text: str) -> float:
    """'3300m' -> 3.3, '1k' -> 1000, '100u' -> 1e-4, '2-3' -> 0.002, '5' -> 5."""
    t = text.strip()
    mult = {"u": 1e-6, "m": 1e-3, "k": 1e3}
    if t and t[-1] in mult:
        return round(float(t[:-1]) * mult[t[-1]], 12)
    for sign in ("-", "+"):
        head, sep, exp = t.rpartition(sign)
        if sep and head and exp.isdigit() and len(exp) <= 2:
            return round(float(head) * 10.0 ** (int(exp) if sign == "+" else -int(exp)), 12)
    return float(t)


class Profile:
    def __init__(self, a):
        self.idle, self.active = a.idle_a, a.active_a
        self.lead, self.period, self.window, self.n = a.lead_s, a.period_s, a.window_s, a.windows

    def current(self, t: float) -> float:
        if t < self.lead:
            return self.idle
        k = int((t - self.lead) // self.period)
        if k < self.n and (t - self.lead) - k * self.period < self.window:
            return self.active
        return self.idle

    def edges(self) -> list:
        out = []
        for k in range(self.n):
            s = self.lead + k * self.period
            out += [s, s + self.window]
        return out


class FakePowerShield:
    def __init__(self, fd: int, args):
        self.fd, self.args, self.profile = fd, args, Profile(args)
        self.inbuf = b""
        self.control = False
        self.volt, self.freq, self.acqtime = 3.3, 100, 10.0
        self.output, self.fmt, self.trigsrc, self.eventsrc = "current", "ascii_dec", "sw", None
        self.acquiring, self.silent = False, False

    # -- output --------------------------------------------------------------
    def send(self, text: str) -> None:
        data = text.encode("ascii")
        while data:
            try:
                n = os.write(self.fd, data)
            except BlockingIOError:
                time.sleep(0.001)
                continue
            data = data[n:]

    def ack(self, line: str, value: str = "") -> None:
        self.send(f"{PROMPT}ack {line}{(' ' + value) if value else ''}\r\n")

    def error(self, line: str, detail: str) -> None:
        self.send(f"{PROMPT}error {line}\r\nError detail: {detail}\r\n")

    # -- commands ------------------------------------------------------------
    def handle(self, line: str) -> None:
        words = line.split()
        cmd, arg = words[0], words[1:]
        if self.acquiring and cmd != "stop":
            return self.error(line, "acquisition in progress, send stop first")
        if cmd == "htc":
            self.control = True
            return self.ack(line)
        if cmd in ("powershield", "echo", "help"):
            return self.ack(line, "PowerShield present" if cmd == "powershield" else " ".join(arg))
        if not self.control:
            return self.error(line, "host has not taken control (send htc)")
        try:
            handler = getattr(self, f"cmd_{cmd}")
        except AttributeError:
            return self.error(line, "unknown command")
        try:
            value = handler(arg)
        except (ValueError, IndexError) as exc:
            return self.error(line, str(exc) or "bad argument")
        if value is not False:
            self.ack(line, value or "")

    def cmd_hrc(self, arg):
        self.control = False

    def cmd_version(self, arg):
        return "1.0.7-fake"

    def cmd_status(self, arg):
        return "ok"

    def cmd_volt(self, arg):
        if arg[0] == "get":
            return f"{int(round(self.volt * 1000))}m"
        v = parse_number(arg[0])
        if not 1.8 <= v <= 3.3:
            raise ValueError("voltage out of range [1800m; 3300m]")
        self.volt = v

    def cmd_freq(self, arg):
        if arg[0] not in FREQS:
            raise ValueError("frequency not in list {100k..1}")
        self.freq = FREQS[arg[0]]
        self._check_rate()

    def _check_rate(self):
        if self.fmt == "ascii_dec" and self.freq > 10000:
            self.freq = 100
            raise ValueError("ascii_dec format limited to 10kHz")
        if self.output == "energy" and self.freq > 10000:
            self.freq = 100
            raise ValueError("energy output limited to 10kHz")

    def cmd_acqtime(self, arg):
        if arg[0] in ("0", "inf"):
            self.acqtime = 0.0
            return
        t = parse_number(arg[0])
        if not 100e-6 <= t <= 100:
            raise ValueError("acquisition time out of range [100u; 100]")
        self.acqtime = t

    def cmd_output(self, arg):
        if arg[0] not in ("current", "energy"):
            raise ValueError("output must be current or energy")
        self.output = arg[0]
        self._check_rate()

    def cmd_format(self, arg):
        if arg[0] not in ("ascii_dec", "bin_hexa"):
            raise ValueError("format must be ascii_dec or bin_hexa")
        self.fmt = arg[0]
        self._check_rate()

    def cmd_trigsrc(self, arg):
        if arg[0] not in ("sw", "d7"):
            raise ValueError("trigger source must be sw or d7")
        self.trigsrc = arg[0]

    def cmd_trigdelay(self, arg):
        if not 0 <= parse_number(arg[0]) <= 30:
            raise ValueError("trigger delay out of range [0; 30]")

    def cmd_eventsrc(self, arg):
        if arg[0] != "d7" or (len(arg) > 1 and arg[1] not in ("ris", "fal")):
            raise ValueError("event source must be d7 [ris|fal]")
        self.eventsrc = " ".join(arg)

    def cmd_pwr(self, arg):
        if arg[0] not in ("on", "off", "auto", "get") or (len(arg) > 1 and arg[1] not in ("status", "nostatus")):
            raise ValueError("pwr takes on, off, auto or get [status|nostatus]")

    def cmd_pwrend(self, arg):
        if arg[0] not in ("on", "off"):
            raise ValueError("pwrend takes on or off")

    def cmd_lcd(self, arg):
        pass

    def cmd_temp(self, arg):
        return "25.0 degc"

    def cmd_start(self, arg):
        self.ack("start")
        self.acquiring = True
        self.t0 = time.monotonic()
        self.k = 0
        self.events_sent = 0
        self.timeline0 = self.profile.lead if self.trigsrc == "d7" else 0.0
        edges = [e - self.timeline0 for e in self.profile.edges() if e >= self.timeline0]
        self.edge_index = [int(round(e * self.freq)) for e in edges] if self.eventsrc else []
        return False

    def cmd_stop(self, arg):
        if not self.acquiring:
            raise ValueError("no acquisition in progress")
        self.finish()
        return False

    def finish(self):
        self.acquiring = False
        self.send(f"summary beg\r\nacquisition time {self.k / self.freq:.3f} s\r\n"
                  f"samples {self.k}\r\nsummary end\r\n{PROMPT}Acquisition completed\r\n")

    # -- streaming -----------------------------------------------------------
    def stream(self) -> None:
        now = time.monotonic() - self.t0
        if self.args.stall_after_s is not None and now > self.args.stall_after_s:
            self.silent = True
            return
        due = int(now * self.freq)
        if self.acqtime:
            due = min(due, int(round(self.acqtime * self.freq)))
        if self.fmt != "ascii_dec":
            due = self.k  # binary streaming is not emulated
        out = []
        while self.k < due:
            while self.events_sent < len(self.edge_index) and self.edge_index[self.events_sent] <= self.k:
                self.events_sent += 1
                out.append(f"event {self.events_sent} ris\r\n")
            t_mid = self.timeline0 + (self.k + 0.5) / self.freq
            i = self.profile.current(t_mid)
            value = i * self.volt / self.freq if self.output == "energy" else i
            out.append(encode_sample(value) + "\r\n")
            self.k += 1
            if self.k % self.freq == 0:
                sec = self.k // self.freq
                out.append(f"TimeStamp: {sec:03d}s 000ms, buff 00%\r\n")
        if out:
            self.send("".join(out))
        if self.acqtime and self.k >= int(round(self.acqtime * self.freq)):
            self.finish()

    def serve(self, max_life_s: float) -> None:
        end = time.monotonic() + max_life_s
        while time.monotonic() < end:
            r, _, _ = select.select([self.fd], [], [], 0.005)
            if r:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:
                    data = b""
                if not self.silent:
                    self.inbuf += data
            while b"\n" in self.inbuf and not self.silent:
                raw, self.inbuf = self.inbuf.split(b"\n", 1)
                line = raw.decode("ascii", "replace").strip()
                if line:
                    self.handle(line)
            if self.acquiring and not self.silent:
                self.stream()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle-a", type=float, default=1e-3)
    ap.add_argument("--active-a", type=float, default=5e-3)
    ap.add_argument("--lead-s", type=float, default=0.2)
    ap.add_argument("--period-s", type=float, default=0.1)
    ap.add_argument("--window-s", type=float, default=0.02)
    ap.add_argument("--windows", type=int, default=5)
    ap.add_argument("--stall-after-s", type=float, default=None)
    ap.add_argument("--max-life-s", type=float, default=120.0)
    args = ap.parse_args(argv)
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    print(os.ttyname(slave), flush=True)
    FakePowerShield(master, args).serve(args.max_life_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
