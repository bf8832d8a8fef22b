#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) in build-fuzz and runs each one for SECONDS (default
# 20), two at a time (KINETIC_FUZZ_JOBS), from a scratch copy of its seed corpus: the checked-in
# tests/fuzz/corpus is only read. Prints one line per target: executions, coverage (cov: edges,
# ft: features) and corpus growth. A crash, leak, timeout or out-of-memory exits 1, with the
# sanitizer's report and the path of the input that reproduces it (docs/testing.md "Fuzzing").
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 60 ignore archive
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
jobs=${KINETIC_FUZZ_JOBS:-2}

cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DKINETIC_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" >/dev/null
cmake --build build-fuzz -j2 --target fuzz

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for src in tests/fuzz/fuzz_*.cpp; do
    name=$(basename "$src" .cpp)
    targets+=("${name#fuzz_}")
  done
fi

runs=$PWD/build-fuzz/runs
# One target: a fresh working corpus seeded from the checked-in one; its log, exit status and
# crash reproducers stay in build-fuzz/runs/NAME. The files a target writes (TMPDIR) go to
# /dev/shm when there is one: unpacking archives on tmpfs runs twice as many inputs.
run_target() {
  local name=$1 dir=$runs/$1 bin=$PWD/build-fuzz/tests/fuzz/fuzz_$1 status=0 scratch
  rm -rf "$dir"
  mkdir -p "$dir/corpus"
  cp -R "tests/fuzz/corpus/$name/." "$dir/corpus/"
  scratch=$(mktemp -d /dev/shm/kinetic-fuzz-XXXXXX 2>/dev/null) ||
    { scratch=$dir/tmp && mkdir -p "$scratch"; }
  # -timeout: an input that takes longer than 10 s is a hang. LeakSanitizer checks every input.
  (cd "$dir" && TMPDIR="$scratch" "$bin" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/" corpus >"$dir/log" 2>&1) ||
    status=$?
  chmod -R u+rwx "$scratch" 2>/dev/null || true
  rm -rf "$scratch" || true
  echo "$status" >"$dir/status"
}

for name in "${targets[@]}"; do
  [ -x "build-fuzz/tests/fuzz/fuzz_$name" ] || { echo "fuzz: no target fuzz_$name" >&2; exit 2; }
done
for name in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_target "$name" &
done
wait

failed=0
for name in "${targets[@]}"; do
  dir=$runs/$name
  status=$(cat "$dir/status")
  seeds=$(find "tests/fuzz/corpus/$name" -type f | wc -l)
  units=$(find "$dir/corpus" -type f | wc -l)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$dir/log" | tail -1)
  # The last status line ("#N DONE cov: C ft: F corp: ..."), else the last one printed.
  last=$(grep -E '^#[0-9]+' "$dir/log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  if [ "$status" = 0 ]; then
    printf 'fuzz_%-14s ok    %9s execs (%s/s)  cov %5s  ft %6s  corpus %3s -> %4s  peak %s MB\n' \
      "$name" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$seeds" "$units" "${rss:-?}"
  else
    failed=1
    printf 'fuzz_%-14s FAILED (exit %s) after %s execs; log: %s\n' "$name" "$status" \
      "${execs:-?}" "$dir/log"
    # The report (sanitizer, failed check or uncaught exception, then libFuzzer's), lines cut
    # short (libFuzzer also prints the input in hex), and the reproducer libFuzzer saved.
    first='^==[0-9]*==\|^fuzz check failed\|runtime error\|^terminate called\|ERROR: libFuzzer'
    sed -n "/$first/,\$p" "$dir/log" | grep -v '^stat::' | cut -c1-240 | head -60
    for f in "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* "$dir"/slow-unit-*; do
      [ -e "$f" ] || continue
      echo "  reproducer: $f"
      echo "  rerun it:   build-fuzz/tests/fuzz/fuzz_$name $f"
    done
  fi
done
exit $failed
