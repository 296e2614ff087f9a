#!/usr/bin/env bash
# coalesce's test command (README.md): brings what the quick tests need, then runs
# `cmake --workflow --preset test` (or the workflow named as the first argument: full, demo).
#
#   scripts/test.sh [test|full|demo]
#
# Needs the CUDA Toolkit (nvcc), a C++ compiler and Python 3. What is missing is brought:
#   - CMake >= 3.25 and Ninja: from PyPI (pip), into a directory of their own under
#     ${XDG_CACHE_HOME:-~/.cache}/coalesce-tools, where the system's are missing or too old;
#   - Catch2: an installed one wins; otherwise CMake downloads a pinned release
#     (cmake/CoalesceCatch2.cmake); where that download fails (no network), the system's package
#     is installed when this script may (as root, or with sudo that needs no password, or
#     COALESCE_INSTALL_PACKAGES=1), and never when COALESCE_INSTALL_PACKAGES=0; else it names the
#     one command to run.
# With a GPU the quick tests run every device test on small problems; without one, the host tests
# and the code generation checks, the device tests reporting skipped. A few minutes either way.
set -euo pipefail
cd "$(dirname "$0")/.."
workflow=${1:-test}
tools="${XDG_CACHE_HOME:-$HOME/.cache}/coalesce-tools"
export PATH="/usr/local/cuda/bin:$PATH"

say() { echo "scripts/test.sh: $*"; }

# --- CMake and Ninja ----------------------------------------------------------------------------
cmake_ok() {
  command -v cmake >/dev/null || return 1
  local version
  version=$(cmake --version | sed -n 's/^cmake version \([0-9][0-9.]*\).*/\1/p')
  [ "$(printf '%s\n3.25\n' "$version" | sort -V | head -1)" = 3.25 ]
}
need_pip=()
cmake_ok || need_pip+=("cmake>=3.25,<4.1")
command -v ninja >/dev/null || need_pip+=("ninja>=1.11")
if [ ${#need_pip[@]} -gt 0 ]; then
  if ! python3 -m pip --version >/dev/null 2>&1; then
    say "needs ${need_pip[*]} and Python's pip to fetch them; install pip (apt-get install python3-pip) or" \
        "CMake >= 3.25 and Ninja, then run it again"
    exit 1
  fi
  say "installing ${need_pip[*]} from PyPI into $tools/pip"
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target "$tools/pip" "${need_pip[@]}"
  export PATH="$tools/pip/bin:$PATH"
  export PYTHONPATH="$tools/pip${PYTHONPATH:+:$PYTHONPATH}"
fi

# --- Catch2, when CMake could neither find nor download it ---------------------------------------
may_install() {
  case "${COALESCE_INSTALL_PACKAGES:-}" in
    0) return 1 ;;
    1) return 0 ;;
  esac
  [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null
}
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }
# Prints the command that installs Catch2 from this system's packages, or nothing.
catch2_install_command() {
  if command -v apt-get >/dev/null; then echo "apt-get install -y catch2"
  elif command -v dnf >/dev/null; then echo "dnf install -y catch2-devel"
  elif command -v pacman >/dev/null; then echo "pacman -S --noconfirm catch2"
  elif command -v zypper >/dev/null; then echo "zypper install -y Catch2-devel"
  elif command -v brew >/dev/null; then echo "brew install catch2"
  fi
}

build_dir=build/default
[ "$workflow" = demo ] && build_dir=build/demo
unavailable="$build_dir/coalesce-catch2-unavailable"
rm -f "$unavailable"
start=$(date +%s)
if cmake --workflow --preset "$workflow"; then
  say "the $workflow workflow passed in $(( $(date +%s) - start )) s"
  exit 0
fi
[ -f "$unavailable" ] || exit 1  # a failure of its own: CMake or ctest said what

install=$(catch2_install_command)
if [ -z "$install" ]; then
  say "no package manager known here to install Catch2 from; see the message above"
  exit 1
fi
if ! may_install; then
  say "Catch2 is missing and could not be downloaded; install it with: sudo $install"
  exit 1
fi
say "Catch2 could not be downloaded; installing the system's package: $install"
# shellcheck disable=SC2086  # the command is words
if command -v apt-get >/dev/null; then DEBIAN_FRONTEND=noninteractive as_root apt-get update -qq; fi
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive as_root $install >/dev/null
start=$(date +%s)
cmake --workflow --preset "$workflow"
say "the $workflow workflow passed in $(( $(date +%s) - start )) s"
