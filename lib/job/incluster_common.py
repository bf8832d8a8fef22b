# What kinetic's in-cluster scripts share (docs/architecture.md "In-cluster scripts"). The build
# puts this file ahead of each of them (lib/job/bootstrap.py, lib/backend/gke/pipeline_runner.py,
# lib/backend/gke/auto_down.py; cmake/embed_python.cmake PRELUDE), so each still travels as one
# `python3 -c SOURCE` in its pod's spec and holds only its own logic; nothing is imported at run
# time. It lives in job/, the lowest layer that embeds one of those scripts.
#
# Standard library only; no triple-quoted strings; nothing runs when it loads but imports and
# definitions (tests load the scripts as modules), and no name here is one a script defines.
#
# Here: kinetic's exit codes (core/error.h exit_codes, job/manifest.h kRunOverExitCode;
# tests/golden/exit_codes.json pins both copies), its back-off curve with BackoffCurve's default
# parameters (core/backoff.h; test_incluster_common.cpp compares the two), a request tried again
# along that curve, the metadata server's token, the Cloud Storage calls the scripts share, and the
# cluster's API as the pod's service account.
import http.client
import json
import os
import random
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_TIMEOUT = 124
EXIT_KINETIC = 125
EXIT_NOT_RUN = 126
EXIT_NOT_FOUND = 127
EXIT_INTERRUPTED = 130
# The run is over: no further attempt (a Job's podFailurePolicy and a JobSet's failure policy
# match it).
EXIT_RUN_OVER = 197
# A signal from outside stopped the attempt (128 + SIGTERM: a Kueue eviction suspended the Job, the
# pod was deleted); a Job's podFailurePolicy ignores it.
EXIT_STOPPED = 143

RETRY_CODES = (408, 429, 500, 502, 503, 504)
NETWORK_ERRORS = (OSError, http.client.HTTPException)

BACKOFF_INITIAL_SECONDS = 1.0
BACKOFF_FACTOR = 2.0
BACKOFF_MAX_SECONDS = 30.0


def backoff_seconds(retry):
    # core/backoff.h BackoffCurve::delay: retry N (1, 2, ...) waits
    # min(max, initial * factor^(N - 1)).
    grown = BACKOFF_INITIAL_SECONDS * BACKOFF_FACTOR ** (max(retry, 1) - 1)
    return min(BACKOFF_MAX_SECONDS, grown)


def nap(attempt, at_least=0):
    # The wait after failed try ATTEMPT (0, 1, ...): the curve's retry ATTEMPT + 1, jittered over
    # its upper half (every pod of a slice may retry in step), and never shorter than AT_LEAST
    # (a Retry-After).
    time.sleep(max(at_least, backoff_seconds(attempt + 1) * random.uniform(0.5, 1)))


def now_text():
    # UTC with milliseconds, as the records say times: "2026-11-25T14:03:00.123Z".
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % (t % 1 * 1000)


def open_retried(build, tries, timeout, context=None, refresh=None):
    # Opens the request BUILD() makes (afresh each try: a token may have changed), tried up to TRIES
    # times on 408, 429, 5xx and dropped connections, waiting along the curve (or a Retry-After
    # when longer). A 401 is tried again when REFRESH() drops a stale token. Returns the response;
    # raises the last try's HTTPError or network error.
    for attempt in range(tries):
        last = attempt == tries - 1
        wait = 0
        try:
            return urllib.request.urlopen(build(), timeout=timeout, context=context)
        except urllib.error.HTTPError as e:
            if e.code == 401 and refresh is not None and not last:
                refresh()
            elif e.code not in RETRY_CODES or last:
                raise
            retry_after = e.headers.get("Retry-After", "") if e.headers else ""
            wait = int(retry_after) if retry_after.isdigit() else 0
        except NETWORK_ERRORS:
            if last:
                raise
        nap(attempt, wait)
    raise ValueError("open_retried: tries must be at least 1")


def error_answer(error):
    # The JSON object an HTTPError's body holds ({} when none), its "message" what it says:
    # Google's {"error": {"message"}}, a Kubernetes Status's message, else the HTTP reason.
    try:
        answer = json.loads(error.read() or b"{}")
    except ValueError:
        answer = {}
    answer = answer if isinstance(answer, dict) else {}
    nested = answer.get("error") if isinstance(answer.get("error"), dict) else {}
    answer["message"] = nested.get("message") or answer.get("message") or error.reason
    return answer


def metadata_token(env):
    # (access token, its lifetime in seconds) of this pod's principal (Workload Identity), from the
    # metadata server; GCE_METADATA_HOST redirects it, as Google's own clients honour it.
    host = env.get("GCE_METADATA_HOST", "metadata.google.internal")
    url = "http://%s/computeMetadata/v1/instance/service-accounts/default/token" % host
    request = urllib.request.Request(url, headers={"Metadata-Flavor": "Google"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        token = json.loads(answer.read())
    return token["access_token"], float(token.get("expires_in", 300))


# ---- Cloud Storage --------------------------------------------------------------------------


def split_uri(uri):
    bucket, _, name = uri[len("gs://") :].partition("/")
    return bucket, name


def quote(name):
    return urllib.parse.quote(name, safe="")


def object_path(uri):
    # The JSON API's path of the object at gs://URI.
    bucket, name = split_uri(uri)
    return "/storage/v1/b/%s/o/%s" % (quote(bucket), quote(name))


class Storage:
    # Cloud Storage where lib/gcp/endpoints.h finds it: CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE
    # (authenticated), else STORAGE_EMULATOR_HOST (no credentials, as Google's libraries do), else
    # https://storage.googleapis.com. Authenticated calls carry a metadata-server token, cached
    # until 225 s before it expires and dropped on a 401. Threads may share one.

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
        self.env = env
        self.token, self.expires = "", 0.0
        self.lock = threading.Lock()

    def bearer(self):
        with self.lock:
            if time.time() > self.expires - 225:
                self.token, lifetime = metadata_token(self.env)
                self.expires = time.time() + lifetime
            return self.token

    def drop_token(self):
        self.expires = 0

    def call(self, method, url, data=None, headers=None, tries=8):
        # One request (URL: a path on the endpoint, or a whole URL such as an upload session's),
        # tried again as open_retried says; a file DATA is read again from where it stood. A 308
        # (resumable upload incomplete) is returned, not raised; other HTTP errors are raised.
        headers = dict(headers or {})
        start = data.tell() if hasattr(data, "seek") else None

        def build():
            if self.authenticated:
                headers["Authorization"] = "Bearer " + self.bearer()
            if start is not None:
                data.seek(start)
            full = url if "://" in url else self.base + url
            return urllib.request.Request(full, data, headers, method=method)

        refresh = self.drop_token if self.authenticated else None
        try:
            return open_retried(build, tries, 120, refresh=refresh)
        except urllib.error.HTTPError as e:
            if e.code == 308:
                return e
            raise

    def get(self, path):
        # The answer's bytes, or None on a 404.
        try:
            with self.call("GET", path) as answer:
                return answer.read()
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise

    def read(self, uri):
        # The object's bytes, or None when there is none.
        return self.get(object_path(uri) + "?alt=media")

    def stat(self, uri):
        # The object's metadata (JSON), or None when there is none.
        data = self.get(object_path(uri))
        return None if data is None else json.loads(data)

    def exists(self, uri):
        return self.stat(uri) is not None

    def write(self, uri, data, content_type="application/octet-stream", only_if_absent=False):
        # DATA (bytes, or text as UTF-8) as the whole object, in one request; with ONLY_IF_ABSENT
        # an object already there is left alone and False returned.
        bucket, name = split_uri(uri)
        url = "/upload/storage/v1/b/%s/o?uploadType=media&name=%s" % (quote(bucket), quote(name))
        if only_if_absent:
            url += "&ifGenerationMatch=0"
        if isinstance(data, str):
            data = data.encode()
        try:
            self.call("POST", url, data, {"Content-Type": content_type}).close()
        except urllib.error.HTTPError as e:
            if only_if_absent and e.code == 412:
                return False
            raise
        return True

    def delete(self, uri):
        # False when there was nothing to delete.
        try:
            self.call("DELETE", object_path(uri)).close()
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return False
            raise
        return True

    def compose(self, uri, names, generation, destination):
        # objects.compose: URI becomes the concatenation of NAMES (objects of its bucket; a
        # (name, generation) pair pins one), with DESTINATION (contentType, metadata, ...) as its
        # resource, only if URI's generation is still GENERATION (0: absent). The new resource.
        sources = [dict(name=n) if isinstance(n, str) else dict(name=n[0], generation=n[1])
                   for n in names]
        body = json.dumps(dict(sourceObjects=sources, destination=destination)).encode()
        url = object_path(uri) + "/compose?ifGenerationMatch=%d" % generation
        with self.call("POST", url, body, {"Content-Type": "application/json"}) as answer:
            return json.load(answer)


# ---- the cluster's API ----------------------------------------------------------------------

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class Kube:
    # The cluster's API as this pod's service account: its token, namespace and the cluster's CA
    # where Kubernetes mounts them, or in KINETIC_SERVICEACCOUNT_DIR (a fake kubelet cannot mount:
    # docs/fakes.md). TRIES: how often a request is tried (transient failures only).

    def __init__(self, env, tries=1):
        self.account_dir = env.get("KINETIC_SERVICEACCOUNT_DIR") or SERVICE_ACCOUNT_DIR
        self.token = self.account_file("token")
        self.context = ssl.create_default_context(
            cafile=os.path.join(self.account_dir, "ca.crt"))
        host = env.get("KUBERNETES_SERVICE_HOST", "kubernetes.default.svc")
        if ":" in host:
            host = "[" + host + "]"
        self.base = "https://%s:%s" % (host, env.get("KUBERNETES_SERVICE_PORT", "443"))
        self.tries = tries

    def account_file(self, name):
        with open(os.path.join(self.account_dir, name)) as f:
            return f.read().strip()

    @property
    def namespace(self):
        # The namespace this pod runs in, as Kubernetes says.
        return self.account_file("namespace")

    def call(self, method, path, body=None, content_type="application/json"):
        # (HTTP code, the answer's JSON object): an HTTP error is an answer too, its message
        # filled in (error_answer). A network error is raised.
        data = None if body is None else json.dumps(body).encode()

        def build():
            request = urllib.request.Request(self.base + path, data=data, method=method)
            request.add_header("Authorization", "Bearer " + self.token)
            request.add_header("Accept", "application/json")
            if data is not None:
                request.add_header("Content-Type", content_type)
            return request

        try:
            with open_retried(build, self.tries, 30, self.context) as answer:
                return answer.status, json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, error_answer(e)

    def checked_call(self, method, path, body=None, content_type="application/json"):
        # The answer's JSON; an HTTP error raises RuntimeError("METHOD PATH: HTTP CODE: MESSAGE").
        code, answer = self.call(method, path, body, content_type)
        if code >= 400:
            raise RuntimeError("%s %s: HTTP %d: %s" % (method, path, code, answer["message"]))
        return answer
