#!/bin/sh
# Bytes round-trip both ways between kinetic's GCS client and Google's: Node's
# @google-cloud/storage writes, kinetic reads; kinetic writes (resumable, chunked), Node reads;
# and, when gcloud is installed, `gcloud storage cat` reads what kinetic wrote.
# Usage: run_cross_client.sh /path/to/kinetic_fake_gcs /path/to/gcs_cp
# Exit 125 (ctest skip) when node or tests/node/node_modules is missing.
set -eu
FAKE=${1:?fake}
CP=${2:?gcs_cp}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null 2>&1 || { echo "skip: node not found"; exit 125; }
[ -d "$HERE/node_modules/@google-cloud/storage" ] ||
  { echo "skip: run 'npm ci --prefix tests/node' first"; exit 125; }

TMP=$(mktemp -d)
"$FAKE" --bucket cross >"$TMP/port" 2>"$TMP/fake.log" &
PID=$!
trap 'kill "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
. "$HERE/wait_for_fake.sh"
wait_for_fake "$TMP/port" "$PID" "$TMP/fake.log"
URL="http://127.0.0.1:$(head -n1 "$TMP/port")"

head -c 1500000 /dev/urandom > "$TMP/from-node"
head -c 2200000 /dev/urandom > "$TMP/from-kinetic"

node "$HERE/node_cp.mjs" upload "$URL" "$TMP/from-node" cross node/obj
"$CP" download "$URL" cross node/obj "$TMP/node-read-by-kinetic" >/dev/null
cmp "$TMP/from-node" "$TMP/node-read-by-kinetic"
echo "ok: Node wrote, kinetic read"

"$CP" upload "$URL" "$TMP/from-kinetic" cross kinetic/obj 512 >/dev/null
node "$HERE/node_cp.mjs" download "$URL" cross kinetic/obj "$TMP/kinetic-read-by-node"
cmp "$TMP/from-kinetic" "$TMP/kinetic-read-by-node"
echo "ok: kinetic wrote (resumable, 512 KiB chunks), Node read"

if command -v gcloud >/dev/null 2>&1; then
  export CLOUDSDK_CONFIG="$TMP/gcloud"
  mkdir -p "$CLOUDSDK_CONFIG"
  echo "ya29.fake" > "$TMP/token"
  gcloud config set api_endpoint_overrides/storage "$URL/storage/v1/" >/dev/null 2>&1
  gcloud config set core/disable_usage_reporting true >/dev/null 2>&1
  if gcloud storage cat "gs://cross/kinetic/obj" --access-token-file "$TMP/token" \
      > "$TMP/kinetic-read-by-gcloud" 2>"$TMP/gcloud.err"; then
    cmp "$TMP/from-kinetic" "$TMP/kinetic-read-by-gcloud"
    echo "ok: kinetic wrote, gcloud storage read"
  else
    echo "gcloud storage cat failed:"; cat "$TMP/gcloud.err"; exit 1
  fi
  head -c 300000 /dev/urandom > "$TMP/from-gcloud"
  gcloud storage cp "$TMP/from-gcloud" "gs://cross/gcloud/obj" --access-token-file "$TMP/token" \
    >/dev/null 2>"$TMP/gcloud.err" || { echo "gcloud storage cp failed:"; cat "$TMP/gcloud.err"; exit 1; }
  "$CP" download "$URL" cross gcloud/obj "$TMP/gcloud-read-by-kinetic" >/dev/null
  cmp "$TMP/from-gcloud" "$TMP/gcloud-read-by-kinetic"
  echo "ok: gcloud storage wrote, kinetic read"
  # Above its resumable threshold gcloud starts the upload at /resumable/upload/storage/v1/...
  # (apitools' resumable_path), one stream when parallel composite uploads are off.
  head -c 3000000 /dev/urandom > "$TMP/from-gcloud-resumable"
  CLOUDSDK_STORAGE_RESUMABLE_THRESHOLD=1MiB CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED=False \
    gcloud storage cp "$TMP/from-gcloud-resumable" "gs://cross/gcloud/resumable" \
    --access-token-file "$TMP/token" --log-http >"$TMP/gcloud.log" 2>&1 ||
    { echo "gcloud storage cp (resumable) failed:"; tail -20 "$TMP/gcloud.log"; exit 1; }
  grep -q "/resumable/upload/storage/v1/b/cross/o" "$TMP/gcloud.log" ||
    { echo "gcloud did not start a resumable upload"; exit 1; }
  "$CP" download "$URL" cross gcloud/resumable "$TMP/gcloud-resumable-read-by-kinetic" >/dev/null
  cmp "$TMP/from-gcloud-resumable" "$TMP/gcloud-resumable-read-by-kinetic"
  echo "ok: gcloud storage wrote (resumable), kinetic read"
fi
