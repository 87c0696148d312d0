#!/usr/bin/env bash
# The README's second command (and what .ci/run calls): install everything the tests need,
# start the services they use, lint, run the whole test suite, then check the built wheel.
#
# bash scripts/test.sh --fast [pytest arguments]: the contributors' fast lane (a few minutes,
# docs/how-to/contribute.md). It installs the project into .venv and runs ruff and the tests
# marked fast (pytest -m fast: those that need no browser, model weights, completions engine,
# R, PostgreSQL, SLURM or virtual screen, and are not marked slow; tests/conftest.py derives the
# marker). It leaves out what costs minutes and is checked by the full run: the system
# packages, the default model, the engine's compile, npm and the front end's checks, mypy, the
# documentation site, the services and the wheel. Missing tools skip their tests here.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

if [ "${1:-}" = --fast ]; then
  shift
  make_venv .venv "[test]"
  export PATH="$PWD/.venv/bin:$PATH"
  # One BLAS/OpenMP thread: the tests' matrices are small, and on two shared cores the extra
  # threads spin (a report's variational Bayes fit took 2.5x the CPU with them, at load 16).
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
  export MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
  echo "==> ruff"
  ruff check .
  ruff format --check .
  echo "==> pytest, the fast lane (-m fast, on every core)"
  # TRACKTALE_TEST_WORKERS=0 runs in one process (pytest-xdist's -n 0), e.g. under a debugger.
  exec python -m pytest -m fast -n "${TRACKTALE_TEST_WORKERS:-auto}" --durations=10 "$@"
fi

install_system_packages
make_venv .venv "[test]"
install_default_model .venv
install_completions_engine .venv
install_frontend dev
export PATH="$PWD/.venv/bin:$PATH"

# Tests that need a service fail instead of skipping when this script has set it up.
export TRACKTALE_REQUIRE_SERVICES=1
service_dir=$(mktemp -d /tmp/tracktale-services.XXXXXX)
started=()
stop_services() {
  local name
  for name in "${started[@]}"; do "service_${name}_stop" || true; done
  rm -rf "$service_dir"
}
trap stop_services EXIT
for service in scripts/services/*.sh; do
  [ -e "$service" ] || continue
  name=$(basename "$service" .sh)
  source "$service"
  echo "==> starting $name"
  "service_${name}_start" "$service_dir/$name"
  started+=("$name")
done

echo "==> ruff"
ruff check .
ruff format --check .
echo "==> mypy"
python scripts/typecheck.py
echo "==> eslint and the front end's node tests"
(cd experiment/frontend && npm run --silent lint && npm test --silent)
echo "==> documentation site (mkdocs build --strict: a broken link or page fails)"
NO_MKDOCS_2_WARNING=1 mkdocs build --strict --quiet --site-dir "$service_dir/site"
echo "==> pytest"
python -m pytest --durations=25 "$@"
echo "==> wheel"
bash scripts/check-wheel.sh
