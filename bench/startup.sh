#!/usr/bin/env bash
# Start-up cost of kinetic's quick commands, against kubectl and gcloud.
#
#   bench/startup.sh [KINETIC_BIN]
#
# KINETIC_BIN: the binary to measure (default: $KINETIC_BIN, else build-release/kinetic or
# build/kinetic in the repo). Measure a Release build: a Debug or sanitizer build says little.
#
# Environment: BENCH_RUNS (30; hyperfine timing runs, >= 20), BENCH_WARMUP (3), BENCH_RSS_RUNS
# (10; /usr/bin/time runs for peak RSS), BENCH_COMPARE (1; 0 skips kubectl and gcloud),
# BENCH_JSON (where to keep hyperfine's JSON; default: a temp file, removed).
#
# Measures, per command: wall time (hyperfine, median and min of BENCH_RUNS runs after
# BENCH_WARMUP warmups, run without a shell when hyperfine supports -N), CPU time (user+system,
# mean) and peak RSS (median of BENCH_RSS_RUNS runs of /usr/bin/time -f %M).
# kinetic runs with KINETIC_HOME and XDG_CONFIG_HOME in an empty temp dir, so no user config is
# read. Targets: kinetic under 5 ms and 10 MiB. Figures, not assertions: exits 0 either way.
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"

need_tools
kinetic="$(find_kinetic "${1:-}")"
work="$(mktemp -d "${TMPDIR:-/tmp}/kinetic-startup-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export KINETIC_HOME="$work/home" XDG_CONFIG_HOME="$work/xdg"
mkdir -p "$KINETIC_HOME" "$XDG_CONFIG_HOME"
json="${BENCH_JSON:-$work/startup.json}"

names=("kinetic version" "kinetic --help" "kinetic accelerators -o json")
cmds=("$kinetic version" "$kinetic --help" "$kinetic accelerators -o json")
if [[ "${BENCH_COMPARE:-1}" != 0 ]]; then
  if command -v kubectl >/dev/null; then
    names+=("kubectl version --client")
    cmds+=("$(command -v kubectl) version --client")
  else
    echo "note: kubectl not found; skipped" >&2
  fi
  if command -v gcloud >/dev/null; then
    names+=("gcloud --version")
    cmds+=("$(command -v gcloud) --version")
  else
    echo "note: gcloud not found; skipped" >&2
  fi
fi

# Every command must work before it is timed.
for i in "${!cmds[@]}"; do
  # shellcheck disable=SC2086
  if ! ${cmds[$i]} >/dev/null 2>&1; then
    echo "error: '${names[$i]}' failed; not timing it" >&2
    exit 1
  fi
done

load_note
echo "# kinetic: $kinetic ($(stat -c %s "$kinetic") bytes)"
args=()
for i in "${!cmds[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
hf_run "$json" "${args[@]}" >"$work/hyperfine.txt" 2>&1 || {
  cat "$work/hyperfine.txt" >&2
  exit 1
}

echo
printf '%-30s %10s %8s %8s %13s %12s\n' "command" "median ms" "min ms" "cpu ms" "peak RSS MiB" \
  "minor faults"
printf '%-30s %10s %8s %8s %13s %12s\n' "-------" "---------" "------" "------" "------------" \
  "------------"
for i in "${!cmds[@]}"; do
  # shellcheck disable=SC2086
  rss="$(kib_to_mib "$(rss_median_kib ${cmds[$i]})")"
  # shellcheck disable=SC2086
  faults="$(faults_median ${cmds[$i]})"
  printf '%-30s %10s %8s %8s %13s %12s\n' "${names[$i]}" \
    "$(hf_field "$json" "${names[$i]}" median)" "$(hf_field "$json" "${names[$i]}" min)" \
    "$(hf_field "$json" "${names[$i]}" cpu)" "$rss" "$faults"
  if [[ "${names[$i]}" == kinetic* ]]; then
    eval "med_$i=$(hf_field "$json" "${names[$i]}" median) rss_$i=$rss"
  fi
done
echo
echo "# runs: $BENCH_RUNS timed + $BENCH_WARMUP warmup (hyperfine $(hf_shell_flags)); RSS and faults: median of $BENCH_RSS_RUNS"
echo "# cpu ms = user + system, mean; min ms is the best case on a quiet machine"
for i in 0 1 2; do
  m="med_$i" r="rss_$i"
  awk -v n="${names[$i]}" -v m="${!m}" -v r="${!r}" 'BEGIN {
    printf "# target %-28s  < 5 ms: %s   < 10 MiB: %s\n", n,
      (m < 5 ? "yes" : "NO (" m " ms)"), (r == "-" ? "?" : (r < 10 ? "yes" : "NO (" r " MiB)")) }'
done
