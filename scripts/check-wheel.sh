#!/usr/bin/env bash
# Build the wheel, install it into a fresh virtual environment and run a smoke command from it:
# proves every subpackage and data file is in the wheel, not only in the editable install.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

work=$(mktemp -d /tmp/tracktale-wheel.XXXXXX)
trap 'rm -rf "$work"' EXIT
python=$(find_python)
.venv/bin/python -m build --wheel --outdir "$work/dist" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; exit 1; }
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet "$work"/dist/*.whl
cd "$work"
"$work/venv/bin/python" - "$OLDPWD/pyproject.toml" <<'PY'
import importlib.util, sys, tomllib
packages = tomllib.load(open(sys.argv[1], "rb"))["tool"]["setuptools"]["packages"]
missing = [name for name in packages if importlib.util.find_spec(name) is None]
sys.exit(f"missing from the wheel: {missing}" if missing else 0)
PY
"$work/venv/bin/tracktale" stimuli generate --protocol human --out "$work/set" >/dev/null
"$work/venv/bin/tracktale" stimuli validate "$work/set"
# The study's own front end, npm manifest and ethics texts are package data, not modules.
"$work/venv/bin/tracktale" ethics show consent >/dev/null
"$work/venv/bin/tracktale" ethics show lab_consent >/dev/null
# Without the lab extra, lab mode says in one line how to install PsychoPy.
if "$work/venv/bin/tracktale" experiment lab --participant SMOKE 2>"$work/lab.err"; then
  echo "tracktale experiment lab ran without PsychoPy" >&2
  exit 1
fi
grep -q "pip install 'tracktale\[lab\]'" "$work/lab.err" || { cat "$work/lab.err"; exit 1; }
"$work/venv/bin/python" - <<'PY'
import sys
from importlib.resources import files
needed = ["default_study.yaml", "templates/study.html", "static/study.js",
          "static/plugins/timed-text-response.js", "frontend/package-lock.json"]
root = files("tracktale.experiment")
missing = [name for name in needed if not root.joinpath(name).is_file()]
sys.exit(f"missing from the wheel: {missing}" if missing else 0)
PY
echo "==> the wheel installs and runs"
