"""Jobs after submission: ``JobStatus``, ``JobHandle``, ``attach`` and ``list_jobs``.

A handle is a job id plus the kinetic context flags it was submitted with; every method runs a
kinetic command (`status`, `logs`, `collect`, `cancel`, `cleanup`), so a handle rebuilt in
another process (``attach``) works the same.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import shutil
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from . import _engine, _outputs, _result
from ._errors import KineticError

GROUP_LABEL = "kinetic.dev/group"
GROUP_INDEX_LABEL = "kinetic.dev/group-index"
GROUP_SIZE_LABEL = "kinetic.dev/group-size"


class JobStatus(enum.Enum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    NOT_FOUND = "NOT_FOUND"

    @property
    def is_terminal(self) -> bool:
        return self in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.NOT_FOUND)


_STATES = {"pending": JobStatus.PENDING, "running": JobStatus.RUNNING,
           "succeeded": JobStatus.SUCCEEDED, "failed": JobStatus.FAILED,
           "timeout": JobStatus.FAILED,
           "cancelled": JobStatus.FAILED,
           "lost": JobStatus.FAILED}


def status_of(record: Dict[str, Any]) -> JobStatus:
    """A `kinetic status -o json` job record's state as a JobStatus (a state this package does
    not know counts as running until the record has an exit code)."""
    state = str(record.get("state", ""))
    if state in _STATES:
        return _STATES[state]
    code = record.get("exit_code")
    if code is None:
        return JobStatus.RUNNING
    return JobStatus.SUCCEEDED if code == 0 else JobStatus.FAILED


def job_records(document: Any) -> List[Dict[str, Any]]:
    """The job records of `kinetic status -o json`: a JobList ("jobs"), a List ("items") or
    one Job."""
    if not isinstance(document, dict):
        return []
    for key in ("jobs", "items"):
        if isinstance(document.get(key), list):
            return [r for r in document[key] if isinstance(r, dict)]
    return [document] if document.get("id") else []


def _no_such_job(done: _engine.Completed) -> bool:
    return done.returncode == 1 and "no job" in "".join(done.stderr_tail)


@dataclass
class _Collected:
    result_blob: Optional[bytes]
    exit_code: int
    status: Dict[str, Any]
    stderr_tail: List[str]


def since_argument(since: Any) -> str:
    """``logs --since``'s text for a datetime, a timedelta or a string."""
    if isinstance(since, datetime.datetime):
        if since.tzinfo is not None:
            since = since.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return since.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(since, datetime.timedelta):
        seconds = int(since.total_seconds())
        if seconds < 0:
            raise ValueError(f"since={since!r} is in the future; pass a time back from now")
        return f"{seconds}s"
    if isinstance(since, str):
        return since
    raise TypeError("since must be a datetime, a timedelta or a string, "
                    f"not {type(since).__name__}")


@dataclass(eq=False)
class JobHandle:
    """A submitted job. JSON-serializable with ``to_dict``/``from_dict``."""
    job_id: str
    func_name: str = ""
    accelerator: str = ""
    created_at: str = ""
    output_dir: Optional[str] = None
    context: Optional[str] = None
    project: Optional[str] = None
    zone: Optional[str] = None
    cluster: Optional[str] = None
    namespace: Optional[str] = None
    backend: Optional[str] = None
    group_id: Optional[str] = None
    group_index: Optional[int] = None
    explicit_output: bool = False
    _collected: Optional[_Collected] = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __getstate__(self) -> Dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(**JobHandle.from_dict(state).to_dict())

    @property
    def display_name(self) -> str:
        return f"kinetic-{self.func_name}-{self.job_id}"

    def _flags(self) -> _engine.GlobalFlags:
        return _engine.GlobalFlags(self.context, self.project, self.zone, self.cluster,
                                   self.namespace)

    def _cmd(self, *args: str) -> List[str]:
        return _engine.command(self._flags(), *args)

    def to_dict(self) -> Dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if not f.name.startswith("_") and getattr(self, f.name) is not None}

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "JobHandle":
        names = {f.name for f in dataclasses.fields(cls) if not f.name.startswith("_")}
        return cls(**{k: v for k, v in d.items() if k in names})

    @classmethod
    def from_record(cls, record: Dict[str, Any], flags: _engine.GlobalFlags,
                    output_dir: Optional[str] = None) -> "JobHandle":
        """A handle from a `kinetic status -o json` record."""
        labels = record.get("labels") or {}
        index = labels.get(GROUP_INDEX_LABEL)
        recorded = record.get("output_dir") or ""
        # A synchronous call delivered into a private temporary directory, gone since.
        if not output_dir and recorded and "kinetic-call-" not in recorded:
            output_dir = recorded
        return cls(job_id=record["id"], func_name=str(record.get("file", "")),
                   accelerator=str(record.get("accelerator", "")),
                   created_at=str(record.get("created", "")),
                   output_dir=output_dir or _outputs.default_dir(record["id"]),
                   context=flags.context, project=flags.project, zone=flags.zone,
                   cluster=flags.cluster, namespace=flags.namespace,
                   backend=record.get("backend"), group_id=labels.get(GROUP_LABEL),
                   group_index=int(index) if str(index or "").isdigit() else None,
                   explicit_output=bool(output_dir))

    def record(self) -> Optional[Dict[str, Any]]:
        """The job's `kinetic status JOB -o json` record, or None if kinetic has none."""
        done = _engine.run_captured(self._cmd("status", self.job_id, "-o", "json"))
        if _no_such_job(done):
            return None
        if done.returncode != 0:
            raise KineticError(f"kinetic status {self.job_id} failed: {done.error_line()}",
                               exit_code=done.returncode, job_id=self.job_id)
        records = job_records(json.loads(done.stdout))
        return records[0] if records else None

    def status(self) -> JobStatus:
        """PENDING, RUNNING, SUCCEEDED, FAILED (also timed out, cancelled, lost) or NOT_FOUND
        (no record: never existed, or cleaned up)."""
        record = self.record()
        return JobStatus.NOT_FOUND if record is None else status_of(record)

    def logs(self, follow: bool = False, since: Any = None) -> Optional[str]:
        """The job's log so far as one string (stdout and stderr interleaved as kinetic prints
        them); with ``follow``, streams it to sys.stdout/sys.stderr until the job ends and
        returns None. ``since`` keeps only what the job wrote from then on (``logs --since``):
        a ``datetime`` (naive: UTC), a ``timedelta`` back from now, or a string such as "10m"
        or "2026-11-27T09:30:00Z"."""
        extra = ("--since", since_argument(since)) if since is not None else ()
        if follow:
            done = _engine.run_read_only(self._cmd("logs", self.job_id, "-f", *extra))
            self._check(done, "logs -f")
            return None
        done = _engine.run_captured(self._cmd("logs", self.job_id, *extra), merge_stderr=True)
        self._check(done, "logs")
        return done.stdout

    def tail(self, n: int = 100) -> str:
        """The last ``n`` lines of the job's log."""
        done = _engine.run_captured(self._cmd("logs", self.job_id, "--tail", str(int(n))),
                                    merge_stderr=True)
        self._check(done, "logs --tail")
        return done.stdout

    def _check(self, done: _engine.Completed, what: str) -> None:
        if done.returncode != 0:
            line = done.error_line() or (done.stdout.strip().splitlines() or [""])[-1]
            raise KineticError(f"kinetic {what} {self.job_id} failed: {line}",
                               exit_code=done.returncode, job_id=self.job_id)

    def _collect(self, timeout: Optional[float]) -> _Collected:
        # Once per handle: the outcome is kept, so result() can be called again after cleanup.
        with self._lock:
            if self._collected is not None:
                return self._collected
            temp = tempfile.mkdtemp(prefix="kinetic-call-")
            out = f"{temp}/out"
            try:
                done = _engine.run_read_only(
                    self._cmd("collect", self.job_id, "--output", out), timeout=timeout,
                    rewrite_stderr=_outputs.summary_rewriter(out, lambda _: self.output_dir))
                collected = _Collected(_result.read_result_bytes(out), done.returncode,
                                       _result.load_status(out), list(done.stderr_tail))
                _outputs.finalize(out, self.output_dir, move_all=self.explicit_output)
            finally:
                shutil.rmtree(temp, ignore_errors=True)
            if collected.status or collected.result_blob is not None:
                self._collected = collected
            return collected

    def result(self, timeout: Optional[float] = None, cleanup: Optional[bool] = None,
               stream_logs: Optional[bool] = None, **_compat: Any) -> Any:
        """Waits for the job and returns the function's value, or raises its exception (with
        the remote traceback as ``__cause__``) or a KineticError subclass saying why there is
        none. ``timeout``: TimeoutError after that many seconds (the job keeps running).
        ``cleanup`` (default True): once the result has been read, `kinetic cleanup JOB`
        removes the job's record. ``stream_logs``: print the log while waiting."""
        if stream_logs and self._collected is None:
            _engine.run_read_only(self._cmd("logs", self.job_id, "-f"), timeout=timeout)
        collected = self._collect(timeout)
        record = _result.decode_result(collected.result_blob)
        try:
            return _result.outcome(record, collected.exit_code, job_id=self.job_id,
                                   status=collected.status, stderr_lines=collected.stderr_tail)
        finally:
            if (cleanup is None or cleanup) and record is not None:
                self._cleanup_quietly()

    def _cleanup_quietly(self) -> None:
        done = _engine.run_captured(self._cmd("cleanup", self.job_id))
        if done.returncode != 0 and not _no_such_job(done):
            warnings.warn(f"kinetic cleanup {self.job_id} failed: {done.error_line()}",
                          RuntimeWarning, stacklevel=3)

    def port_forward(self, remote: int, local: int = 0, host: int = 0):
        """A context manager forwarding a local port to port ``remote`` of the running job (of
        host ``host`` of a multi-host slice), as ``kinetic port-forward``; it yields the local
        port (``local``, or any free one when 0) and stops the forward when the block ends::

            with job.port_forward(6006) as port:
                webbrowser.open(f"http://127.0.0.1:{port}")  # TensorBoard on the TPU host
        """
        spec = f"{int(local)}:{int(remote)}" if local else f":{int(remote)}"
        argv = self._cmd("port-forward", self.job_id, spec, "--host", str(int(host)), "-o", "json")
        return _engine.forwarding(argv, self.job_id)

    def cancel(self, **_compat: Any) -> None:
        """Stops the job (`kinetic cancel JOB`) and returns once it has stopped."""
        done = _engine.run_captured(self._cmd("cancel", self.job_id))
        self._check(done, "cancel")

    def cleanup(self, k8s: bool = True, gcs: bool = True, **_compat: Any) -> None:
        """Removes the finished job's record and objects (`kinetic cleanup JOB`). kinetic has
        already removed a finished job's Kubernetes objects; ``k8s`` and ``gcs`` are accepted
        for compatibility (both False: nothing is done)."""
        if not (k8s or gcs):
            return
        done = _engine.run_captured(self._cmd("cleanup", self.job_id))
        if not _no_such_job(done):
            self._check(done, "cleanup")


def attach(job_id: str, project: Optional[str] = None, cluster: Optional[str] = None, *,
           zone: Optional[str] = None, namespace: Optional[str] = None,
           context: Optional[str] = None, output_dir: Optional[str] = None) -> JobHandle:
    """A handle for an existing job (from any process). KineticError if kinetic has no such
    job. Outputs of a later ``result()`` go to ``output_dir``, else where the job was told to
    deliver them, else ./kinetic-out/JOB."""
    flags = _engine.GlobalFlags(context, project, zone, cluster, namespace)
    probe = JobHandle(job_id=job_id, context=context, project=project, zone=zone,
                      cluster=cluster, namespace=namespace)
    record = probe.record()
    if record is None:
        raise KineticError(f"no job '{job_id}' (run `kinetic status` to list jobs)",
                           exit_code=1, job_id=job_id)
    return JobHandle.from_record(record, flags, output_dir)


def list_jobs(project: Optional[str] = None, zone: Optional[str] = None,
              cluster: Optional[str] = None, namespace: Optional[str] = None, *,
              context: Optional[str] = None, label: Optional[str] = None) -> List[JobHandle]:
    """Every job kinetic has a record of (newest first); ``label="K=V"`` filters by label."""
    flags = _engine.GlobalFlags(context, project, zone, cluster, namespace)
    return [JobHandle.from_record(r, flags) for r in _list_records(flags, label)]


def _list_records(flags: _engine.GlobalFlags, label: Optional[str]) -> List[Dict[str, Any]]:
    argv = _engine.command(flags, "status", "-o", "json") + (["-l", label] if label else [])
    done = _engine.run_captured(argv)
    if done.returncode != 0:
        raise KineticError(f"kinetic status failed: {done.error_line()}",
                           exit_code=done.returncode)
    records = [r for r in job_records(json.loads(done.stdout)) if r.get("id")]
    return sorted(records, key=lambda r: str(r.get("created", "")), reverse=True)
