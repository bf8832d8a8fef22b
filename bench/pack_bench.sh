#!/usr/bin/env bash
# Packaging throughput: kinetic's packer against tar on a generated context.
#
#   bench/pack_bench.sh [DIR]     (DIR: where to generate the context; default: a temp dir)
#
# Environment: KINETIC_PACK_BENCH (driver binary; default build/bench/kinetic_pack_bench, built
# with -DKINETIC_BUILD_BENCH=ON), BENCH_FILES (20000), BENCH_MIB (1024), BENCH_RUNS (3, for
# hyperfine when installed).
#
# The context mixes sizes and kinds: many small text files (source, configs), medium files of
# random bytes (incompressible: weights, images) and a few large ones of each kind. Everything is
# read once before timing, so all three tools read from the page cache.
# Figures, not assertions: prints wall time and peak RSS of each tool and the archive sizes.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
driver="${KINETIC_PACK_BENCH:-$here/build/bench/kinetic_pack_bench}"
files="${BENCH_FILES:-20000}"
mib="${BENCH_MIB:-1024}"
runs="${BENCH_RUNS:-3}"

if [[ ! -x "$driver" ]]; then
  echo "pack_bench: $driver not found; build it with:" >&2
  echo "  cmake -S . -B build -G Ninja -DKINETIC_BUILD_BENCH=ON && cmake --build build --target kinetic_pack_bench" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/kinetic-pack-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
ctx="${1:-$work/ctx}"
out="$work/out"
mkdir -p "$out"

if [[ -e "$ctx/.bench-complete" ]]; then
  echo "== reusing context $ctx"
else
  echo "== generating $files files, ~$mib MiB under $ctx"
  python3 - "$ctx" "$files" "$mib" <<'PY'
import os, random, sys
root, nfiles, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(20240601)
total = mib * 1024 * 1024
words = ("import numpy as np torch jax def class return self model train loss optimizer "
         "batch epoch for in range if else print config data path value x y z").split()
text_pool = " ".join(rng.choice(words) for _ in range(400000)).encode()
def text(n):
    off = rng.randrange(0, len(text_pool) - n - 1) if n < len(text_pool) else 0
    return (text_pool[off:off + n] * (1 + n // len(text_pool)))[:n]
# Split: 95% small text files, 4.5% medium random, 0.5% large (half text, half random).
n_large = max(2, nfiles // 200)
n_medium = nfiles * 45 // 1000
n_small = nfiles - n_large - n_medium
budget_small = total * 15 // 100
budget_medium = total * 45 // 100
budget_large = total - budget_small - budget_medium
plan = []
for i in range(n_small):
    plan.append(("text", max(1, int(rng.expovariate(1.0) * budget_small / n_small))))
for i in range(n_medium):
    plan.append(("random", max(1, int(rng.uniform(0.5, 1.5) * budget_medium / n_medium))))
for i in range(n_large):
    plan.append(("text" if i % 2 else "random", int(rng.uniform(0.8, 1.2) * budget_large / n_large)))
rng.shuffle(plan)
for i, (kind, size) in enumerate(plan):
    d = os.path.join(root, "pkg%02d" % (i % 50), "sub%d" % (i // 50 % 8))
    os.makedirs(d, exist_ok=True)
    ext = ".py" if kind == "text" else ".bin"
    with open(os.path.join(d, "f%05d%s" % (i, ext)), "wb") as f:
        f.write(text(size) if kind == "text" else os.urandom(size))
    if i % 97 == 0:
        os.chmod(os.path.join(d, "f%05d%s" % (i, ext)), 0o755)
os.makedirs(os.path.join(root, "empty-dir"), exist_ok=True)
os.symlink("pkg00", os.path.join(root, "latest"))
open(os.path.join(root, ".bench-complete"), "w").close()
PY
fi

count=$(find "$ctx" -type f | wc -l)
bytes=$(du -sb "$ctx" | cut -f1)
echo "== context: $count files, $((bytes / 1024 / 1024)) MiB (apparent); warming the page cache"
find "$ctx" -type f -print0 | xargs -0 cat >/dev/null

measure() {  # NAME OUTFILE CMD...: one run under /usr/bin/time -v
  local name="$1" file="$2"
  shift 2
  rm -f "$file"
  /usr/bin/time -v -o "$work/time.txt" "$@" >"$work/stdout.txt"
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  local cpu
  cpu=$(awk -F': ' '/Percent of CPU/ {print $2}' "$work/time.txt")
  printf '%-22s wall %-9s cpu %-5s peak RSS %7d KiB   archive %6d MiB\n' \
    "$name" "$wall" "$cpu" "$rss" "$(($(stat -c %s "$file") / 1024 / 1024))"
}

echo "== single runs (/usr/bin/time -v)"
measure "tar -czf" "$out/ctx.tar.gz" tar -czf "$out/ctx.tar.gz" -C "$ctx" .
measure "tar --zstd -cf" "$out/ctx.tar.zst" tar --zstd -cf "$out/ctx.tar.zst" -C "$ctx" .
measure "kinetic_pack_bench" "$out/kinetic.tar.zst" "$driver" "$ctx" "$out/kinetic.tar.zst"
sed 's/^/    /' "$work/stdout.txt"

if command -v hyperfine >/dev/null; then
  echo "== hyperfine ($runs runs each)"
  hyperfine --runs "$runs" --warmup 1 --style basic \
    -n "tar -czf" "tar -czf $out/h.tar.gz -C $ctx ." \
    -n "tar --zstd -cf" "tar --zstd -cf $out/h.tar.zst -C $ctx ." \
    -n "kinetic_pack_bench" "$driver $ctx $out/h.kinetic.tar.zst"
fi
