#!/usr/bin/env bash
# The README's first command: set up a virtual environment and run the main job on the
# embedded defaults. Extra arguments go to `tracktale run`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

make_venv .venv "[all]"
install_frontend
exec .venv/bin/tracktale run "$@"
