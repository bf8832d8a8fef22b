# shellcheck shell=bash
# Shared helpers for bench/startup.sh and bench/local_run_overhead.sh (sourced, not run).
#
# Provides: find_kinetic, hf_shell_flags, hf_run, rss_median_kib, faults_median, hf_field,
# print_row, load_note.
# Needs: hyperfine, python3 (to read hyperfine's JSON); /usr/bin/time for peak RSS (optional).

BENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_RUNS="${BENCH_RUNS:-30}"        # hyperfine timing runs per command (>= 20)
BENCH_WARMUP="${BENCH_WARMUP:-3}"     # hyperfine warmup runs per command
BENCH_RSS_RUNS="${BENCH_RSS_RUNS:-10}" # /usr/bin/time runs per command for peak RSS

# find_kinetic [PATH]: prints an absolute path to the kinetic binary or fails with a hint.
find_kinetic() {
  local bin="${1:-${KINETIC_BIN:-}}"
  if [[ -z "$bin" ]]; then
    for c in "$BENCH_ROOT/build-release/kinetic" "$BENCH_ROOT/build/kinetic"; do
      [[ -x "$c" ]] && { bin="$c"; break; }
    done
  fi
  if [[ -z "$bin" || ! -x "$bin" ]]; then
    echo "kinetic binary not found${bin:+ at $bin}; build a Release one and pass it:" >&2
    echo "  cmake -S . -B /tmp/kbench -G Ninja -DCMAKE_BUILD_TYPE=Release -DKINETIC_BUILD_TESTS=OFF" >&2
    echo "  cmake --build /tmp/kbench --target kinetic && $0 /tmp/kbench/kinetic" >&2
    return 1
  fi
  (cd "$(dirname "$bin")" && echo "$(pwd -P)/$(basename "$bin")")
}

need_tools() {
  command -v hyperfine >/dev/null || { echo "hyperfine not found (apt-get install -y hyperfine)" >&2; return 1; }
  command -v python3 >/dev/null || { echo "python3 not found (reads hyperfine's JSON)" >&2; return 1; }
  if [[ ! -x /usr/bin/time ]]; then
    echo "note: /usr/bin/time not found (apt-get install -y time); peak RSS is left out" >&2
  fi
}

# Run commands without an intermediate shell when this hyperfine can (-N since 1.13), so no
# shell start-up is subtracted from, or added to, the figures.
hf_shell_flags() {
  local help
  help="$(hyperfine --help 2>&1)"
  if grep -qE '^\s*-N([, ]|$)' <<<"$help"; then
    echo "-N"
  elif grep -q -- '--shell' <<<"$help" && grep -q 'none' <<<"$help"; then
    echo "--shell=none"
  fi  # else: hyperfine's default shell with its own start-up correction
}

# hf_run JSON [hyperfine args...]: hyperfine with the common flags, exporting JSON.
hf_run() {
  local json="$1"
  shift
  # shellcheck disable=SC2046
  hyperfine $(hf_shell_flags) --warmup "$BENCH_WARMUP" --runs "$BENCH_RUNS" --style basic \
    --export-json "$json" "$@"
}

# hf_field JSON NAME FIELD: a field of one result (times in s are printed in ms).
# FIELD: median, min, mean, max, stddev (ms), cpu (user+system mean, ms), runs.
hf_field() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
path, name, field = sys.argv[1:]
for r in json.load(open(path))["results"]:
    if r["command"] == name:
        if field == "cpu":
            v = (r["user"] + r["system"]) * 1000
        elif field == "runs":
            print(len(r["times"])); break
        else:
            v = r[field] * 1000
        print(f"{v:.2f}"); break
else:
    print("-")
PY
}

# rss_median_kib CMD...: median over BENCH_RSS_RUNS runs of GNU time's %M (max RSS, KiB) or "-".
# Note %M is ru_maxrss of the child: the largest of it and of the descendants it waited for.
rss_median_kib() { time_median %M "$@"; }
# faults_median CMD...: the same for %R, minor page faults (pages mapped in: the loader's and
# the first touch of each page of code and data).
faults_median() { time_median %R "$@"; }

# time_median FORMAT CMD...: median over BENCH_RSS_RUNS runs of one GNU time field, or "-".
time_median() {
  [[ -x /usr/bin/time ]] || { echo "-"; return; }
  local format=$1 tmp vals=() i
  shift
  tmp="$(mktemp)"
  for ((i = 0; i < BENCH_RSS_RUNS; i++)); do
    if /usr/bin/time -f "$format" -o "$tmp" "$@" >/dev/null 2>&1; then :; fi
    vals+=("$(tail -n1 "$tmp")")
  done
  rm -f "$tmp"
  printf '%s\n' "${vals[@]}" | sort -n | awk '{a[NR]=$1} END {
    if (NR == 0) { print "-"; exit }
    if (NR % 2) print a[(NR + 1) / 2]; else printf "%d\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

kib_to_mib() {
  if [[ "$1" == "-" ]]; then echo "-"; else awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; fi
}

# Percent of CPU time that was idle over one second: how quiet the machine is right now.
cpu_idle_pct() {
  local a b
  read -r -a a </proc/stat
  sleep 1
  read -r -a b </proc/stat
  # fields after "cpu": user nice system idle iowait irq softirq steal
  local idle=$(((b[4] + b[5]) - (a[4] + a[5])))
  local total=$(((b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + b[7] + b[8]) -
    (a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7] + a[8])))
  if ((total > 0)); then echo $((100 * idle / total)); else echo "?"; fi
}

load_note() {
  echo "# $(date -u +%Y-%m-%dT%H:%MZ)  $(nproc) cores  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "# before the runs: CPU $(cpu_idle_pct)% idle over 1 s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# (other work on the machine inflates wall times; the cpu column much less)"
}
