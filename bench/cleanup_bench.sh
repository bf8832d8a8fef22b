#!/usr/bin/env bash
# `kinetic cleanup` of many finished records (issue #30 point 3): N job records of 4 objects each
# (spec.json, status.json, a log part, outputs.tar.gz) seeded straight into the fake bucket, then
# one `kinetic cleanup --older-than 0s` timed, against the fake cloud answering at once and after
# a simulated round trip (kinetic_fake_cloud --round-trip-ms, tests/fakes/fake_latency.h).
#
#   bench/cleanup_bench.sh BUILD_DIR [RECORDS] [ROUND_TRIP_MS]
#
# Prints, per latency, the objects removed and the wall time of the cleanup.
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR [RECORDS] [ROUND_TRIP_MS]}" && pwd)"
records="${2:-1000}"
rtt="${3:-50}"
kin="$build/kinetic"
fake="$build/tests/kinetic_fake_cloud"
work="$(mktemp -d /tmp/kinetic-cleanup-bench.XXXXXX)"
# shellcheck source=bench/fake_cloud.sh
source "$(dirname "$0")/fake_cloud.sh"
trap 'stop_fake_cloud; rm -rf "$work"' EXIT

measure() {
  local ms="$1" dir="$work/at-$1"
  start_fake_cloud "$fake" "$dir" "$ms"
  (cd "$dir/proj" && "$kin" -q up --project bench --zone us-central1-a >/dev/null)
  local bucket=bench-kinetic-kinetic
  # The records, 32 uploads at once (the seeding is not what is measured).
  for i in $(seq "$records"); do
    local id
    id=$(printf 'job-%08x' "$i")
    for name in spec.json results/status.json results/attempts/1/log/part-000001 \
      results/outputs.tar.gz; do
      echo "jobs/$id/$name"
    done
  done | xargs -P 32 -I{} curl -sf -o /dev/null -X POST --data-binary 'x' \
    "$STORAGE_EMULATOR_HOST/upload/storage/v1/b/$bucket/o?uploadType=media&name={}"
  local t0 t1 removed
  t0=$(date +%s%N)
  (cd "$dir/proj" && "$kin" cleanup --older-than 0s >"$dir/cleanup.out" 2>/dev/null)
  t1=$(date +%s%N)
  removed=$(grep -c 'gs://' "$dir/cleanup.out" || true)
  printf '%6s ms round trip: %6s objects removed in %6.2f s\n' "$ms" "$removed" \
    "$(echo "($t1 - $t0) / 1000000000" | bc -l)"
  stop_fake_cloud
}

echo "== kinetic cleanup --older-than 0s of $records records ($((records * 4)) objects; $(nproc) cores)"
measure 0
measure "$rtt"
