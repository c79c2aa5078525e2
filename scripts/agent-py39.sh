#!/usr/bin/env bash
# Prepares an older-Python board stand-in for the agent tests: a Python 3.9
# virtual environment with numpy<2 and tflite-runtime 2.14 (what Raspberry Pi OS
# bullseye-era boards run). Prints the interpreter's path, or nothing when no
# Python 3.9 exists here (the test then skips locally and fails under CI=true).
set -euo pipefail
venv=".venv-agent39"
if [ ! -x "$venv/bin/python" ]; then
  py=""
  for c in "$(command -v python3.9 2>/dev/null || true)" "$HOME"/.pyenv/versions/3.9*/bin/python3.9; do
    if [ -n "$c" ] && [ -x "$c" ] && "$c" -c 'import sys' >/dev/null 2>&1; then py="$c"; break; fi
  done
  [ -n "$py" ] || exit 0
  "$py" -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q "numpy<2" "tflite-runtime==2.14.0" >&2
fi
echo "$PWD/$venv/bin/python"
