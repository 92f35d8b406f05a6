#!/usr/bin/env bash
# Install the package with what the tutorials need, then open the quickstart in JupyterLab.
#   bash scripts/quickstart.sh [extra jupyter lab options]
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check -e ".[lab]"
args=()
[ "$(id -u)" -eq 0 ] && args+=(--allow-root)  # containers often run as root
exec python3 -m jupyter lab "${args[@]}" "$@" notebooks/01_quickstart.ipynb
