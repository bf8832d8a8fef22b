"""kinetic's exceptions, and how a job's outcome becomes one.

A job that ran the function and sent back a result needs no exception of ours: a value is
returned, and the function's own exception is re-raised as its own type. These classes say what
happened when there is no such result (or it cannot be read here).
"""

from __future__ import annotations

import re
from typing import Optional

# kinetic's exit codes (docs/architecture.md, "Collect").
EXIT_USAGE = 2
EXIT_TIMEOUT = 124
EXIT_KINETIC_FAILED = 125
EXIT_CANNOT_START = 126
EXIT_NOT_FOUND = 127
EXIT_INTERRUPTED = 130


class KineticError(Exception):
    """Base class of kinetic's errors.

    ``exit_code`` is kinetic's exit code when one is known (None otherwise) and ``job_id`` the
    job concerned (None when the job was never submitted, e.g. a usage error).
    """

    def __init__(self, message: str, *, exit_code: Optional[int] = None,
                 job_id: Optional[str] = None):
        super().__init__(message)
        self.exit_code = exit_code
        self.job_id = job_id


class JobTimeoutError(KineticError, TimeoutError):
    """The job was stopped at its deadline (exit 124): ``timeout=`` or ``max_cost=`` reached.

    Also a ``TimeoutError``. (``JobHandle.result(timeout=...)`` running out raises a plain
    ``TimeoutError`` instead: there the job keeps running.)
    """


class JobStartError(KineticError):
    """The job could not start (exit 126 or 127): an image or interpreter missing, a pod that
    cannot be scheduled, or the runner's setup failed (e.g. a Python or cloudpickle version
    mismatch, or a module the call needs is missing in the job). ``reason`` says which."""

    def __init__(self, message: str, *, reason: str = "", **kw):
        super().__init__(message, **kw)
        self.reason = reason


class JobCancelledError(KineticError):
    """The job was cancelled (exit 130): Ctrl-C, ``JobHandle.cancel()`` or ``kinetic cancel``."""


class JobLostError(KineticError):
    """kinetic lost track of the job (state "lost"): its process, pod or node vanished without
    leaving a result, e.g. the machine rebooted."""


class JobFailedError(KineticError):
    """The job failed without sending back a result, e.g. it was killed (out of memory) or
    crashed the interpreter; the job's log (``kinetic logs JOB``) says more."""


class RemoteError(KineticError):
    """The function raised an exception that cannot be rebuilt here (its class cannot be
    unpickled locally, or it could not be pickled in the job).

    ``remote_type`` is its qualified type name, ``remote_message`` its ``str()`` and
    ``remote_traceback`` the traceback as the job printed it.
    """

    def __init__(self, message: str, *, remote_type: str = "", remote_message: str = "",
                 remote_traceback: str = "", **kw):
        super().__init__(message, **kw)
        self.remote_type = remote_type
        self.remote_message = remote_message
        self.remote_traceback = remote_traceback


class RemoteTraceback(Exception):
    """Set as ``__cause__`` of a re-raised remote exception, so that a printed traceback shows
    the job's traceback first (as ``concurrent.futures.process`` does)."""

    def __init__(self, tb: str):
        super().__init__(tb)
        self.tb = tb

    def __str__(self) -> str:
        return '\n"""\n%s"""' % self.tb


def last_error_line(stderr_lines) -> str:
    """kinetic's last ``error: ...`` line (without the prefix), or ""."""
    for line in reversed(list(stderr_lines)):
        text = line.rstrip("\n")
        if text.startswith("error: "):
            return text[len("error: "):]
    return ""


def _job_words(job_id: Optional[str]) -> str:
    return "job " + job_id if job_id else "the job"


def error_for_exit(exit_code: int, *, job_id: Optional[str] = None, state: str = "",
                   error: str = "", stderr_lines=(), delivered: bool = True) -> KineticError:
    """The exception for a job that ended without a readable result.

    ``state`` and ``error`` come from the job's status.json (or ``kinetic status -o json``);
    ``stderr_lines`` are kinetic's last stderr lines, whose last ``error:`` line is the reason
    when the record has none. ``delivered`` False (no status.json came back) means kinetic
    itself failed, unless the exit code says more.
    """
    reason = error or last_error_line(stderr_lines)
    suffix = ": " + reason if reason else ""
    who = _job_words(job_id)
    kw = {"exit_code": exit_code, "job_id": job_id}
    if state == "lost":
        return JobLostError(f"{who} was lost{suffix}", **kw)
    if state == "cancelled" or exit_code == EXIT_INTERRUPTED:
        return JobCancelledError(f"{who} was cancelled{suffix}", **kw)
    if state == "timeout" or exit_code == EXIT_TIMEOUT:
        return JobTimeoutError(f"{who} was stopped at its deadline (timeout or max_cost)"
                               f"{suffix}", **kw)
    if exit_code in (EXIT_CANNOT_START, EXIT_NOT_FOUND):
        return JobStartError(f"{who} could not start (exit {exit_code}){suffix}",
                             reason=reason, **kw)
    if exit_code == EXIT_USAGE and reason.startswith("--python "):
        # The package passed --python: the caller's own version, which kinetic's images for
        # this accelerator lack. Said in the caller's terms.
        version, _, why = reason[len("--python "):].partition(": ")
        return KineticError(f"no kinetic image for this accelerator has Python {version} (the "
                            f"one calling): {why.split(';')[0]}; call from one of those, or pass "
                            f"container_image= an image with Python {version} and cloudpickle",
                            **kw)
    if not delivered or exit_code == EXIT_KINETIC_FAILED:
        return KineticError(f"kinetic failed (exit {exit_code}){suffix}", **kw)
    return JobFailedError(f"{who} failed (exit {exit_code}) without sending back a result"
                          f"{suffix}; see `kinetic logs {job_id}`", **kw)


_JOB_ID = re.compile(r"\bjob-[0-9a-f]{4,}\b")


def job_id_in(lines) -> Optional[str]:
    """The last job id named in kinetic's stderr lines (its summary line names it)."""
    for line in reversed(list(lines)):
        match = _JOB_ID.search(line)
        if match:
            return match.group(0)
    return None
