#!/usr/bin/env bash
# Regenerates the shell completions and the man page from kinetic's command tree:
#   completions/kinetic.bash, completions/kinetic.zsh, completions/kinetic.fish, man/kinetic.1
# tests/e2e/test_docs.cpp fails when these differ from what the binary prints.
#
# Usage: scripts/gen-docs.sh [KINETIC_BINARY]   (default: build/kinetic)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-build/kinetic}
if [[ ! -x $bin ]]; then
  echo "gen-docs: no kinetic binary at '$bin'; build it first (cmake --build build)" >&2
  exit 1
fi

# NAME COMMAND...: write COMMAND's output to $repo/NAME, replacing it only once it succeeded.
generate() {
  local out=$repo/$1 tmp
  shift
  mkdir -p "$(dirname "$out")"
  tmp=$(mktemp "$out.XXXXXX")
  if ! "$@" >"$tmp"; then
    rm -f "$tmp"
    echo "gen-docs: '$*' failed" >&2
    exit 1
  fi
  chmod 644 "$tmp"
  mv -f "$tmp" "$out"
  echo "wrote ${out#"$repo"/}"
}

for shell in bash zsh fish; do
  generate "completions/kinetic.$shell" "$bin" completion "$shell"
done
generate man/kinetic.1 "$bin" man
