#!/usr/bin/env bash
# GCS transfer throughput: kinetic's StorageClient against Google's Node client
# (@google-cloud/storage) and `gcloud storage cp`, all against kinetic's fake GCS on loopback.
#
#   bench/gcs_bench.sh [BUILD_DIR]     (default: /tmp/kgbench)
#
# BUILD_DIR must hold bench/kinetic_gcs_bench and tests/kinetic_fake_gcs:
#   cmake -S . -B /tmp/kgbench -G Ninja -DCMAKE_BUILD_TYPE=Release -DKINETIC_BUILD_BENCH=ON
#   cmake --build /tmp/kgbench --target kinetic_gcs_bench kinetic_fake_gcs kinetic_nodelay_preload
# Node: tests/node/node_modules (cd tests/node && npm ci). gcloud: downloads only (its uploads
# send a multipart form the fake rejects: "Multipart upload needs exactly 2 parts"); skipped when
# missing or when it cannot download from the fake within a minute.
#
# Environment: BENCH_MIB (1024: size of the big object), BENCH_FILES (2000 small files of 1-64 KiB),
# BENCH_THREADS (8: transfers in flight for the many-files runs), BENCH_GCLOUD=0 (skip gcloud),
# BENCH_OVERHEAD_N (2000 metadata GETs), BENCH_JWT_N (1000 signatures), BENCH_NODELAY=0 (run the
# fake without the TCP_NODELAY and listen-backlog shim, bench/nodelay_preload.c; build target kinetic_nodelay_preload).
#
# The fake keeps objects in memory (the big object costs BENCH_MIB in the fake, twice while a
# second upload lands), so each tool's upload is deleted before the next one. Every download is
# compared with the source file after its timed run. Wall time is taken around the whole process
# (start-up included); peak RSS is GNU time's %M of the client process (node: the node process;
# gcloud: the largest of its python processes), shown as "-" without /usr/bin/time.
# Figures, not assertions: exits 0 unless a tool fails or a download differs.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="${1:-/tmp/kgbench}"
bench="$build/bench/kinetic_gcs_bench"
fake="$build/tests/kinetic_fake_gcs"
mib="${BENCH_MIB:-1024}"
nfiles="${BENCH_FILES:-2000}"
threads="${BENCH_THREADS:-8}"
for b in "$bench" "$fake"; do
  [[ -x "$b" ]] || { echo "gcs_bench: $b not found; see the header of $0" >&2; exit 1; }
done
[[ -d "$root/tests/node/node_modules/@google-cloud/storage" ]] ||
  { echo "gcs_bench: run 'npm ci' in tests/node first" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/kinetic-gcs-bench.XXXXXX")"
fake_pid=""
cleanup() {
  if [[ -n "$fake_pid" ]]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

bucket=bench
preload="$build/bench/libkinetic_nodelay_preload.so"
fake_env=()
if [[ "${BENCH_NODELAY:-1}" != 0 && -f "$preload" ]]; then
  fake_env=(env "LD_PRELOAD=$preload")
else
  echo "note: the fake runs without TCP_NODELAY: small requests wait ~40 ms each, bursts of connections ~1 s" >&2
fi
"${fake_env[@]}" "$fake" --bucket "$bucket" >"$work/fake.out" 2>"$work/fake.err" &
fake_pid=$!
for _ in $(seq 100); do [[ -s "$work/fake.out" ]] && break; sleep 0.05; done
port="$(head -n1 "$work/fake.out")"
[[ -n "$port" ]] || { echo "gcs_bench: the fake did not print its port" >&2; cat "$work/fake.err" >&2; exit 1; }
endpoint="http://127.0.0.1:$port"

echo "== generating a $mib MiB random file and $nfiles small files (1-64 KiB) under $work"
head -c "$((mib * 1024 * 1024))" /dev/urandom >"$work/big.bin"
mkdir -p "$work/small"
python3 - "$work/small" "$nfiles" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(20240601)
for i in range(n):
    with open(os.path.join(root, "f%05d.bin" % i), "wb") as f:
        f.write(os.urandom(rng.randint(1024, 64 * 1024)))
PY
big_bytes=$(stat -c %s "$work/big.bin")
small_bytes=$(du -sb --apparent-size "$work/small" | cut -f1)
cat "$work/big.bin" "$work/small"/* >/dev/null  # page cache

echo "# $(date -u +%Y-%m-%dT%H:%MZ)  $(nproc) cores  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg); fake at $endpoint"

rows=()
# timed OPERATION TOOL BYTES CMD...: runs CMD, records seconds, MiB/s and peak RSS.
timed() {
  local op="$1" tool="$2" bytes="$3"
  shift 3
  local t0 t1 rss="-" status=0
  t0=$(date +%s.%N)
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -f %M -o "$work/rss" "$@" >"$work/out" 2>"$work/err" || status=$?
    rss="$(tail -n1 "$work/rss")"
  else
    "$@" >"$work/out" 2>"$work/err" || status=$?
  fi
  t1=$(date +%s.%N)
  if ((status != 0)); then
    echo "   $op / $tool FAILED ($status):" >&2
    tail -n5 "$work/err" >&2
    rows+=("$op|$tool|failed|-|-")
    return 1
  fi
  local secs mibs rssm
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  mibs=$(awk -v s="$secs" -v n="$bytes" 'BEGIN { printf "%.0f", n / 1048576 / s }')
  rssm=$([[ "$rss" =~ ^[0-9]+$ ]] && awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }' || echo -)
  rows+=("$op|$tool|$secs|$mibs|$rssm")
  printf '   %-28s %-8s %8s s %7s MiB/s %7s MiB\n' "$op" "$tool" "$secs" "$mibs" "$rssm"
}

delete_object() { curl -fsS -X DELETE "$endpoint/storage/v1/b/$bucket/o/$1" >/dev/null || true; }
delete_prefix() {
  python3 - "$endpoint" "$bucket" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
ep, bucket, prefix = sys.argv[1:]
token = ""
while True:
    q = urllib.parse.urlencode({"prefix": prefix, "pageToken": token} if token else {"prefix": prefix})
    page = json.load(urllib.request.urlopen(f"{ep}/storage/v1/b/{bucket}/o?{q}"))
    for o in page.get("items", []):
        name = urllib.parse.quote(o["name"], safe="")
        urllib.request.urlopen(urllib.request.Request(f"{ep}/storage/v1/b/{bucket}/o/{name}", method="DELETE"))
    token = page.get("nextPageToken")
    if not token:
        break
PY
}
same_tree() { diff -rq "$work/small" "$1" >/dev/null || { echo "gcs_bench: $1 differs from the sources" >&2; exit 1; }; }
same_big() { cmp -s "$work/big.bin" "$1" || { echo "gcs_bench: $1 differs from big.bin" >&2; exit 1; }; rm -f "$1"; }

# Commands as arrays, so /usr/bin/time runs the real process.
kin=("$bench" --endpoint "$endpoint")
nod=(node "$here/gcs_node.mjs" "$endpoint")

# gcloud with a private config pointing at the fake and a dummy token.
gcloud_ok=0
if [[ "${BENCH_GCLOUD:-1}" != 0 ]] && command -v gcloud >/dev/null; then
  export CLOUDSDK_CONFIG="$work/gcloud"
  mkdir -p "$CLOUDSDK_CONFIG"
  echo "bench-token" >"$work/token"
  gcloud config set core/disable_usage_reporting true >/dev/null 2>&1 || true
  gcloud config set component_manager/disable_update_check true >/dev/null 2>&1 || true
  gcloud config set core/project fake-project >/dev/null 2>&1 || true
  gcloud config set api_endpoint_overrides/storage "$endpoint/" >/dev/null 2>&1 || true
  head -c 1000 /dev/urandom >"$work/probe.bin"
  "$bench" --endpoint "$endpoint" upload "$work/probe.bin" "$bucket" probe.bin >/dev/null
  if timeout 60 gcloud storage cp --access-token-file="$work/token" "gs://$bucket/probe.bin" "$work/probe.back" >/dev/null 2>"$work/gcloud.err" &&
    cmp -s "$work/probe.bin" "$work/probe.back"; then
    gcloud_ok=1
  else
    echo "note: gcloud storage cp against the fake failed; gcloud is skipped:" >&2
    tail -n3 "$work/gcloud.err" >&2
  fi
  delete_object probe.bin
fi
gcl=(gcloud storage cp --access-token-file="$work/token")

big_label="upload $mib MiB"
echo "== $big_label"
timed "$big_label" kinetic "$big_bytes" "${kin[@]}" upload "$work/big.bin" "$bucket" big.bin
timed "$big_label" node "$big_bytes" "${nod[@]}" upload "$work/big.bin" "$bucket" big-node.bin
delete_object big-node.bin

big_label="download $mib MiB"
echo "== $big_label"
timed "$big_label" kinetic "$big_bytes" "${kin[@]}" download "$bucket" big.bin "$work/back.bin"
same_big "$work/back.bin"
timed "$big_label" node "$big_bytes" "${nod[@]}" download "$bucket" big.bin "$work/back.bin"
same_big "$work/back.bin"
if ((gcloud_ok)); then
  if timed "$big_label" gcloud "$big_bytes" "${gcl[@]}" "gs://$bucket/big.bin" "$work/back.bin"; then
    same_big "$work/back.bin"
  fi
fi
delete_object big.bin

label="upload $nfiles small (x$threads)"
echo "== $label"
timed "$label" kinetic "$small_bytes" "${kin[@]}" --threads "$threads" upload-many "$work/small" "$bucket" small/
timed "$label" node "$small_bytes" "${nod[@]}" --threads "$threads" upload-many "$work/small" "$bucket" small-node/
delete_prefix small-node/

label="download $nfiles small (x$threads)"
echo "== $label"
timed "$label" kinetic "$small_bytes" "${kin[@]}" --threads "$threads" download-many "$bucket" small/ "$work/back-k"
same_tree "$work/back-k"
timed "$label" node "$small_bytes" "${nod[@]}" --threads "$threads" download-many "$bucket" small/ "$work/back-n"
same_tree "$work/back-n"
if ((gcloud_ok)); then
  mkdir -p "$work/back-g"
  if timed "$label" gcloud "$small_bytes" "${gcl[@]}" "gs://$bucket/small/*" "$work/back-g/"; then
    same_tree "$work/back-g"
  fi
fi

echo "== per-request overhead and JWT signing"
"${kin[@]}" upload "$work/small/f00000.bin" "$bucket" meta.bin >/dev/null
overhead_k="$("${kin[@]}" overhead "$bucket" meta.bin "${BENCH_OVERHEAD_N:-2000}")"
overhead_n="$("${nod[@]}" overhead "$bucket" meta.bin "${BENCH_OVERHEAD_N:-2000}")"
jwt="$("$bench" jwt "${BENCH_JWT_N:-1000}")"

echo
echo "| operation | tool | seconds | MiB/s | peak RSS MiB |"
echo "| --- | --- | ---: | ---: | ---: |"
for r in "${rows[@]}"; do
  IFS='|' read -r op tool secs mibs rssm <<<"$r"
  echo "| $op | $tool | $secs | $mibs | $rssm |"
done
echo
echo "kinetic $overhead_k"
echo "node    $overhead_n"
echo "kinetic $jwt"
