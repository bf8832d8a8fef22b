#!/usr/bin/env bash
# What `kinetic pipeline run` costs on the local backend, for a three-step fan-out of jobs that
# do nothing (prep; left and right each need prep):
#
#   bench/pipeline_overhead.sh [KINETIC_BIN]
#
# hyperfine times, from a project folder in a temp dir (KINETIC_HOME inside it):
#   3 x kinetic run noop.sh         the same three jobs run one after the other by hand
#   pipeline run (all run)          --prepare removes the cache and ./kinetic-out: every step runs
#   pipeline run (all reused)       the cache kept: every step is reused (planning, keys, the
#                                   copy of the reused outputs, the record)
# and the peak RSS of each pipeline run. Figures, not assertions: exits 0 either way.
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"

need_tools
kinetic="$(find_kinetic "${1:-}")"
work="$(mktemp -d "${TMPDIR:-/tmp}/kinetic-pipeline-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export KINETIC_HOME="$work/home" XDG_CONFIG_HOME="$work/xdg"
mkdir -p "$KINETIC_HOME" "$XDG_CONFIG_HOME" "$work/proj"
cd "$work/proj"
echo "true" >noop.sh
cat >kinetic.yaml <<'YAML'
steps:
  prep: {file: noop.sh}
  left: {file: noop.sh, args: [left], needs: [prep]}
  right: {file: noop.sh, args: [right], needs: [prep]}
YAML
json="${BENCH_JSON:-$work/pipeline.json}"
reset_all="rm -rf $KINETIC_HOME/jobs $KINETIC_HOME/pipelines $work/proj/kinetic-out"
reset_records="rm -rf $KINETIC_HOME/jobs"

if ! "$kinetic" pipeline run >"$work/out.txt" 2>&1; then
  echo "error: kinetic pipeline run failed:" >&2
  cat "$work/out.txt" >&2
  exit 1
fi

load_note
echo "# kinetic: $kinetic; bash ${BASH_VERSION}"
hf_run "$json" --prepare "$reset_all" \
  -n "3 x kinetic run noop.sh" "bash -c '$kinetic run noop.sh && $kinetic run noop.sh -- left && $kinetic run noop.sh -- right'" \
  -n "pipeline run (all run)" "$kinetic pipeline run" >"$work/hyperfine1.txt" 2>&1 || {
  cat "$work/hyperfine1.txt" >&2
  exit 1
}
"$kinetic" pipeline run >/dev/null 2>&1  # the cache the next timing reuses
json2="$work/pipeline2.json"
hf_run "$json2" --prepare "$reset_records" \
  -n "pipeline run (all reused)" "$kinetic pipeline run" >"$work/hyperfine2.txt" 2>&1 || {
  cat "$work/hyperfine2.txt" >&2
  exit 1
}
rss_reused="$(kib_to_mib "$(rss_median_kib "$kinetic" pipeline run)")"
eval "$reset_all"
rss_run="$(kib_to_mib "$(BENCH_RSS_RUNS=1 rss_median_kib "$kinetic" pipeline run)")"

echo
printf '%-26s %10s %8s %8s %13s\n' "command" "median ms" "min ms" "cpu ms" "peak RSS MiB"
printf '%-26s %10s %8s %8s %13s\n' "-------" "---------" "------" "------" "------------"
row() {
  printf '%-26s %10s %8s %8s %13s\n' "$2" "$(hf_field "$1" "$2" median)" \
    "$(hf_field "$1" "$2" min)" "$(hf_field "$1" "$2" cpu)" "$3"
}
row "$json" "3 x kinetic run noop.sh" "-"
row "$json" "pipeline run (all run)" "$rss_run"
row "$json2" "pipeline run (all reused)" "$rss_reused"
echo
echo "# runs: $BENCH_RUNS timed + $BENCH_WARMUP warmup (hyperfine $(hf_shell_flags)); RSS: median of"
echo "# $BENCH_RSS_RUNS (all reused), 1 (all run); cpu ms = user + system, mean, of the process tree"
