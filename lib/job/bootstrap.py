# The in-pod bootstrap: the container command of every GKE job (lib/job/bootstrap.h).
#
# Standard library only, so any image with python3 runs it and nothing kinetic-specific is baked
# into images. The build embeds this file into the binary with comment lines and blank lines
# removed (cmake/embed_python.cmake); keep it free of triple-quoted strings. The build puts
# lib/job/incluster_common.py ahead of it: Storage and its helpers, nap (kinetic's back-off
# curve), now_text and the exit codes (EXIT_*) come from there.
#
# The contract (tests/integration/test_bootstrap.cpp runs it for real against the fake GCS;
# docs/run-record.md has the bucket layout):
#
# Environment in: KINETIC_JOB_ID, KINETIC_SPEC_URI (gs://B/jobs/ID/spec.json, a JobSpec as
#   job/spec.h writes it), KINETIC_CONTEXT_URI (gs://B/contexts/SHA.tar.gz),
#   KINETIC_CONTEXT_SHA256 (of the archive bytes), KINETIC_SPEC_SHA256 (of spec.json's bytes),
#   KINETIC_RESULTS_URI (gs://B/jobs/ID/results/),
#   KINETIC_POD_NAME (else HOSTNAME). On the hosts of a multi-host slice other than the first
#   (JOB_COMPLETION_INDEX set and not 0), results go under RESULTS_URI + "workers/INDEX/"; a
#   multislice run's INDEX counts across slices (KINETIC_SLICE_ID * KINETIC_SLICE_HOSTS + index).
#   Storage endpoint as lib/gcp/endpoints.h resolves it: CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE
#   (authenticated), else STORAGE_EMULATOR_HOST (no credentials, as Google's libraries do), else
#   https://storage.googleapis.com. Authenticated calls carry a metadata-server token
#   (GCE_METADATA_HOST), cached until 225 s before it expires and dropped on a 401.
#   KINETIC_OUTPUT_DIR / KINETIC_CHECKPOINT_DIR, when already set, are used as they are.
#   KINETIC_TERMINATION_LOG: where the container's termination message goes, else Kubernetes'
#   default /dev/termination-log (set by the fake kubelet, which cannot mount that path).
#
# What it does:
#   1. Makes a fresh working area (mkdtemp under TMPDIR) and removes it at the end.
#   2. Claims its attempt number N (attempts/N/status.json, created only if absent) and records
#      the attempt as running. More than spec.max_preemptions preempted attempts before it: the
#      run is over (status failed, exit 197, which the Job's podFailurePolicy turns into a failed
#      Job). On a slice's host, past the run's deadline (spec.created + spec.timeout_seconds,
#      counted across attempts and slice restarts) the run is over too: status timeout, exit 124
#      in the record, 197 from the container; otherwise a timer stops the job (SIGTERM, SIGKILL
#      10 s later) when the deadline passes, with the same verdict.
#   3. Downloads the spec and the context, checks the sha256 of each (a spec or context changed
#      in the bucket after kinetic wrote it never runs: exit 126) and unpacks the context safely;
#      a later attempt downloads the checkpoints under RESULTS_URI + "checkpoints/". The first
#      attempt claims number 1 while the spec and context download, all at once (one round
#      trip; issue #14).
#   4. Runs the job in its own process group (python3 -u FILE, bash FILE, g++ then the binary,
#      or FILE itself) with stdout and stderr on two pipes: every byte goes on to its own stream
#      at once and into the attempt's log, uploaded in parts every
#      spec.log_upload_seconds (a sidecar beside each says which bytes were stderr), every 31
#      parts composed onto one object (LogRecorder). Changed checkpoint files are uploaded every
#      spec.checkpoint_sync_seconds once stable for one interval, and at once on SIGTERM.
#   5. Whatever happened: uploads the checkpoints, the outputs (unsafe symlinks left out with a
#      warning), the attempt's last log part and record, and status.json with the attempt
#      history, all at once (status.json again if one of the others failed, with its error).
#   A server's pod (spec.serve, `kinetic serve`): no start is refused for the preemption cap, no
#      end is the run's verdict but an --idle-stop's, after which the restarted container waits
#      to be deleted (watch_idle, wait_to_be_deleted).
#   6. Last, one line on stdout and one on stderr: "kinetic: end of the log on STREAM, exit CODE,
#      spec SHA256" (CODE: the exit code below; SHA256: KINETIC_SPEC_SHA256). A follower that has
#      read both knows the log complete and the uploads over (lib/backend/gke/log_end.h).
#
# Exit code: the job's own (128+N when killed by signal N), except 197 and 143 which become 1;
#   126 the job could not start; 127 the job file, its directory or its interpreter is missing;
#   197 the run is over (preemption cap; the run's deadline, when status.json says 124; nobody
#   following a foreground run). SIGTERM/SIGINT are passed on to the job's process group (a second
#   one sends SIGKILL) and the container exits 128+signal (143: stopped from outside, which a
#   single-host Job's podFailurePolicy ignores); the attempt is recorded as stopped_verdict()
#   says: "cancelled", exit 130, error "cancelled" (tests/golden/stopped_verdicts.json).

import datetime
import hashlib
import http.client
import json
import math
import os
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request

env = os.environ
job_id = env["KINETIC_JOB_ID"]
host_index = env.get("JOB_COMPLETION_INDEX", "0")
# A multislice run numbers its hosts across its slices (slice S's host H is S * HOSTS + H), so
# each host has records of its own and host 0 of slice 0 speaks for the run.
if env.get("KINETIC_SLICE_ID", "0") not in ("", "0") and host_index:
    host_index = str(int(env["KINETIC_SLICE_ID"]) * int(env.get("KINETIC_SLICE_HOSTS", "1")) +
                     int(host_index))
results = env["KINETIC_RESULTS_URI"].rstrip("/") + "/"
if host_index not in ("", "0"):
    results += "workers/%s/" % host_index
pod_name = env.get("KINETIC_POD_NAME") or env.get("HOSTNAME", "")
# --notify's URLs (secret: a webhook's token is in its path) are the runner's, not the job's.
notify_urls = [u for u in env.pop("KINETIC_NOTIFY", "").split("\n") if u]


def blank_initial_environ(name):
    # Popping a variable leaves it in /proc/PID/environ, which shows the environment this process
    # started with, out of its own memory, to every process of its user: the job's own code
    # reads /proc/1/environ. Its value is overwritten there (/proc/self/stat fields 50-51 say
    # where that memory is).
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        start, end = int(fields[47]), int(fields[48])
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            block = mem.read(end - start)
            key = b"\0" + name.encode() + b"="
            at = (b"\0" + block).find(key)
            if at < 0:
                return
            value = at + len(key) - 1
            length = (block + b"\0").index(b"\0", value) - value
            mem.seek(start + value)
            mem.write(b"*" * length)
    except (OSError, ValueError, IndexError) as e:
        print("kinetic: could not clear %s from this process's environment: %s"
              % (name, type(e).__name__), file=sys.stderr, flush=True)


if notify_urls:
    blank_initial_environ("KINETIC_NOTIFY")


class Failure(Exception):
    # The job cannot run: args are (exit code, one-line message).
    pass


class Stop(BaseException):
    # A signal arrived before the job started: skip to the uploads.
    pass


def say(message):
    print("kinetic: " + message, file=sys.stderr, flush=True)


# ---- Cloud Storage ------------------------------------------------------------------------

storage = Storage(env)


def download(uri, path):
    try:
        for attempt in range(5):
            answer = storage.call("GET", object_path(uri) + "?alt=media")
            try:
                with open(path, "wb") as f:
                    shutil.copyfileobj(answer, f, 1 << 20)
                    got = f.tell()
                if int(answer.headers.get("Content-Length", got)) == got:
                    return
            except (ConnectionError, TimeoutError, http.client.HTTPException):
                pass
            nap(attempt)
        raise OSError("the download kept breaking off")
    except NETWORK_ERRORS as e:
        raise Failure(EXIT_NOT_RUN, "cannot download %s: %s" % (uri, e))


def upload(uri, path, content_type="application/octet-stream"):
    size = os.path.getsize(path)
    if size < 1 << 20:
        with open(path, "rb") as f:
            return storage.write(uri, f.read(), content_type)
    # Larger files go through a resumable session that resumes where the server stopped.
    bucket, name = split_uri(uri)
    start = "/upload/storage/v1/b/%s/o?uploadType=resumable&name=%s" % (bucket, quote(name))
    session = storage.call(
        "POST",
        start,
        json.dumps({"contentType": content_type}).encode(),
        {"Content-Type": "application/json", "X-Upload-Content-Length": str(size)},
    ).headers["Location"]
    offset = 0
    with open(path, "rb") as f:
        for attempt in range(12):
            try:
                if 0 <= offset < size:
                    f.seek(offset)
                    headers = {
                        "Content-Type": content_type,
                        "Content-Length": str(size - offset),
                        "Content-Range": "bytes %d-%d/%d" % (offset, size - 1, size),
                    }
                    answer = storage.call("PUT", session, f, headers, 1)
                else:
                    answer = storage.call("PUT", session, b"",
                                          {"Content-Range": "bytes */%d" % size})
                if answer.code != 308:
                    return True
                got = answer.headers.get("Range")
                offset = int(got.split("-")[1]) + 1 if got else 0
            except NETWORK_ERRORS as e:
                if getattr(e, "code", 500) not in RETRY_CODES:
                    raise
                offset = -1  # ask the server how far it got
                nap(attempt)
    raise OSError("the upload of %s did not complete" % uri)


def list_objects(uri, delimiter=""):
    # Every object (and with DELIMITER, every prefix) under URI, page by page.
    bucket, prefix = split_uri(uri)
    items, prefixes, page = [], [], ""
    while True:
        url = "/storage/v1/b/%s/o?prefix=%s" % (bucket, quote(prefix))
        if delimiter:
            url += "&delimiter=" + quote(delimiter)
        if page:
            url += "&pageToken=" + quote(page)
        answer = json.load(storage.call("GET", url))
        items += answer.get("items", [])
        prefixes += answer.get("prefixes", [])
        page = answer.get("nextPageToken")
        if not page:
            return bucket, prefix, items, prefixes


# ---- notifications (lib/backend/notify.h; tests/golden/notify_payloads.json) --------------

def format_duration(seconds):
    # core/duration.h format_duration
    if seconds < 60:
        return "%.1fs" % seconds
    if seconds < 3600:
        s = int(math.floor(seconds + 0.5))
        return "%dm%02ds" % (s // 60, s % 60)
    if seconds < 86400:
        m = int(math.floor(seconds / 60 + 0.5))
        return "%dh%02dm" % (m // 60, m % 60)
    h = int(math.floor(seconds / 3600 + 0.5))
    return "%dd%dh" % (h // 24, h % 24)


def format_usd(usd):
    # job/pricing.h format_usd: below a cent, two significant digits
    if usd >= 0.01 or usd <= 0:
        return "$%.2f" % usd
    return "$%.*f" % (2 - int(math.floor(math.log10(usd))) - 1, usd)


def notify_text(f):
    state = f["state"]
    word = {"timeout": "timed out", "cancelled": "was cancelled", "lost": "was lost"}.get(
        state, state)
    text = "kinetic: %s %s" % (f["job"], word)
    if state == "failed" and f["exit_code"] is not None:
        text += " (exit %d)" % f["exit_code"]
    text += (" in " if state == "succeeded" else " after ") + format_duration(
        f["duration_seconds"])
    if f["attempts"] > 1:
        text += " and %d attempts" % f["attempts"]
    if f["accelerator"]:
        text += " on " + f["accelerator"]
    if f["cost_usd"] is not None:
        text += " (" + format_usd(f["cost_usd"]) + ")"
    bare = f["exit_code"] is not None and f["error"] == "job exited with code %d" % f["exit_code"]
    if state != "succeeded" and f["error"] and not bare:
        text += ": " + f["error"]
    if f["outputs"]:
        text += "; outputs in " + f["outputs"]
    return text


def notify_payload(f):
    cost = f["cost_usd"]
    return dict(text=notify_text(f), job=f["job"], state=f["state"], exit_code=f["exit_code"],
                error=f["error"], attempts=f["attempts"],
                duration_seconds=math.floor(f["duration_seconds"] * 1000 + 0.5) / 1000,
                accelerator=f["accelerator"], backend=f["backend"],
                cost_usd=None if cost is None else math.floor(cost * 1e6 + 0.5) / 1e6,
                outputs=f["outputs"])


# ---- a stopped job's verdict (backend/stopped_verdict.h; tests/golden/stopped_verdicts.json) ---
# The stop's, not what the stopped job exited with (the signal's echo, or its handler's exit: its
# own words stay in its log); its exit code the one `kinetic wait` and `run` exit with for it.

def deadline_error(spec):
    limit = spec["timeout_seconds"]
    if spec.get("max_cost_usd") and spec.get("budget_seconds") == limit:
        return "stopped at the %s budget (%s of %s, --max-cost)" % (
            format_usd(spec["max_cost_usd"]), format_duration(limit), spec.get("accelerator"))
    return "timed out after %ds (--timeout)" % limit


def stopped_verdict(stop, spec):
    # (state, exit code, error) of a job STOP ended: "deadline" (--timeout, --max-cost),
    # "abandoned" (nobody followed a foreground run), "idle" (a server's --idle-stop), else the name of the signal the runner got:
    # a cancel (in a pod also a Job deleted or a node drained), whichever signal it was.
    if stop == "deadline":
        return "timeout", EXIT_TIMEOUT, deadline_error(spec)
    if stop == "idle":
        return ("cancelled", EXIT_INTERRUPTED, "stopped after %s without a request (--idle-stop)"
                % format_duration(float(spec["serve"]["idle_stop_seconds"])))
    if stop == "abandoned":
        return ("cancelled", EXIT_INTERRUPTED,
                "abandoned: nobody followed this run for %ds (the kinetic that started it "
                "stopped); run with --detach to keep a job going on its own"
                % float(spec.get("follower_timeout_seconds", 0)))
    return "cancelled", EXIT_INTERRUPTED, "cancelled"


def redact_url(url):
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "\u2026"
    cut = min([i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0] or [-1])
    host = rest if cut < 0 else rest[:cut]
    return scheme + "://" + host.rpartition("@")[2] + ("" if cut < 0 else "/\u2026")


# ---- working area and state ---------------------------------------------------------------

work = tempfile.mkdtemp(prefix="kinetic-")
# Where the running job's pid is, for `kinetic exec` (lib/backend/gke/exec_pod.cpp reads the
# job's working directory and environment from its process, as the local backend does).
JOB_PID_FILE = os.path.join(tempfile.gettempdir(), "kinetic-job.pid")
context_dir = work + "/ctx"
output_dir = env.setdefault("KINETIC_OUTPUT_DIR", work + "/output")
checkpoint_dir = env.setdefault("KINETIC_CHECKPOINT_DIR", work + "/checkpoints")
for d in (context_dir, output_dir, checkpoint_dir):
    os.makedirs(d, exist_ok=True)
env.update(PYTHONUNBUFFERED="1", KINETIC_BACKEND="gke")

started_at = time.time()
status = dict(
    schema_version=1,  # docs/schemas.md
    id=job_id,
    state="failed",
    exit_code=EXIT_NOT_RUN,
    error="",
    backend="gke",
    started=now_text(),
    attempts=1,
)
spec = {}
attempt = {"number": 0}
# phase 0 before the job, 1 running, 2 after; run_over: no further attempt (EXIT_RUN_OVER);
# abandoned: nobody follows this foreground run any more.
# timed_out: the run's deadline passed (deadline_passed); idle: a server's --idle-stop stopped
# it (idle_passed); stop: what stopped the attempt
# (how_stopped).
process = {"child": None, "signal": 0, "phase": 0, "run_over": False, "abandoned": False,
           "timed_out": False, "idle": False, "stop": None}
uploaded_checkpoints = {}  # relative path -> (size, mtime_ns) as last uploaded or downloaded
checkpoint_lock = threading.Lock()
sync_checkpoints_now = threading.Event()
stop_workers = threading.Event()
hold_over = threading.Event()


def signal_group(signum):
    try:
        os.killpg(process["child"].pid, signum)
    except Exception:
        pass


def on_signal(signum, _frame):
    if process["phase"] > 1:
        hold_over.set()  # a held pod (--hold-on-failure) is let go
        return  # the job has ended: let the uploads finish
    if process["signal"] and process["child"]:
        signal_group(signal.SIGKILL)  # a second signal: no more grace
    process["signal"] = process["signal"] or signum
    sync_checkpoints_now.set()  # save the checkpoints while the job shuts down
    if process["child"]:
        signal_group(signum)
    elif not process["phase"]:
        raise Stop


for s in (signal.SIGTERM, signal.SIGINT):
    signal.signal(s, on_signal)


def at_once(*steps):
    # Runs STEPS each in a thread of its own and waits for all: requests that do not depend on
    # each other cost one round trip, not one each. The first step's error (in argument order)
    # is raised, as if they had run one after another.
    errors = [None] * len(steps)

    def run_step(i):
        try:
            steps[i]()
        except BaseException as e:
            errors[i] = e

    threads = [threading.Thread(target=run_step, args=(i,), daemon=True) for i in range(len(steps))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        if e is not None:
            raise e


# ---- attempts -----------------------------------------------------------------------------


def attempt_uri(number):
    return "%sattempts/%d/" % (results, number)


def attempt_record(state, exit_code=None, error="", finished=""):
    return dict(
        attempt=attempt["number"],
        attempts=attempt["number"],
        pod=pod_name,
        state=state,
        exit_code=exit_code,
        error=error,
        started=status["started"],
        finished=finished,
    )


def record_attempt(record):
    storage.write(attempt_uri(attempt["number"]) + "status.json", json.dumps(record),
                  "application/json")


def earlier_attempts():
    # The records of the attempts before this one, oldest first.
    _, prefix, _, prefixes = list_objects(results + "attempts/", "/")
    numbers = sorted(int(p[len(prefix) :].strip("/")) for p in prefixes
                     if p[len(prefix) :].strip("/").isdigit())
    records = []
    for number in numbers:
        try:
            record = json.loads(storage.read(attempt_uri(number) + "status.json"))
        except Exception:
            record = dict(attempt=number, state="running")
        record["attempt"] = number
        records.append(record)
    return records


def preempted(record):
    # An attempt that never finished (its node vanished) or that a signal ended while the Job
    # went on: a disruption, not a failure of the job.
    return record.get("state") in ("running", "cancelled", "preempted") or bool(
        record.get("preempted"))


def try_claim(number):
    # Records attempt NUMBER as running, unless another pod already has it.
    record = dict(attempt=number, attempts=number, pod=pod_name, state="running",
                  started=status["started"])
    if storage.write(attempt_uri(number) + "status.json", json.dumps(record),
                     "application/json", only_if_absent=True):
        attempt["number"] = number
        return True
    return False


def claim_attempt(history):
    number = max([r["attempt"] for r in history] + [0]) + 1
    while not try_claim(number):
        number += 1


def history_entry(record, current=False):
    # This attempt's own end is what it says; only an earlier one can be known as preempted.
    was_preempted = not current and preempted(record)
    return dict(
        attempt=record.get("attempt", 0),
        state="preempted" if was_preempted else record.get("state", ""),
        exit_code=record.get("exit_code"),
        error=record.get("error", ""),
        preempted=was_preempted,
        started=record.get("started", ""),
        finished=record.get("finished", ""),
        pod=record.get("pod", ""),
    )


# ---- the job's log ------------------------------------------------------------------------


class LogRecorder:
    # Keeps the attempt's output and uploads it in parts: each part ends at a newline, except
    # the last one of the attempt. A part with stderr bytes has a sidecar PPPPPP.err of 16-byte
    # big-endian (offset in the attempt's log, length) spans saying which. Once COMPOSE_PARTS
    # parts are not in log/composed, they are composed onto its end (its metadata "parts": the
    # parts it holds), their sidecars onto composed.err, and deleted, so a job that prints for
    # weeks leaves a bounded number of objects (docs/run-record.md "Log parts"). composed.err
    # also gets each composed part's end mark: (offset of its end, 2^63 | Unix second it was
    # uploaded), so `logs --since` finds where a time starts; a part not composed yet has its
    # object's own time.
    COMPOSE_PARTS = 31  # with the composite itself, compose's limit of 32 sources
    END_MARK = 1 << 63

    def __init__(self):
        self.pending = bytearray()
        self.spans = []  # [offset, length] of stderr bytes not uploaded yet
        self.start = 0  # the offset of pending's first byte in the attempt's log
        self.lock = threading.Lock()
        self.upload_lock = threading.Lock()
        self.part = 0
        self.composed = 0  # parts in log/composed
        self.generation = {}  # composite name: its generation
        self.with_err = []  # parts not composed yet that have a sidecar
        self.ends = []  # (part, end offset, Unix second uploaded) of the parts not composed yet
        self.doomed = []  # composed parts and sidecars still to delete

    def uri(self, name):
        return "%slog/%s" % (attempt_uri(attempt["number"]), name)

    def add(self, data, err=False):
        with self.lock:
            at = self.start + len(self.pending)
            if err and self.spans and sum(self.spans[-1]) == at:
                self.spans[-1][1] += len(data)
            elif err:
                self.spans.append([at, len(data)])
            self.pending += data

    def flush(self, final=False):
        with self.upload_lock:
            with self.lock:
                end = len(self.pending) if final else self.pending.rfind(b"\n") + 1
                data = bytes(self.pending[:end])
                del self.pending[:end]
                cut = self.start + end
                spans = [(a, min(n, cut - a)) for a, n in self.spans if a < cut]
                self.spans = [[max(a, cut), a + n - max(a, cut)] for a, n in self.spans
                              if a + n > cut]
                self.start = cut
            if data:
                self.part += 1
                name = "%06d" % self.part
                if spans:
                    storage.write(self.uri(name + ".err"), b"".join(
                        a.to_bytes(8, "big") + n.to_bytes(8, "big") for a, n in spans))
                    self.with_err.append(self.part)
                storage.write(self.uri(name), data, "text/plain")
                self.ends.append((self.part, cut, int(time.time())))
            try:  # the parts are the log: composing them only makes it cheaper to keep and read
                if self.part - self.composed >= self.COMPOSE_PARTS:
                    self.compose()
                if self.doomed:
                    at_once(*[lambda u=u: storage.delete(u) for u in self.doomed])
                    self.doomed = []
            except NETWORK_ERRORS as e:
                say("composing the log's parts failed (they stay as they are): %s" % e)

    def compose_onto(self, leaf, parts, upto, content_type):
        # Composes the objects PARTS onto log/LEAF, unless a retried compose already did.
        uri, generation = self.uri(leaf), self.generation.get(leaf, 0)
        names = [split_uri(u)[1] for u in parts]
        if generation:
            names.insert(0, (split_uri(uri)[1], generation))
        want = dict(contentType=content_type, metadata=dict(parts=str(upto)))
        try:
            answer = storage.compose(uri, names, generation, want)
        except urllib.error.HTTPError as e:
            # A retried compose whose first try went through: the composite says so.
            answer = e.code == 412 and storage.stat(uri) or {}
            if answer.get("metadata", {}).get("parts") != str(upto):
                raise
        self.generation[leaf] = int(answer["generation"])

    def compose(self):
        # 31 parts at most: after a failed compose more may wait, for the next uploads.
        upto = min(self.part, self.composed + self.COMPOSE_PARTS)
        parts = [self.uri("%06d" % p) for p in range(self.composed + 1, upto + 1)]
        errs = [self.uri("%06d.err" % p) for p in self.with_err if p <= upto]
        marks = self.uri("%06d.ends" % upto)
        storage.write(marks, b"".join(
            end.to_bytes(8, "big") + (self.END_MARK | t).to_bytes(8, "big")
            for p, end, t in self.ends if p <= upto))
        # The sidecars first: a part is deleted only once its spans are in composed.err.
        self.compose_onto("composed.err", errs + [marks], upto, "application/octet-stream")
        self.compose_onto("composed", parts, upto, "text/plain")
        self.with_err = [p for p in self.with_err if p > upto]
        self.ends = [e for e in self.ends if e[0] > upto]
        self.composed, self.doomed = upto, parts + errs + [marks]


log = LogRecorder()


def every(seconds, work_fn, wake=None):
    # Runs WORK_FN every SECONDS (or as soon as WAKE is set) until the job ends.
    wake = wake or threading.Event()

    def loop():
        while not stop_workers.is_set():
            wake.wait(seconds)
            wake.clear()
            if stop_workers.is_set():
                return
            try:
                work_fn()
            except Exception as e:
                say("background upload failed (will retry): %s" % e)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    workers.append((thread, wake))


workers = []


def stop_all_workers():
    stop_workers.set()
    for thread, wake in workers:
        wake.set()
        thread.join()


# ---- checkpoints --------------------------------------------------------------------------


def fetch_checkpoints():
    bucket, prefix, items, _ = list_objects(results + "checkpoints/")
    for item in items:
        rel = item["name"][len(prefix) :]
        if not rel or rel.endswith("/") or rel.startswith("/") or ".." in rel.split("/"):
            continue
        path = os.path.join(checkpoint_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        download("gs://%s/%s" % (bucket, item["name"]), path)
        if "updated" in item:
            when = datetime.datetime.fromisoformat(item["updated"].replace("Z", "+00:00"))
            os.utime(path, (when.timestamp(), when.timestamp()))
        info = os.stat(path)
        uploaded_checkpoints[rel] = (info.st_size, info.st_mtime_ns)


def checkpoint_files():
    for root, _, names in os.walk(checkpoint_dir):
        for name in names:
            path = os.path.join(root, name)
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                yield os.path.relpath(path, checkpoint_dir), path, (info.st_size, info.st_mtime_ns)


seen_checkpoints = {}  # what the last periodic scan saw: a file is sent once it stands still


def sync_checkpoints(final=False):
    with checkpoint_lock:
        for rel, path, signature in list(checkpoint_files()):
            if uploaded_checkpoints.get(rel) == signature:
                continue
            stable = seen_checkpoints.get(rel) == signature
            seen_checkpoints[rel] = signature
            if final or stable or process["signal"]:
                upload(results + "checkpoints/" + rel, path)
                uploaded_checkpoints[rel] = signature


# ---- the follower of a foreground run -------------------------------------------------------


def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def check_follower():
    # The kinetic that started a foreground run refreshes jobs/ID/follower while it follows. Once
    # it has been silent for spec.follower_timeout_seconds (the CLI was killed), the job is
    # stopped: nothing runs, and bills, for a run nobody follows. A second check still finding
    # it running sends SIGKILL.
    timeout = float(spec.get("follower_timeout_seconds", 0))
    item = storage.stat(env["KINETIC_SPEC_URI"].rsplit("/", 1)[0] + "/follower")
    last = parse_time(item["updated"]) if item else 0
    silent = time.time() - max(last, started_at)
    if silent <= timeout:
        return
    if process["abandoned"]:
        if process["child"]:
            signal_group(signal.SIGKILL)
        return
    process["abandoned"] = True
    say("nobody has followed this run for %ds (the kinetic that started it stopped); stopping "
        "it" % silent)
    if process["child"]:
        signal_group(signal.SIGTERM)


# ---- the run's deadline (--timeout, --max-cost) ---------------------------------------------
# The deadline is the run's, not an attempt's: spec.created (the submit) plus spec.timeout_seconds
# (the sooner of --timeout and what --max-cost buys). A Job's activeDeadlineSeconds counts from the
# Job's start, once for all its pods, which holds for a single-host run; but a slice's restart is
# a new child Job with a fresh one. So every attempt of every host of a slice (an Indexed Job:
# JOB_COMPLETION_INDEX is set) checks the time left when it starts and stops its job when none is
# left: a restart never buys a run more time (issue #27, docs/cost.md). It then ends the run (exit
# EXIT_RUN_OVER), and the Job's podFailurePolicy and the JobSet's failure policy start no other
# attempt.


# With --timeout-from start (spec.timeout_from) the deadline counts from the run's first start
# on a node instead: the earliest attempt's start (this one's when it is the first), so a wait
# for capacity (flex-start) never counts, and a restart still buys no more time. The Job then
# has no activeDeadlineSeconds (it would count from the Job's creation), so every host, of a
# slice or not, keeps the deadline itself.


def run_deadline(history=()):
    limit = spec.get("timeout_seconds")
    if not limit:
        return None
    if spec.get("timeout_from") == "start":
        starts = [parse_time(r["started"]) for r in history if r.get("started")]
        return min(starts + [started_at]) + float(limit)
    if not spec.get("created"):
        return None
    return parse_time(spec["created"]) + float(limit)


# The job gets this long after SIGTERM to save its work before SIGKILL: within the pod's
# terminationGracePeriodSeconds (30, lib/job/manifest.cpp), leaving time for the uploads.
DEADLINE_GRACE_SECONDS = 10


def deadline_passed():
    if process["phase"] > 1 or process["timed_out"]:
        return
    process["timed_out"] = True
    say("the run's deadline has passed; stopping the job")
    sync_checkpoints_now.set()
    stop_child_gracefully()


def stop_child_gracefully():
    # SIGTERM to the job's process group, SIGKILL after the grace period if that same child is
    # still running: a deadline's stop and an idle server's.
    if process["child"]:
        signal_group(signal.SIGTERM)
        child = process["child"]
        threading.Timer(DEADLINE_GRACE_SECONDS,
                        lambda: process["child"] is child and signal_group(signal.SIGKILL)).start()


def watch_deadline(history):
    # At the attempt's start: no time left ends the run before the job starts; else a timer
    # stops the job when the time left has passed.
    deadline = process["deadline"] = run_deadline(history)
    from_start = spec.get("timeout_from") == "start"
    if deadline is None or ("JOB_COMPLETION_INDEX" not in env and not from_start):
        return  # a single-host Job's own deadline is the run's
    left = deadline - time.time()
    if left <= 0:
        process["timed_out"] = True
        raise Failure(EXIT_TIMEOUT, deadline_error(spec))
    timer = threading.Timer(left, deadline_passed)
    timer.daemon = True
    timer.start()


# ---- a server (`kinetic serve`, docs/serving.md "Servers on gke") --------------------------
# Each pod of a server's Deployment runs this bootstrap; the Deployment, not kinetic, restarts
# it, so a pod start is an attempt (its log and record) that never counts against
# max_preemptions and never ends the run. With --idle-stop D the bootstrap watches the server's
# port as the local supervisor does (backend/local/port_activity.h): an ESTABLISHED connection
# with the port as its local port, in this pod's own /proc/net/tcp and tcp6, is activity; the
# quiet time counts from the port's first LISTEN. After D quiet it stops the server as the
# deadline does, records the idle-stop verdict and leaves IDLE_STOP_MESSAGE as the container's
# termination message, which the auto-down controller reads to delete the Deployment (the pod's
# identity may not). The container the Deployment restarts then finds that verdict in the
# record and waits to be deleted without starting the server again.
IDLE_STOP_MESSAGE = "kinetic: idle-stop"
TCP_ESTABLISHED, TCP_LISTEN = "01", "0A"  # the kernel's include/net/tcp_states.h, in hex


def is_server():
    return bool(spec.get("serve"))


def port_use(port):
    # (listening, connections) of PORT in this network namespace's TCP tables.
    listening, connections = False, 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue  # no IPv6 here: its table is absent
        for line in lines:
            fields = line.split()
            if len(fields) < 4 or int(fields[1].rpartition(":")[2], 16) != port:
                continue
            listening = listening or fields[3] == TCP_LISTEN
            connections += fields[3] == TCP_ESTABLISHED
    return listening, connections


def watch_idle():
    idle_after = float((spec.get("serve") or {}).get("idle_stop_seconds") or 0)
    if idle_after <= 0:
        return
    port, last_active = int(spec["serve"]["port"]), [None]

    def look():
        listening, connections = port_use(port)
        now = time.time()
        if (listening and last_active[0] is None) or connections:
            last_active[0] = now
        if last_active[0] is not None and now - last_active[0] >= idle_after:
            idle_passed(idle_after)

    every(1.0, look)


def idle_passed(idle_after):
    if process["phase"] > 1 or process["idle"]:
        return
    process["idle"] = True
    say("no request for %s; stopping the server (--idle-stop)" % format_duration(idle_after))
    stop_child_gracefully()


def write_termination_message(message):
    # Kubernetes reads the container's terminationMessagePath (default /dev/termination-log)
    # into its status when it terminates; KINETIC_TERMINATION_LOG is where the fake kubelet,
    # which cannot mount that path, has it (docs/fakes.md).
    try:
        with open(env.get("KINETIC_TERMINATION_LOG") or "/dev/termination-log", "w") as f:
            f.write(message)
    except OSError as e:
        say("could not write the termination message: %s" % e.strerror)


def was_idle_stopped():
    try:
        record = json.loads(storage.read(results + "status.json"))
    except Exception:
        return False
    return record.get("state") == "cancelled" and record.get("error", "").endswith("(--idle-stop)")


def wait_to_be_deleted():
    # A restarted container of a server stopped for idleness: the server stays stopped until
    # the auto-down controller (or `serve stop`) deletes the Deployment; the record is the
    # idle-stopped pod's and stays as it is.
    process["phase"] = 2  # a signal ends the wait (on_signal), not a job
    write_termination_message(IDLE_STOP_MESSAGE)
    say("%s was stopped by --idle-stop; waiting to be deleted (`kinetic serve stop %s`)"
        % (job_id, job_id))
    hold_over.wait()
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(0)


# ---- context ------------------------------------------------------------------------------


def touch(uri, what):
    # The bucket's lifecycle counts a context's days from its last use (customTime), so a job
    # restarted weeks after it started (a preemption) still finds its context (and its data).
    try:
        storage.call("PATCH", object_path(uri), json.dumps({"customTime": now_text()}).encode(),
                     {"Content-Type": "application/json"})
    except Exception as e:
        say("could not mark the %s as in use (the download decides): %s" % (what, e))


def touch_context():
    touch(env["KINETIC_CONTEXT_URI"], "context")


def extract_safely(tar, dest, what):
    # As the CLI's unpacker (lib/pack/archive.cpp), whatever the image's Python and its tarfile
    # filter: names stay inside DEST (not absolute, no '..'); only files, directories, symlinks
    # and hard links to files already unpacked; nothing is written through a symlink; a symlink
    # may climb only as far as DEST; and once all exist, every symlink is resolved for real,
    # since links checked one by one can escape together (a -> x/.., then x -> .).
    def refuse(name, why):
        raise Failure(EXIT_NOT_RUN, "refusing to unpack the %s: %s %s" % (what, name, why))

    os.makedirs(dest, exist_ok=True)
    base = os.path.realpath(dest)

    def inside(path):
        return path == base or path.startswith(base + os.sep)

    # The data filter too where the image's tarfile has it (all is checked here either way).
    checked_too = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    links = []
    try:
        for m in tar:
            parts = [p for p in m.name.split("/") if p not in ("", ".")]
            if m.name.startswith("/") or ".." in parts:
                refuse(m.name, "has an absolute path or a '..' component")
            if not parts:
                continue
            if not (m.isfile() or m.isdir() or m.issym() or m.islnk()):
                refuse(m.name, "is a device, fifo or socket")
            for i in range(1, len(parts)):
                if os.path.islink(os.path.join(base, *parts[:i])):
                    refuse(m.name, "goes through the symlink " + "/".join(parts[:i]))
            path = os.path.join(base, *parts)
            if m.issym():
                stack = parts[:-1]
                if m.linkname.startswith("/"):
                    refuse(m.name, "is a symlink to an absolute path")
                for c in m.linkname.split("/"):
                    if c == "..":
                        if not stack:
                            refuse(m.name, "is a symlink pointing outside the destination")
                        stack.pop()
                    elif c not in ("", "."):
                        stack.append(c)
                links.append(path)
            elif m.islnk():
                target = os.path.realpath(os.path.join(base, m.linkname))
                if (m.linkname.startswith("/") or ".." in m.linkname.split("/")
                        or not inside(target) or not os.path.isfile(target)):
                    refuse(m.name, "is a hard link to something not unpacked here")
            else:
                m.mode &= 0o777
            if os.path.islink(path):
                os.unlink(path)
            try:
                tar.extract(m, base, **checked_too)
            except getattr(tarfile, "FilterError", ()) as e:
                refuse(m.name, "is refused by tarfile's data filter (%s)" % e)
    finally:
        # Refused half-way or not, no link that leads outside is left behind.
        escaping = [p for p in sorted(set(links))
                    if os.path.islink(p) and not inside(os.path.realpath(p))]
        for p in escaping:
            os.unlink(p)
    if escaping:
        refuse(os.path.relpath(escaping[0], base), "is a symlink resolving outside the destination")


def unpack(uri, want, dest, what, archive):
    # Downloads the archive at URI to ARCHIVE, checks its sha256 against WANT (what kinetic
    # staged: a changed archive never runs; None for data no kinetic staged, another job's
    # outputs) and unpacks it safely into DEST.
    download(uri, archive)
    digest = hashlib.sha256()
    with open(archive, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    checked = want is not None
    got, want = digest.hexdigest(), (want or "").lower()
    if checked and got != want:
        raise Failure(EXIT_NOT_RUN, "%s checksum mismatch: %s has sha256 %s, expected %s; the "
                      "staged %s is corrupt: delete it and run again"
                      % (what, uri, got, want, what))
    with open(archive, "rb") as f:
        zstd = f.read(4) == b"(\xb5/\xfd"
    decompressor = None
    try:
        if zstd and shutil.which("zstd"):
            decompressor = subprocess.Popen(["zstd", "-dcq", archive], stdout=subprocess.PIPE)
            tar = tarfile.open(fileobj=decompressor.stdout, mode="r|")
        elif zstd and sys.version_info < (3, 14):
            raise Failure(EXIT_NOT_RUN, "the %s is tar.zst but the image has neither the zstd tool "
                          "nor Python 3.14+; stage it as tar.gz" % what)
        else:
            tar = tarfile.open(archive)

        extract_safely(tar, dest, what)
        if decompressor and decompressor.wait():
            raise Failure(EXIT_NOT_RUN, "cannot decompress the %s (zstd exit %d)"
                          % (what, decompressor.returncode))
    except (tarfile.TarError, OSError) as e:
        raise Failure(EXIT_NOT_RUN, "cannot unpack the %s: %s" % (what, e))
    finally:
        if os.path.exists(archive):
            os.unlink(archive)


def unpack_context():
    unpack(env["KINETIC_CONTEXT_URI"], env.get("KINETIC_CONTEXT_SHA256", ""), context_dir,
           "context", work + "/context")


# ---- data (--data) ------------------------------------------------------------------------
# A local directory arrives as an archive staged like a context (staged_uri, staged_sha256 in
# the spec, whose own sha256 the Job carries) and is unpacked at DST. A gs:// source is the
# Cloud Storage FUSE volume the kubelet mounted: at DST when absolute, else under
# KINETIC_DATA_MOUNT_ROOT (lib/job/data_mount.h kDataMountRoot), which DST links to.
DATA_MOUNT_ROOT = env.get("KINETIC_DATA_MOUNT_ROOT", "/mnt/kinetic-data")


def place_data(cwd):
    mounts = spec.get("data", [])
    fetches = []
    for i, m in enumerate(mounts):
        target = m["target"]
        path = target if target.startswith("/") else os.path.join(cwd, target)
        if m.get("staged_uri"):
            def fetch(m=m, path=path, i=i):
                what = "data " + m["source"]
                touch(m["staged_uri"], what)
                unpack(m["staged_uri"], m.get("staged_sha256", ""), path, what,
                       "%s/data-%d" % (work, i))
            fetches.append(fetch)
        elif not target.startswith("/"):
            mounted = DATA_MOUNT_ROOT + "/" + target
            if not os.path.isdir(mounted):
                raise Failure(EXIT_NOT_RUN, "--data %s is not mounted at %s; is the Cloud "
                              "Storage FUSE CSI driver on? (`kinetic up` turns it on)"
                              % (m["source"], mounted))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.symlink(mounted, path)
        elif not os.path.isdir(target):
            raise Failure(EXIT_NOT_RUN, "--data %s is not mounted at %s; is the Cloud Storage "
                          "FUSE CSI driver on? (`kinetic up` turns it on)" % (m["source"], target))
    try:
        at_once(*fetches)
    except NETWORK_ERRORS as e:
        raise Failure(EXIT_NOT_RUN, "cannot fetch --data: %s" % e)


# ---- a pipeline step's inputs -------------------------------------------------------------
# The outputs of each step this one needs (spec "inputs": docs/pipelines.md), as their jobs
# left them in the bucket, unpacked into KINETIC_INPUT_DIR/NAME/ before the job starts: bucket
# to bucket, never through the laptop. They are this pod's own copy, so a step that writes into
# its inputs changes nothing another step or the cache sees.
input_dir = work + "/inputs"


def place_inputs():
    inputs = spec.get("inputs", [])
    if not inputs:
        return
    env["KINETIC_INPUT_DIR"] = input_dir
    fetches = []
    for i, item in enumerate(inputs):
        name, location = item.get("name", ""), item.get("location", "")
        if not name or "/" in name or name in (".", ".."):
            raise Failure(EXIT_NOT_RUN,
                          "the spec names an input %r, which is not a step name" % name)
        if not location.startswith("gs://"):
            raise Failure(EXIT_NOT_RUN, "the outputs of step %s are at %s, which this pod cannot "
                          "read; run the pipeline on one backend" % (name, location))

        def fetch(name=name, location=location, i=i):
            unpack(location, None, os.path.join(input_dir, name), "outputs of step " + name,
                   "%s/input-%d" % (work, i))
        fetches.append(fetch)
    os.makedirs(input_dir, exist_ok=True)
    try:
        at_once(*fetches)
    except NETWORK_ERRORS as e:
        raise Failure(EXIT_NOT_RUN, "cannot fetch the inputs: %s" % e)


# ---- running the job ----------------------------------------------------------------------

# The end of what the last command wrote to stderr, where the cause of a failure is found.
TAIL_BYTES = 8192
CAUSE_MAX = 300
stderr_tail = bytearray()


def meaningful_lines(data):
    lines = []
    for line in data.decode("utf-8", "replace").split("\n"):
        # A progress bar's carriage returns: what is left after the last one is what shows.
        if "\r" in line.rstrip("\r"):
            line = line.rstrip("\r").rsplit("\r", 1)[1]
        line = line.rstrip(" \t\r")
        if line and not line.startswith("kinetic: "):
            lines.append(line)
    return lines


def clip(line):
    line = line.lstrip(" \t")
    data = line.encode("utf-8")
    if len(data) <= CAUSE_MAX:
        return line
    return data[:CAUSE_MAX - 3].decode("utf-8", "ignore") + "..."


def failure_cause(data):
    # The cause of a failure in the job's own words: the same rule as
    # lib/backend/failure_cause.h, held to the same cases (tests/golden/failure_causes.json).
    lines = meaningful_lines(data)
    if not lines:
        return ""
    header = "Traceback (most recent call last):"
    if header in lines:
        last = len(lines) - 1 - lines[::-1].index(header)
        for line in lines[last + 1:]:
            if not line.startswith((" ", "\t")):
                return clip(line)
    thrown = "terminate called after throwing an instance of '"
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith(thrown):
            kind = lines[i][len(thrown):]
            kind = kind[:-1] if kind.endswith("'") else kind
            if i + 1 < len(lines) and "what():" in lines[i + 1]:
                message = lines[i + 1].split("what():", 1)[1].lstrip(" ")
                return clip(kind + ": " + message)
            return clip("uncaught " + kind)
    return clip(lines[-1])


def compile_error(data):
    for line in meaningful_lines(data):
        if ": error: " in line or ": fatal error: " in line:
            return clip(line)
    return failure_cause(data)


def run(command, cwd, record_output, is_job=False, pass_fds=()):
    try:
        child = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE if record_output else None,
                                 stderr=subprocess.PIPE if record_output else None,
                                 start_new_session=True, pass_fds=pass_fds)
    except OSError as e:
        code = EXIT_NOT_FOUND if isinstance(e, FileNotFoundError) else EXIT_NOT_RUN
        raise Failure(code, "cannot start %s: %s" % (command[0], e.strerror))
    finally:
        # The child's copies are its own: the pipe ends when the child does.
        for fd in pass_fds:
            os.close(fd)
    process["child"] = child
    if is_job:
        with open(JOB_PID_FILE, "w") as f:
            f.write(str(child.pid))
    del stderr_tail[:]
    if process["signal"]:
        signal_group(process["signal"])
    elif process["timed_out"]:
        signal_group(signal.SIGTERM)
    if record_output:
        # stdout to stdout and stderr to stderr, each chunk at once (the container's log stays
        # live), and both into the attempt's log in the order they came.
        streams = {child.stdout.fileno(): sys.stdout.buffer, child.stderr.fileno(): sys.stderr.buffer}
        with selectors.DefaultSelector() as selector:
            for fd in streams:
                selector.register(fd, selectors.EVENT_READ)
            while streams:
                for key, _ in selector.select():
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        selector.unregister(key.fd)
                        del streams[key.fd]
                        continue
                    streams[key.fd].write(chunk)
                    streams[key.fd].flush()
                    log.add(chunk, key.fd == child.stderr.fileno())
                    if key.fd == child.stderr.fileno():
                        stderr_tail.extend(chunk)
                        del stderr_tail[:-TAIL_BYTES]
        child.stdout.close()
        child.stderr.close()
    code = child.wait()
    if is_job:
        try:
            os.unlink(JOB_PID_FILE)
        except OSError:
            pass
    signal_group(signal.SIGKILL)  # what the job left in its group goes with it
    process["child"] = None
    return code


def load_spec():
    uri, path = env["KINETIC_SPEC_URI"], work + "/spec.json"
    download(uri, path)
    with open(path, "rb") as f:
        data = f.read()
    # The spec says what runs (file, args, environment): whoever can write the bucket but not
    # the Job must not be able to change it.
    got, want = hashlib.sha256(data).hexdigest(), env.get("KINETIC_SPEC_SHA256", "").lower()
    if got != want:
        raise Failure(EXIT_NOT_RUN, "spec checksum mismatch: %s has sha256 %s, expected %s; it was "
                      "changed after kinetic wrote it: run the job again" % (uri, got, want))
    spec.update(json.loads(data))


# ---- a function job (`run --function`, docs/python.md) ----------------------------------------
# The call and the runner's source lie beside the spec (jobs/ID/function.pkl, function_runner.py);
# each must have the sha256 the spec records, as the context must.
def fetch_checked(name, want):
    where = env["KINETIC_SPEC_URI"].rsplit("/", 1)[0] + "/"
    path = work + "/" + name
    download(where + name, path)
    with open(path, "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    if got != want.lower():
        raise Failure(EXIT_NOT_RUN, "%s checksum mismatch: %s%s has sha256 %s, expected %s; it "
                      "was changed after kinetic wrote it: run the job again"
                      % (name, where, name, got, want))
    return path


def fetch_function():
    function = spec.get("function") or {}
    paths = {}
    for name, key in (("function.pkl", "sha256"), ("function_runner.py", "runner_sha256")):
        paths[name] = fetch_checked(name, function.get(key, ""))
    return ["python3", "-u", paths["function_runner.py"], paths["function.pkl"], context_dir]


# ---- `run --debug` (lib/job/debug_spec.h, docs/serving.md) ----------------------------------
# Host 0 starts the job's Python under the debug launcher (beside the spec, checked as the
# function runner is), which waits for a debugger; the slice's other hosts wait until host 0's
# launcher lets go (a debugger attached, or its wait ended), so that none of them starts the
# distributed runtime alone. Host 0 says so with results/debug-released-N (N: the attempt).
def debug_release_uri():
    return env["KINETIC_RESULTS_URI"].rstrip("/") + "/debug-released-%d" % attempt["number"]


def release_other_hosts(fd):
    # One byte once the wait is over; nothing (the end of the pipe) when the launcher died first:
    # either way the other hosts go on.
    try:
        os.read(fd, 1)
    finally:
        os.close(fd)
    try:
        storage.write(debug_release_uri(), b"", "text/plain")
    except Exception as e:
        say("could not tell the slice's other hosts that host 0's debugger wait is over: %s" % e)


def under_debugger(command, debug):
    launcher = fetch_checked("debug_launcher.py", debug.get("launcher_sha256", ""))
    read_end, write_end = os.pipe()
    threading.Thread(target=release_other_hosts, args=(read_end,), daemon=True).start()
    return ["python3", "-u", launcher, str(debug.get("port", 5678)),
            str(debug.get("wait_seconds", 600)), debug.get("remote_root", ""), context_dir,
            str(write_end), "--"] + command[2:], (write_end,)


def wait_for_host_zero(debug):
    # The leader's wait plus a minute for its release to reach the bucket.
    deadline = time.time() + float(debug.get("wait_seconds", 600)) + 60
    say("waiting for host 0's debugger (up to %ds)" % (deadline - time.time()))
    tries = 0
    while not storage.exists(debug_release_uri()):
        if process["signal"] or process["timed_out"]:
            return  # run() stops the job at once, as the stop says
        if time.time() > deadline:
            raise Failure(EXIT_NOT_RUN, "host 0 never ended its wait for a debugger (it did not "
                          "start, or failed first): see `kinetic logs %s --all-hosts`" % job_id)
        nap(min(tries, 1))
        tries += 1


def run_job():
    # The first attempt (the common case) claims number 1 outright, so the spec, the claim, the
    # context's last-use mark and its download go at once: one round trip instead of five. Only
    # a later attempt reads the history, and only it can have checkpoints to resume from.
    first = {"claimed": False}

    def claim_first():
        first["claimed"] = try_claim(1)

    try:
        at_once(load_spec, claim_first, touch_context, unpack_context)
    finally:
        # What the spec says is in the status even when the context could not be fetched.
        status.update(file=spec.get("file", ""), args=spec.get("args", []),
                      accelerator=spec.get("accelerator", ""), created=spec.get("created", ""))
        if spec.get("labels"):
            status["labels"] = spec["labels"]
        if spec.get("slices", 1) > 1:
            status["slices"] = spec["slices"]
    for variable in spec.get("env", []):
        env.setdefault(variable["name"], variable["value"])

    history = []
    if not first["claimed"] and is_server() and was_idle_stopped():
        wait_to_be_deleted()
    if not first["claimed"]:
        history = earlier_attempts()
        claim_attempt(history)
    status["attempts"] = attempt["number"]
    status["attempt_history"] = [history_entry(r) for r in history]
    watch_deadline(history)
    limit = int(spec.get("max_preemptions", 10))
    times = sum(1 for r in history if preempted(r))
    if times > limit and not is_server():
        process["run_over"] = True
        raise Failure(EXIT_RUN_OVER, "preempted %d time%s (--max-preemptions %d)"
                      % (times, "" if times == 1 else "s", limit))

    try:
        if history:
            fetch_checkpoints()
    except NETWORK_ERRORS as e:
        raise Failure(EXIT_NOT_RUN,
                      "cannot fetch the checkpoints in %scheckpoints/: %s" % (results, e))

    job_file = os.path.join(context_dir, spec["file"])
    cwd = os.path.join(context_dir, spec.get("workdir") or "")
    if not os.path.isdir(cwd):
        raise Failure(EXIT_NOT_FOUND,
                      "the working directory %s is not in the context" % spec["workdir"])
    kind = spec.get("kind")
    if kind != "function" and not os.path.isfile(job_file):
        raise Failure(EXIT_NOT_FOUND, "%s is not in the context" % spec["file"])
    place_data(cwd)
    place_inputs()
    function_command = fetch_function() if kind == "function" else None

    if process["timed_out"]:
        # The time ran out while the job was being set up.
        raise Failure(EXIT_TIMEOUT, deadline_error(spec))
    process["phase"] = 1
    every(float(spec.get("log_upload_seconds", 5)), log.flush)
    every(float(spec.get("checkpoint_sync_seconds", 10)), sync_checkpoints, sync_checkpoints_now)
    follower_timeout = float(spec.get("follower_timeout_seconds", 0))
    if follower_timeout > 0:
        every(min(30.0, follower_timeout / 3), check_follower)
    watch_idle()
    command = {"python": ["python3", "-u", job_file], "shell": ["bash", job_file]}.get(
        kind, [job_file])
    if function_command:
        command = function_command
    if kind == "cpp":
        command = [work + "/job"]
        code = run(["g++", "-O2", "-std=c++20", "-o", command[0], job_file], cwd, True)
        if code:
            cause = compile_error(bytes(stderr_tail))
            raise Failure(128 - code if code < 0 else code,
                          "compiling %s failed (g++ exit %d)%s"
                          % (spec["file"], code, ": " + cause if cause else ""))
    debug, pass_fds = spec.get("debug"), ()
    if debug and kind in ("python", "function"):
        if host_index in ("", "0"):
            command, pass_fds = under_debugger(command, debug)
        else:
            wait_for_host_zero(debug)
    code = run(command + spec.get("args", []), cwd, True, is_job=True, pass_fds=pass_fds)
    exit_code = 128 - code if code < 0 else code
    if code < 0:
        error = "job killed by " + signal.Signals(-code).name
    else:
        # The job's own last error line says more than its exit code.
        error = (failure_cause(bytes(stderr_tail)) or "job exited with code %d" % code
                 if code else "")
    status.update(state="failed" if code else "succeeded", exit_code=exit_code, error=error)


try:
    run_job()
except Stop:
    pass
except Failure as e:
    status.update(exit_code=e.args[0], error=e.args[1])
except Exception as e:
    status.update(error="%s: %s" % (type(e).__name__, e))


def how_stopped():
    # What stopped this attempt (stopped_verdict's STOP), None when nothing did. The run's
    # deadline decides over the rest (its start found no time left, or the timer stopped the
    # job), and a signal at the deadline is the deadline's (a single-host Job's own deadline
    # reaches the pod as SIGTERM); nobody following decides over a signal.
    if process["timed_out"]:
        return "deadline"
    if process["abandoned"]:
        return "abandoned"
    if process["idle"]:
        return "idle"
    if process["signal"]:
        deadline = process["deadline"] if "deadline" in process else run_deadline()
        if deadline is not None and time.time() >= deadline - 5:
            return "deadline"
        return signal.Signals(process["signal"]).name
    return None


job_ran = process["phase"] == 1
process["phase"] = 2
if process["signal"] and not attempt["number"] and (is_server() or was_idle_stopped()):
    # A server's pod stopped before it had an attempt (its Deployment deleted as it started, an
    # idle-stopped one's restart among them, maybe before its spec was read): the record is the
    # earlier pods', left as it is.
    sys.exit(128 + process["signal"])
stop_all_workers()
process["stop"] = how_stopped()
if process["timed_out"] or process["abandoned"] or process["idle"]:
    process["run_over"] = True  # no further attempt
if process["stop"]:
    status.update(zip(("state", "exit_code", "error"), stopped_verdict(process["stop"], spec)))
if status["error"] and (process["stop"] or "").startswith("SIG"):
    # From inside the pod a cancel, a node's preemption and a queue's eviction are the same
    # SIGTERM: "cancelled" here would be wrong twice out of three. The line says what happened
    # to this attempt; the follower, which reads the cluster, says which it was.
    say("%s stopped by %s" % ("attempt %d" % attempt["number"] if attempt["number"] else "the job",
                              process["stop"]))
elif status["error"]:
    say(status["error"])


def keep_going(what, fn):
    # An upload failure is reported, and recorded when nothing else went wrong.
    try:
        fn()
    except Exception as e:
        say("uploading %s failed: %s" % (what, e))
        status["error"] = status["error"] or "uploading %s failed: %s" % (what, e)


def upload_outputs():
    unsafe = []

    def keep(info):
        if info.issym():
            target = os.path.normpath(os.path.join(os.path.dirname(info.name), info.linkname))
            if info.linkname.startswith("/") or target == ".." or target.startswith("../"):
                unsafe.append("%s -> %s" % (info.name[2:] if info.name.startswith("./")
                                            else info.name, info.linkname))
                return None
        return info if info.isfile() or info.isdir() or info.issym() else None

    with tarfile.open(work + "/outputs.tar.gz", "w:gz", compresslevel=3) as tar:
        # Hard links are stored as files: nothing links outside the archive.
        tar.inodes = type("NoInodes", (dict,), {"__contains__": lambda *a: False})()
        tar.add(output_dir, ".", filter=keep)
    if unsafe:
        say("left out of the outputs: unsafe symlinks " + ", ".join(unsafe))
    upload(results + "outputs.tar.gz", work + "/outputs.tar.gz", "application/gzip")


finished = now_text()
status.update(finished=finished, duration_seconds=round(time.time() - started_at, 3))


def upload_status():
    with open(work + "/status.json", "w") as f:
        json.dump(status, f)
    upload(results + "status.json", work + "/status.json", "application/json")


def record_this_attempt():
    record_attempt(attempt_record(status["state"], status["exit_code"], status["error"], finished))


def final_verdict():
    # (state, exit code, error) when this attempt's verdict is the run's, None when another
    # attempt may follow or the pod cannot tell. A cancel and a preemption both arrive as
    # SIGTERM, so a signal counts only at the deadline (how_stopped; kinetic itself tells the
    # hooks of a cancel); a failure only with no retry left.
    state, exit_code, error = status["state"], status["exit_code"], status["error"]
    if is_server() and process["stop"] != "idle":
        return None  # the Deployment restarts a server's pod whatever ended it
    if process["stop"] not in (None, "deadline", "abandoned", "idle") and not process["run_over"]:
        return None
    if state == "failed" and not process["run_over"]:
        failures = sum(1 for r in status.get("attempt_history", []) if r.get("state") == "failed")
        if max(failures, 1) <= int(spec.get("retries", 0)):
            return None
    return state, exit_code, error


# The record's last pieces go at once (one round trip): the checkpoints, the outputs, the
# attempt's last log part and record, and status.json, which already holds this attempt's entry.
# An upload that fails changes the verdict (its error), so the two records are sent again.
if attempt["number"]:
    status.setdefault("attempt_history", []).append(history_entry(attempt_record(
        status["state"], status["exit_code"], status["error"], finished), current=True))
# --hold-on-failure: a single-host run that failed for good keeps its pod (and node) up for
# `kinetic exec` until the hold ends or a SIGTERM (`kinetic cancel`) lets it go. status.json says
# until when, so `status` and a foreground kinetic know the pod is held, not running.
run_verdict = final_verdict()
hold = 0
if run_verdict and run_verdict[0] == "failed" and job_ran:  # kinetic refuses a hold on a slice
    hold = int(spec.get("hold_on_failure_seconds") or 0)
if hold > 0:
    status["held_until"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + hold))
# Whether this record is the run's verdict (no attempt follows): a reader then believes it over
# a Job that has not caught up yet (backend/gke get: the log has ended, the Job is still active).
status["final"] = run_verdict is not None
verdict = status["error"]
uploads = []
if job_ran:
    uploads.append(lambda: keep_going("checkpoints", lambda: sync_checkpoints(final=True)))
# An attempt whose job never ran (the preemption cap, a lost context) has nothing to add: it must
# not replace what an earlier attempt delivered.
if job_ran or attempt["number"] <= 1:
    uploads.append(lambda: keep_going("outputs", upload_outputs))
if attempt["number"]:
    uploads.append(lambda: keep_going("the log", lambda: log.flush(final=True)))
    uploads.append(lambda: keep_going("the attempt record", record_this_attempt))
uploads.append(lambda: keep_going("status.json", upload_status))
at_once(*uploads)
if status["error"] != verdict:
    if attempt["number"]:
        status["attempt_history"][-1]["error"] = status["error"]
        keep_going("the attempt record", record_this_attempt)
    keep_going("status.json", upload_status)
if not hold:
    shutil.rmtree(work, ignore_errors=True)  # a held pod's exec needs the job's directory


def final_facts(verdict):
    # What to tell --notify's hooks: host 0 speaks for a slice.
    if not notify_urls or host_index not in ("", "0") or not verdict:
        return None
    state, exit_code, error = verdict
    price = float(spec.get("price_per_hour") or 0)
    duration = float(status.get("duration_seconds") or 0)
    return dict(job=job_id, state=state, exit_code=exit_code, error=error,
                attempts=max(1, int(status.get("attempts") or 1)), duration_seconds=duration,
                accelerator=spec.get("accelerator", ""), backend="gke",
                cost_usd=price * duration / 3600 if price > 0 else None, outputs=results)


class RefuseRedirects(urllib.request.HTTPRedirectHandler):
    # A hook's 3xx is a failed notify: following it would send the summary (and, across
    # https->http, the request) wherever the answer points.
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


NOTIFY_OPENER = urllib.request.build_opener(RefuseRedirects)


def post_notifications(payload):
    # Retried with back-off on 408/429/5xx and dropped connections; a hook that still fails is a
    # line in the log, never the job's exit code.
    body = json.dumps(payload).encode("utf-8")
    for url in notify_urls:
        for attempt in range(4):
            problem = ""
            try:
                request = urllib.request.Request(url, data=body, method="POST", headers={
                    "Content-Type": "application/json", "User-Agent": "kinetic-bootstrap"})
                with NOTIFY_OPENER.open(request, timeout=20) as answer:
                    answer.read()
                break
            except urllib.error.HTTPError as e:
                problem = "HTTP %d" % e.code
                if e.code not in RETRY_CODES:
                    attempt = 3
            except (NETWORK_ERRORS + (ValueError,)):
                problem = "the request failed"
            if attempt == 3:
                say("could not notify %s: %s" % (redact_url(url), problem))
                break
            nap(attempt)


# Before the log's last lines: a foreground kinetic deletes the Job once it has read them.
try:
    facts = final_facts(final_verdict())  # after the uploads: their failure is its error
    if facts:
        post_notifications(notify_payload(facts))
except Exception as e:
    say("could not notify: %s" % type(e).__name__)  # its text could hold a URL
if hold > 0:
    say("holding this pod %s for `kinetic exec %s -it -- bash` (`kinetic cancel %s` ends it "
        "sooner)" % (format_duration(hold), job_id, job_id))
# The container's exit code, which the Job and the JobSet act on (docs/run-record.md), is not
# always the record's. A run past its deadline, or that nobody follows, is over: status.json
# says timeout (124) or cancelled (130), the container exits EXIT_RUN_OVER so that neither the Job
# nor the JobSet starts another attempt. A signal ends it as the signal's (128+N): SIGTERM's,
# EXIT_STOPPED, is a stop from outside (a Kueue eviction suspends the Job and deletes its pod),
# which a single-host Job's podFailurePolicy ignores. 197 is kinetic's "the run is over" (no
# further attempt) and 143 "stopped from outside": a job's own 197 or 143 must not mean either.
if process["timed_out"] or process["abandoned"]:
    code = EXIT_RUN_OVER
elif process["signal"]:
    code = 128 + process["signal"]
else:
    code = status["exit_code"]
    code = 1 if code == EXIT_RUN_OVER and not process["run_over"] else code
    code = 1 if code == EXIT_STOPPED else code
if process["idle"]:
    write_termination_message(IDLE_STOP_MESSAGE)
# The log's last line on each stream says the log is complete: each stream is a pipe, read in
# order, so a follower that has read both lines has read everything, and the uploads are over.
# It need not ask the cluster whether the container ended, nor read the log once more (issue
# #14; lib/backend/gke/log_end.h). The spec's sha256 keeps a line the job prints from passing.
for name, stream in (("stdout", sys.stdout), ("stderr", sys.stderr)):
    stream.write("kinetic: end of the log on %s, exit %d%s, spec %s\n"
                 % (name, code, ", held" if hold > 0 else "", env.get("KINETIC_SPEC_SHA256", "")))
    stream.flush()
if hold > 0:
    # After the log's end (the follower has the verdict): held until the time passes or a
    # SIGTERM (on_signal) lets it go; then the record says it is no longer held. Meanwhile a
    # stand-in for the job, in its directory with its environment, is what `kinetic exec` reads
    # them from (JOB_PID_FILE, as while the job ran: backend/gke/exec_pod.h).
    standin = None
    try:
        standin = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(%d)" % hold],
            cwd=os.path.join(context_dir, spec.get("workdir") or ""), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        with open(JOB_PID_FILE, "w") as f:
            f.write(str(standin.pid))
    except OSError as e:
        say("exec will start in the container's directory: %s" % e.strerror)
    hold_over.wait(hold)
    if standin:
        standin.kill()
        standin.wait()
    del status["held_until"]
    keep_going("status.json", upload_status)
    shutil.rmtree(work, ignore_errors=True)
sys.exit(code)
