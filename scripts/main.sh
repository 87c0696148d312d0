#!/usr/bin/env bash
# The README's first command: set up a virtual environment and run the main job on the
# embedded defaults. Extra arguments go to `tracktale run`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

make_venv .venv "[all]"
install_default_model .venv
install_frontend
# Convert the default model's GGUF file once (a few tens of seconds), unless it is not wanted.
case " $* " in
*" --no-model "* | *" --serve "*) ;;
*) .venv/bin/tracktale models install-default ;;
esac
exec .venv/bin/tracktale run "$@"
