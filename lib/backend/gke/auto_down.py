# kinetic's idle auto-down (docs/cost.md): run every few minutes by a CronJob in the cluster's
# default pool, it deletes the cluster once nothing has been pending or running in it for the
# idle period, so a forgotten cluster stops costing money with the user's laptop closed.
#
# Standard library only (the CronJob's image is a plain python:3.X-slim), like the bootstrap;
# no triple-quoted strings (cmake/embed_python.cmake drops comment lines). The build puts
# lib/job/incluster_common.py ahead of it: the cluster's API (Kube), the metadata server's token
# and error_answer come from there. Each run:
#   1. lists the Jobs, JobSets, pods and events of every namespace but the ignored ones
#      (KINETIC_IGNORED_NAMESPACES: Kubernetes' and GKE's own, the JobSet controller, its own),
#      with the pod's service-account token (RBAC: a ClusterRole to list those, a Role to get and
#      patch one ConfigMap). Any workload counts, kinetic's or not, whichever context submitted
#      it: deleting the cluster deletes them all. Events outlive the objects they are about (an
#      hour by default), so a job that ran and was cleaned up between two checks still counts;
#   1b. deletes the Deployment of each server its bootstrap stopped for --idle-stop (its pod's
#      termination message says so; idle_servers()): RBAC `delete` on deployments, the
#      ClusterRole's one write, since servers live in any jobs' namespace;
#   2. decides (decide(), a pure function of the clock, what it saw and what it recorded last
#      time: the only place the idle rule lives; `kinetic status` only reads what it recorded);
#   3. records the decision in the ConfigMap (state, idle_since, deletes_at, checked_at, active);
#   4. once the idle period is over, looks again, records "deleting" and deletes the cluster
#      through the GKE API with a Workload Identity token whose principal holds only
#      container.clusters.delete on this cluster (granted by `kinetic up`).
# The jobs bucket and the image repository are not the cluster's: they stay.
#
# Environment (set by the CronJob): KINETIC_PROJECT, KINETIC_LOCATION, KINETIC_CLUSTER,
# KINETIC_NAMESPACE (its own), KINETIC_STATE (the ConfigMap's name), KINETIC_IGNORED_NAMESPACES
# (comma-separated; a trailing '*' matches any rest). GCE_METADATA_HOST and
# CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER redirect the metadata server and the GKE API as
# Google's own clients honour them. The service-account token is read where Kubernetes mounts
# it, or from KINETIC_SERVICEACCOUNT_DIR (a fake kubelet cannot mount: docs/fakes.md).
import datetime
import json
import os
import sys
import time
import urllib.error
import urllib.request

# The kinds whose events say a workload was there (a Node's events, in "default", do not).
WORKLOAD_KINDS = ("Job", "JobSet", "Pod")
# A server's pod (`kinetic serve`, labelled SERVE_LABEL) whose container left IDLE_STOP_MESSAGE
# as its termination message was stopped by its bootstrap for --idle-stop (lib/job/bootstrap.py):
# its pods are no longer activity, and its Deployment (kinetic-JOB) is deleted here, since the
# pod's own identity may not (docs/serving.md "Idle stop").
SERVE_LABEL = "kinetic.dev/serve"
JOB_LABEL = "kinetic.dev/job"
IDLE_STOP_MESSAGE = "kinetic: idle-stop"


def parse_time(text):
    # RFC 3339 as Kubernetes writes it ("2026-11-25T14:03:00Z", fractions allowed) to epoch s.
    if not text:
        return None
    try:
        base = text.rstrip("Z").split(".")[0].split("+")[0]
        moment = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S")
        return moment.replace(tzinfo=datetime.timezone.utc).timestamp()
    except ValueError:
        return None


def format_time(epoch):
    moment = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def condition_true(obj, kinds):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") in kinds and c.get("status") == "True":
            return c
    return None


def ignored_namespace(ns, ignored):
    # IGNORED: names, or prefixes ending in '*' ("kube-*").
    for pattern in ignored:
        if pattern.endswith("*") and ns.startswith(pattern[:-1]):
            return True
        if ns == pattern:
            return True
    return False


def counted(objects, ignored, namespace_of=lambda o: (o.get("metadata") or {}).get("namespace")):
    return [o for o in objects if not ignored_namespace(namespace_of(o) or "", ignored)]


def idle_stopped(pod):
    # Whether POD is a server's whose container (this run of it or the last) was idle-stopped.
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if SERVE_LABEL not in labels or not labels.get(JOB_LABEL):
        return False
    for c in (pod.get("status") or {}).get("containerStatuses") or []:
        for state in (c.get("state") or {}, c.get("lastState") or {}):
            if (state.get("terminated") or {}).get("message") == IDLE_STOP_MESSAGE:
                return True
    return False


def idle_servers(pods):
    # The (namespace, Deployment name) of each server one of whose pods was idle-stopped.
    found = set()
    for pod in pods:
        if idle_stopped(pod):
            md = pod.get("metadata") or {}
            found.add((md.get("namespace", ""), "kinetic-" + md["labels"][JOB_LABEL]))
    return sorted(found)


def server_of(pod):
    md = pod.get("metadata") or {}
    labels = md.get("labels") or {}
    if SERVE_LABEL not in labels:
        return None
    return (md.get("namespace", ""), "kinetic-" + labels.get(JOB_LABEL, ""))


def activity(jobs, jobsets, pods, events=(), ignored=()):
    # What counts as activity: workloads not finished (pending on a scale-up, running, detached
    # or not) in a namespace not IGNORED, and the latest time one finished or had an event (a job
    # cleaned up since the last check is gone, but its events are not). An idle-stopped server's
    # pods are not activity: they wait to be deleted. Pure: lists of API objects in, a dict out
    # ({"active": [names], "last_end": epoch or None, "idle_servers": [(namespace, name)]}).
    active = []
    ends = []
    jobs, jobsets, pods = counted(jobs, ignored), counted(jobsets, ignored), counted(pods, ignored)
    events = counted(events, ignored, lambda e: (e.get("involvedObject") or {}).get("namespace") or
                     (e.get("metadata") or {}).get("namespace"))
    for job in jobs:
        name = job.get("metadata", {}).get("name", "?")
        done = condition_true(job, ("Complete", "Failed"))
        if done:
            ends.append(parse_time((job.get("status") or {}).get("completionTime")) or
                        parse_time(done.get("lastTransitionTime")))
        else:
            active.append("job/" + name)
    for js in jobsets:
        name = js.get("metadata", {}).get("name", "?")
        done = condition_true(js, ("Completed", "Failed"))
        if done or (js.get("status") or {}).get("terminalState"):
            ends.append(parse_time((done or {}).get("lastTransitionTime")))
        else:
            active.append("jobset/" + name)
    stopped = idle_servers(pods)
    for pod in pods:
        phase = (pod.get("status") or {}).get("phase", "Pending")
        if server_of(pod) in stopped:
            continue
        if phase not in ("Succeeded", "Failed"):
            active.append("pod/" + pod.get("metadata", {}).get("name", "?"))
    for event in events:
        if (event.get("involvedObject") or {}).get("kind") in WORKLOAD_KINDS:
            ends.append(parse_time(event.get("lastTimestamp")) or
                        parse_time(event.get("eventTime")) or
                        parse_time((event.get("metadata") or {}).get("creationTimestamp")))
    ends = [e for e in ends if e is not None]
    return {"active": active, "last_end": max(ends) if ends else None, "idle_servers": stopped}


def decide(now, seen, state, idle_seconds):
    # The idle rule, the only one (docs/cost.md). NOW: epoch seconds; SEEN: activity(); STATE:
    # what the last run recorded (the ConfigMap's data); IDLE_SECONDS: the period. Returns the
    # new record and whether to delete the cluster now. The cluster has been idle since the
    # last moment a workload is known to have been active: the end of one still listed if
    # later, else what the last run recorded if it found the cluster idle, else now (the first
    # run, or one after activity that ended at some unknown time since the last run).
    record = {"idle_after": str(idle_seconds), "checked_at": format_time(now)}
    if seen["active"]:
        record.update(state="active", active=str(len(seen["active"])), idle_since="",
                      deletes_at="")
        return record, False
    since = None
    if state.get("state") in ("idle", "deleting", "error"):
        since = parse_time(state.get("idle_since"))
    if since is None:
        since = now
    if seen["last_end"] is not None and seen["last_end"] > since:
        since = seen["last_end"]
    since = min(since, now)
    deletes_at = since + idle_seconds
    delete = now >= deletes_at
    record.update(state="deleting" if delete else "idle", active="0",
                  idle_since=format_time(since), deletes_at=format_time(deletes_at))
    return record, delete


def items(kube, path, optional=False):
    # The objects a list at PATH returns; OPTIONAL: a cluster without the API group (JobSet's)
    # has none of them to count.
    code, answer = kube.call("GET", path)
    if optional and code == 404:
        return []
    if code >= 400:
        raise RuntimeError("GET %s: HTTP %d: %s" % (path, code, answer["message"]))
    return answer.get("items") or []


def ignored_namespaces(env):
    names = [n.strip() for n in env.get("KINETIC_IGNORED_NAMESPACES", "").split(",")]
    return [n for n in names if n] + [env["KINETIC_NAMESPACE"]]


def look(kube, ignored):
    # Every namespace at once (the ClusterRole's list), the ignored ones left out here.
    return activity(items(kube, "/apis/batch/v1/jobs"),
                    items(kube, "/apis/jobset.x-k8s.io/v1alpha2/jobsets", optional=True),
                    items(kube, "/api/v1/pods"),
                    items(kube, "/api/v1/events"), ignored)


def delete_idle_servers(kube, servers):
    # Deletes each idle-stopped server's Deployment; its pods go with it (Background), its
    # Service and Secret too (their ownerReferences name it). The errors, one line each.
    errors = []
    for ns, name in servers:
        code, answer = kube.call("DELETE", "/apis/apps/v1/namespaces/%s/deployments/%s" % (ns, name),
                                 {"kind": "DeleteOptions", "apiVersion": "v1",
                                  "propagationPolicy": "Background"})
        if code == 404:
            continue  # deleted meanwhile (`serve stop`)
        if code >= 400:
            errors.append("cannot delete the idle-stopped server's Deployment %s/%s: HTTP %d: %s%s"
                          % (ns, name, code, answer["message"],
                             "; run `kinetic up --auto-down D` again to grant auto-down `delete` "
                             "on deployments" if code == 403 else ""))
        else:
            print("kinetic auto-down: deleted the idle-stopped server %s/%s" % (ns, name))
    return errors


def delete_cluster(env):
    # DELETE the cluster through the GKE API as this pod's Workload Identity principal.
    token, _ = metadata_token(env)
    base = env.get("CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER") or "https://container.googleapis.com/"
    if not base.endswith("/"):
        base += "/"
    url = base + "v1/projects/%s/locations/%s/clusters/%s" % (
        env["KINETIC_PROJECT"], env["KINETIC_LOCATION"], env["KINETIC_CLUSTER"])
    req = urllib.request.Request(url, method="DELETE",
                                 headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read() or b"{}").get("name", "")
    except urllib.error.HTTPError as e:
        raise RuntimeError("deleting cluster %s: HTTP %d: %s" %
                           (env["KINETIC_CLUSTER"], e.code, error_answer(e)["message"]))


def main(env):
    ns = env["KINETIC_NAMESPACE"]
    state_path = "/api/v1/namespaces/%s/configmaps/%s" % (ns, env["KINETIC_STATE"])
    kube = Kube(env)
    state = kube.checked_call("GET", state_path).get("data") or {}
    try:
        idle_seconds = int(state.get("idle_after", ""))
    except ValueError:
        print("kinetic auto-down: %s has no idle_after; nothing to do" % state_path)
        return 0
    ignored = ignored_namespaces(env)
    seen = look(kube, ignored)
    errors = delete_idle_servers(kube, seen["idle_servers"])
    for e in errors:
        print("kinetic auto-down: %s" % e, file=sys.stderr)
    record, delete = decide(time.time(), seen, state, idle_seconds)
    if delete:
        # A job submitted since the first look keeps the cluster: look once more, just before.
        record, delete = decide(time.time(), look(kube, ignored), state, idle_seconds)
    record["message"] = "; ".join(errors)
    patch = "application/merge-patch+json"
    kube.checked_call("PATCH", state_path, {"data": record}, patch)
    if not delete:
        if record["state"] == "active":
            print("kinetic auto-down: %s workload(s) active; the cluster stays" %
                  record["active"])
        else:
            print("kinetic auto-down: idle since %s; the cluster is deleted at %s" %
                  (record["idle_since"], record["deletes_at"]))
        return 1 if errors else 0
    try:
        operation = delete_cluster(env)
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        kube.checked_call("PATCH", state_path,
                          {"data": {"state": "error", "message": str(e)}}, patch)
        print("kinetic auto-down: %s" % e, file=sys.stderr)
        return 1
    print("kinetic auto-down: idle since %s; deleting cluster %s (operation %s)" %
          (record["idle_since"], env["KINETIC_CLUSTER"], operation))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(os.environ))
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        print("kinetic auto-down: %s" % e, file=sys.stderr)
        sys.exit(1)
