#!/usr/bin/env bash
# Through `kinetic port-forward` (issue #31 point 1): bytes per second and the latency it adds,
# against the job's port reached directly, on the gke backend against the whole fake cloud (each
# connection a pods/portforward WebSocket through the fake API server's TLS front and kubelet)
# and on the local backend (a TCP relay).
#
#   bench/port_forward_bench.sh BUILD_DIR [MIB] [ROUND_TRIPS] [CONNECTIONS]
#
# A job serves two ports: one sends MIB MiB (default 200) to each connection and closes, one
# echoes. Per path (direct, local forward, gke forward) the client measures: MiB/s reading the
# MIB MiB; the median and p99 of ROUND_TRIPS (default 1000) sequential 1-byte round trips on one
# connection; and the median time to open CONNECTIONS (default 100) fresh connections, one round
# trip each (gke: a TLS handshake and a WebSocket upgrade per connection).
# `kubectl port-forward` (when kubectl is installed) on the same fake API server: kubectl 1.32
# falls back to a SPDY upgrade there (docs/fakes.md), one SPDY connection for every forwarded
# connection.
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR [MIB] [ROUND_TRIPS] [CONNECTIONS]}" && pwd)"
mib="${2:-200}"
trips="${3:-1000}"
conns="${4:-100}"
kin="$build/kinetic"
fake="$build/tests/kinetic_fake_cloud"
work="$(mktemp -d /tmp/kinetic-pf-bench.XXXXXX)"
# shellcheck source=bench/fake_cloud.sh
source "$(dirname "$0")/fake_cloud.sh"
forward_pid=
id=
lid=
cleanup() {
  [[ -n "$forward_pid" ]] && kill "$forward_pid" 2>/dev/null && wait "$forward_pid" 2>/dev/null
  # The jobs are cancelled (their processes stopped) before the fake cloud and $work go: a job
  # left to notice `go` would outlive both.
  [[ -n "$lid" ]] && KINETIC_CONTEXT=local "$kin" -q cancel "$lid" >/dev/null 2>&1
  [[ -n "$id" ]] && env -u KINETIC_CONTEXT "$kin" -q cancel "$id" >/dev/null 2>&1
  stop_fake_cloud
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/serve.py" <<PY
import socket, threading, time
def listen():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    s.listen(128)
    return s
def source(c):
    chunk = b'x' * (1 << 20)
    for _ in range($mib):
        c.sendall(chunk)
    c.close()
def echo(c):
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        b = c.recv(65536)
        if not b:
            break
        c.sendall(b)
    c.close()
def serve(s, handler):
    while True:
        threading.Thread(target=handler, args=(s.accept()[0],), daemon=True).start()
a, b = listen(), listen()
print('ports', a.getsockname()[1], b.getsockname()[1], flush=True)
threading.Thread(target=serve, args=(a, source), daemon=True).start()
threading.Thread(target=serve, args=(b, echo), daemon=True).start()
while True:  # until cancelled
    time.sleep(3600)
PY

cat >"$work/client.py" <<'PY'
import socket, statistics, sys, time
source_port, echo_port, mib, trips, conns = map(int, sys.argv[1:6])
def connect(port):
    c = socket.create_connection(('127.0.0.1', port))
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return c
c = connect(source_port)
t0, got = time.perf_counter(), 0
while True:
    b = c.recv(1 << 20)
    if not b:
        break
    got += len(b)
rate = got / (1 << 20) / (time.perf_counter() - t0)
assert got == mib << 20, got
c = connect(echo_port)
rtts = []
for _ in range(trips):
    t = time.perf_counter()
    c.sendall(b'x')
    assert c.recv(1) == b'x'
    rtts.append((time.perf_counter() - t) * 1e6)
c.close()
opens = []
for _ in range(conns):
    t = time.perf_counter()
    c = connect(echo_port)
    c.sendall(b'y')
    assert c.recv(1) == b'y'
    c.close()
    opens.append((time.perf_counter() - t) * 1e3)
rtts.sort()
print('%8.0f MiB/s  rtt median %7.0f us  p99 %7.0f us  new connection median %7.2f ms' % (
    rate, statistics.median(rtts), rtts[int(len(rtts) * 0.99)], statistics.median(opens)))
PY

# forward ID SOURCE ECHO: starts `kinetic port-forward` of both ports; sets lsrc, lecho.
forward() {
  "$kin" port-forward "$1" ":$2" ":$3" -o json >"$work/pf.out" 2>"$work/pf.err" &
  forward_pid=$!
  for _ in $(seq 600); do [[ -s "$work/pf.out" ]] && break; sleep 0.05; done
  read -r lsrc lecho < <(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); print(*[p["local"] for p in d["ports"]])' "$work/pf.out")
}
stop_forward() {
  kill -INT "$forward_pid"
  wait "$forward_pid" || true
  forward_pid=
}
# job_ports ID: waits for the job's "ports A B" line; sets src, echo.
job_ports() {
  for _ in $(seq 1200); do
    line="$("$kin" logs "$1" 2>/dev/null | grep '^ports ' || true)"
    [[ -n "$line" ]] && break
    sleep 0.05
  done
  read -r _ src echo <<<"$line"
}

echo "port-forward bench: $mib MiB, $trips round trips, $conns connections ($(nproc) cores)"
start_fake_cloud "$fake" "$work/cloud" 0
cp "$work/serve.py" "$work/cloud/proj/"
cd "$work/cloud/proj"
"$kin" -q up --project bench --zone us-central1-a --accelerator v5litepod-1 >/dev/null
id="$("$kin" -q run serve.py --detach)"
job_ports "$id"
printf '%-24s' "direct (job's port)"
python3 "$work/client.py" "$src" "$echo" "$mib" "$trips" "$conns"
forward "$id" "$src" "$echo"
printf '%-24s' "kinetic, gke (fake)"
python3 "$work/client.py" "$lsrc" "$lecho" "$mib" "$trips" "$conns"
stop_forward
if command -v kubectl >/dev/null 2>&1; then
  # The cluster's endpoint and CA from the fake GKE, and the token kinetic uses.
  python3 - "$CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER" "$work/ca.pem" >"$work/endpoint" <<'PY'
import base64, json, os, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + 'v1/projects/bench/locations/us-central1-a/clusters/kinetic',
                             headers={'Authorization': 'Bearer ' + os.environ['CLOUDSDK_AUTH_ACCESS_TOKEN']})
cluster = json.load(urllib.request.urlopen(req))
open(sys.argv[2], 'wb').write(base64.b64decode(cluster['masterAuth']['clusterCaCertificate']))
print(cluster['endpoint'])
PY
  kc=(kubectl --server "https://$(cat "$work/endpoint")" --certificate-authority "$work/ca.pem"
      --token "$CLOUDSDK_AUTH_ACCESS_TOKEN" --cache-dir "$work/kube-cache" -n default)
  pod="$("${kc[@]}" get pods -o name --field-selector=status.phase=Running | head -1)"
  "${kc[@]}" port-forward "$pod" ":$src" ":$echo" >"$work/kpf.out" 2>"$work/kpf.err" &
  forward_pid=$!
  for _ in $(seq 600); do [[ $(grep -c '^Forwarding from 127' "$work/kpf.out") == 2 ]] && break; sleep 0.05; done
  lsrc="$(sed -n "s/^Forwarding from 127.0.0.1:\([0-9]*\) -> $src\$/\1/p" "$work/kpf.out")"
  lecho="$(sed -n "s/^Forwarding from 127.0.0.1:\([0-9]*\) -> $echo\$/\1/p" "$work/kpf.out")"
  printf '%-24s' "kubectl, gke (fake)"
  python3 "$work/client.py" "$lsrc" "$lecho" "$mib" "$trips" "$conns"
  stop_forward
else
  printf '%-24s%s\n' "kubectl, gke (fake)" "not measured: kubectl is not installed"
fi

# The local backend (the built-in context `local`): the same job as a local process.
export KINETIC_CONTEXT=local  # built in
lid="$("$kin" -q run serve.py --detach)"
job_ports "$lid"
forward "$lid" "$src" "$echo"
printf '%-24s' "kinetic, local"
python3 "$work/client.py" "$lsrc" "$lecho" "$mib" "$trips" "$conns"
stop_forward
