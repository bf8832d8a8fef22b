#!/usr/bin/env bash
# Installs what kinetic needs to build and test, from Debian 12's packages only.
set -euo pipefail
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends \
  g++ cmake ninja-build pkg-config clang-format clang libclang-rt-14-dev llvm \
  libcli11-dev libcurl4-openssl-dev nlohmann-json3-dev libyaml-cpp-dev libssl-dev \
  libarchive-dev libzstd-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libcpp-httplib-dev python3 zstd bash-completion groff-base zsh fish \
  python3-cloudpickle python3-pytest python3-venv >/dev/null

# Google's Node client for GCS, which proves the fake GCS faithful (tests/node). Node comes from
# the machine (Debian's nodejs otherwise).
if ! command -v npm >/dev/null 2>&1; then
  $sudo apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
npm ci --prefix "$(dirname "$0")/../tests/node" --no-audit --no-fund --loglevel=error >/dev/null
