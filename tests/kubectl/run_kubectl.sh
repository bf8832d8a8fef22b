#!/usr/bin/env bash
# Fidelity of the fake Kubernetes API (tests/fakes/fake_kube.h): the real kubectl drives
# kinetic_fake_kube through discovery, OpenAPI v3 (which kubectl fetches before `create` to learn
# that the server validates fields itself), create/get/wait/logs/delete, and its error answers.
#
#   run_kubectl.sh PATH/TO/kinetic_fake_kube PATH/TO/jobset-release.yaml
#
# Exits 125 (CTest: skipped) when kubectl is not installed. Nothing touches ~/.kube: HOME,
# KUBECONFIG and the discovery cache point into a temporary directory.
#
# Findings (kubectl 1.32): `create -f` with the default --validate=strict GETs /openapi/v3 and then
# /openapi/v3/apis/GROUP/VERSION, looks for the PATCH operation of the kind
# (x-kubernetes-group-version-kind) with a `fieldValidation` query parameter, and then sends
# ?fieldValidation=Strict instead of validating client-side (no /openapi/v2 needed);
# --validate=false skips OpenAPI altogether. Typed commands (`kubectl create serviceaccount`,
# `create role`, `create rolebinding`, `create job --from=cronjob/X`, `create token`, `create
# secret generic`...) send protobuf bodies (application/vnd.kubernetes.protobuf), which the fake
# reads from its table of the API types (tests/fakes/fake_kube_proto.cpp); `create job
# --from=cronjob/X` builds the Job client side (ownerReference, cronjob.kubernetes.io/instantiate).
set -euo pipefail

FAKE=${1:?usage: run_kubectl.sh PATH/TO/kinetic_fake_kube PATH/TO/jobset-release.yaml}
RELEASE=${2:?usage: run_kubectl.sh PATH/TO/kinetic_fake_kube PATH/TO/jobset-release.yaml}
if ! command -v kubectl >/dev/null 2>&1; then
  echo "kubectl not found: skipping"
  exit 125
fi

WORK=$(mktemp -d)
SERVER_PID=""
FRESH_PID=""
FORWARD_PID=""
cleanup() {
  for pid in $FORWARD_PID $SERVER_PID $FRESH_PID; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
export HOME="$WORK" KUBECONFIG=/dev/null
TOKEN=fidelity-token

"$FAKE" --ca-file "$WORK/ca.pem" --token "$TOKEN" --grace 5 >"$WORK/port" 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 1 1200); do  # a bound (60 s), not a timing
  [ -s "$WORK/port" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
  sleep 0.05
done
PORT=$(head -1 "$WORK/port")
SERVER="https://127.0.0.1:$PORT"

k() {
  kubectl --server "$SERVER" --certificate-authority "$WORK/ca.pem" --token "$TOKEN" \
    --cache-dir "$WORK/cache" --request-timeout 30s "$@"
}
fail() {
  echo "FAIL: $*" >&2
  echo "---- server log" >&2
  cat "$WORK/server.log" >&2
  exit 1
}
# contains DESCRIPTION NEEDLE TEXT
contains() {
  case "$3" in
    *"$2"*) echo "ok: $1" ;;
    *) fail "$1: expected to find [$2] in:
$3" ;;
  esac
}

# ---- discovery, TLS and authentication ----------------------------------------------------
out=$(k version -o json)
contains "version" '"gitVersion": "v1.32' "$out"
out=$(k api-resources)
contains "api-resources lists jobs" "batch/v1" "$out"
contains "api-resources lists jobsets" "jobset.x-k8s.io/v1alpha2" "$out"
contains "api-resources lists pods" "pods" "$out"
if out=$(kubectl --server "$SERVER" --token "$TOKEN" --cache-dir "$WORK/cache2" get pods 2>&1); then
  fail "an unpinned client must not trust the fake's certificate"
fi
contains "unpinned client rejects the certificate" "certificate" "$out"
if out=$(kubectl --server "$SERVER" --certificate-authority "$WORK/ca.pem" --token wrong \
  --cache-dir "$WORK/cache3" get pods 2>&1); then
  fail "a wrong token must be refused"
fi
contains "wrong token is refused (401)" "You must be logged in to the server" "$out"
out=$(k get nodes)
contains "a node of the default pool" "gke-kinetic-default-pool-" "$out"

# ---- create with OpenAPI validation, wait, logs -------------------------------------------
cat >"$WORK/secret.yaml" <<'YAML'
apiVersion: v1
kind: Secret
metadata:
  name: creds
stringData:
  token: s3cr3t
YAML
cat >"$WORK/job.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata:
  name: fidelity
  labels:
    app.kubernetes.io/managed-by: kinetic
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: us-docker.pkg.dev/p/r/app:1
        command: ["sh", "-c", "echo hello from $POD_NAME; echo secret=$TOKEN"]
        env:
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        - name: TOKEN
          valueFrom:
            secretKeyRef:
              name: creds
              key: token
YAML
out=$(k create -f "$WORK/secret.yaml")
contains "create secret" "secret/creds created" "$out"
out=$(k create -f "$WORK/job.yaml")
contains "create job (validated with OpenAPI v3)" "job.batch/fidelity created" "$out"
out=$(k create -f "$WORK/job.yaml" 2>&1 || true)
contains "create twice: AlreadyExists" 'jobs.batch "fidelity" already exists' "$out"
out=$(k wait --for=condition=complete job/fidelity --timeout=30s)
contains "wait for completion" "job.batch/fidelity condition met" "$out"
out=$(k get jobs -o json)
contains "get jobs -o json" '"kind": "List"' "$out"
contains "get jobs -o json has the job" '"name": "fidelity"' "$out"
contains "job status succeeded" '"succeeded": 1' "$out"
out=$(k logs job/fidelity)
contains "logs job/x" "hello from fidelity-" "$out"
contains "secretKeyRef env" "secret=s3cr3t" "$out"
pod=$(k get pods -l job-name=fidelity -o name)
contains "get pods -l job-name=x" "pod/fidelity-" "$pod"
out=$(k logs "$pod" --timestamps)
if ! grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{9}Z hello from' <<<"$out"; then
  fail "logs --timestamps: $out"
fi
echo "ok: logs --timestamps"
out=$(k get pods -l job-name=fidelity)
contains "pod table" "Completed" "$out"
out=$(k get events --field-selector involvedObject.name="${pod#pod/}")
contains "pod events" "Started" "$out"

# ---- a failing job, without client-side validation ----------------------------------------
sed -e 's/name: fidelity/name: failing/' \
  -e 's/command: .*/command: ["sh", "-c", "echo boom; exit 3"]/' "$WORK/job.yaml" >"$WORK/failing.yaml"
out=$(k create --validate=false -f "$WORK/failing.yaml")
contains "create --validate=false" "job.batch/failing created" "$out"
out=$(k wait --for=condition=failed job/failing --timeout=30s)
contains "wait for failure" "condition met" "$out"
out=$(k get job failing -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}')
contains "BackoffLimitExceeded" "BackoffLimitExceeded" "$out"
out=$(k get pods -l job-name=failing \
  -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}')
contains "exit code 3" "3" "$out"
out=$(k logs job/failing)
contains "failing job logs" "boom" "$out"

# ---- invalid objects ----------------------------------------------------------------------
sed -e 's/name: fidelity/name: Bad_Name/' "$WORK/job.yaml" >"$WORK/bad.yaml"
out=$(k create -f "$WORK/bad.yaml" 2>&1 || true)
contains "422 Invalid" 'The Job "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"' "$out"

# ---- JobSet ------------------------------------------------------------------------------
cat >"$WORK/jobset.yaml" <<'YAML'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: main
              image: app
              command: ["sh", "-c", "echo worker $JOB_COMPLETION_INDEX"]
        completionMode: Indexed
        completions: 1
        parallelism: 1
YAML
out=$(k create -f "$WORK/jobset.yaml")
contains "create jobset" "jobset.jobset.x-k8s.io/js created" "$out"
out=$(k wait --for=jsonpath='{.status.terminalState}'=Completed jobset/js --timeout=30s)
contains "jobset completes" "condition met" "$out"
out=$(k get jobs -l jobset.sigs.k8s.io/jobset-name=js -o name)
contains "child jobs" "job.batch/js-workers-1" "$out"
# Each replica a child Job named JOBSET-REPLICATEDJOB-INDEX and labelled with its index and the
# replica count (jobset v0.10.1 labelAndAnnotateObject): how a multislice run's slices are told
# apart (docs/multihost.md "Multislice").
out=$(k get job js-workers-1 -o \
  jsonpath='{.metadata.labels.jobset\.sigs\.k8s\.io/job-index}/{.metadata.labels.jobset\.sigs\.k8s\.io/replicatedjob-replicas}')
contains "a child job's index and replicas" "1/2" "$out"
out=$(k get pods -l jobset.sigs.k8s.io/job-index=1 \
  -o jsonpath='{.items[0].metadata.labels.jobset\.sigs\.k8s\.io/job-index}')
contains "its pods carry its index" "1" "$out"

# ---- CronJobs ----------------------------------------------------------------------------
cat >"$WORK/cronjob.yaml" <<'YAML'
apiVersion: batch/v1
kind: CronJob
metadata:
  name: idle
spec:
  schedule: "*/5 * * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    metadata:
      labels:
        app: auto-down
    spec:
      backoffLimit: 0
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: app
            command: ["sh", "-c", "echo idle check"]
YAML
out=$(k apply -f "$WORK/cronjob.yaml")
contains "apply a CronJob" "cronjob.batch/idle created" "$out"
out=$(k apply -f "$WORK/cronjob.yaml")
contains "apply it again" "cronjob.batch/idle unchanged" "$out"
out=$(k get cronjobs)
contains "get cronjobs" "*/5 * * * *" "$out"
out=$(k get cj)
contains "get cj (short name)" "idle" "$out"
out=$(k get cj idle -o jsonpath='{.spec.successfulJobsHistoryLimit}/{.spec.failedJobsHistoryLimit}/{.spec.concurrencyPolicy}/{.spec.suspend}')
contains "CronJob defaults" "3/1/Forbid/false" "$out"
sed -e 's/name: idle/name: bad-schedule/' -e 's|"\*/5 \* \* \* \*"|"61 * * * *"|' \
  "$WORK/cronjob.yaml" >"$WORK/bad-cronjob.yaml"
out=$(k apply -f "$WORK/bad-cronjob.yaml" 2>&1 || true)
contains "a bad schedule is 422" \
  'The CronJob "bad-schedule" is invalid: spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61' \
  "$out"
out=$(k create job --from=cronjob/idle manual-1)
contains "create job --from=cronjob" "job.batch/manual-1 created" "$out"
out=$(k get job manual-1 -o jsonpath='{.metadata.annotations.cronjob\.kubernetes\.io/instantiate} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.labels.app}')
contains "the manual Job is the CronJob's" "manual CronJob/idle auto-down" "$out"
out=$(k wait --for=condition=complete job/manual-1 --timeout=30s)
contains "the manual Job runs" "job.batch/manual-1 condition met" "$out"
out=$(k logs job/manual-1)
contains "its pod's log" "idle check" "$out"

# ---- service accounts and RBAC (typed commands: protobuf bodies) --------------------------
as_sa() {  # as_sa TOKEN ARGS...: kubectl with a service account's token
  local token=$1
  shift
  kubectl --server "$SERVER" --certificate-authority "$WORK/ca.pem" --token "$token" \
    --cache-dir "$WORK/cache-sa" --request-timeout 30s "$@"
}
out=$(k get serviceaccounts)
contains "every namespace has its default account" "default" "$out"
out=$(k create serviceaccount auto-down)
contains "create serviceaccount" "serviceaccount/auto-down created" "$out"
SA_TOKEN=$(k create token auto-down)
contains "create token" "eyJ" "$SA_TOKEN"
if out=$(as_sa "$SA_TOKEN" get pods 2>&1); then
  fail "a service account without a role must not list pods: $out"
fi
contains "Forbidden as kubectl prints it" \
  'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:default:auto-down" cannot list resource "pods" in API group "" in the namespace "default"' \
  "$out"
out=$(k create role pod-reader --verb=get --verb=list --resource=pods)
contains "create role" "role.rbac.authorization.k8s.io/pod-reader created" "$out"
out=$(k create rolebinding pod-reader --role=pod-reader --serviceaccount=default:auto-down)
contains "create rolebinding" "rolebinding.rbac.authorization.k8s.io/pod-reader created" "$out"
out=$(k get rolebindings)
contains "get rolebindings" "Role/pod-reader" "$out"
out=$(as_sa "$SA_TOKEN" get pods -l job-name=manual-1 -o name)
contains "the bound account lists pods" "pod/manual-1-" "$out"
if out=$(as_sa "$SA_TOKEN" get jobs 2>&1); then
  fail "the account has no role for jobs: $out"
fi
contains "jobs stay forbidden" \
  'Error from server (Forbidden): jobs.batch is forbidden: User "system:serviceaccount:default:auto-down" cannot list resource "jobs" in API group "batch" in the namespace "default"' \
  "$out"
out=$(k delete serviceaccount auto-down)
contains "delete serviceaccount" 'serviceaccount "auto-down" deleted' "$out"
if out=$(as_sa "$SA_TOKEN" get pods 2>&1); then
  fail "a deleted account's token must be refused: $out"
fi
contains "its token is refused (401)" "You must be logged in to the server" "$out"
out=$(k delete cronjob idle)
contains "delete the CronJob" 'cronjob.batch "idle" deleted' "$out"
out=$(k get jobs -l app=auto-down 2>&1)
contains "its Jobs went with it" "No resources found" "$out"

# ---- exec over WebSocket (v5.channel.k8s.io) ------------------------------------------------
# kubectl 1.32 execs over WebSocket first and falls back to SPDY only when the handshake fails;
# the fake serves WebSocket alone (docs/fakes.md), so every answer below came that way.
cat >"$WORK/sleeper.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata:
  name: sleeper
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        # A container that ends takes its exec'd processes with it (SIGKILL, as a real kubelet's
        # PID namespace does), so ending as soon as `finish` exists could kill the exec that made
        # it before it exits (kubectl then exits 137). The exec writes its own pid there, and the
        # pod ends only once that process is gone: the order is fixed, not left to the scheduler.
        command: ["sh", "-c", "while [ ! -e finish ]; do sleep 0.05; done; while [ -e /proc/$(cat finish) ]; do sleep 0.05; done"]
        env:
        - name: GREETING
          value: hello-from-the-pod
EOF
k create -f "$WORK/sleeper.yaml" >/dev/null
out=$(k wait --for=condition=Ready pod -l job-name=sleeper --timeout=30s)
contains "the pod to exec into runs" "condition met" "$out"
pod=$(k get pods -l job-name=sleeper -o name)
set +e
out=$(k exec "$pod" -- sh -c 'echo out; echo "$GREETING"; pwd; echo err >&2; exit 3' \
  2>"$WORK/exec.err")
code=$?
set -e
[ "$code" = 3 ] || fail "exec: kubectl exited $code, not the command's 3: $(cat "$WORK/exec.err")"
echo "ok: exec's exit code 3 is kubectl's"
contains "exec stdout" "out" "$out"
contains "exec sees the container's environment" "hello-from-the-pod" "$out"
contains "exec runs in the container's working directory" "${pod#pod/}" "$out"
contains "exec stderr" "err" "$(cat "$WORK/exec.err")"
out=$(echo hi | k exec -i "$pod" -- cat)
[ "$out" = hi ] || fail "exec -i: expected [hi], got [$out]"
echo "ok: exec -i passes stdin and its end"
out=$(k get --raw /_fake/counters)
contains "exec came as WebSocket GETs" '"GET /api/v1/namespaces/{ns}/pods/{name}/exec":2' "$out"
case "$out" in
  *'"POST /api/v1/namespaces/{ns}/pods/{name}/exec"'*) fail "kubectl fell back to SPDY: $out" ;;
esac
out=$(k exec "$pod" -c nope -- true 2>&1 || true)
contains "exec into a container the pod lacks" "container nope is not valid for pod ${pod#pod/}" \
  "$out"
k exec "$pod" -- sh -c 'echo $$ >finish.tmp && mv finish.tmp finish'
out=$(k wait --for=condition=complete job/sleeper --timeout=30s)
contains "touch finish ends the pod" "condition met" "$out"
out=$(k exec "$pod" -- true 2>&1 || true)
contains "exec into a completed pod" "cannot exec into a container in a completed pod" "$out"

# ---- port-forward ------------------------------------------------------------------------
# kubectl 1.32 first tunnels SPDY in a WebSocket (SPDY/3.1+portforward.k8s.io, the API server's
# translation, which the fake refuses) and then upgrades to SPDY/3.1 itself, which the fake's
# kubelet serves (fake_kube_port_forward_spdy.cpp): zlib header blocks with SPDY's dictionary,
# an error and a data stream per connection, each connection to the pod's port on 127.0.0.1.
cat >"$WORK/web.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: python
    command: ["python3", "-c", "import http.server as h; s = h.ThreadingHTTPServer(('127.0.0.1', 0), h.SimpleHTTPRequestHandler); print('port', s.server_address[1], flush=True); s.serve_forever()"]
EOF
k create -f "$WORK/web.yaml" >/dev/null
out=$(k wait --for=condition=Ready pod/web --timeout=30s)
contains "the pod to forward to runs" "condition met" "$out"
web_port=""
for _ in $(seq 1 600); do  # a bound (30 s), not a timing: the log names the port once it listens
  web_port=$(k logs web | sed -n 's/^port //p')
  [ -n "$web_port" ] && break
  sleep 0.05
done
[ -n "$web_port" ] || fail "the web pod never said its port"
kubectl --server "$SERVER" --certificate-authority "$WORK/ca.pem" --token "$TOKEN" \
  --cache-dir "$WORK/cache" port-forward pod/web ":$web_port" >"$WORK/forward.out" \
  2>"$WORK/forward.err" &
FORWARD_PID=$!
local_port=""
for _ in $(seq 1 600); do
  local_port=$(sed -n 's/^Forwarding from 127.0.0.1:\([0-9]*\) -> .*/\1/p' "$WORK/forward.out")
  [ -n "$local_port" ] && break
  kill -0 "$FORWARD_PID" 2>/dev/null || fail "kubectl port-forward exited: $(cat "$WORK/forward.err")"
  sleep 0.05
done
[ -n "$local_port" ] || fail "kubectl port-forward never listened: $(cat "$WORK/forward.err")"
contains "kubectl port-forward listens" "-> $web_port" "$(cat "$WORK/forward.out")"
for i in 1 2 3; do
  out=$(python3 -c 'import sys, urllib.request as u; print(u.urlopen("http://127.0.0.1:" + sys.argv[1] + "/").status)' "$local_port")
  contains "port-forward: request $i answered through SPDY" "200" "$out"
done
out=$(k get --raw /_fake/counters)
contains "port-forward tried the WebSocket tunnel first" \
  '"GET /api/v1/namespaces/{ns}/pods/{name}/portforward":1' "$out"
contains "then upgraded to SPDY, one connection for all requests" \
  '"POST /api/v1/namespaces/{ns}/pods/{name}/portforward":1' "$out"
kill "$FORWARD_PID"
wait "$FORWARD_PID" 2>/dev/null || true
FORWARD_PID=""
k delete pod web --wait=false >/dev/null

# ---- deployments and services (kinetic serve on gke) ---------------------------------------
# The fake's Deployment controller makes the pod, its tcpSocket readiness probe makes it Ready
# once the port accepts, and `rollout status` reads status.updatedReplicas/availableReplicas and
# observedGeneration as it does on a real cluster.
serve_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$WORK/serve.yaml" <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: served
  labels: {app: served}
spec:
  replicas: 1
  selector:
    matchLabels: {app: served}
  template:
    metadata:
      labels: {app: served}
    spec:
      restartPolicy: Always
      terminationGracePeriodSeconds: 0
      containers:
      - name: main
        image: python
        command: ["python3", "-m", "http.server", "--bind", "127.0.0.1", "$serve_port"]
        ports: [{containerPort: $serve_port}]
        readinessProbe:
          tcpSocket: {port: $serve_port}
          periodSeconds: 2
---
apiVersion: v1
kind: Service
metadata:
  name: served
  labels: {app: served}
spec:
  type: ClusterIP
  selector: {app: served}
  ports: [{port: $serve_port, targetPort: $serve_port}]
EOF
out=$(k create -f "$WORK/serve.yaml")
contains "create a Deployment" 'deployment.apps/served created' "$out"
contains "create a Service" 'service/served created' "$out"
out=$(k rollout status deployment/served --timeout=30s)
contains "rollout status waits for the ready pod" 'deployment "served" successfully rolled out' "$out"
out=$(k get deploy,svc -l app=served)
contains "get deploy lists it ready" "deployment.apps/served" "$out"
contains "one of one ready" "1/1" "$out"
contains "get svc lists the Service" "service/served" "$out"
out=$(k get pods -l app=served -o name)
contains "the pod is named after the Deployment" "pod/served-" "$out"
# A server's Service and Secret are owned by its Deployment (metadata.ownerReferences with its
# uid), so the garbage collector deletes them with it.
uid=$(k get deployment served -o jsonpath='{.metadata.uid}')
k create secret generic served --from-literal=GREETING=hi >/dev/null
owner="{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"served\",\"uid\":\"$uid\",\"controller\":true}]}}"
out=$(k patch service served --type=merge -p "$owner")
contains "the Service is given its owner" 'service/served patched' "$out"
out=$(k patch secret served --type=merge -p "$owner")
contains "the Secret is given its owner" 'secret/served patched' "$out"
out=$(k delete deployment served)
contains "delete the Deployment" 'deployment.apps "served" deleted' "$out"
out=$(k get pods -l app=served 2>&1)
contains "its pods went with it" "No resources found" "$out"
if out=$(k get service served 2>&1); then
  fail "the Service its Deployment owned outlived it: $out"
fi
contains "the Service went with its owner" 'services "served" not found' "$out"
if out=$(k get secret served 2>&1); then
  fail "the Secret its Deployment owned outlived it: $out"
fi
contains "the Secret went with its owner" 'secrets "served" not found' "$out"

# ---- delete ------------------------------------------------------------------------------
out=$(k delete job fidelity)
contains "delete job" 'job.batch "fidelity" deleted' "$out"
out=$(k get pods -l job-name=fidelity 2>&1)
contains "background deletion removed the pods" "No resources found" "$out"
if out=$(k get job fidelity 2>&1); then
  fail "get of a deleted job must fail"
fi
contains "NotFound as kubectl prints it" \
  'Error from server (NotFound): jobs.batch "fidelity" not found' "$out"
out=$(k delete job failing --cascade=orphan)
contains "delete --cascade=orphan" 'job.batch "failing" deleted' "$out"
out=$(k get pods -l job-name=failing -o name)
contains "orphaned pods stay" "pod/failing-" "$out"

# ---- Kueue: admission by quota, whole jobs in turn (fake_kube_kueue.cpp) ------------------
# What `kinetic up --queue on` applies (lib/backend/gke/kueue.cpp), and what kubectl sees of
# Kueue's objects and its visibility API while one job holds the quota and another waits.
KUEUE_RELEASE="$(dirname "$RELEASE")/kueue-release.yaml"
if out=$(k get clusterqueues 2>&1); then
  fail "a cluster without Kueue must not serve clusterqueues: $out"
fi
out=$(k apply --server-side -f "$KUEUE_RELEASE" 2>&1)
contains "apply creates Kueue's CRDs" \
  "customresourcedefinition.apiextensions.k8s.io/workloads.kueue.x-k8s.io serverside-applied" "$out"
out=$(k -n kueue-system wait --for=condition=Available deployment/kueue-controller-manager \
  --timeout=30s)
contains "Kueue's controller becomes available" "condition met" "$out"
cat >"$WORK/queues.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: default-flavor
spec:
  nodeLabels:
    cloud.google.com/gke-nodepool: default-pool
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: "1"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: lq
  namespace: default
spec:
  clusterQueue: cq
YAML
out=$(k apply --server-side -f "$WORK/queues.yaml" 2>&1)
contains "a ClusterQueue" "clusterqueue.kueue.x-k8s.io/cq serverside-applied" "$out"
queued_job() {  # NAME [GATE [PRIORITY-CLASS]]: a Job in lq asking for the whole quota, running
  # until $WORK/GATE (go) exists
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  labels:
    kueue.x-k8s.io/queue-name: lq
${3:+    kueue.x-k8s.io/priority-class: $3}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: [sh, -c, "while [ ! -f $WORK/${2:-go} ]; do sleep 0.05; done"]
        resources:
          requests:
            cpu: "1"
YAML
}
queued_job first >"$WORK/first.yaml"
queued_job second >"$WORK/second.yaml"
k create -f "$WORK/first.yaml" >/dev/null
out=$(k wait --for=jsonpath='{.spec.suspend}'=false job/first --timeout=30s)
contains "the first job is admitted and unsuspended" "condition met" "$out"
out=$(k get job first -o jsonpath='{.spec.template.spec.nodeSelector.cloud\.google\.com/gke-nodepool}')
contains "with the flavor's node labels" "default-pool" "$out"
k create -f "$WORK/second.yaml" >/dev/null
out=$(k wait --for=jsonpath='{.status.conditions[?(@.type=="QuotaReserved")].reason}'=Pending \
  workloads -l "kueue.x-k8s.io/job-uid=$(k get job second -o jsonpath='{.metadata.uid}')" \
  --timeout=30s)
contains "the second waits for quota" "condition met" "$out"
out=$(k get job second -o jsonpath='{.spec.suspend}')
contains "suspended by the webhook" "true" "$out"
out=$(k get clusterqueues,localqueues,workloads 2>&1)
contains "kubectl lists the ClusterQueue" "clusterqueue.kueue.x-k8s.io/cq" "$out"
contains "kubectl lists the LocalQueue" "localqueue.kueue.x-k8s.io/lq" "$out"
contains "kubectl lists the Workloads" "workload.kueue.x-k8s.io/job-second-" "$out"
out=$(k get workloads -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="QuotaReserved")].message}{"\n"}{end}')
contains "in the scheduler's words" \
  "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 1 more needed" "$out"
out=$(k get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq/pendingworkloads)
contains "the visibility API gives its place" '"positionInClusterQueue":0' "$out"
contains "and its owner" '"name":"second"' "$out"
touch "$WORK/go"
out=$(k wait --for=condition=Complete job/first job/second --timeout=30s)
contains "both run, in turn" "job.batch/second condition met" "$out"
# Preemption within the ClusterQueue: a higher-priority job evicts the running lower one, whose
# Job is suspended again (its pod deleted), and which runs again once the higher one is done.
sed 's/^  namespaceSelector: {}$/  namespaceSelector: {}\n  preemption:\n    withinClusterQueue: LowerPriority/' \
  "$WORK/queues.yaml" >"$WORK/queues-preempting.yaml"
k apply --server-side -f "$WORK/queues-preempting.yaml" >/dev/null
cat <<'YAML' | k apply --server-side -f - >/dev/null
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: urgent
value: 1000
YAML
queued_job low go-low >"$WORK/low.yaml"
queued_job urgent go-urgent urgent >"$WORK/urgent.yaml"
k create -f "$WORK/low.yaml" >/dev/null
k wait --for=jsonpath='{.status.ready}'=1 job/low --timeout=30s >/dev/null
k create -f "$WORK/urgent.yaml" >/dev/null
low_workload="workloads -l kueue.x-k8s.io/job-uid=$(k get job low -o jsonpath='{.metadata.uid}')"
# shellcheck disable=SC2086 # two words: the resource and its selector
out=$(k wait --for=jsonpath='{.status.conditions[?(@.type=="Requeued")].reason}'=Preempted \
  $low_workload --timeout=30s)
contains "the low job's Workload is requeued after its eviction" "condition met" "$out"
# shellcheck disable=SC2086
out=$(k get $low_workload -o jsonpath='{.items[0].status.conditions[?(@.type=="Evicted")].reason} {.items[0].status.conditions[?(@.type=="Preempted")].reason}')
contains "evicted by preemption within the ClusterQueue" "Preempted InClusterQueue" "$out"
out=$(k get job low -o jsonpath='{.spec.suspend} {.status.conditions[?(@.type=="Suspended")].reason}')
contains "its Job suspended again" "true JobSuspended" "$out"
out=$(k get events --field-selector involvedObject.name=low,reason=Stopped -o jsonpath='{.items[*].message}')
contains "Kueue's Stopped event says why" "Preempted to accommodate a workload" "$out"
out=$(k wait --for=jsonpath='{.spec.suspend}'=false job/urgent --timeout=30s)
contains "the urgent job is admitted" "condition met" "$out"
touch "$WORK/go-urgent" "$WORK/go-low"
out=$(k wait --for=condition=Complete job/urgent job/low --timeout=30s)
contains "the urgent job runs, then the evicted one again" "job.batch/low condition met" "$out"
# Fair sharing (`kinetic up --queue fair`, lib/backend/gke/kueue_fair.cpp): the ClusterQueue's
# admissionScope as kubectl reads it, and Kueue's controller restarted by kubectl's own `rollout
# restart`, whose pod template annotation kinetic writes to make the controller read its
# configuration again.
out=$(k patch clusterqueue cq --type merge \
  -p '{"spec":{"admissionScope":{"admissionMode":"UsageBasedAdmissionFairSharing"}}}' 2>&1)
contains "a ClusterQueue in fair sharing mode" "clusterqueue.kueue.x-k8s.io/cq patched" "$out"
out=$(k get clusterqueue cq -o jsonpath='{.spec.admissionScope.admissionMode}')
contains "kubectl reads its admission mode" "UsageBasedAdmissionFairSharing" "$out"
out=$(k -n kueue-system rollout restart deployment/kueue-controller-manager 2>&1)
contains "kubectl restarts Kueue's controller" \
  "deployment.apps/kueue-controller-manager restarted" "$out"
out=$(k -n kueue-system get deployment kueue-controller-manager \
  -o jsonpath='{.spec.template.metadata.annotations}')
contains "with the annotation kinetic writes" "kubectl.kubernetes.io/restartedAt" "$out"
out=$(k -n kueue-system rollout status deployment/kueue-controller-manager --timeout=30s)
contains "and it is available again" "successfully rolled out" "$out"

# ---- a fresh GKE cluster: no JobSet until its release is server-side applied --------------
# What `kinetic up` does with its own client (lib/backend/gke/jobset_release.cpp), done by
# kubectl: the fake must agree with the real client on discovery, apply-patch and Deployments.
"$FAKE" --ca-file "$WORK/fresh-ca.pem" --token "$TOKEN" --no-jobset >"$WORK/fresh-port" \
  2>"$WORK/fresh.log" &
FRESH_PID=$!
for _ in $(seq 1 1200); do  # a bound (60 s), not a timing
  [ -s "$WORK/fresh-port" ] && break
  sleep 0.05
done
fresh() {
  kubectl --server "https://127.0.0.1:$(head -1 "$WORK/fresh-port")" \
    --certificate-authority "$WORK/fresh-ca.pem" --token "$TOKEN" \
    --cache-dir "$WORK/fresh-cache" --request-timeout 30s "$@"
}
if out=$(fresh get jobsets 2>&1); then
  fail "a cluster without JobSet must not serve jobsets: $out"
fi
contains "no JobSet API before the release" 'the server doesn'"'"'t have a resource type "jobsets"' "$out"
out=$(fresh apply --server-side -f "$RELEASE" 2>&1)
contains "apply creates the CRD" \
  "customresourcedefinition.apiextensions.k8s.io/jobsets.jobset.x-k8s.io serverside-applied" "$out"
contains "apply creates the controller" \
  "deployment.apps/jobset-controller-manager serverside-applied" "$out"
contains "apply creates the webhooks" \
  "validatingwebhookconfiguration.admissionregistration.k8s.io/jobset-validating-webhook-configuration serverside-applied" "$out"
out=$(fresh apply --server-side -f "$RELEASE" 2>&1)
contains "applying again is no error" "deployment.apps/jobset-controller-manager serverside-applied" "$out"
out=$(fresh -n jobset-system wait --for=condition=Available deployment/jobset-controller-manager \
  --timeout=30s)
contains "the controller becomes available" "condition met" "$out"
out=$(fresh create -f "$WORK/jobset.yaml")
contains "a JobSet once installed" "jobset.jobset.x-k8s.io/js created" "$out"
out=$(fresh wait --for=jsonpath='{.status.terminalState}'=Completed jobset/js --timeout=30s)
contains "and its controller runs it" "condition met" "$out"

echo "kubectl fidelity: all checks passed"
