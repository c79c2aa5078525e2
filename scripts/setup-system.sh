#!/usr/bin/env bash
# Installs the system tools the test suite drives for real: OpenSSH server and
# client (SSH transport tests against sshd on 127.0.0.1) and socat (serial tests
# over a pseudo-terminal pair). Needs root for apt-get; without root it only
# reports what is missing (those tests then skip locally, and fail under CI=true).
set -euo pipefail
need=()
command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
command -v socat >/dev/null 2>&1 || need+=(socat)
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
