#!/usr/bin/env bash
# Installs what coalesce's documentation site is built and checked with: Doxygen and headless
# Chromium from Debian's packages, and Sphinx, Breathe, MyST-Parser and the Furo theme, pinned, in a
# virtual environment outside the repository (so it never shows up in git status). Run it once
# before `cmake --workflow --preset docs`; running it again installs only what is missing.
#
#   scripts/docs-tools.sh [--print-venv]
#
# The environment is ${XDG_CACHE_HOME:-$HOME/.cache}/coalesce-ci-tools/docs-venv unless
# COALESCE_DOCS_VENV names another; docs/CMakeLists.txt looks for its tools there first.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${COALESCE_DOCS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/coalesce-ci-tools/docs-venv}"
if [ "${1:-}" = "--print-venv" ]; then
  echo "$venv"
  exit 0
fi

# Pinned: a new Sphinx or Breathe release may warn where this one does not, and the docs build
# treats every warning as an error. Raise them together, and rebuild the site strictly, on purpose.
python_packages=(
  "sphinx==9.0.4"
  "docutils==0.22.4"
  "breathe==5.1.0"
  "myst-parser==5.2.0"
  "furo==2025.12.19"
)

need=()
command -v doxygen >/dev/null || need+=(doxygen)
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || need+=(chromium)
python3 -m venv --help >/dev/null 2>&1 && python3 -c "import ensurepip" 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "docs-tools.sh: missing ${need[*]}; install them (apt-get install ${need[*]}) or run this as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # fonts-dejavu-core: the render test's screenshots need a font with Latin glyphs.
  apt-get install -y -qq --no-install-recommends "${need[@]}" fonts-dejavu-core
fi

stamp="$venv/.coalesce-docs-tools"
wanted="${python_packages[*]}"
if [ ! -x "$venv/bin/sphinx-build" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${python_packages[@]}"
  echo "$wanted" >"$stamp"
fi

echo "docs-tools.sh: doxygen $(doxygen --version), $("$venv/bin/sphinx-build" --version) in $venv"
