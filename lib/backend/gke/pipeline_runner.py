# kinetic's in-cluster pipeline runner (docs/pipelines.md "Detached on GKE"): `kinetic pipeline
# run --detach` on a gke context plans the run, builds every image, stages every step's spec and
# Secret, and writes the plan to gs://BUCKET/pipelines/ID/plan.json; this script, the container
# command of one Job in the default pool, then runs the steps with the user's laptop closed.
#
# Standard library only (its image is a plain python:3.X-slim), like the bootstrap and the
# auto-down check; no triple-quoted strings (cmake/embed_python.cmake drops comment lines).
#
# The plan (lib/pipeline/pipeline_runner.cpp writes it, lib/backend/gke/pipeline_runner_job.cpp
# adds where things are):
#   record            the run's PipelineRun document as the CLI left it (state running)
#   record_uri        gs://.../pipelines/ID/pipeline.json: where the record is kept
#   cancel_uri        gs://.../pipelines/ID/cancel: `kinetic cancel` writes it
#   latest_uri        gs://.../pipelines/latest/H.json: each step's latest outputs for the file
#   max_parallel, poll_seconds
#   steps             in dependency order: name, needs, and for a step to run its launch
#                     (the workload's manifest, the paths to create, read and delete it, its
#                     Secret's path, its status.json's URI) and its cache entry
#
# Its loop is step_schedule.cpp's: a step starts once every step it needs succeeded (or was
# reused), at most max_parallel at once, and is skipped when one of them failed or was skipped.
# A step's verdict is its job's status.json once the workload says it finished (the workload's
# own condition when the job never reported). A finished step's Job and Secret are deleted; a
# step that succeeded is remembered in the cache. The record is rewritten as steps start and
# end. The cancel mark stops the run: running steps' workloads deleted, waiting ones skipped.
#
# Started again (its pod evicted, the Job's next try), it takes the record it last wrote and
# goes on: a running step's workload is looked up, not created twice (a create that meets 409
# adopts it).
#
# Environment: KINETIC_PLAN_URI; the service-account token where Kubernetes mounts it, or in
# KINETIC_SERVICEACCOUNT_DIR (a fake kubelet's: docs/fakes.md). Storage endpoint and token as the
# bootstrap's (lib/job/bootstrap.py): CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE, else
# STORAGE_EMULATOR_HOST, else https://storage.googleapis.com, with a metadata-server token.
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
RETRY_CODES = (408, 429, 500, 502, 503, 504)
FAILED_STATES = ("failed", "skipped", "cancelled")
DONE_STATES = ("succeeded", "reused")


def say(message):
    print("kinetic pipeline: " + message, flush=True)


def now_text():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % (t % 1 * 1000)


class Storage:
    # The few Cloud Storage calls the runner makes: whole small objects, read and written.

    def __init__(self, env):
        override = env.get("CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", "").strip().rstrip("/")
        if override.endswith("/storage/v1"):
            override = override[: -len("/storage/v1")].rstrip("/")
        emulator = env.get("STORAGE_EMULATOR_HOST", "").strip().rstrip("/")
        if override:
            self.base = override
        elif emulator:
            self.base = emulator if "://" in emulator else "http://" + emulator
        else:
            self.base = "https://storage.googleapis.com"
        self.authenticated = bool(override) or not emulator
        self.metadata = env.get("GCE_METADATA_HOST", "metadata.google.internal")
        self.token, self.expires = "", 0.0

    def bearer(self):
        if time.time() > self.expires - 225:
            url = "http://%s/computeMetadata/v1/instance/service-accounts/default/token" % (
                self.metadata)
            req = urllib.request.Request(url, headers={"Metadata-Flavor": "Google"})
            answer = json.load(urllib.request.urlopen(req, timeout=30))
            self.token = answer["access_token"]
            self.expires = time.time() + float(answer.get("expires_in", 300))
        return self.token

    def request(self, method, path, data=None, content_type=None):
        # Bytes, or None on 404; retried on 408, 429, 5xx and dropped connections.
        for attempt in range(8):
            headers = {}
            if self.authenticated:
                headers["Authorization"] = "Bearer " + self.bearer()
            if content_type:
                headers["Content-Type"] = content_type
            req = urllib.request.Request(self.base + path, data, headers, method=method)
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    return r.read()
            except urllib.error.HTTPError as e:
                if e.code == 404:
                    return None
                if e.code == 401 and self.authenticated:
                    self.expires = 0
                elif e.code not in RETRY_CODES or attempt == 7:
                    raise RuntimeError("%s %s: HTTP %d" % (method, path, e.code))
            except (OSError, urllib.error.URLError):
                if attempt == 7:
                    raise
            time.sleep(min(30, 2**attempt) * 0.5)
        return None

    @staticmethod
    def split(uri):
        bucket, _, name = uri[len("gs://") :].partition("/")
        return urllib.parse.quote(bucket, safe=""), urllib.parse.quote(name, safe="")

    def read(self, uri):
        bucket, name = self.split(uri)
        return self.request("GET", "/storage/v1/b/%s/o/%s?alt=media" % (bucket, name))

    def exists(self, uri):
        bucket, name = self.split(uri)
        return self.request("GET", "/storage/v1/b/%s/o/%s" % (bucket, name)) is not None

    def write(self, uri, data):
        bucket, name = self.split(uri)
        path = "/upload/storage/v1/b/%s/o?uploadType=media&name=%s" % (bucket, name)
        self.request("POST", path, data.encode(), "application/json")


class Kube:
    # The cluster's API with this pod's service-account token (RBAC: this namespace's Jobs and
    # JobSets, created, read and deleted, and its Secrets deleted).

    def __init__(self, env):
        sa_dir = env.get("KINETIC_SERVICEACCOUNT_DIR") or SA_DIR
        with open(os.path.join(sa_dir, "token")) as f:
            self.token = f.read().strip()
        self.context = ssl.create_default_context(cafile=os.path.join(sa_dir, "ca.crt"))
        host = env.get("KUBERNETES_SERVICE_HOST", "kubernetes.default.svc")
        if ":" in host:
            host = "[" + host + "]"
        self.base = "https://%s:%s" % (host, env.get("KUBERNETES_SERVICE_PORT", "443"))

    def call(self, method, path, body=None):
        # (HTTP code, the answer's JSON); a transient failure is tried again.
        data = None if body is None else json.dumps(body).encode()
        for attempt in range(6):
            req = urllib.request.Request(self.base + path, data=data, method=method)
            req.add_header("Authorization", "Bearer " + self.token)
            req.add_header("Accept", "application/json")
            if data is not None:
                req.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(req, context=self.context, timeout=30) as r:
                    return r.status, json.loads(r.read() or b"{}")
            except urllib.error.HTTPError as e:
                try:
                    answer = json.loads(e.read() or b"{}")
                except ValueError:
                    answer = {}
                if e.code not in RETRY_CODES or attempt == 5:
                    return e.code, answer
            except (OSError, urllib.error.URLError):
                if attempt == 5:
                    raise
            time.sleep(min(30, 2**attempt) * 0.5)
        return 0, {}

    def delete(self, path):
        code, answer = self.call("DELETE", path + "?propagationPolicy=Background")
        if code not in (200, 202, 404):
            say("could not delete %s: HTTP %d: %s" % (path, code, answer.get("message", "")))


def condition(obj, kinds):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") in kinds and c.get("status") == "True":
            return c
    return None


def verdict_of(status, workload):
    # (state, exit_code, error, duration_seconds) of a finished step: what its job reported,
    # else what its workload says (it never started, or was deleted).
    if status and status.get("state") in ("succeeded", "failed", "timeout", "cancelled", "lost"):
        return (status["state"], status.get("exit_code"), status.get("error") or "",
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
        return 0
    if state == "timeout":
        return 124
    if state == "cancelled":
        return 130
    if state == "lost" or not exit_code:
        return 125
    return exit_code


def ended_text(state):
    return {"skipped": "was skipped", "cancelled": "was cancelled", "timeout": "timed out",
            "lost": "was lost"}.get(state, "failed")


class Run:
    def __init__(self, plan, storage, kube):
        self.plan, self.storage, self.kube = plan, storage, kube
        self.steps = {s["name"]: s for s in plan["steps"]}
        self.order = [s["name"] for s in plan["steps"]]
        kept = storage.read(plan["record_uri"])
        self.record = json.loads(kept) if kept else plan["record"]
        self.rows = {r["name"]: r for r in self.record["steps"]}
        # How each step's job ended (timeout, lost, ...), for its dependents' messages and codes.
        self.job_states = {}
        self.codes = {}
        for name, row in self.rows.items():
            self.job_states[name] = row["state"]
            self.codes[name] = exit_code_for(row["state"], row.get("exit_code"))

    def save(self):
        self.storage.write(self.plan["record_uri"], json.dumps(self.record, indent=2) + "\n")

    def start(self, name):
        launch = self.steps[name]["launch"]
        code, answer = self.kube.call("POST", launch["create"], launch["manifest"])
        row = self.rows[name]
        row["job"], row["started"] = launch["job"], now_text()
        if code in (200, 201, 202, 409):  # 409: created before, by this runner's earlier try
            row["state"] = "running"
            say("step %s (%s) started" % (name, launch["job"]))
            return
        error = "could not create its %s: HTTP %d: %s" % (
            launch["manifest"].get("kind", "workload"), code, answer.get("message", ""))
        self.end(name, "failed", None, error, 0.0)

    def look(self, name):
        # The step's verdict once its workload finished (or is gone), else None.
        launch = self.steps[name]["launch"]
        code, workload = self.kube.call("GET", launch["object"])
        if code == 404:
            workload = None
        elif code != 200:
            say("could not read %s: HTTP %d" % (launch["object"], code))
            return None
        elif not condition(workload, ("Complete", "Completed", "Failed")):
            return None
        kept = self.storage.read(launch["status"])
        return verdict_of(json.loads(kept) if kept else None, workload)

    def end(self, name, state, exit_code, error, duration):
        launch = self.steps[name]["launch"]
        self.kube.delete(launch["object"])
        if launch.get("secret"):
            self.kube.delete(launch["secret"])
        row = self.rows[name]
        row["state"] = state if state in ("succeeded", "cancelled") else "failed"
        row["exit_code"] = exit_code
        row["error"] = error
        row["duration_seconds"] = duration
        row["output_dir"] = launch.get("outputs", "")
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
            self.storage.write(cache["uri"], text)
            kept = self.storage.read(self.plan["latest_uri"])
            latest = json.loads(kept) if kept else {}
            latest.setdefault("steps", {})[name] = cache["entry"]
            self.storage.write(self.plan["latest_uri"], json.dumps(latest, indent=2) + "\n")
        except (RuntimeError, OSError, ValueError) as e:
            say("step %s will not be reused: %s" % (name, e))

    def skip(self, name, why):
        # A step that never runs: its staged Secret goes (its Job was never created).
        secret = (self.steps[name].get("launch") or {}).get("secret")
        if secret:
            self.kube.delete(secret)
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
            code = 130
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


def main(env):
    storage = Storage(env)
    plan_bytes = storage.read(env["KINETIC_PLAN_URI"])
    if plan_bytes is None:
        raise RuntimeError("no plan at " + env["KINETIC_PLAN_URI"])
    run = Run(json.loads(plan_bytes), storage, Kube(env))
    run.loop()
    # The pipeline's verdict is in its record; the runner itself did its work.
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(os.environ))
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        say("error: %s" % e)
        sys.exit(1)
