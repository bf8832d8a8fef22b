#!/usr/bin/env bash
# What `kinetic run` on the local backend adds to a job that does nothing.
#
#   bench/local_run_overhead.sh [KINETIC_BIN]
#
# KINETIC_BIN: the binary to measure (default: $KINETIC_BIN, else build-release/kinetic or
# build/kinetic in the repo). Measure a Release build.
#
# Environment: BENCH_RUNS (30; hyperfine timing runs, >= 20), BENCH_WARMUP (3), BENCH_RSS_RUNS
# (10), BENCH_JSON (where to keep hyperfine's JSON; default: a temp file, removed),
# BENCH_REAL_PYTHON (1: when python3 on PATH is a shim, e.g. pyenv's, both sides use the real
# interpreter behind it; 0 keeps the shim).
#
# In a temp dir with KINETIC_HOME and XDG_CONFIG_HOME inside it, a project folder holds
# noop.py (`pass`) and noop.sh (`true`). hyperfine times, from that folder:
#   python3 noop.py   vs  kinetic run noop.py
#   bash noop.sh      vs  kinetic run noop.sh
# and the overhead is the difference of the medians (target: under 30 ms). Before each timed
# run hyperfine's --prepare removes the job records and ./kinetic-out, so every run starts from
# the same state (the staged-context store is kept, as it is for a user re-running a script).
# Peak RSS of `kinetic run noop.sh` is GNU time's %M: the largest of kinetic, its job runner
# and bash. Figures, not assertions: exits 0 either way.
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"

need_tools
kinetic="$(find_kinetic "${1:-}")"
bash_bin="$(command -v bash)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kinetic-run-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# kinetic runs `python3` from PATH. A version-manager shim there (pyenv's is a bash script that
# execs `pyenv exec`, 50-100 ms and very noisy) would dominate both sides, so put the real
# interpreter first on PATH for both, unless BENCH_REAL_PYTHON=0.
python="$(command -v python3)"
if [[ "${BENCH_REAL_PYTHON:-1}" != 0 ]]; then
  real="$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')"
  if [[ "$real" != "$(readlink -f "$python")" ]]; then
    mkdir -p "$work/bin"
    ln -s "$real" "$work/bin/python3"
    export PATH="$work/bin:$PATH"
    echo "# python3 on PATH is a shim ($python); using $real on both sides" >&2
    python="$work/bin/python3"
  fi
fi
export KINETIC_HOME="$work/home" XDG_CONFIG_HOME="$work/xdg"
mkdir -p "$KINETIC_HOME" "$XDG_CONFIG_HOME" "$work/proj"
cd "$work/proj"
echo "pass" >noop.py
echo "true" >noop.sh
json="${BENCH_JSON:-$work/run.json}"
reset="rm -rf $KINETIC_HOME/jobs $work/proj/kinetic-out"

# Both jobs must succeed before they are timed.
for f in noop.py noop.sh; do
  if ! "$kinetic" run "$f" >"$work/out.txt" 2>&1; then
    echo "error: kinetic run $f failed:" >&2
    cat "$work/out.txt" >&2
    exit 1
  fi
done
$reset

load_note
echo "# kinetic: $kinetic; python3 $("$python" -c 'import sys; print(sys.version.split()[0])'); bash ${BASH_VERSION}"
hf_run "$json" --prepare "$reset" \
  -n "python3 noop.py" "$python noop.py" \
  -n "kinetic run noop.py" "$kinetic run noop.py" \
  -n "bash noop.sh" "$bash_bin noop.sh" \
  -n "kinetic run noop.sh" "$kinetic run noop.sh" >"$work/hyperfine.txt" 2>&1 || {
  cat "$work/hyperfine.txt" >&2
  exit 1
}

rss_direct="$(kib_to_mib "$(rss_median_kib "$bash_bin" noop.sh)")"
rss_py="$(kib_to_mib "$(rss_median_kib "$python" noop.py)")"
rss_run="$(kib_to_mib "$(rss_median_kib "$kinetic" run noop.sh)")"
rss_runpy="$(kib_to_mib "$(rss_median_kib "$kinetic" run noop.py)")"
$reset

f() { hf_field "$json" "$1" "$2"; }
echo
printf '%-22s %10s %8s %8s %13s\n' "command" "median ms" "min ms" "cpu ms" "peak RSS MiB"
printf '%-22s %10s %8s %8s %13s\n' "-------" "---------" "------" "------" "------------"
row() { printf '%-22s %10s %8s %8s %13s\n' "$1" "$(f "$1" median)" "$(f "$1" min)" "$(f "$1" cpu)" "$2"; }
row "python3 noop.py" "$rss_py"
row "kinetic run noop.py" "$rss_runpy"
row "bash noop.sh" "$rss_direct"
row "kinetic run noop.sh" "$rss_run"
echo
printf '%-22s %10s %8s %8s\n' "overhead" "median ms" "min ms" "cpu ms"
for pair in "noop.py|python3 noop.py" "noop.sh|bash noop.sh"; do
  job="${pair%%|*}" direct="${pair#*|}"
  awk -v n="kinetic run $job" -v a="$(f "kinetic run $job" median)" -v b="$(f "$direct" median)" \
    -v c="$(f "kinetic run $job" min)" -v d="$(f "$direct" min)" \
    -v e="$(f "kinetic run $job" cpu)" -v g="$(f "$direct" cpu)" 'BEGIN {
      printf "%-22s %10.2f %8.2f %8.2f   target < 30 ms: %s\n", n, a - b, c - d, e - g,
        (a - b < 30 ? "yes" : "NO") }'
done
echo
echo "# runs: $BENCH_RUNS timed + $BENCH_WARMUP warmup (hyperfine $(hf_shell_flags), --prepare resets job records); RSS: median of $BENCH_RSS_RUNS"
echo "# overhead = kinetic run's figure minus the direct run's; cpu ms = user + system, mean,"
echo "# of the whole process tree hyperfine waited for"
