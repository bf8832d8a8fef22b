"""``run_async_map``: one job per input, as a group (``BatchHandle``).

Every child job carries the labels ``kinetic.dev/group=grp-…``, ``kinetic.dev/group-index=N``
and ``kinetic.dev/group-size=TOTAL``, so ``attach_batch`` rebuilds the group from
`kinetic status -l kinetic.dev/group=ID -o json` in any process. A driver thread submits at
most ``max_concurrent`` children at a time, resubmits failed ones (``retries``) and follows
their states with one `kinetic status -l` per poll (every 0.1 s at first, backing off to 2 s
while nothing changes). Submissions themselves run ``max_submitting`` at a time (one
`kinetic run --detach` each): a sweep of 100 inputs does not start 100 engines at once, nor wait
for 100 round trips to the cloud in a row.
"""

from __future__ import annotations

import collections
import keyword
import threading
import uuid
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from . import _engine
from ._errors import KineticError
from ._jobs import (GROUP_INDEX_LABEL, GROUP_LABEL, GROUP_SIZE_LABEL, JobHandle, JobStatus,
                    _list_records, status_of)

INPUT_MODES = ("auto", "single", "args", "kwargs")
# How many `kinetic run --detach` a batch runs at once by default: enough to hide the round trips
# of each, few enough that a sweep stays well under the cloud's write quotas (each engine also
# paces itself on 429s; docs/gcp-api.md "Rate limits").
MAX_SUBMITTING = 8
POLL_FIRST, POLL_MAX, POLL_GROWTH = 0.1, 2.0, 1.5


class BatchError(Exception):
    """Some children of a batch failed (``BatchHandle.results()`` without
    ``return_exceptions``). ``failures``: their JobHandles; ``partial_results``: the results in
    input order, None where failed; ``submission_failures``: index → the exception that kept
    that input from being submitted."""

    def __init__(self, group_id: str, failures: List[JobHandle], partial_results: List[Any],
                 submission_failures: Optional[Dict[int, Exception]] = None):
        self.group_id = group_id
        self.failures = [f for f in failures if f is not None]
        self.partial_results = partial_results
        self.submission_failures = dict(submission_failures or {})
        failed = len(self.failures) + len(self.submission_failures)
        super().__init__(f"Batch {group_id}: {failed} of {len(partial_results)} jobs failed")


def call_with_input(item: Any, input_mode: str) -> Tuple[tuple, dict]:
    """How one input becomes (args, kwargs), as the original maps them."""
    if input_mode == "single":
        return (item,), {}
    if input_mode == "args":
        if not isinstance(item, (list, tuple)):
            raise TypeError(f"input_mode='args' needs list or tuple items, not "
                            f"{type(item).__name__}")
        return tuple(item), {}
    if input_mode == "kwargs":
        if not isinstance(item, dict):
            raise TypeError(f"input_mode='kwargs' needs dict items, not {type(item).__name__}")
        return (), dict(item)
    if isinstance(item, dict) and item and all(
            isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k) for k in item):
        return (), dict(item)
    if isinstance(item, (list, tuple)):
        return tuple(item), {}
    return (item,), {}


def _check_map_args(remote: Any, items: List[Any], input_mode: str,
                    max_concurrent: Optional[int], retries: int, max_submitting: int) -> None:
    if not callable(getattr(remote, "_submit_child", None)):
        raise TypeError("run_async_map needs a @kinetic.run function")
    if max_concurrent is not None and max_concurrent < 1:
        raise ValueError(f"max_concurrent={max_concurrent}: give 1 or more, or None")
    if max_submitting < 1:
        raise ValueError(f"max_submitting={max_submitting}: give 1 or more")
    if retries < 0:
        raise ValueError(f"retries={retries}: give 0 or more")
    if input_mode not in INPUT_MODES:
        raise ValueError(f"input_mode={input_mode!r}: use one of {', '.join(INPUT_MODES)}")
    if not items:
        raise ValueError("run_async_map: inputs is empty")


def map_inputs(remote: Any, inputs: Iterable[Any], *, input_mode: str = "auto",
               max_concurrent: Optional[int] = 64, retries: int = 0, fail_fast: bool = False,
               cancel_running_on_fail: bool = False, name: Optional[str] = None,
               tags: Optional[Dict[str, str]] = None, project: Optional[str] = None,
               cluster: Optional[str] = None,
               max_submitting: int = MAX_SUBMITTING) -> "BatchHandle":
    """Submits one job per input and returns at once (or once all are submitted when
    ``max_concurrent`` is None and nothing needs a driver), ``max_submitting`` submissions at a
    time. ``project``/``cluster`` are accepted for compatibility: the decorator's flags apply."""
    del project, cluster
    items = list(inputs)
    _check_map_args(remote, items, input_mode, max_concurrent, retries, max_submitting)
    calls = [call_with_input(item, input_mode) for item in items]
    flags = getattr(remote, "_options", None) or getattr(remote, "_remote")._options
    batch = BatchHandle("grp-" + uuid.uuid4().hex[:8], [None] * len(items), name=name,
                        tags=tags, flags=flags.flags)
    batch._start(remote, calls, max_concurrent, retries, fail_fast, cancel_running_on_fail,
                 max_submitting)
    return batch


class BatchHandle:
    """A group of jobs from ``run_async_map`` (or ``attach_batch``). ``jobs`` is in input order;
    a slot is None until that input is submitted (or if it could not be)."""

    def __init__(self, group_id: str, jobs: List[Optional[JobHandle]], *,
                 name: Optional[str] = None, tags: Optional[Dict[str, str]] = None,
                 flags: Optional[_engine.GlobalFlags] = None):
        self.group_id = group_id
        self.name = name
        self.tags = dict(tags or {})
        self.jobs = jobs
        self._flags = flags or _engine.GlobalFlags()
        self._cond = threading.Condition()
        self._wake = threading.Event()
        self._final: Dict[int, JobStatus] = {}
        self._seen: set = set()
        self._submission_errors: Dict[int, Exception] = {}
        self._pending: collections.deque = collections.deque()
        self._calls: List[Tuple[tuple, dict]] = []
        self._attempts = [0] * len(jobs)
        self._remote: Any = None
        self._limit: Optional[int] = None
        self._submitting = MAX_SUBMITTING
        self._retries = 0
        self._fail_fast = self._cancel_on_fail = self._cancelled = False
        self._done = False
        self._fatal: Optional[BaseException] = None
        self._thread: Optional[threading.Thread] = None
        self._failures_cache: Optional[List[JobHandle]] = None

    def __repr__(self) -> str:
        return f"BatchHandle(group_id={self.group_id!r}, jobs={len(self.jobs)})"

    # -- submission and tracking ----------------------------------------------------------------

    def _start(self, remote: Any, calls: List[Tuple[tuple, dict]], limit: Optional[int],
               retries: int, fail_fast: bool, cancel_on_fail: bool, submitting: int) -> None:
        self._remote, self._calls, self._limit = remote, calls, limit
        self._submitting = submitting
        self._retries, self._fail_fast, self._cancel_on_fail = retries, fail_fast, cancel_on_fail
        self._pending.extend(range(len(calls)))
        needs_driver = limit is not None or retries > 0 or (fail_fast and cancel_on_fail)
        if not needs_driver:
            # As the original: everything is submitted before run_async_map returns.
            self._submit_all(self._pending)
            return
        # Not a daemon: the program waits until every input has been submitted.
        self._thread = threading.Thread(target=self._drive, name=f"kinetic-{self.group_id}")
        self._thread.start()

    def _labels(self, index: int) -> List[str]:
        return [f"{GROUP_LABEL}={self.group_id}", f"{GROUP_INDEX_LABEL}={index}",
                f"{GROUP_SIZE_LABEL}={len(self.jobs)}"]

    def _submit(self, index: int) -> None:
        args, kwargs = self._calls[index]
        self._attempts[index] += 1
        try:
            job = self._remote._submit_child(args, kwargs, self._labels(index))
        except Exception as e:
            with self._cond:
                self._submission_errors[index] = e
                if self._fail_fast:
                    self._drop_pending("fail_fast: an input could not be submitted")
                self._cond.notify_all()
            return
        job.group_id, job.group_index = self.group_id, index
        with self._cond:
            self.jobs[index] = job
            self._cond.notify_all()

    def _submit_all(self, queue: collections.deque) -> None:
        """Submits every index in QUEUE, ``self._submitting`` at a time; each worker takes the
        next index under the lock, so a fail_fast that empties the queue stops them all."""
        def worker() -> None:
            while True:
                with self._cond:
                    if not queue:
                        return
                    index = queue.popleft()
                self._submit(index)

        with self._cond:
            count = min(self._submitting, len(queue))
        if count <= 1:
            worker()
            return
        threads = [threading.Thread(target=worker, name=f"kinetic-{self.group_id}-submit-{n}")
                   for n in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _drop_pending(self, why: str) -> None:
        # Called with the lock held.
        while self._pending:
            self._submission_errors[self._pending.popleft()] = KineticError(
                f"not submitted: {why}")

    def _active(self) -> List[int]:
        return [i for i, job in enumerate(self.jobs) if job is not None and i not in self._final
                and i not in self._submission_errors]

    def _next_to_submit(self) -> collections.deque:
        with self._cond:
            room = len(self._pending) if self._limit is None else \
                max(0, self._limit - len(self._active()))
            return collections.deque(self._pending.popleft()
                                     for _ in range(min(room, len(self._pending))))

    def _drive(self) -> None:
        delay = POLL_FIRST
        try:
            while True:
                self._submit_all(self._next_to_submit())
                with self._cond:
                    if not self._pending and not self._active():
                        break
                changed = self._absorb(self._poll())
                delay = POLL_FIRST if changed else min(delay * POLL_GROWTH, POLL_MAX)
                if not changed:
                    self._wake.wait(delay)
                    self._wake.clear()
        except BaseException as e:  # surfaced by wait()/results()
            self._fatal = e
        finally:
            with self._cond:
                self._done = True
                self._cond.notify_all()

    def _poll(self) -> Dict[str, JobStatus]:
        records = _list_records(self._flags, f"{GROUP_LABEL}={self.group_id}")
        return {r["id"]: status_of(r) for r in records}

    def _absorb(self, statuses: Dict[str, JobStatus]) -> bool:
        """Marks ended children final (or queues a retry); True if anything changed."""
        changed, failed_now = False, False
        with self._cond:
            for index in self._active():
                job = self.jobs[index]
                status = statuses.get(job.job_id)
                if status is None:
                    if job.job_id not in self._seen:
                        continue  # not listed yet
                    status = JobStatus.NOT_FOUND
                self._seen.add(job.job_id)
                if not status.is_terminal:
                    continue
                changed = True
                if status != JobStatus.SUCCEEDED and self._may_retry(index):
                    self.jobs[index] = None
                    self._pending.append(index)
                    continue
                self._final[index] = status
                failed_now = failed_now or status != JobStatus.SUCCEEDED
            if failed_now and self._fail_fast:
                self._drop_pending("fail_fast: an earlier input failed")
            if changed:
                self._cond.notify_all()
        if failed_now and self._fail_fast and self._cancel_on_fail:
            self._cancel_jobs()
        return changed

    def _may_retry(self, index: int) -> bool:
        # An attached batch (no function to submit) never retries.
        return self._remote is not None and not self._cancelled and \
            self._attempts[index] <= self._retries

    def _ensure_tracking(self) -> None:
        with self._cond:
            if self._thread is None and not self._done:
                self._thread = threading.Thread(target=self._drive, daemon=True,
                                                name=f"kinetic-{self.group_id}")
                self._thread.start()

    def _raise_fatal(self) -> None:
        if self._fatal is not None:
            raise KineticError(f"batch {self.group_id}: following the jobs failed: "
                               f"{self._fatal}") from self._fatal

    # -- public API -----------------------------------------------------------------------------

    @property
    def submission_failures(self) -> Dict[int, Exception]:
        with self._cond:
            return dict(self._submission_errors)

    def statuses(self) -> List[Tuple[int, JobStatus]]:
        """(index, status) of every submitted child, asked of kinetic now."""
        current = self._poll()
        return [(i, current.get(job.job_id, JobStatus.NOT_FOUND))
                for i, job in enumerate(list(self.jobs)) if job is not None]

    def status_counts(self) -> Dict[str, int]:
        """How many children are in each status, e.g. {"RUNNING": 2, "SUCCEEDED": 1}."""
        return dict(collections.Counter(status.value for _, status in self.statuses()))

    def wait(self, *, timeout: Optional[float] = None) -> None:
        """Returns once every input has been submitted and every child has ended for good
        (retries included). TimeoutError after ``timeout`` seconds."""
        self._ensure_tracking()
        with self._cond:
            if not self._cond.wait_for(lambda: self._done, timeout):
                raise TimeoutError(f"batch {self.group_id} did not finish within {timeout}s")
        self._raise_fatal()

    def as_completed(self, *, poll_interval: Optional[float] = None,
                     timeout: Optional[float] = None) -> Iterator[JobHandle]:
        """Yields each child's handle once it has ended for good, in completion order, while
        submission may still go on. ``poll_interval`` is accepted for compatibility (kinetic
        polls adaptively)."""
        del poll_interval
        import time
        deadline = None if timeout is None else time.monotonic() + timeout
        self._ensure_tracking()
        yielded: set = set()
        while True:
            with self._cond:
                ready = sorted(set(self._final) - yielded)
                if not ready:
                    if self._done:
                        break
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise TimeoutError(f"batch {self.group_id}: not all jobs finished "
                                           f"within {timeout}s")
                    self._cond.wait(left)
                    continue
            for index in ready:
                yielded.add(index)
                yield self.jobs[index]
        self._raise_fatal()

    def results(self, *, timeout: Optional[float] = None, ordered: bool = True,
                cleanup: bool = True, return_exceptions: bool = False) -> List[Any]:
        """The children's values, in input order (``ordered``) or completion order. A failed
        child's exception is put in its place with ``return_exceptions``; otherwise any failure
        raises BatchError."""
        if ordered:
            self.wait(timeout=timeout)
            order = [i for i, job in enumerate(self.jobs) if job is not None]
        else:
            order = [job.group_index for job in self.as_completed(timeout=timeout)]
        values: Dict[int, Any] = {}
        failed: List[JobHandle] = []
        for index in order:
            try:
                values[index] = self.jobs[index].result(cleanup=cleanup)
            except Exception as e:  # a remote exception, or a KineticError
                values[index] = e
                failed.append(self.jobs[index])
        self._failures_cache = failed
        errors = self.submission_failures
        if ordered:
            values.update(errors)
            out = [values.get(i) for i in range(len(self.jobs))]
        else:
            out = [values[i] for i in order] + ([errors[i] for i in sorted(errors)]
                                                if return_exceptions else [])
        if return_exceptions:
            return out
        if failed or errors:
            partial = [None if isinstance(values.get(i), BaseException) else values.get(i)
                       for i in range(len(self.jobs))]
            raise BatchError(self.group_id, failed, partial, errors)
        return out

    def failures(self) -> List[JobHandle]:
        """The children whose result() failed in the last results(), else those FAILED now."""
        if self._failures_cache is not None:
            return list(self._failures_cache)
        return [self.jobs[i] for i, status in self.statuses() if status == JobStatus.FAILED]

    def cancel(self) -> None:
        """Submits nothing more and cancels the children still running."""
        with self._cond:
            self._cancelled = True
            self._drop_pending("the batch was cancelled")
        self._cancel_jobs()
        self._wake.set()

    def _cancel_jobs(self) -> None:
        with self._cond:
            ids = [self.jobs[i].job_id for i in self._active()]
        if ids:
            done = _engine.run_captured(_engine.command(self._flags, "cancel", *ids))
            if done.returncode != 0:
                raise KineticError(f"kinetic cancel failed: {done.error_line()}",
                                   exit_code=done.returncode)

    def cleanup(self, *, k8s: bool = True, gcs: bool = True) -> None:
        """Removes every child's record (`kinetic cleanup JOB...`); ``k8s``/``gcs`` as in
        JobHandle.cleanup."""
        if not (k8s or gcs):
            return
        for job in [j for j in self.jobs if j is not None]:
            job.cleanup()


def attach_batch(group_id: str, project: Optional[str] = None, cluster: Optional[str] = None,
                 poll_interval: float = 10.0, poll_timeout: Optional[float] = 1800.0, *,
                 context: Optional[str] = None, zone: Optional[str] = None,
                 namespace: Optional[str] = None) -> BatchHandle:
    """The BatchHandle of group ``group_id``, rebuilt from its jobs' labels (the newest job
    for each index, when one was retried). FileNotFoundError when no job has that group.
    ``poll_interval``/``poll_timeout`` are accepted for compatibility."""
    del poll_interval, poll_timeout
    flags = _engine.GlobalFlags(context, project, zone, cluster, namespace)
    records = _list_records(flags, f"{GROUP_LABEL}={group_id}")
    if not records:
        raise FileNotFoundError(f"no kinetic job has the label {GROUP_LABEL}={group_id} (run "
                                "`kinetic status` to list jobs)")
    handles = [JobHandle.from_record(r, flags) for r in records]  # newest first
    size = max([_size_label(r) for r in records] +
               [h.group_index + 1 for h in handles if h.group_index is not None])
    jobs: List[Optional[JobHandle]] = [None] * size
    for handle in handles:
        if handle.group_index is not None and jobs[handle.group_index] is None:
            jobs[handle.group_index] = handle
    return BatchHandle(group_id, jobs, flags=flags)


def _size_label(record: Dict[str, Any]) -> int:
    value = str((record.get("labels") or {}).get(GROUP_SIZE_LABEL, "0"))
    return int(value) if value.isdigit() else 0


__all__ = ["BatchError", "BatchHandle", "attach_batch", "call_with_input", "map_inputs"]
