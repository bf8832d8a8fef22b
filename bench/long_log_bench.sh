#!/usr/bin/env bash
# `kinetic logs` of a week-long job (issue #30 point 1): the record the bootstrap leaves after a
# week of printing (log/composed holding 120,960 parts' bytes, SIZE_MB of them, then a few
# trailing parts) and an old-style record of PARTS parts only, seeded straight into the fake
# bucket; then timed against the fake cloud answering at once and after a simulated round trip
# (kinetic_fake_cloud --round-trip-ms): the whole log to /dev/null, the time to its first byte,
# `logs --tail 100` and `logs --since 1h` (by the end marks on composed.err, one per part) with
# the GCS requests each made (the fake's /_fake/counters).
#
#   bench/long_log_bench.sh BUILD_DIR [SIZE_MB] [PARTS] [ROUND_TRIP_MS]
# (BENCH_DEBUG=1: each command's output size and last lines on stderr.)
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR [SIZE_MB] [PARTS] [ROUND_TRIP_MS]}" && pwd)"
size_mb="${2:-300}"
old_parts="${3:-2000}"
rtt="${4:-50}"
kin="$build/kinetic"
fake="$build/tests/kinetic_fake_cloud"
work="$(mktemp -d /tmp/kinetic-long-log-bench.XXXXXX)"
# shellcheck source=bench/fake_cloud.sh
source "$(dirname "$0")/fake_cloud.sh"
trap 'stop_fake_cloud; rm -rf "$work"' EXIT

# A week of training output: ~70-byte lines.
python3 - "$work/week.log" "$size_mb" <<'EOF'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
line = 0
with open(path, "w") as f:
    while f.tell() < mb << 20:
        f.write("".join("2026-11-20T10:%02d:%02d step %9d loss %.6f lr 3.0e-04 tok/s 41234\n"
                        % (i // 60 % 60, i % 60, line + i, 1.0 / (1 + line + i)) for i in range(10000)))
        line += 10000
EOF

upload() {  # upload BUCKET NAME FILE
  curl -sf -o /dev/null -X POST -H 'Content-Type: text/plain' --data-binary "@$3" \
    "$STORAGE_EMULATOR_HOST/upload/storage/v1/b/$1/o?uploadType=media&name=$(
      python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$2")"
}

seed_job() {  # seed_job BUCKET ID: the spec and the final status of a finished job
  local bucket="$1" id="$2"
  printf '{"id":"%s","file":"train.py","kind":"python","accelerator":"cpu","backend":"gke"}' \
    "$id" >"$work/spec.json"
  printf '{"id":"%s","state":"succeeded","exit_code":0,"attempts":1,"final":true,"backend":"gke"}' \
    "$id" >"$work/status.json"
  upload "$bucket" "jobs/$id/spec.json" "$work/spec.json"
  upload "$bucket" "jobs/$id/results/status.json" "$work/status.json"
}

counters() { curl -sf "$STORAGE_EMULATOR_HOST/_fake/counters"; }
requests() {  # requests BEFORE AFTER: "N list + M download"
  python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
d = lambda k: b.get(k, 0) - a.get(k, 0)
print("%d list + %d download" % (d("objects.list"), d("objects.download")))
EOF
}

first_byte() {  # first_byte ID: seconds until `kinetic logs ID` wrote its first byte (median of 5)
  (cd "$dir/proj" && python3 - "$kin" "$1" <<'EOF'
import statistics, subprocess, sys, time
times = []
for _ in range(5):
    t0 = time.monotonic()
    p = subprocess.Popen([sys.argv[1], "logs", sys.argv[2]], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    p.stdout.read(1)
    times.append(time.monotonic() - t0)
    p.kill()
    p.wait()
print("%.3f" % statistics.median(times))
EOF
  )
}

timed() {  # timed CMD...: wall seconds of CMD (output discarded)
  local t0 t1
  t0=$(date +%s%N)
  (cd "$dir/proj" && "$@" >"$dir/out" 2>"$dir/err") || { echo "failed: $*" >&2; cat "$dir/err" >&2; }
  t1=$(date +%s%N)
  [[ -z "${BENCH_DEBUG:-}" ]] || { wc -c "$dir/out" >&2; tail -2 "$dir/out" >&2; }
  echo "($t1 - $t0) / 1000000000" | bc -l | xargs printf '%.2f'
}

measure() {
  local ms="$1"
  dir="$work/at-$ms"
  start_fake_cloud "$fake" "$dir" "$ms"
  (cd "$dir/proj" && "$kin" -q up --project bench --zone us-central1-a >/dev/null)
  local bucket=bench-kinetic-kinetic week=job-0000beef old=job-0000cafe
  local log="jobs/$week/results/attempts/1/log"
  seed_job "$bucket" "$week"
  upload "$bucket" "$log/composed" "$work/week.log"
  curl -sf -o /dev/null -X PATCH -H 'Content-Type: application/json' \
    --data '{"metadata":{"parts":"120960"}}' \
    "$STORAGE_EMULATOR_HOST/storage/v1/b/$bucket/o/${log//\//%2F}%2Fcomposed"
  # The bootstrap's end marks on composed.err: one per part, 5 s apart, the week ending now.
  python3 - "$work/week.log" "$work/marks" <<'PY'
import os, sys, time
size, parts, now = os.path.getsize(sys.argv[1]), 120960, int(time.time())
with open(sys.argv[2], "wb") as f:
    for i in range(1, parts + 1):
        f.write((size * i // parts).to_bytes(8, "big") +
                ((1 << 63) | (now - 5 * (parts - i))).to_bytes(8, "big"))
PY
  upload "$bucket" "$log/composed.err" "$work/marks"
  for p in 120961 120962 120963; do
    printf 'step tail %d\n' "$p" >"$work/part"
    upload "$bucket" "$log/$(printf '%06d' "$p")" "$work/part"
  done
  seed_job "$bucket" "$old"
  # The old record: PARTS parts of ~2.5 KiB, 32 uploads at once (the seeding is not measured).
  head -c $((old_parts * 2500)) "$work/week.log" | split -l 35 -a 6 -d - "$work/old-"
  local url="$STORAGE_EMULATOR_HOST/upload/storage/v1/b/$bucket/o?uploadType=media&name=jobs%2F$old%2Fresults%2Fattempts%2F1%2Flog%2F"
  find "$work" -name 'old-*' | sort | head -n "$old_parts" |
    awk -v url="$url" '{printf "@%s %s%06d\n", $0, url, NR}' |
    xargs -P 32 -n 2 curl -sf -o /dev/null -X POST --data-binary
  rm -f "$work"/old-*

  local whole first tail before after old_whole
  whole=$(timed "$kin" logs "$week")
  first=$(first_byte "$week")
  before=$(counters)
  tail=$(timed "$kin" logs "$week" --tail 100)
  after=$(counters)
  local tail_requests
  tail_requests=$(requests "$before" "$after")
  before=$(counters)
  since=$(timed "$kin" logs "$week" --since 1h)
  after=$(counters)
  local since_requests
  since_requests=$(requests "$before" "$after")
  old_whole=$(timed "$kin" logs "$old")
  printf '%4s ms: week (%s MB): whole %6ss, first byte %6ss | --tail 100 %5ss (%s) | --since 1h %5ss (%s) | old record of %s parts: whole %6ss\n' \
    "$ms" "$size_mb" "$whole" "$first" "$tail" "$tail_requests" "$since" "$since_requests" "$old_parts" "$old_whole"
  stop_fake_cloud
}

echo "== kinetic logs of a week-long job ($size_mb MB composed + 3 parts) and an old record of $old_parts parts ($(nproc) cores)"
measure 0
measure "$rtt"
