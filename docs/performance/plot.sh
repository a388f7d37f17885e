#!/usr/bin/env bash
# Draws docs/performance.png from docs/performance/*.bench.json and flashmla.json (plot.py; its
# arguments pass through: --dir DIR, --flashmla FILE, --out FILE). Installs the Debian packages
# python3-matplotlib and python3-numpy first where no python3 can import them (with sudo only
# when not root). Debian's packages serve /usr/bin/python3, which another python3 earlier on the
# PATH (a virtual environment, pyenv) may hide, so both are tried.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

find_python() {
  local candidate
  for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import matplotlib, numpy' >/dev/null 2>&1; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if ! python=$(find_python); then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib python3-numpy
  if ! python=$(find_python); then
    echo "plot.sh: no python3 imports matplotlib and numpy, even after installing them" >&2
    exit 1
  fi
fi

exec "$python" "$here/plot.py" "$@"
