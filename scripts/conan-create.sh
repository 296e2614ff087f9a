#!/usr/bin/env bash
# Builds coalesce's Conan package from this source tree and runs its test_package, as CI does:
#   scripts/conan-create.sh [extra conan create arguments]
# Conan (pinned below) goes into a virtual environment, and its home (CONAN_HOME: profiles and the
# package cache) into a folder of its own, both outside the repository, so that nothing shows up in
# git status and a second run reuses them. Needs python3 with venv, CMake, Ninja, a C++ compiler
# and the CUDA Toolkit (nvcc on PATH, CUDACXX, or /usr/local/cuda); no GPU.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

conan_version="2.34.0"
tools="${XDG_CACHE_HOME:-$HOME/.cache}/coalesce-ci-tools"
venv="$tools/conan-venv"
export CONAN_HOME="${CONAN_HOME:-$tools/conan-home}"

# nvcc: the test_package is a CUDA project, and the install step's FindCUDAToolkit looks for it.
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# A venv left by an earlier run is kept while its Conan is the pinned one.
if [ "$("$venv/bin/conan" --version 2>/dev/null)" != "Conan version $conan_version" ]; then
  rm -rf "$venv"
  if ! python3 -m venv "$venv" 2>/dev/null; then
    # Debian's python3 keeps venv in a package of its own.
    rm -rf "$venv"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      DEBIAN_FRONTEND=noninteractive apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv
      python3 -m venv "$venv"
    else
      echo "conan-create.sh: python3 -m venv failed; install python3-venv" >&2
      exit 1
    fi
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "conan==$conan_version"
fi
conan="$venv/bin/conan"
"$conan" --version

# The default profile describes this machine's compiler (conan profile detect); a CONAN_HOME that
# already has one keeps it.
if ! "$conan" profile path default >/dev/null 2>&1; then
  "$conan" profile detect
fi

# The test_package's build goes beside the venv, not into the source tree (Conan removes the
# previous run's first), and no CMakeUserPresets.json is written next to its CMakeLists.txt.
conf=(-c "tools.cmake.cmake_layout:test_folder=$tools/conan-test-package"
      -c "tools.cmake.cmaketoolchain:user_presets=")
# Ninja where it is installed (it is what the project's presets use); Conan's default otherwise.
if command -v ninja >/dev/null; then
  conf+=(-c tools.cmake.cmaketoolchain:generator=Ninja)
fi

# coalesce has no Conan dependencies, so no remote is asked (--no-remote: CI may have no network);
# create builds coalesce itself every time. The recipe exports the working tree's files as they
# are, committed or not.
"$conan" create "$root/cmake/packaging/conan" --no-remote "${conf[@]}" "$@"
