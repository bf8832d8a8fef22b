#!/usr/bin/env bash
# A wide sweep on the gke backend (issue #30 point 3): N `kinetic run --detach` of a tiny job
# started together against the fake cloud with a write quota (kinetic_fake_cloud --write-quota:
# each bucket and the Kubernetes API server take QUOTA writes a second and answer the rest with
# their 429s), at 0 ms and at MS per request. Prints per latency: the wall time until every
# submission has returned, how many failed (the target is 0), the 429s the fake answered (from
# its log), then the wall time of one `kinetic status` with those N jobs live (N + 1: one run
# before the sweep builds the image). MODE `python` submits the N jobs with the Python API
# instead, one `run_async_map` over N inputs (max_submitting SUBMITTING, default 8), with the
# python3 of PATH, which needs cloudpickle.
#
#   bench/sweep_bench.sh BUILD_DIR [N] [QUOTA] [ROUND_TRIP_MS] [cli|python] [SUBMITTING]
set -euo pipefail
usage="usage: $0 BUILD_DIR [N] [QUOTA] [ROUND_TRIP_MS] [cli|python] [SUBMITTING]"
build="$(cd "${1:?$usage}" && pwd)"
jobs="${2:-100}"
quota="${3:-10}"
rtt="${4:-50}"
mode="${5:-cli}"
submitting="${6:-8}"
python_dir="$(cd "$(dirname "$0")/../python" && pwd)"
kin="$build/kinetic"
fake="$build/tests/kinetic_fake_cloud"
work="$(mktemp -d /tmp/kinetic-sweep-bench.XXXXXX)"
# shellcheck source=bench/fake_cloud.sh
source "$(dirname "$0")/fake_cloud.sh"
trap 'stop_fake_cloud; rm -rf "$work"' EXIT

seconds_since() {
  echo "($(date +%s%N) - $1) / 1000000000" | bc -l
}

# N `kinetic run --detach` at once (in the project DIR/proj); sets measure's `t0` when they
# start, `failed` and `errors`.
submit_cli() {
  local dir="$1" pids=()
  # Live for the status below, idle meanwhile: a sleeping pod costs the machine nothing.
  printf 'import time\ntime.sleep(600)\n' >job.py
  # One run first builds the image and makes the job's ServiceAccount, as a sweep's earlier runs
  # have; a new file then makes the sweep's context one not uploaded yet.
  "$kin" -q run job.py --accelerator v5litepod-1 --detach >/dev/null
  echo sweep >params.txt
  t0=$(date +%s%N)
  for i in $(seq "$jobs"); do
    "$kin" run job.py --accelerator v5litepod-1 --detach >"$dir/run.$i.out" 2>"$dir/run.$i.err" &
    pids+=($!)
  done
  local i=0
  for pid in "${pids[@]}"; do
    i=$((i + 1))
    wait "$pid" || { failed=$((failed + 1)) && errors+=("$dir/run.$i.err"); }
  done
}

# One run_async_map over N inputs; sets measure's `t0` when it starts and `failed` (the batch's
# submission failures).
submit_python() {
  local dir="$1"
  cat >sweep.py <<'PY'
import sys
import kinetic

@kinetic.run(accelerator="v5litepod-1", context_dir=".")
def idle(x):
    import time
    time.sleep(600)

batch = idle.run_async_map(range(int(sys.argv[1])), max_concurrent=None,
                           max_submitting=int(sys.argv[2]))
print(len(batch.submission_failures))
PY
  local py=(env KINETIC_BIN="$kin" PYTHONPATH="$python_dir" python3 sweep.py)
  "${py[@]}" 1 1 >/dev/null 2>"$dir/warmup.err"  # builds the image, as in submit_cli
  echo sweep >params.txt
  t0=$(date +%s%N)
  failed=$("${py[@]}" "$jobs" "$submitting" 2>"$dir/python.err" | tail -n 1)
}

measure() {
  local ms="$1" dir="$work/at-$1"
  start_fake_cloud "$fake" "$dir" "$ms" --write-quota "$quota"
  cd "$dir/proj"
  "$kin" -q up --project bench --zone us-central1-a --accelerator v5litepod-1 >/dev/null
  local t0 failed=0 errors=()
  "submit_$mode" "$dir"
  local submit_s
  submit_s=$(seconds_since "$t0")
  t0=$(date +%s%N)
  local live
  live=$("$kin" status -o name | wc -l)
  local status_s
  status_s=$(seconds_since "$t0")
  cd "$work"
  stop_fake_cloud
  local gcs_429 kube_429
  gcs_429=$(sed -n 's/^kinetic_fake_cloud: rate_limited gcs //p' "$dir/fake.log")
  kube_429=$(sed -n 's/^kinetic_fake_cloud: rate_limited kube //p' "$dir/fake.log")
  printf '%4s ms: %d submissions in %6.1f s, %d failed, 429s: %s GCS + %s Kubernetes; status of %d jobs: %5.2f s\n' \
    "$ms" "$jobs" "$submit_s" "$failed" "${gcs_429:-?}" "${kube_429:-?}" "$live" "$status_s"
  if ((failed > 0)); then
    for file in "${errors[@]}"; do tail -n 1 "$file"; done | sort | uniq -c | sort -rn | head -5
  fi
}

how="kinetic run --detach at once"
[[ "$mode" == python ]] && how="run_async_map inputs, $submitting submissions at a time"
echo "== $jobs x $how, quota $quota writes/s per bucket and per API server ($(nproc) cores)"
measure 0
measure "$rtt"
