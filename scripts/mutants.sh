#!/usr/bin/env bash
# Mutation testing (docs/testing.md "Mutation testing"): plants each bug of scripts/mutants.list,
# one at a time, in a scratch copy of the working tree (build-mutants/tree, its own build dir),
# rebuilds incrementally, runs the mutant's tests and says whether they caught it. Not part of CI:
# run it when an area changes. The working tree itself is never modified.
#
#   scripts/mutants.sh [ID-PREFIX...]    e.g. scripts/mutants.sh catalog- auto-down-error
#   KINETIC_MUTANTS_FULL=1 scripts/mutants.sh   each mutant against the whole ctest suite
#
# Prints one line per mutant: KILLED, SURVIVED, or INVALID (its pattern is not in the file exactly
# once, a test filter matches no test, or it does not build: fix the list). Exits 1 when one survived or is invalid.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
repo=$PWD
tree=$repo/build-mutants/tree
list=$repo/scripts/mutants.list
# ccache cannot use the tests' precompiled headers unless told these differences do not matter.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$repo")} CCACHE_NOHASHDIR=1 \
  CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}

# The scratch copy: the files git knows (tracked or not ignored), copied only when they differ so
# that an unchanged tree rebuilds nothing. Same layout as the repository, so ccache hits.
python3 - "$repo" "$tree" <<'PY' || exit 1
import filecmp, os, shutil, subprocess, sys
repo, tree = sys.argv[1], sys.argv[2]
files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=repo,
                       check=True, capture_output=True).stdout.decode().split("\0")
for name in filter(None, files):
    src, dst = os.path.join(repo, name), os.path.join(tree, name)
    if not os.path.isfile(src) or (os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False)):
        continue
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy(src, dst)  # a fresh mtime: an older one would not rebuild what it changed
# A file the repository no longer has goes from the copy too: the tests' CMakeLists globs its
# folders, so a renamed test left behind would still be compiled (and fail to).
known = set(filter(None, files))
for top, dirs, names in os.walk(tree):
    rel_top = os.path.relpath(top, tree)
    if rel_top == ".":
        dirs[:] = [d for d in dirs if d not in ("build", ".git")]
    for name in names:
        rel = os.path.normpath(os.path.join(rel_top, name))
        if rel not in known:
            os.remove(os.path.join(top, name))
PY
if [ ! -f "$tree/build/build.ninja" ]; then
  cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null || exit 1
fi
cmake --build "$tree/build" >/dev/null || { echo "the unmutated copy does not build" >&2; exit 1; }

# Replaces PATTERN by REPLACEMENT in FILE; fails unless PATTERN occurs exactly once.
mutate() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys
path, pattern, replacement = sys.argv[1:]
text = open(path).read()
if text.count(pattern) != 1:
    sys.exit("pattern occurs %d times in %s" % (text.count(pattern), path))
open(path, "w").write(text.replace(pattern, replacement))
PY
}

# The build targets a mutant needs: the test binaries TESTS names (the e2e binary brings the CLI
# along), or everything for the whole suite. Relinking only those keeps a mutant to a minute.
targets_of() {
  if [ -n "${KINETIC_MUTANTS_FULL:-}" ]; then
    echo all
    return
  fi
  local spec
  IFS=';' read -ra specs <<<"$1"
  for spec in "${specs[@]}"; do
    spec=$(echo "$spec" | xargs)
    echo "${spec%%:*}"
  done | sort -u | xargs
}

# Runs TESTS ("BINARY:FILTER ; BINARY:FILTER"); fails when one of them fails.
run_tests() {
  if [ -n "${KINETIC_MUTANTS_FULL:-}" ]; then
    ctest --test-dir "$tree/build" -j2 </dev/null >/dev/null 2>&1
    return
  fi
  local spec binary filter
  IFS=';' read -ra specs <<<"$1"
  for spec in "${specs[@]}"; do
    spec=$(echo "$spec" | xargs)
    binary=${spec%%:*} filter=${spec#*:}
    # stdin is not theirs: the caller's loop reads the list from it.
    (cd "$tree" && "build/tests/$binary" --gtest_filter="$filter" --gtest_brief=1) \
      </dev/null >>"$tree/../last-run.log" 2>&1 || return 1
  done
}

# Whether every filter of TESTS names at least one test: gtest runs none of a filter that matches
# nothing, and passes, which would read as a survivor (the goldens are `*CliGolden*`, say).
tests_exist() {
  local spec binary filter
  IFS=';' read -ra specs <<<"$1"
  for spec in "${specs[@]}"; do
    spec=$(echo "$spec" | xargs)
    binary=${spec%%:*} filter=${spec#*:}
    # Read whole, not piped to grep -q: an early exit would SIGPIPE the lister (pipefail).
    local listed
    listed=$("$tree/build/tests/$binary" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null)
    [[ $listed == *$'\n  '* ]] || { echo "no test of $binary matches $filter" >&2; return 1; }
  done
}

# The baseline: each distinct TESTS of the chosen mutants must pass unmutated, or a test that
# fails anyway (a flake, a broken environment) would read as killing every mutant it serves.
baseline=$(python3 - "$list" "$@" <<'PY'
import sys
seen = []
for line in open(sys.argv[1]):
    fields = line.rstrip("\n").split(" | ")
    if line.startswith("#") or len(fields) != 6:
        continue
    if len(sys.argv) > 2 and not any(fields[0].strip().startswith(p) for p in sys.argv[2:]):
        continue
    if fields[4].strip() not in seen:
        seen.append(fields[4].strip())
print("\n".join(seen))
PY
)
[ -n "${KINETIC_MUTANTS_FULL:-}" ] && baseline=full
mapfile -t baseline_tests <<<"$baseline"
for tests in "${baseline_tests[@]}"; do
  [ -n "$tests" ] || continue
  : >"$tree/../last-run.log"
  run_tests "$tests" || {
    echo "the unmutated tests fail ($tests): fix them first (build-mutants/last-run.log)" >&2
    exit 1
  }
done

killed=0 survived=0 invalid=0
while IFS= read -r line; do
  case "$line" in '#'* | '') continue ;; esac
  python3 -c 'import sys; sys.exit(len(sys.argv[1].split(" | ")) != 6)' "$line" ||
    { echo "INVALID   (not 6 fields) $line"; invalid=$((invalid + 1)); continue; }
  IFS=$'\x1f' read -r id file pattern replacement tests behaviour < <(
    python3 -c 'import sys; print("\x1f".join(f.strip() if i != 2 and i != 3 else f for i, f in enumerate(sys.argv[1].split(" | "))))' "$line")
  if [ $# -gt 0 ]; then
    wanted=0
    for prefix in "$@"; do [[ $id == "$prefix"* ]] && wanted=1; done
    [ $wanted = 1 ] || continue
  fi
  cp "$tree/$file" "$tree/../original"
  : >"$tree/../last-run.log"
  read -ra targets <<<"$(targets_of "$tests")"
  if ! tests_exist "$tests"; then
    verdict=INVALID
  elif ! mutate "$tree/$file" "$pattern" "$replacement"; then
    verdict=INVALID
  elif ! cmake --build "$tree/build" --target "${targets[@]}" >"$tree/../last-build.log" 2>&1; then
    verdict=INVALID
  elif run_tests "$tests"; then
    verdict=SURVIVED
  else
    verdict=KILLED
  fi
  cp "$tree/../original" "$tree/$file"
  case $verdict in
    KILLED) killed=$((killed + 1)) ;;
    SURVIVED) survived=$((survived + 1)) ;;
    INVALID) invalid=$((invalid + 1)) ;;
  esac
  printf '%-9s %-36s %s\n' "$verdict" "$id" "$behaviour"
done <"$list"
cmake --build "$tree/build" >/dev/null 2>&1  # back to the unmutated build for the next run

total=$((killed + survived))
echo "score: $killed of $total killed ($invalid invalid) in $((SECONDS / 60)) min $((SECONDS % 60)) s"
[ $survived = 0 ] && [ $invalid = 0 ]
