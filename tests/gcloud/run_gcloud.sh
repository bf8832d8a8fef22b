#!/usr/bin/env bash
# Fidelity test: the real gcloud, with api_endpoint_overrides, against kinetic_fake_gcp (fake
# Service Usage, GKE, Cloud Build, Artifact Registry, Cloud Resource Manager, IAM and GCS). gcloud
# is the reference client: if it can enable services, create a cluster and write its kubeconfig,
# manage node pools, submit a build (uploading the source to the fake GCS), list the pushed tag and
# read the build log, and make, show and revoke kinetic's auto-down grant (a custom role bound on
# the project with a condition on the cluster's name), the fakes answer the way the real APIs do.
# Exits 125 (skipped) when gcloud is not installed.
#
#   run_gcloud.sh PATH/TO/kinetic_fake_gcp
set -euo pipefail

FAKE=${1:?usage: run_gcloud.sh PATH/TO/kinetic_fake_gcp}
command -v gcloud >/dev/null 2>&1 || { echo "gcloud not installed: skipping"; exit 125; }
command -v python3 >/dev/null 2>&1 || { echo "python3 not installed: skipping"; exit 125; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kinetic-gcloud.XXXXXX")
FAKE_PID=
cleanup() {
  if [[ -n $FAKE_PID ]]; then kill "$FAKE_PID" 2>/dev/null || true; wait "$FAKE_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  echo "--- last gcloud output:" >&2
  cat "$WORK/out" >&2 2>/dev/null || true
  exit 1
}

PROJECT=acme
ZONE=us-central1-a
REGION=us-central1
REPO_URL=$REGION-docker.pkg.dev/$PROJECT/kinetic

# Start the fake (with the metadata server of kinetic's auto-down pods); its first stdout line is
# a JSON map of base URLs.
mkfifo "$WORK/urls.fifo"
# The zone table (what Compute Engine lists and GKE accepts): v5e in us-central1-a only.
"$FAKE" --workload-identity "$PROJECT/kinetic/auto-down" \
  --zone "$ZONE=e2-medium,e2-standard-4,ct5lp-hightpu-4t" --zone us-central1-b=e2-medium \
  >"$WORK/urls.fifo" 2>"$WORK/fake.err" &
FAKE_PID=$!
read -r URLS <"$WORK/urls.fifo" || fail "kinetic_fake_gcp did not start: $(cat "$WORK/fake.err")"
url() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$URLS" "$1"; }

export CLOUDSDK_CONFIG="$WORK/gcloud-config"
export KUBECONFIG="$WORK/kubeconfig"
export CLOUDSDK_CORE_DISABLE_PROMPTS=1
unset CLOUDSDK_AUTH_ACCESS_TOKEN CLOUDSDK_CORE_PROJECT GOOGLE_APPLICATION_CREDENTIALS || true
echo "ya29.fake-token" >"$WORK/token"

g() { gcloud "$@" >"$WORK/out" 2>&1 || fail "gcloud $*"; }
gv() { gcloud "$@" 2>"$WORK/out"; }  # stdout captured by the caller
expect_fail() {
  if gcloud "$@" >"$WORK/out" 2>&1; then fail "gcloud $* succeeded unexpectedly"; fi
}
# gcloud as kinetic's auto-down pod runs it: no credentials of its own, the GKE metadata server
# (gcloud reads GCE_METADATA_ROOT, Google's client libraries GCE_METADATA_HOST) and the GKE API.
pod() {
  CLOUDSDK_CONFIG="$WORK/pod-config" GCE_METADATA_ROOT="$(url metadata)" \
    GCE_METADATA_HOST="$(url metadata)" CLOUDSDK_CORE_PROJECT="$PROJECT" \
    CLOUDSDK_CORE_DISABLE_USAGE_REPORTING=true CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=true \
    CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER="$(url container)" gcloud "$@" >"$WORK/out" 2>&1
}

g config set core/project "$PROJECT"
g config set core/disable_usage_reporting true
g config set component_manager/disable_update_check true
g config set auth/access_token_file "$WORK/token"
for api in serviceusage container cloudbuild artifactregistry storage cloudresourcemanager iam; do
  g config set "api_endpoint_overrides/$api" "$(url "$api")"
done
# gcloud's compute base carries the API's path, as its default https://compute.googleapis.com/compute/v1/.
g config set api_endpoint_overrides/compute "$(url compute)compute/v1/"

echo "== Service Usage: SERVICE_DISABLED, enable, list"
expect_fail container clusters list
grep -q "Kubernetes Engine API has not been used in project $PROJECT" "$WORK/out" ||
  fail "no SERVICE_DISABLED message"
g services enable container.googleapis.com cloudbuild.googleapis.com artifactregistry.googleapis.com
grep -q "finished successfully" "$WORK/out" || fail "enable did not finish"
enabled=$(gv services list --enabled --format='value(config.name)')
grep -qx container.googleapis.com <<<"$enabled" || fail "container not listed as enabled: $enabled"

echo "== GKE: cluster create (waits on the operation, writes the kubeconfig)"
g container clusters create demo --zone "$ZONE" --num-nodes 1 --machine-type e2-standard-4
grep -q "kubeconfig entry generated for demo" "$WORK/out" || fail "no kubeconfig entry"
grep -q "server: https://127.0.0.1:6443" "$KUBECONFIG" || fail "kubeconfig server"
grep -q "certificate-authority-data: LS0t" "$KUBECONFIG" || fail "kubeconfig CA"
status=$(gv container clusters describe demo --zone "$ZONE" --format='value(status)')
[[ $status == RUNNING ]] || fail "cluster status $status"
names=$(gv container clusters list --format='value(name)')
[[ $names == demo ]] || fail "clusters list: $names"
expect_fail container clusters create demo --zone "$ZONE" --num-nodes 1
grep -q "Already exists" "$WORK/out" || fail "no 409 on a second create"

echo "== GKE: node pools"
g container node-pools create tpu --cluster demo --zone "$ZONE" --machine-type ct5lp-hightpu-4t \
  --num-nodes 0 --enable-autoscaling --min-nodes 0 --max-nodes 4
pools=$(gv container node-pools list --cluster demo --zone "$ZONE" --format='value(name)' | tr '\n' ' ')
[[ $pools == "default-pool tpu " ]] || fail "node pools: $pools"
g container node-pools delete tpu --cluster demo --zone "$ZONE" --quiet
pools=$(gv container node-pools list --cluster demo --zone "$ZONE" --format='value(name)')
[[ $pools == default-pool ]] || fail "node pools after delete: $pools"
ops=$(gv container operations list --zone "$ZONE" --format='value(operationType)' | sort -u | tr '\n' ' ')
[[ $ops == "CREATE_CLUSTER CREATE_NODE_POOL DELETE_NODE_POOL " ]] || fail "operations: $ops"

echo "== Compute Engine: a region's zones, a machine type a zone has and one it lacks"
expect_fail compute regions describe "$REGION"
grep -q "Compute Engine API has not been used in project $PROJECT" "$WORK/out" ||
  fail "compute while disabled: $(cat "$WORK/out")"
g services enable compute.googleapis.com
zones=$(gv compute regions describe "$REGION" --format='value(zones)')
[[ $zones == *"/zones/us-central1-a"*"/zones/us-central1-b"* ]] || fail "zones of $REGION: $zones"
name=$(gv compute machine-types describe ct5lp-hightpu-4t --zone "$ZONE" --format='value(name)')
[[ $name == ct5lp-hightpu-4t ]] || fail "machine type: $name"
expect_fail compute machine-types describe ct5lp-hightpu-4t --zone us-central1-b
grep -q "was not found" "$WORK/out" || fail "no 404 for a type the zone lacks: $(cat "$WORK/out")"

echo "== Artifact Registry: repository create / 409 / describe"
g artifacts repositories create kinetic --repository-format=docker --location="$REGION"
expect_fail artifacts repositories create kinetic --repository-format=docker --location="$REGION"
grep -q ALREADY_EXISTS "$WORK/out" || fail "no ALREADY_EXISTS"
uri=$(gv artifacts repositories describe kinetic --location="$REGION" --format='value(registryUri)')
[[ $uri == "$REPO_URL" ]] || fail "registryUri $uri"

echo "== Cloud Build: submit (source uploaded to the fake GCS), poll, tag appears"
mkdir -p "$WORK/src" "$WORK/bad"
printf 'FROM python:3.11-slim\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n' \
  >"$WORK/src/Dockerfile"
printf 'numpy\n' >"$WORK/src/requirements.txt"
cp "$WORK/src/Dockerfile" "$WORK/bad/Dockerfile"
printf 'numpy\nthis-package-does-not-exist==1.0\n' >"$WORK/bad/requirements.txt"

# Polls builds describe until the build is terminal; prints "STATUS FAILURE_TYPE".
wait_build() {
  local id=$1 s
  for _ in 1 2 3 4 5 6; do
    s=$(gv builds describe "$id" --format='value(status,failureInfo.type)')
    case $s in QUEUED* | WORKING*) ;; *) echo "$s"; return ;; esac
  done
  fail "build $id never finished"
}
id=$(gv builds submit --async --tag "$REPO_URL/team/base:v1" "$WORK/src" --format='value(id)')
[[ -n $id ]] || fail "no build id"
read -r st _ <<<"$(wait_build "$id")"
[[ $st == SUCCESS ]] || fail "build status $st"
tags=$(gv artifacts docker tags list "$REPO_URL/team/base" --format='value(tag)')
[[ $tags == v1 ]] || fail "tags: $tags"
ids=$(gv builds list --format='value(id)')
grep -qx "$id" <<<"$ids" || fail "build not listed"

echo "== Cloud Build: a failing build and its log"
bad=$(gv builds submit --async --tag "$REPO_URL/team/base:bad" "$WORK/bad" --format='value(id)')
read -r st type <<<"$(wait_build "$bad")"
[[ $st == FAILURE && $type == USER_BUILD_STEP ]] || fail "bad build: $st $type"
bucket=$(gv builds describe "$bad" --format='value(logsBucket)')
gv storage cat "$bucket/log-$bad.txt" >"$WORK/log" || fail "no build log"
grep -q "No matching distribution found for this-package-does-not-exist" "$WORK/log" ||
  fail "log lacks the pip error: $(cat "$WORK/log")"

echo "== IAM: kinetic's auto-down grant (custom role, conditional project binding), then revoked"
expect_fail projects get-iam-policy "$PROJECT"
grep -q "Cloud Resource Manager API has not been used in project $PROJECT" "$WORK/out" ||
  fail "no SERVICE_DISABLED for Resource Manager"
g services enable iam.googleapis.com cloudresourcemanager.googleapis.com
g container clusters create kinetic --zone "$ZONE" --num-nodes 1
CLUSTER_NAME="projects/$PROJECT/locations/$ZONE/clusters/kinetic"
pod auth list --format='value(account)' || fail "gcloud auth list in the pod"
grep -qx "$PROJECT.svc.id.goog" "$WORK/out" || fail "the pod's gcloud found no metadata server"
if pod container clusters delete kinetic --zone "$ZONE" --async --quiet; then
  fail "the pod deleted its cluster without a grant"
fi
grep -q "Required \"container.clusters.delete\" permission(s) for \"$CLUSTER_NAME\"" "$WORK/out" ||
  fail "no GKE permission error for the pod"

g iam roles create kineticAutoDown --project "$PROJECT" --permissions container.clusters.delete \
  --title "kinetic auto-down" --description "Deletes this idle cluster" --stage GA
expect_fail iam roles create kineticAutoDown --project "$PROJECT" \
  --permissions container.clusters.delete
grep -q "A role named kineticAutoDown in projects/$PROJECT already exists" "$WORK/out" ||
  fail "no conflict on a second role create"
role=$(gv iam roles describe kineticAutoDown --project "$PROJECT" \
  --format='value(name,stage,includedPermissions)')
[[ $role == "projects/$PROJECT/roles/kineticAutoDown"$'\t'"GA"$'\t'"container.clusters.delete" ]] ||
  fail "role: $role"
number=$(gv projects describe "$PROJECT" --format='value(projectNumber)')
[[ $number =~ ^[0-9]{12}$ ]] || fail "project number: $number"
MEMBER="principal://iam.googleapis.com/projects/$number/locations/global/workloadIdentityPools/$PROJECT.svc.id.goog/subject/ns/kinetic/sa/auto-down"
CONDITION="expression=resource.name == \"$CLUSTER_NAME\",title=kinetic-auto-down"
g projects add-iam-policy-binding "$PROJECT" --member="$MEMBER" \
  --role="projects/$PROJECT/roles/kineticAutoDown" --condition="$CONDITION"
gv projects get-iam-policy "$PROJECT" --format=json >"$WORK/policy.json" ||
  fail "get-iam-policy"
# Prints what the policy grants MEMBER: "VERSION ROLE TITLE EXPRESSION", or "VERSION none".
granted() {
  python3 - "$WORK/policy.json" "$MEMBER" <<'PY'
import json, sys
policy = json.load(open(sys.argv[1]))
found = [b for b in policy.get("bindings", []) if sys.argv[2] in b["members"]]
for b in found:
    c = b.get("condition", {})
    print(policy["version"], b["role"], c.get("title"), c.get("expression"))
if not found:
    print(policy["version"], "none")
PY
}
got=$(granted)
[[ $got == "3 projects/$PROJECT/roles/kineticAutoDown kinetic-auto-down resource.name == \"$CLUSTER_NAME\"" ]] ||
  fail "policy after the binding: $got"
expect_fail projects add-iam-policy-binding "$PROJECT" --member="$MEMBER" \
  --role="projects/$PROJECT/roles/noSuchRole" --condition=None
grep -q "Role (projects/$PROJECT/roles/noSuchRole) does not exist in the resource's hierarchy" \
  "$WORK/out" || fail "no error for an unknown role"

# The pod may now delete its own cluster, and no other. (--async: the role has no
# container.operations.get to watch the deletion with.)
if pod container clusters delete demo --zone "$ZONE" --async --quiet; then
  fail "the pod deleted a cluster its condition does not name"
fi
grep -q "Required \"container.clusters.delete\" permission(s)" "$WORK/out" ||
  fail "no GKE permission error for another cluster"
pod container clusters delete kinetic --zone "$ZONE" --async --quiet ||
  fail "the pod could not delete its cluster"
names=$(gv container clusters list --format='value(name)')
[[ $names == demo ]] || fail "clusters after the pod's delete: $names"

g projects remove-iam-policy-binding "$PROJECT" --member="$MEMBER" \
  --role="projects/$PROJECT/roles/kineticAutoDown" --condition="$CONDITION"
gv projects get-iam-policy "$PROJECT" --format=json >"$WORK/policy.json" ||
  fail "get-iam-policy"
got=$(granted)
[[ $got == "1 none" ]] || fail "policy after the removal: $got"
g iam roles delete kineticAutoDown --project "$PROJECT"
deleted=$(gv iam roles describe kineticAutoDown --project "$PROJECT" --format='value(deleted)')
[[ $deleted == True ]] || fail "deleted role describes as deleted=$deleted"
expect_fail iam roles create kineticAutoDown --project "$PROJECT" \
  --permissions container.clusters.delete
grep -q "in a deleted state" "$WORK/out" || fail "no deleted-state refusal"
g iam roles undelete kineticAutoDown --project "$PROJECT"

echo "== clean up: cluster and repository delete"
g container clusters delete demo --zone "$ZONE" --quiet
names=$(gv container clusters list --format='value(name)')
[[ -z $names ]] || fail "cluster still listed: $names"
g artifacts repositories delete kinetic --location="$REGION" --quiet
expect_fail artifacts repositories describe kinetic --location="$REGION"
grep -q NOT_FOUND "$WORK/out" || fail "no NOT_FOUND after delete"

# The fake shuts down cleanly on SIGTERM (and, in a sanitizer build, reports nothing).
kill "$FAKE_PID"
wait "$FAKE_PID" || fail "kinetic_fake_gcp exited with $?: $(cat "$WORK/fake.err")"
FAKE_PID=
if grep -qE "Sanitizer|runtime error" "$WORK/fake.err"; then
  fail "sanitizer report: $(cat "$WORK/fake.err")"
fi
echo "PASS: gcloud against the fake GCP APIs"
