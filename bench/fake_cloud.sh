# shellcheck shell=bash
# The whole fake cloud as one server for the benches that need it (sourced, not run):
#   start_fake_cloud FAKE_BINARY DIR MS [FLAG...]
#                                         starts it at MS per request (with the fake's other FLAGs,
#                                         e.g. --write-quota 10), isolates HOME, config and state
#                                         under DIR, exports the fake's endpoints, and keeps its
#                                         stderr in DIR/fake.log
#   stop_fake_cloud                       stops it (safe to call twice; call it in an EXIT trap)
fake_pid=

start_fake_cloud() {
  local fake="$1" dir="$2" ms="$3"
  shift 3
  mkdir -p "$dir/home" "$dir/proj"
  export HOME="$dir/home" XDG_CONFIG_HOME="$dir/config" KINETIC_HOME="$dir/state"
  export GCE_METADATA_HOST=127.0.0.1:9
  "$fake" --enable-all --round-trip-ms "$ms" "$@" >"$dir/fake.env" 2>"$dir/fake.log" &
  fake_pid=$!
  for _ in $(seq 600); do grep -q '^$' "$dir/fake.env" 2>/dev/null && break; sleep 0.1; done
  # shellcheck disable=SC1091
  source "$dir/fake.env"
}

stop_fake_cloud() {
  if [[ -n "$fake_pid" ]]; then
    kill "$fake_pid" 2>/dev/null || true
    wait "$fake_pid" 2>/dev/null || true
  fi
  fake_pid=
}
