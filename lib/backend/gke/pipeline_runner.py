# kinetic's in-cluster pipeline runner (docs/pipelines.md "Detached on GKE"): `kinetic pipeline
# run --detach` on a gke context plans the run, builds every image, stages every step's spec and
# Secret, and writes the plan to gs://BUCKET/pipelines/ID/plan.json; this script, the container
# command of one Job in the default pool, then runs the steps with the user's laptop closed.
#
# Standard library only (its image is a plain python:3.X-slim), like the bootstrap and the
# auto-down check; no triple-quoted strings (cmake/embed_python.cmake drops comment lines). The
# build puts lib/job/incluster_common.py ahead of it: Storage, Kube, now_text and the exit codes
# come from there.
#
# The plan (lib/pipeline/pipeline_runner.cpp writes it, lib/backend/gke/pipeline_runner_job.cpp
# adds where things are):
#   record            the run's PipelineRun document as the CLI left it (state running)
#   record_uri        gs://.../pipelines/ID/pipeline.json: where the record is kept
#   cancel_uri        gs://.../pipelines/ID/cancel: `kinetic cancel` writes it
#   latest_uri        gs://.../pipelines/latest/H.json: each step's latest outputs for the file
#   namespace         the namespace the runner and its steps are in
#   job_service_account  the service account the steps' pods run as ("": the namespace's default)
#   max_parallel, poll_seconds
#   steps             in dependency order: name, needs, and for a step to run its launch
#                     (the workload's manifest, the paths to create, read and delete it, its
#                     Secret's path, its status.json's URI, how long it may take) and its cache
#                     entry
#
# Nothing the bucket holds is trusted as it stands (docs/security.md "What a detached pipeline's
# runner may do"): every job pod may write the bucket's objects.
# - The plan runs only when its sha256 is the one in this Job's own spec (KINETIC_PLAN_SHA256;
#   a Job's pod template cannot be changed, and job pods have no access to Jobs); otherwise the
#   runner launches nothing, records the run failed, and exits 1.
# - Each launch is checked before it is created: a Job or JobSet of this namespace, its pods as
#   the jobs' service account, no Secret but the step's own. One that fails fails its step, and
#   nothing is created or deleted for it.
# - A record (pipeline.json), a step's status.json or the cache's latest index that is not what
#   the runner wrote is unreadable, said in the log, and the run goes on without it.
#
# Its loop is step_schedule.cpp's: a step starts once every step it needs succeeded (or was
# reused), at most max_parallel at once, and is skipped when one of them failed or was skipped.
# A step's verdict is its job's status.json once the workload says it finished (the workload's
# own condition when the job never reported). A step still unfinished past its deadline_seconds
# (its --timeout and a grace, else a default: docs/pipelines.md) times out: nothing waits
# forever. A finished step's Job and Secret are deleted; a step that succeeded is remembered in
# the cache. The record is rewritten as steps start and end. The cancel mark stops the run:
# running steps' workloads deleted, waiting ones skipped.
#
# Started again (its pod evicted, the Job's next try), it takes the record it last wrote and
# goes on: a running step's workload is looked up, not created twice (a create that meets 409
# adopts it).
#
# Environment: KINETIC_PLAN_URI, KINETIC_PLAN_SHA256; the service-account token and namespace
# where Kubernetes mounts them, or in KINETIC_SERVICEACCOUNT_DIR (a fake kubelet's:
# docs/fakes.md). Storage endpoint and token as the bootstrap's (incluster_common.py Storage):
# CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE, else STORAGE_EMULATOR_HOST, else
# https://storage.googleapis.com, with a metadata-server token.
import calendar
import hashlib
import json
import math
import os
import re
import sys
import time

RUNNER_ACCOUNT = "kinetic-pipeline-runner"
FAILED_STATES = ("failed", "skipped", "cancelled")
DONE_STATES = ("succeeded", "reused")
STEP_STATES = ("waiting", "running", "succeeded", "reused", "failed", "skipped", "cancelled")
JOB_ENDS = ("succeeded", "failed", "timeout", "cancelled", "lost")
# A step with no deadline_seconds in its launch (a plan from an older CLI) may run this long.
DEFAULT_DEADLINE_SECONDS = 7 * 24 * 3600
# A Kubernetes object name (DNS-1123 subdomain).
NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def say(message):
    print("kinetic pipeline: " + message, flush=True)


# How often a call to the cluster's API is tried (transient failures only).
KUBE_TRIES = 6


def delete(kube, path):
    code, answer = kube.call("DELETE", path + "?propagationPolicy=Background")
    if code not in (200, 202, 404):
        say("could not delete %s: HTTP %d: %s" % (path, code, answer.get("message", "")))


def parse_object(data, what):
    # The JSON object DATA holds, or None, said in the log, when it holds none: a pod may have
    # written it (a JSON nested too deep for the parser is no JSON either).
    if data is None:
        return None
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as e:
        say("%s is not JSON (%s); taken as unreadable" % (what, str(e)[:200]))
        return None
    if not isinstance(value, dict):
        say("%s is not a JSON object; taken as unreadable" % what)
        return None
    return value


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def is_seconds(value):
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)


def job_status(data, what):
    # A step's status.json, when it says how the job ended in the types the bootstrap writes;
    # else None (said), and the step is judged by its workload.
    status = parse_object(data, what)
    if status is None:
        return None
    if status.get("state") not in JOB_ENDS:
        say("%s says no final state; the step is judged by its workload" % what)
        return None
    code = status.get("exit_code")
    if ((code is not None and not (is_int(code) and 0 <= code <= 255))
            or not is_seconds(status.get("duration_seconds", 0))
            or not isinstance(status.get("error") or "", str)):
        say("%s has a field of the wrong type; taken as unreadable" % what)
        return None
    return status


def usable_record(record, plan):
    # Whether RECORD (the pipeline.json a runner of this plan left) can be gone on from: this
    # run's, its steps the plan's in order, each in a state the runner writes.
    if not isinstance(record, dict) or record.get("id") != plan["record"].get("id"):
        return False
    rows = record.get("steps")
    if not isinstance(rows, list) or len(rows) != len(plan["steps"]):
        return False
    for row, step in zip(rows, plan["steps"]):
        if not isinstance(row, dict) or row.get("name") != step["name"]:
            return False
        state = row.get("state")
        # A step with a launch never reads reused; one without never runs.
        if state not in STEP_STATES or (state == "reused") == bool(step.get("launch")):
            return False
        if not (row.get("exit_code") is None or is_int(row["exit_code"])):
            return False
    return True


def check_plan(plan, namespace):
    # The plan's own shape and where it runs; RuntimeError says what is wrong.
    if not isinstance(plan, dict) or not isinstance(plan.get("steps"), list):
        raise RuntimeError("the plan has no steps")
    if not isinstance(plan.get("record"), dict):
        raise RuntimeError("the plan has no record")
    for key in ("record_uri", "cancel_uri", "latest_uri"):
        if not isinstance(plan.get(key), str) or not plan[key].startswith("gs://"):
            raise RuntimeError("the plan's %s is not a gs:// URI" % key)
    if plan.get("namespace") != namespace:
        raise RuntimeError("the plan is for namespace %r, and this runner runs in %r" % (
            plan.get("namespace"), namespace))
    if not isinstance(plan.get("job_service_account", ""), str):
        raise RuntimeError("the plan's job_service_account is not a name")
    if plan.get("job_service_account", "") == RUNNER_ACCOUNT:
        raise RuntimeError("the plan's steps would run as the runner's own service account")
    seen = set()
    for step in plan["steps"]:
        if not isinstance(step, dict) or not isinstance(step.get("name"), str):
            raise RuntimeError("a step of the plan has no name")
        needs = step.get("needs") or []
        if not isinstance(needs, list) or any(n not in seen for n in needs):
            raise RuntimeError("step %s needs a step that is not before it" % step["name"])
        seen.add(step["name"])


# What names a Secret in a pod template: env valueFrom.secretKeyRef, envFrom.secretRef, a CSI
# volume's secret refs, a secret volume or projected source, imagePullSecrets.
SECRET_REF_KEYS = ("secretKeyRef", "secretRef", "nodePublishSecretRef", "nodeStageSecretRef",
                   "controllerPublishSecretRef", "controllerExpandSecretRef",
                   "nodeExpandSecretRef")


def secret_names(node, out):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in SECRET_REF_KEYS and isinstance(value, dict):
                out.add(str(value.get("name")))
            elif key == "secret" and isinstance(value, dict):
                out.add(str(value.get("secretName", value.get("name"))))
            elif key == "imagePullSecrets" and isinstance(value, list):
                out.update(str(v.get("name") if isinstance(v, dict) else v) for v in value)
            secret_names(value, out)
    elif isinstance(node, list):
        for value in node:
            secret_names(value, out)


def pod_specs(node, out):
    # Every pod spec in a workload (a dict with containers), however deep.
    if isinstance(node, dict):
        if "containers" in node:
            out.append(node)
        for value in node.values():
            pod_specs(value, out)
    elif isinstance(node, list):
        for value in node:
            pod_specs(value, out)


def workload_paths(manifest, ns):
    # (create, pods' key) of a Job or JobSet manifest, or None for any other kind.
    kind, api = manifest.get("kind"), manifest.get("apiVersion")
    if kind == "Job" and api == "batch/v1":
        return "/apis/batch/v1/namespaces/%s/jobs" % ns
    if (kind == "JobSet" and isinstance(api, str) and api.startswith("jobset.x-k8s.io/")
            and NAME_RE.match(api[len("jobset.x-k8s.io/"):])):
        return "/apis/%s/namespaces/%s/jobsets" % (api, ns)
    return None


def launch_problem(launch, ns, account):
    # Why LAUNCH may not be created ("" when it may): a Job or JobSet of namespace NS whose pods
    # run as ACCOUNT ("": the namespace's default) and use no Secret but the step's own.
    manifest = launch.get("manifest") if isinstance(launch, dict) else None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("metadata"), dict):
        return "its launch has no workload manifest"
    create = workload_paths(manifest, ns)
    if not create:
        return "its workload is a %s %s; a step runs a batch/v1 Job or a JobSet" % (
            manifest.get("apiVersion"), manifest.get("kind"))
    name = manifest["metadata"].get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        return "its workload has no valid name"
    if manifest["metadata"].get("namespace", ns) != ns:
        return "its workload is in namespace %r, not the runner's %s" % (
            manifest["metadata"].get("namespace"), ns)
    if launch.get("create") != create or launch.get("object") != create + "/" + name:
        return "its paths are not its workload's in namespace %s" % ns
    own = ""
    secret = launch.get("secret") or ""
    prefix = "/api/v1/namespaces/%s/secrets/" % ns
    if secret:
        if not isinstance(secret, str) or not secret.startswith(prefix):
            return "its Secret is not in namespace %s" % ns
        own = secret[len(prefix):]
        if not NAME_RE.match(own):
            return "its Secret has no valid name"
    pods = []
    pod_specs(manifest.get("spec"), pods)
    if not pods:
        return "its workload has no pod template"
    expected = account or "default"
    for pod in pods:
        # No name is the namespace's default account (serviceAccount: its deprecated alias).
        names = {pod.get("serviceAccountName") or "default"}
        if pod.get("serviceAccount"):
            names.add(pod["serviceAccount"])
        if names != {expected}:
            return "its pods would run as service account %s; a step's run as %s" % (
                ", ".join(sorted(str(n) for n in names - {expected})), expected)
    used = set()
    secret_names(manifest.get("spec"), used)
    others = sorted(used - {own})
    if others:
        return "its pods would use the Secret %s, which is not the step's own" % ", ".join(others)
    return ""


def started_at(text):
    # The Unix time of a record's "started" (now_text's form); None when it is not one.
    try:
        return calendar.timegm(time.strptime(str(text)[:19], "%Y-%m-%dT%H:%M:%S"))
    except (ValueError, OverflowError):
        return None


def condition(obj, kinds):
    status = obj.get("status") if isinstance(obj, dict) else None
    for c in (status if isinstance(status, dict) else {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") in kinds and c.get("status") == "True":
            return c
    return None


def verdict_of(status, workload):
    # (state, exit_code, error, duration_seconds) of a finished step: what its job reported
    # (job_status checked it), else what its workload says (it never started, or was deleted).
    if status:
        return (status["state"], status.get("exit_code"), (status.get("error") or "")[:4000],
                float(status.get("duration_seconds") or 0))
    if workload is None:
        return "lost", None, "its workload was deleted before its job reported", 0.0
    failed = condition(workload, ("Failed",)) or {}
    if failed.get("reason") == "DeadlineExceeded":
        return "timeout", None, failed.get("message") or "the step's deadline passed", 0.0
    reason = ": ".join(x for x in (failed.get("reason"), failed.get("message")) if x)
    return "failed", None, "its workload failed before its job reported" + (
        " (" + reason + ")" if reason else ""), 0.0


def exit_code_for(state, exit_code):
    # lib/run/pipeline.cpp exit_code_of: what a step's end stands for.
    if state == "succeeded":
        return EXIT_OK
    if state == "timeout":
        return EXIT_TIMEOUT
    if state == "cancelled":
        return EXIT_INTERRUPTED
    if state == "lost" or not exit_code:
        return EXIT_KINETIC
    return exit_code


def ended_text(state):
    return {"skipped": "was skipped", "cancelled": "was cancelled", "timeout": "timed out",
            "lost": "was lost"}.get(state, "failed")


def deadline_text(seconds):
    if seconds % 86400 == 0:
        return "%dd" % (seconds // 86400)
    if seconds % 3600 == 0:
        return "%dh" % (seconds // 3600)
    if seconds % 60 == 0:
        return "%dm" % (seconds // 60)
    return "%gs" % seconds


class Run:
    def __init__(self, plan, storage, kube):
        self.plan, self.storage, self.kube = plan, storage, kube
        self.steps = {s["name"]: s for s in plan["steps"]}
        self.order = [s["name"] for s in plan["steps"]]
        # Every launch checked once, before anything is created or deleted for it.
        account = plan.get("job_service_account") or ""
        self.problems = {}
        for step in plan["steps"]:
            if step.get("launch") is not None:
                self.problems[step["name"]] = launch_problem(step["launch"], kube.namespace,
                                                             account)
        self.record = self.kept_record()
        self.rows = {r["name"]: r for r in self.record["steps"]}
        # How each step's job ended (timeout, lost, ...), for its dependents' messages and codes.
        self.job_states = {}
        self.codes = {}
        # When each running step started (the record's time on a restart), for its deadline.
        self.started = {}
        for name, row in self.rows.items():
            self.job_states[name] = row["state"]
            self.codes[name] = exit_code_for(row["state"], row.get("exit_code"))
            if row["state"] == "running":
                self.started[name] = started_at(row.get("started")) or time.time()

    def kept_record(self):
        # The record a runner of this plan last wrote, or the plan's own when there is none
        # that fits the plan (a pod may have rewritten it).
        where = self.plan["record_uri"]
        kept = parse_object(self.storage.read(where), where)
        if kept is not None and usable_record(kept, self.plan):
            return kept
        if kept is not None:
            say("%s does not match the plan's steps; starting from the plan's record" % where)
        return json.loads(json.dumps(self.plan["record"]))

    def save(self):
        self.storage.write(self.plan["record_uri"], json.dumps(self.record, indent=2) + "\n",
                           "application/json")

    def launch_of(self, name):
        # Step NAME's launch when it passed the checks, else None: nothing is created or
        # deleted at paths a launch that failed them names.
        if self.problems.get(name, "no launch") != "":
            return None
        return self.steps[name]["launch"]

    def start(self, name):
        row = self.rows[name]
        row["started"] = now_text()
        launch = self.launch_of(name)
        if launch is None:
            self.end(name, "failed", None, "kinetic refused to create its workload: " +
                     self.problems.get(name, "no launch"), 0.0)
            return
        code, answer = self.kube.call("POST", launch["create"], launch["manifest"])
        row["job"] = launch["job"]
        if code in (200, 201, 202, 409):  # 409: created before, by this runner's earlier try
            row["state"] = "running"
            self.started[name] = time.time()
            say("step %s (%s) started" % (name, launch["job"]))
            return
        error = "could not create its %s: HTTP %d: %s" % (
            launch["manifest"].get("kind", "workload"), code, answer.get("message", ""))
        self.end(name, "failed", None, error, 0.0)

    def deadline(self, name):
        seconds = (self.launch_of(name) or {}).get("deadline_seconds")
        return seconds if is_seconds(seconds) and seconds > 0 else DEFAULT_DEADLINE_SECONDS

    def look(self, name):
        # The step's verdict once its workload finished (or is gone, or its deadline passed),
        # else None.
        launch = self.launch_of(name)
        if launch is None:
            return "failed", None, "kinetic refused its workload: " + self.problems.get(
                name, "no launch"), 0.0
        code, workload = self.kube.call("GET", launch["object"])
        if code == 404:
            workload = None
        elif code == 200 and condition(workload, ("Complete", "Completed", "Failed")):
            pass
        else:
            if code != 200:
                say("could not read %s: HTTP %d" % (launch["object"], code))
            limit = self.deadline(name)
            if time.time() - self.started.get(name, time.time()) <= limit:
                return None
            return ("timeout", None, "it did not finish within %s of its start (%s); kinetic "
                    "stopped waiting and deleted its workload" % (
                        deadline_text(limit),
                        "its timeout and a grace" if launch.get("timeout_seconds")
                        else "the default for a step with no timeout"), 0.0)
        where = launch.get("status", "")
        return verdict_of(job_status(self.storage.read(where), where), workload)

    def end(self, name, state, exit_code, error, duration):
        launch = self.launch_of(name)
        if launch is not None:
            delete(self.kube, launch["object"])
            if launch.get("secret"):
                delete(self.kube, launch["secret"])
        row = self.rows[name]
        row["state"] = state if state in ("succeeded", "cancelled") else "failed"
        row["exit_code"] = exit_code
        row["error"] = error
        row["duration_seconds"] = duration
        row["output_dir"] = (launch or {}).get("outputs", "")
        row["finished"] = now_text()
        self.job_states[name] = state
        self.codes[name] = exit_code_for(state, exit_code)
        if state == "succeeded":
            self.remember(name)
        say("step %s %s%s" % (name, state, (": " + error) if error else ""))

    def remember(self, name):
        # Only a cache: a step it cannot remember runs again next time.
        cache = self.steps[name].get("cache")
        if not cache:
            return
        try:
            text = json.dumps(cache["entry"], indent=2) + "\n"
            self.storage.write(cache["uri"], text, "application/json")
            where = self.plan["latest_uri"]
            latest = parse_object(self.storage.read(where), where) or {}
            if not isinstance(latest.get("steps"), dict):
                latest["steps"] = {}
            latest["steps"][name] = cache["entry"]
            self.storage.write(where, json.dumps(latest, indent=2) + "\n", "application/json")
        except (RuntimeError, OSError, ValueError, KeyError, TypeError) as e:
            say("step %s will not be reused: %s" % (name, e))

    def skip(self, name, why):
        # A step that never runs: its staged Secret goes (its Job was never created).
        secret = (self.launch_of(name) or {}).get("secret")
        if secret:
            delete(self.kube, secret)
        row = self.rows[name]
        row["state"], row["error"], row["finished"] = "skipped", why, now_text()
        self.job_states[name] = "skipped"
        self.codes[name] = 0
        say("step %s skipped: %s" % (name, why))

    def cancel(self):
        for name in self.order:
            state = self.rows[name]["state"]
            if state == "running":
                self.end(name, "cancelled", None, "cancelled by `kinetic cancel`", 0.0)
            elif state == "waiting":
                self.skip(name, "the pipeline was cancelled")

    def schedule(self):
        running = sum(1 for n in self.order if self.rows[n]["state"] == "running")
        changed = False
        for name in self.order:
            if self.rows[name]["state"] != "waiting":
                continue
            needs = self.steps[name].get("needs") or []
            blocker = next((n for n in needs if self.rows[n]["state"] in FAILED_STATES), None)
            if blocker:
                self.skip(name, "needs %s, which %s" % (blocker, ended_text(
                    self.job_states.get(blocker, self.rows[blocker]["state"]))))
                changed = True
                continue
            ready = all(self.rows[n]["state"] in DONE_STATES for n in needs)
            if ready and running < int(self.plan.get("max_parallel", 4)):
                self.start(name)
                running += 1
                changed = True
        return changed

    def finish(self, cancelled):
        code = 0
        for name in self.order:
            if self.rows[name]["state"] in ("failed", "cancelled") and code == 0:
                code = self.codes[name]
        if cancelled and code == 0:
            code = EXIT_INTERRUPTED
        state = "cancelled" if cancelled else ("succeeded" if code == 0 else "failed")
        self.record.update(state=state, exit_code=code, finished=now_text())
        self.save()
        say("%s %s (exit %d)" % (self.record.get("id", "pipeline"), state, code))
        return code

    def loop(self):
        poll = float(self.plan.get("poll_seconds", 5))
        self.save()
        while True:
            changed = False
            cancelled = self.storage.exists(self.plan["cancel_uri"])
            for name in self.order:
                if self.rows[name]["state"] != "running":
                    continue
                verdict = self.look(name)
                if verdict:
                    self.end(name, *verdict)
                    changed = True
            if cancelled:
                self.cancel()
                return self.finish(True)
            changed = self.schedule() or changed
            if changed:
                self.save()
            if not any(self.rows[n]["state"] in ("waiting", "running") for n in self.order):
                return self.finish(False)
            time.sleep(poll)


def refuse(storage, plan_uri, why):
    # The plan will not run: the record says so (the record next to the plan, named by this
    # Job's own spec, not by the plan), and nothing is launched.
    say("refusing the plan: " + why)
    if not plan_uri.endswith("/plan.json"):
        return 1
    record_uri = plan_uri[: -len("plan.json")] + "pipeline.json"
    try:
        record = parse_object(storage.read(record_uri), record_uri)
        if record is not None:
            error = "its runner refused the plan: " + why
            record.update(state="failed", exit_code=EXIT_KINETIC, finished=now_text(), error=error)
            # The steps that were to run never will.
            for row in record.get("steps") if isinstance(record.get("steps"), list) else []:
                if isinstance(row, dict) and row.get("state") == "waiting":
                    row.update(state="skipped", error="its runner refused the plan",
                               finished=now_text())
            storage.write(record_uri, json.dumps(record, indent=2) + "\n", "application/json")
    except (RuntimeError, OSError, ValueError) as e:
        say("could not record the refusal: %s" % e)
    return 1


def main(env):
    storage = Storage(env)
    plan_uri = env["KINETIC_PLAN_URI"]
    plan_bytes = storage.read(plan_uri)
    if plan_bytes is None:
        raise RuntimeError("no plan at " + plan_uri)
    expected = env.get("KINETIC_PLAN_SHA256", "")
    actual = hashlib.sha256(plan_bytes).hexdigest()
    if not expected or actual != expected:
        return refuse(storage, plan_uri, "%s has sha256 %s, and this runner's Job says %s: it "
                      "changed after `kinetic pipeline run --detach` wrote it; nothing was "
                      "launched" % (plan_uri, actual, expected or "none"))
    kube = Kube(env, KUBE_TRIES)
    plan = parse_object(plan_bytes, plan_uri)
    try:
        check_plan(plan, kube.namespace)
    except RuntimeError as e:
        return refuse(storage, plan_uri, str(e))
    Run(plan, storage, kube).loop()
    # The pipeline's verdict is in its record; the runner itself did its work.
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(os.environ))
    except (RuntimeError, OSError, ValueError, KeyError, TypeError) as e:
        say("error: %s" % e)
        sys.exit(1)
