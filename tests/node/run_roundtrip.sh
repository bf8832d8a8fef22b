#!/bin/sh
# Runs tests/node/gcs_roundtrip.mjs (Google's @google-cloud/storage) against kinetic_fake_gcs.
# Usage: run_roundtrip.sh /path/to/kinetic_fake_gcs
# Exit 125 (ctest skip) when node or tests/node/node_modules is missing (`npm ci --prefix tests/node`).
set -u
FAKE=${1:?usage: run_roundtrip.sh /path/to/kinetic_fake_gcs}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null 2>&1 || { echo "skip: node not found"; exit 125; }
[ -d "$HERE/node_modules/@google-cloud/storage" ] ||
  { echo "skip: run 'npm ci --prefix tests/node' first"; exit 125; }

TMP=$(mktemp -d)
"$FAKE" >"$TMP/port" 2>"$TMP/fake.log" &
PID=$!
# No wait: the fake lingers up to its 5 s keep-alive timeout while idle sockets drain.
trap 'kill "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
. "$HERE/wait_for_fake.sh"
wait_for_fake "$TMP/port" "$PID" "$TMP/fake.log"
PORT=$(head -n1 "$TMP/port")
[ -n "$PORT" ] || { echo "fake GCS did not start"; cat "$TMP/fake.log"; exit 1; }
node "$HERE/gcs_roundtrip.mjs" "http://127.0.0.1:$PORT"
