#!/usr/bin/env bash
# One-step set-up and run for gpukern on Debian/Ubuntu:
#   bash scripts/dev.sh example [ARGS...]   runs examples/matmul_tiled.py
#   bash scripts/dev.sh test [PYTEST ARGS]  runs the test suite
# Installs what is missing: PoCL (a CPU OpenCL driver, through apt when we may),
# and a virtual environment .venv with gpukern and its extras.
set -euo pipefail
cd "$(dirname "$0")/.."

what="${1:-}"; shift || true
case "$what" in example|test) ;; *) echo "usage: bash scripts/dev.sh example|test [args...]" >&2; exit 2;; esac

apt_install() {
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      echo "note: cannot install $* without root; install it yourself for OpenCL" >&2; return 0; fi
  fi
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

if command -v apt-get >/dev/null && ! dpkg -s pocl-opencl-icd >/dev/null 2>&1; then
  echo "installing PoCL (CPU OpenCL driver) with apt..." >&2
  apt_install pocl-opencl-icd ocl-icd-libopencl1
fi

py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
extras="opencl"
[ "$what" = test ] && extras="opencl,test"
stamp=".venv/.gpukern-$extras-$(cat setup.cfg | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "installing gpukern[$extras] into .venv..." >&2
  if ! { .venv/bin/python -m pip install --upgrade pip && .venv/bin/python -m pip install -e ".[$extras]"; } \
      >.venv/install.log 2>&1; then
    cat .venv/install.log >&2; exit 1
  fi
  touch "$stamp"
fi

if [ "$what" = example ]; then
  exec .venv/bin/python examples/matmul_tiled.py "$@"
fi
# the suite on every core (pytest-xdist, from the test extra) unless the arguments choose: -n N, -p no:xdist
case " $* " in
  *" -n "*|*" -n"[0-9]*|*" -nauto "*|*" --numprocesses"*|*"no:xdist"*) exec .venv/bin/python -m pytest "$@" ;;
esac
exec .venv/bin/python -m pytest -n auto "$@"
