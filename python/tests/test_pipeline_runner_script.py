"""The detached pipeline runner's own checks (lib/backend/gke/pipeline_runner.py, issue #28
points 1 and 5), against in-memory stand-ins for the bucket and the cluster: a plan whose bytes
changed is refused, a launch naming another service account or another Secret is refused with
nothing created, a malformed status.json, record or cache index is read as unreadable and the run
goes on, and a step that never finishes is failed at its deadline. The script runs for real
against the fake cloud in tests/e2e/test_gke_pipeline.cpp."""

import hashlib
import json
import os
import types

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "lib", "backend", "gke", "pipeline_runner.py")
# The build puts the code the in-cluster scripts share ahead of the runner (one module).
COMMON = os.path.join(REPO, "lib", "job", "incluster_common.py")

runner = types.ModuleType("kinetic_pipeline_runner")
for path in (COMMON, SCRIPT):
    with open(path) as source:
        exec(compile(source.read(), path, "exec"), runner.__dict__)

NS = "team"
JOBS = "/apis/batch/v1/namespaces/team/jobs"
SECRETS = "/api/v1/namespaces/team/secrets/"


class Bucket:
    """gs:// objects in a dict: what Storage reads and writes."""

    def __init__(self, objects=None):
        self.objects = dict(objects or {})

    def read(self, uri):
        data = self.objects.get(uri)
        return data.encode() if isinstance(data, str) else data

    def exists(self, uri):
        return uri in self.objects

    def write(self, uri, data, content_type="application/octet-stream"):
        self.objects[uri] = data


class Cluster:
    """The runner's Kubernetes calls: creates remembered, workloads finished on demand."""

    def __init__(self, namespace=NS):
        self.namespace = namespace
        self.workloads = {}
        self.created = []
        self.deleted = []
        self.finish = True  # a created workload completes at once

    def call(self, method, path, body=None):
        if method == "DELETE":
            path = path.split("?")[0]
            self.deleted.append(path)
            self.workloads.pop(path, None)
            return 200, {}
        if method == "POST":
            self.created.append(path)
            name = body["metadata"]["name"]
            done = {"conditions": [{"type": "Complete", "status": "True"}]} if self.finish else {}
            self.workloads[path + "/" + name] = dict(body, status=done)
            return 201, {}
        if path in self.workloads:
            return 200, self.workloads[path]
        return 404, {}


def job_manifest(name, secret="", account=None):
    env = [{"name": "A", "value": "1"}]
    if secret:
        env.append({"name": "S", "valueFrom": {"secretKeyRef": {"name": secret, "key": "S"}}})
    pod = {"restartPolicy": "Never", "containers": [{"name": "job", "image": "i", "env": env}]}
    if account is not None:
        pod["serviceAccountName"] = account
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"template": {"spec": pod}}}


def launch(job, secret=True, manifest=None, deadline=None):
    name = "kinetic-" + job
    out = {"job": job, "manifest": manifest or job_manifest(name, name if secret else ""),
           "create": JOBS, "object": JOBS + "/" + name,
           "secret": SECRETS + name if secret else "",
           "status": "gs://b/jobs/%s/results/status.json" % job, "outputs": "gs://b/o/" + job}
    if deadline is not None:
        out["deadline_seconds"] = deadline
    return out


def plan_of(*steps):
    rows = [{"name": s["name"], "state": "waiting", "job": "", "exit_code": None, "error": ""}
            for s in steps]
    return {"id": "pipe-1a2b3c4d", "record": {"id": "pipe-1a2b3c4d", "state": "running",
                                              "steps": rows},
            "record_uri": "gs://b/pipelines/pipe-1a2b3c4d/pipeline.json",
            "cancel_uri": "gs://b/pipelines/pipe-1a2b3c4d/cancel",
            "latest_uri": "gs://b/pipelines/latest/x.json", "namespace": NS,
            "job_service_account": "", "max_parallel": 4, "poll_seconds": 0,
            "steps": list(steps)}


def run(plan, bucket=None, cluster=None):
    bucket = bucket or Bucket()
    cluster = cluster or Cluster()
    runner.check_plan(plan, cluster.namespace)
    r = runner.Run(plan, bucket, cluster)
    r.loop()
    return r, bucket, cluster


def succeeded_status():
    return json.dumps({"state": "succeeded", "exit_code": 0, "error": "",
                       "duration_seconds": 1.5})


def test_a_plan_that_changed_after_it_was_written_launches_nothing(monkeypatch, capsys):
    plan_uri = "gs://b/pipelines/pipe-1a2b3c4d/plan.json"
    written = json.dumps(plan_of({"name": "a", "needs": [], "launch": launch("job-a")}))
    record = json.dumps({"id": "pipe-1a2b3c4d", "state": "running", "error": "", "steps": []})
    tampered = written.replace('"job_service_account": ""',
                               '"job_service_account": "kinetic-auto-down-c"')
    bucket = Bucket({plan_uri: tampered, "gs://b/pipelines/pipe-1a2b3c4d/pipeline.json": record})
    monkeypatch.setattr(runner, "Storage", lambda env: bucket)

    def no_cluster(env):
        raise AssertionError("a refused plan never reaches the cluster")

    monkeypatch.setattr(runner, "Kube", no_cluster)
    env = {"KINETIC_PLAN_URI": plan_uri,
           "KINETIC_PLAN_SHA256": hashlib.sha256(written.encode()).hexdigest()}
    assert runner.main(env) == 1
    kept = json.loads(bucket.objects["gs://b/pipelines/pipe-1a2b3c4d/pipeline.json"])
    assert kept["state"] == "failed"
    assert kept["exit_code"] == 125
    assert "refused the plan" in kept["error"] and "changed after" in kept["error"]
    assert "refusing the plan" in capsys.readouterr().out
    # No digest in the Job at all is no better.
    bucket.objects[plan_uri] = written
    assert runner.main({"KINETIC_PLAN_URI": plan_uri}) == 1


def test_the_plan_must_be_for_the_runners_own_namespace():
    plan = plan_of({"name": "a", "needs": [], "launch": launch("job-a")})
    with pytest.raises(RuntimeError, match="namespace 'team'.*'other'"):
        runner.check_plan(plan, "other")
    plan["job_service_account"] = runner.RUNNER_ACCOUNT
    with pytest.raises(RuntimeError, match="runner's own service account"):
        runner.check_plan(plan, NS)


def test_a_launch_as_another_service_account_is_refused_and_nothing_is_created():
    bad = launch("job-b", manifest=job_manifest("kinetic-job-b", "kinetic-job-b",
                                                account="kinetic-auto-down-c"))
    plan = plan_of({"name": "a", "needs": [], "launch": launch("job-a")},
                   {"name": "b", "needs": [], "launch": bad},
                   {"name": "c", "needs": ["b"], "launch": launch("job-c")})
    r, bucket, cluster = run(plan, Bucket({"gs://b/jobs/job-a/results/status.json":
                                           succeeded_status()}))
    assert r.rows["a"]["state"] == "succeeded"
    assert r.rows["b"]["state"] == "failed"
    assert "service account kinetic-auto-down-c" in r.rows["b"]["error"]
    assert r.rows["c"]["state"] == "skipped"
    assert cluster.created == [JOBS]  # a's alone
    # Nothing at the paths the refused launch names is deleted either.
    assert not any("job-b" in p for p in cluster.deleted)


@pytest.mark.parametrize("where", ["env", "envFrom", "volume", "projected", "pullSecret"])
def test_a_launch_using_another_steps_secret_is_refused(where):
    manifest = job_manifest("kinetic-job-b", "kinetic-job-b")
    pod = manifest["spec"]["template"]["spec"]
    container = pod["containers"][0]
    if where == "env":
        container["env"].append({"name": "T", "valueFrom": {
            "secretKeyRef": {"name": "kinetic-job-other", "key": "T"}}})
    elif where == "envFrom":
        container["envFrom"] = [{"secretRef": {"name": "kinetic-job-other"}}]
    elif where == "volume":
        pod["volumes"] = [{"name": "v", "secret": {"secretName": "kinetic-job-other"}}]
    elif where == "projected":
        pod["volumes"] = [{"name": "v", "projected": {"sources": [
            {"secret": {"name": "kinetic-job-other"}}]}}]
    else:
        pod["imagePullSecrets"] = [{"name": "kinetic-job-other"}]
    problem = runner.launch_problem(launch("job-b", manifest=manifest), NS, "")
    assert "Secret kinetic-job-other" in problem
    # The step's own Secret is fine, wherever it is used.
    assert runner.launch_problem(launch("job-b"), NS, "") == ""


def test_launches_outside_the_namespace_or_of_another_kind_are_refused():
    elsewhere = launch("job-b")
    elsewhere["manifest"]["metadata"]["namespace"] = "kube-system"
    assert "namespace 'kube-system'" in runner.launch_problem(elsewhere, NS, "")
    moved = launch("job-b")
    moved["create"] = "/apis/batch/v1/namespaces/kube-system/jobs"
    assert "paths" in runner.launch_problem(moved, NS, "")
    foreign_secret = launch("job-b")
    foreign_secret["secret"] = "/api/v1/namespaces/kube-system/secrets/kinetic-job-b"
    assert "Secret is not in namespace" in runner.launch_problem(foreign_secret, NS, "")
    pod = launch("job-b")
    pod["manifest"] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                       "spec": {"containers": []}}
    assert "a step runs a batch/v1 Job or a JobSet" in runner.launch_problem(pod, NS, "")
    # The jobs' own account: exactly what the plan names.
    named = launch("job-b", manifest=job_manifest("kinetic-job-b", "kinetic-job-b",
                                                  account="kinetic-job"))
    assert runner.launch_problem(named, NS, "kinetic-job") == ""
    assert "service account kinetic-job" in runner.launch_problem(named, NS, "")
    assert "service account default" in runner.launch_problem(launch("job-b"), NS, "kinetic-job")


@pytest.mark.parametrize("status", ["[1, 2]", "{not json", '{"state": 3}',
                                    '{"state": "succeeded", "exit_code": "zero"}',
                                    '{"state": "failed", "duration_seconds": NaN}',
                                    "[" * 100000])
def test_a_malformed_status_json_is_unreadable_and_the_step_is_judged_by_its_workload(status):
    plan = plan_of({"name": "a", "needs": [], "launch": launch("job-a")},
                   {"name": "b", "needs": ["a"], "launch": launch("job-b", secret=False)})
    bucket = Bucket({"gs://b/jobs/job-a/results/status.json": status,
                     "gs://b/jobs/job-b/results/status.json": succeeded_status()})
    r, bucket, cluster = run(plan, bucket)
    # a's workload completed without a readable report: its verdict is the workload's.
    assert r.rows["a"]["state"] == "failed"
    assert "its workload failed before its job reported" in r.rows["a"]["error"]
    assert r.rows["b"]["state"] == "skipped"
    assert json.loads(bucket.objects[plan["record_uri"]])["state"] == "failed"


@pytest.mark.parametrize("record", ["[]", "{}", '{"id": "pipe-1a2b3c4d", "steps": "x"}',
                                    '{"id": "pipe-1a2b3c4d", "steps": [{"name": "z", '
                                    '"state": "succeeded"}]}',
                                    '{"id": "pipe-1a2b3c4d", "steps": [{"name": "a", '
                                    '"state": "reused"}]}'])
def test_a_record_that_does_not_fit_the_plan_is_replaced_by_the_plans(record, capsys):
    plan = plan_of({"name": "a", "needs": [], "launch": launch("job-a")})
    bucket = Bucket({plan["record_uri"]: record,
                     "gs://b/jobs/job-a/results/status.json": succeeded_status()})
    r, bucket, _ = run(plan, bucket)
    assert r.rows["a"]["state"] == "succeeded"
    assert json.loads(bucket.objects[plan["record_uri"]])["state"] == "succeeded"
    out = capsys.readouterr().out
    assert "does not match the plan's steps" in out or "taken as unreadable" in out, out


def test_a_restarted_runner_adopts_the_running_step_from_a_record_that_fits():
    plan = plan_of({"name": "a", "needs": [], "launch": launch("job-a")})
    record = json.loads(json.dumps(plan["record"]))
    record["steps"][0].update(state="running", job="job-a", started=runner.now_text())
    cluster = Cluster()
    cluster.workloads[JOBS + "/kinetic-job-a"] = {
        "status": {"conditions": [{"type": "Complete", "status": "True"}]}}
    bucket = Bucket({plan["record_uri"]: json.dumps(record),
                     "gs://b/jobs/job-a/results/status.json": succeeded_status()})
    r, _, cluster = run(plan, bucket, cluster)
    assert r.rows["a"]["state"] == "succeeded"
    assert cluster.created == []  # looked up, not created again


def test_a_latest_index_that_is_not_an_object_is_started_again(capsys):
    plan = plan_of({"name": "a", "needs": [], "launch": launch("job-a"),
                    "cache": {"uri": "gs://b/pipelines/cache/k.json", "entry": {"key": "k"}}})
    bucket = Bucket({"gs://b/jobs/job-a/results/status.json": succeeded_status(),
                     plan["latest_uri"]: '["not", "an", "index"]'})
    r, bucket, _ = run(plan, bucket)
    assert r.rows["a"]["state"] == "succeeded"
    assert json.loads(bucket.objects[plan["latest_uri"]]) == {"steps": {"a": {"key": "k"}}}
    assert "is not a JSON object; taken as unreadable" in capsys.readouterr().out


def test_a_step_that_never_finishes_fails_at_its_deadline(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(runner.time, "time", lambda: clock[0])

    def tick(seconds):
        clock[0] += 30

    monkeypatch.setattr(runner.time, "sleep", tick)
    plan = plan_of({"name": "a", "needs": [], "launch": launch("job-a", deadline=120)},
                   {"name": "b", "needs": ["a"], "launch": launch("job-b")})
    cluster = Cluster()
    cluster.finish = False  # its pod never starts (say its Secret was deleted)
    r, bucket, cluster = run(plan, Bucket(), cluster)
    assert r.rows["a"]["state"] == "failed"
    assert r.rows["a"]["exit_code"] is None
    assert r.codes["a"] == 124
    assert "did not finish within 2m of its start" in r.rows["a"]["error"]
    assert JOBS + "/kinetic-job-a" in cluster.deleted
    assert r.rows["b"]["error"] == "needs a, which timed out"
    assert 1120 < clock[0] <= 1180  # given up at the first look past the deadline
