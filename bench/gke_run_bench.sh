#!/usr/bin/env bash
# `kinetic run` on the gke backend against the whole fake cloud (tests/fakes/fake_cloud.h, no
# simulated latency): CLI-side time by pipeline step (-v 2 prints them) with a cached image and a
# 10 MiB context; the cold-start steps (node, image, first log line; -v 2) of a single-host and
# a multi-host slice; and the API calls kinetic makes per `run` and per `status` (counted from
# its own -v 6 trace, one line per request).
#
#   bench/gke_run_bench.sh BUILD_DIR [RUNS]
#
# BUILD_DIR holds kinetic and tests/kinetic_fake_cloud (a Release build for timing figures).
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR [RUNS]}" && pwd)"
runs="${2:-20}"
kin="$build/kinetic"
fake="$build/tests/kinetic_fake_cloud"
work="$(mktemp -d /tmp/kinetic-gke-bench.XXXXXX)"
trap 'kill "$fake_pid" 2>/dev/null; wait "$fake_pid" 2>/dev/null; rm -rf "$work"' EXIT

export HOME="$work/home" XDG_CONFIG_HOME="$work/config" KINETIC_HOME="$work/state"
export GCE_METADATA_HOST=127.0.0.1:9
mkdir -p "$HOME"
"$fake" --enable-all >"$work/fake.env" &
fake_pid=$!
for _ in $(seq 100); do grep -q '^$' "$work/fake.env" 2>/dev/null && break; sleep 0.1; done
# shellcheck disable=SC1091
source "$work/fake.env"

"$kin" -q up --project bench --zone us-central1-a --accelerator v5litepod-1
mkdir -p "$work/proj"
cd "$work/proj"
head -c $((10 << 20)) /dev/urandom >data.bin
printf 'print("hello from the pod")\n' >train.py

echo "== first run: builds the image, uploads the 10 MiB context, scales the pool from 0"
"$kin" -v 2 run train.py --accelerator v5litepod-1 2>&1 >/dev/null |
  grep -E 'steps:|cold start:' | sed 's/^kinetic: //'

# A multi-host slice: `up` installs JobSet and a 4-node pool; the first run scales it from 0.
"$kin" -q up --project bench --zone us-central1-a --accelerator v5litepod-16
echo "== a v5litepod-16 slice (JobSet, 4 hosts), cold, then warm"
for _ in 1 2; do
  "$kin" -v 2 run train.py --accelerator v5litepod-16 2>&1 >/dev/null |
    grep -E 'steps:|cold start:' | sed 's/^kinetic: //'
done

echo "== $runs runs with the image and context cached (ms per step: median, min, max)"
for _ in $(seq "$runs"); do
  "$kin" -v 2 run train.py --accelerator v5litepod-1 2>&1 >/dev/null | grep 'steps:'
done | python3 -c '
import re, statistics, sys
steps = {}
for line in sys.stdin:
    for name, ms in re.findall(r"([a-z+]+) ([0-9.]+) ms", line):
        steps.setdefault(name, []).append(float(ms))
total = [sum(v) for v in zip(*steps.values())]
cli = [t - w for t, w in zip(total, steps.get("watch+stream", [0] * len(total)))]
def row(name, v, note=""):
    print(f"  {name:13s} {statistics.median(v):8.1f} {min(v):8.1f} {max(v):8.1f}{note}")
for name, v in steps.items():
    row(name, v)
row("total", total)
row("cli-side", cli, "   (total minus watch+stream, which waits for the pod)")
'

count_calls() {
  grep -E '^(GET|POST|PUT|PATCH|DELETE|HEAD) ' | sed -E 's/ ([0-9]{3}) .*$//; s/\?.*$//' |
    sed -E 's#https?://[^/]+##; s#job-[0-9a-f]{8}#JOB#g; s#kinetic-JOB#kinetic-JOB#g; s#[0-9a-f]{64}#SHA#g; s#pods/[a-z0-9-]+#pods/POD#g' |
    sort | uniq -c | sort -rn
}
echo "== API calls per cached run (kinetic's own -v 6 trace)"
"$kin" -v 6 run train.py --accelerator v5litepod-1 2>&1 >/dev/null | tee "$work/run.trace" | count_calls
echo "  total: $(count_calls <"$work/run.trace" | awk '{s+=$1} END {print s}')"
echo "== API calls per status"
"$kin" -v 6 status 2>&1 >/dev/null | tee "$work/status.trace" | count_calls
echo "  total: $(count_calls <"$work/status.trace" | awk '{s+=$1} END {print s}')"
