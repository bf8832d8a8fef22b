#!/usr/bin/env bash
# A big project shipped to GKE (issue #30 point 2): kinetic's package and stage steps against
# `tar --zstd` then `gcloud storage cp` of the same tree, to the fake cloud answering at once and
# after a simulated round trip (kinetic_fake_cloud --round-trip-ms, tests/fakes/fake_latency.h).
#
#   bench/big_context_bench.sh BUILD_DIR [MIB] [ROUND_TRIP_MS]
#
# The project (generated once under $BENCH_DIR, default a temp dir): 4,000 source files, a
# random binary of MIB/2 (weights: incompressible) and a JSONL of MIB/2 (data: compressible).
# Prints wall time and peak resident memory of each tool, and kinetic's own step times (-v 2).
# Figures, not assertions. Needs about 3 x MIB of free disk. BENCH_GZIP=0 skips `tar -czf`.
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR [MIB] [ROUND_TRIP_MS]}" && pwd)"
mib="${2:-5120}"
rtt="${3:-50}"
kin="$build/kinetic"
fake="$build/tests/kinetic_fake_cloud"
work="$(mktemp -d "${TMPDIR:-/tmp}/kinetic-big-context.XXXXXX")"
# shellcheck source=bench/fake_cloud.sh
source "$(dirname "$0")/fake_cloud.sh"
trap 'stop_fake_cloud; rm -rf "$work"' EXIT
ctx="${BENCH_DIR:-$work/project}"

if [[ ! -e "$ctx/.bench-complete" ]]; then
  echo "== generating ~$mib MiB under $ctx"
  python3 - "$ctx" "$mib" <<'PY'
import json, os, random, sys
root, mib = sys.argv[1], int(sys.argv[2])
rng = random.Random(30)
os.makedirs(os.path.join(root, "src"), exist_ok=True)
words = "import jax numpy model train loss batch optimizer step config data def return".split()
for i in range(4000):
    d = os.path.join(root, "src", "pkg%02d" % (i % 40))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "m%04d.py" % i), "w") as f:
        f.write(" ".join(rng.choice(words) for _ in range(rng.randint(200, 2400))) + "\n")
half = mib * 1024 * 1024 // 2
with open(os.path.join(root, "weights.bin"), "wb") as f:
    for _ in range(half // (8 << 20)):
        f.write(os.urandom(8 << 20))
with open(os.path.join(root, "data.jsonl"), "w") as f:
    written, n = 0, 0
    while written < half:
        line = json.dumps({"id": n, "text": " ".join(rng.choice(words) for _ in range(40)),
                           "label": rng.randint(0, 9)}) + "\n"
        f.write(line)
        written += len(line)
        n += 1
with open(os.path.join(root, "train.py"), "w") as f:
    f.write("print('big project')\n")
open(os.path.join(root, ".bench-complete"), "w").close()
PY
fi
echo ".bench-complete" >"$ctx/.kineticignore"
bytes=$(du -sb "$ctx" | cut -f1)
echo "== project: $(find "$ctx" -type f | wc -l) files, $((bytes / 1024 / 1024)) MiB; $(nproc) cores"
find "$ctx" -type f -print0 | xargs -0 cat >/dev/null  # every tool reads from the page cache

timed() {  # LABEL CMD...: wall time and peak RSS of CMD (stdout discarded, stderr kept)
  local label="$1"
  shift
  local rc=0 wall rss
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || rc=$?
  read -r wall rss < <(tail -1 "$work/time")  # after "Command exited with non-zero status N"
  printf '  %-34s %7.2f s  peak RSS %4d MiB\n' "$label" "$wall" "$((rss / 1024))"
  return "$rc"
}

timed "tar --zstd -cf" tar --zstd -cf "$work/ctx.tar.zst" -C "$ctx" .
echo "  archive: tar.zst $(($(stat -c %s "$work/ctx.tar.zst") >> 20)) MiB"
if [[ "${BENCH_GZIP:-1}" == 1 ]]; then  # what GKE contexts were before issue #30
  timed "tar -czf" tar -czf "$work/ctx.tar.gz" -C "$ctx" .
  echo "  archive: tar.gz $(($(stat -c %s "$work/ctx.tar.gz") >> 20)) MiB"
  rm -f "$work/ctx.tar.gz"
fi

measure() {
  local ms="$1" dir="$work/at-$1"
  echo "== $ms ms round trip"
  start_fake_cloud "$fake" "$dir" "$ms"
  (cd "$dir/proj" && "$kin" -q up --project bench --zone us-central1-a >/dev/null)
  local bucket=bench-kinetic-kinetic
  mkdir -p "$dir/gcloud"
  # One stream, as kinetic uploads: gcloud's parallel composite uploads need compose, which the
  # fake GCS may lack.
  CLOUDSDK_CONFIG="$dir/gcloud" CLOUDSDK_CORE_PROJECT=bench \
    CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED=False \
    CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE="$STORAGE_EMULATOR_HOST/storage/v1/" \
    timed "gcloud storage cp (the tar.zst)" \
    gcloud storage cp "$work/ctx.tar.zst" "gs://$bucket/bench/ctx.tar.zst" ||
    echo "  gcloud storage cp failed: $(tail -1 "$work/stderr")"
  (cd "$ctx" && timed "kinetic run --detach (pack, stage)" "$kin" -v 2 run --detach train.py)
  grep -o 'steps: .*' "$work/stderr" | sed 's/^/    /' || true
  stop_fake_cloud
}

measure 0
measure "$rtt"
