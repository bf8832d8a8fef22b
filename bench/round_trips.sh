#!/usr/bin/env bash
# Round trips in series of a warm rerun (issue #14): a cached `kinetic run` of a job that takes
# ~0.1 s, on a warm node, against the whole fake cloud answering every request at once and then
# after a simulated round trip (kinetic_fake_cloud --round-trip-ms, tests/fakes/fake_latency.h).
#
#   bench/round_trips.sh BUILD_DIR [RUNS] [ROUND_TRIP_MS]
#
# Prints, per latency, the median wall time of RUNS cached runs (default 9), the time per
# pipeline step (-v 2), and the requests kinetic sends per run (its -v 6 trace); then the round
# trips in series, (wall at L - wall at 0) / L, overall and for the CLI's side after the job
# ends (collect + clean). The pod's bootstrap requests are in the wall time, not in the count.
# BENCH_KEEP=1 keeps the work directory (its path is printed) with each trace.
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR [RUNS] [ROUND_TRIP_MS]}" && pwd)"
runs="${2:-9}"
rtt="${3:-50}"
kin="$build/kinetic"
fake="$build/tests/kinetic_fake_cloud"
work="$(mktemp -d /tmp/kinetic-rtt-bench.XXXXXX)"
# shellcheck source=bench/fake_cloud.sh
source "$(dirname "$0")/fake_cloud.sh"
trap 'stop_fake_cloud; [[ -n "${BENCH_KEEP:-}" ]] || rm -rf "$work"' EXIT

# measure MS: a fresh fake cloud at MS per request, a warm-up run, then RUNS timed runs.
# Writes $work/MS.walls (ms, one per run), $work/MS.steps (-v 2 lines), $work/MS.trace (-v 6).
measure() {
  local ms="$1" dir="$work/at-$1"
  start_fake_cloud "$fake" "$dir" "$ms"
  "$kin" -q up --project bench --zone us-central1-a --accelerator v5litepod-1 >/dev/null
  cd "$dir/proj"
  printf 'import time\ntime.sleep(0.1)\nprint("hello from the pod")\n' >train.py
  printf 'numpy==1.26.4\n' >requirements.txt
  # Warm-up: builds the image, stages the context, scales the pool; the rest are cached reruns.
  "$kin" -q run train.py --accelerator v5litepod-1 >/dev/null
  : >"$work/$ms.walls"
  : >"$work/$ms.steps"
  # Walls from plain runs (-v 2 itself asks for the pod once more, for its cold-start line).
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s%N)
    "$kin" -q run train.py --accelerator v5litepod-1 >/dev/null
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000)) >>"$work/$ms.walls"
    "$kin" -v 2 run train.py --accelerator v5litepod-1 2>>"$work/$ms.steps" >/dev/null
  done
  "$kin" -v 6 run train.py --accelerator v5litepod-1 2>"$work/$ms.trace" >/dev/null
  cd "$work"
  stop_fake_cloud
}

[[ -n "${BENCH_KEEP:-}" ]] && echo "work directory: $work"
echo "== round trips in series of a cached rerun on a warm node ($runs runs each; $(nproc) cores)"
measure 0
measure "$rtt"

python3 - "$work" "$rtt" <<'EOF'
import re, statistics, sys
work, rtt = sys.argv[1], int(sys.argv[2])

def walls(ms):
    return [float(x) for x in open(f"{work}/{ms}.walls")]

def steps(ms):
    table = {}
    for line in open(f"{work}/{ms}.steps"):
        if "steps:" not in line:
            continue
        for name, v in re.findall(r"([a-z+]+) ([0-9.]+) ms", line):
            table.setdefault(name, []).append(float(v))
    return {k: statistics.median(v) for k, v in table.items()}

def requests(ms):
    n, kinds = 0, {}
    for line in open(f"{work}/{ms}.trace"):
        m = re.match(r"^(GET|POST|PUT|PATCH|DELETE|HEAD) (\S+)", line)
        if not m:
            continue
        n += 1
        path = re.sub(r"https?://[^/]+", "", m.group(2)).split("?")[0]
        path = re.sub(r"pods/[a-z0-9-]+", "pods/POD", path)
        path = re.sub(r"job-[0-9a-f]{8}", "JOB", path)
        path = re.sub(r"[0-9a-f]{64}", "SHA", path)
        key = m.group(1) + " " + path
        kinds[key] = kinds.get(key, 0) + 1
    return n, kinds

w0, wl = statistics.median(walls(0)), statistics.median(walls(rtt))
s0, sl = steps(0), steps(rtt)
n0, k0 = requests(0)
nl, _ = requests(rtt)
print(f"\n  {'step':14s} {'0 ms':>9s} {str(rtt) + ' ms':>9s} {'trips':>6s}")
for name in s0:
    a, b = s0[name], sl.get(name, 0.0)
    print(f"  {name:14s} {a:9.1f} {b:9.1f} {(b - a) / rtt:6.1f}")
print(f"  {'wall (median)':14s} {w0:9.1f} {wl:9.1f} {(wl - w0) / rtt:6.1f}")
after = sum(sl.get(k, 0) - s0.get(k, 0) for k in ("collect", "clean")) / rtt
print(f"\n  round trips in series: {(wl - w0) / rtt:.1f} (CLI and bootstrap); "
      f"after the job ends (collect + clean): {after:.1f}")
print(f"  requests kinetic sends per run: {n0} (at 0 ms), {nl} (at {rtt} ms), traced at -v 6; "
      "GET pods/POD is -v 2's cold-start line (a plain run sends one fewer)")
for key, count in sorted(k0.items(), key=lambda kv: -kv[1]):
    print(f"    {count:3d} {key}")
EOF
