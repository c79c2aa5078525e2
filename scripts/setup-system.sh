#!/usr/bin/env bash
# Installs the system tools the test suite drives for real: OpenSSH server and
# client (SSH transport tests against sshd on 127.0.0.1), socat (serial tests
# over a pseudo-terminal pair), the Arm GNU toolchain with newlib-nano and
# qemu-system-arm (firmware for Cortex-M4/M7 under emulation), clang with its
# runtime (libFuzzer + AddressSanitizer for the firmware's command parser), chromium
# (headless: renders `edgebench report` HTML in its tests), ser2net (serves a serial port over
# RFC 2217 for the labgrid farm tests; the exporter starts it), openocd and stlink-tools (st-flash)
# (edgebench flash runs them for real in the tests, with no probe attached), postgresql (the shared
# results store's tests start a throwaway server with initdb/pg_ctl on 127.0.0.1). Needs root for apt-get; without root it only
# reports what is missing (those tests then skip locally, and fail under CI=true).
set -euo pipefail
need=()
command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
command -v socat >/dev/null 2>&1 || need+=(socat)
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v make >/dev/null 2>&1 || need+=(make)
command -v arm-none-eabi-gcc >/dev/null 2>&1 || need+=(gcc-arm-none-eabi)
[ -e /usr/lib/arm-none-eabi/newlib/libc_nano.a ] || [ -e /usr/lib/arm-none-eabi/lib/libc_nano.a ] \
  || need+=(libnewlib-arm-none-eabi)
command -v qemu-system-arm >/dev/null 2>&1 || need+=(qemu-system-arm)
command -v clang-14 >/dev/null 2>&1 || command -v clang >/dev/null 2>&1 || need+=(clang-14)
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 \
  || need+=(libclang-rt-14-dev)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v ser2net >/dev/null 2>&1 || [ -x /usr/sbin/ser2net ] || need+=(ser2net)
command -v openocd >/dev/null 2>&1 || need+=(openocd)
command -v st-flash >/dev/null 2>&1 || need+=(stlink-tools)
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || need+=(postgresql)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
  echo "setup: missing ${need[*]} (install them as root: apt-get install ${need[*]})" >&2
fi
