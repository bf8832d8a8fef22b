"""Reading a job's outcome: OUT/.kinetic/result.pkl (written by lib/job/function_runner.py) and
OUT/status.json (written by kinetic), and turning it into a value or an exception."""

from __future__ import annotations

import json
import os
import pickle
from typing import Any, Dict, Iterable, Optional

from ._errors import (JobFailedError, KineticError, RemoteError, RemoteTraceback,
                      error_for_exit)

RESULT_RELPATH = os.path.join(".kinetic", "result.pkl")


class _Unavailable:
    """Stands in for a class or function that cannot be imported here, so that the rest of the
    result (the exception's type name, message and traceback) can still be read."""

    def __init__(self, *args, **kwargs):
        self.args = args

    def __setstate__(self, state):
        pass

    def __call__(self, *args, **kwargs):
        return _Unavailable(*args)


class _TolerantUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        try:
            return super().find_class(module, name)
        except (ImportError, AttributeError):
            return type(f"Unavailable[{module}.{name}]", (_Unavailable,), {})


def read_result_bytes(out_dir: str) -> Optional[bytes]:
    """OUT/.kinetic/result.pkl's bytes, or None when the job wrote none."""
    try:
        with open(os.path.join(out_dir, RESULT_RELPATH), "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def decode_result(blob: Optional[bytes], path: str = RESULT_RELPATH) -> Optional[Dict[str, Any]]:
    """The result record (a fresh copy on each call), or None for no result. A record naming a
    class that cannot be imported here is still read; the missing objects are placeholders
    (``unavailable`` True)."""
    if blob is None:
        return None
    try:
        record = pickle.loads(blob)
        unavailable = False
    except Exception as first:
        import io
        try:
            record = _TolerantUnpickler(io.BytesIO(blob)).load()
        except Exception:
            raise KineticError(f"the job's result {path} could not be read here: "
                               f"{type(first).__name__}: {first}")
        unavailable = True
    if not isinstance(record, dict) or record.get("kinetic_result") != 1:
        raise KineticError(f"{path} is not a kinetic result (version 1); use the kinetic binary "
                           "and Python package from the same release")
    record["unavailable"] = unavailable or _has_placeholder(record)
    return record


def _has_placeholder(record: Dict[str, Any]) -> bool:
    return isinstance(record.get("value"), _Unavailable) or \
        isinstance(record.get("exception"), _Unavailable)


def load_status(out_dir: str) -> Dict[str, Any]:
    try:
        with open(os.path.join(out_dir, "status.json"), encoding="utf-8") as f:
            status = json.load(f)
        return status if isinstance(status, dict) else {}
    except (OSError, ValueError):
        return {}


def attach_remote_traceback(exc: BaseException, tb: str, job_id: Optional[str]) -> BaseException:
    """The remote traceback becomes the exception's ``__cause__`` (printed first, as
    concurrent.futures does); on Python 3.11+ a short note names the job."""
    if tb:
        exc.__cause__ = RemoteTraceback(tb)
    if job_id and hasattr(exc, "add_note"):
        exc.add_note(f"Raised in kinetic job {job_id} (remote traceback above)")
    return exc


def _remote_error(record: Dict[str, Any], job_id: Optional[str], exit_code: int) -> RemoteError:
    kind = record.get("exception_type") or "Exception"
    message = record.get("message") or ""
    err = RemoteError(f"{kind}: {message}", remote_type=kind, remote_message=message,
                      remote_traceback=record.get("traceback") or "", exit_code=exit_code,
                      job_id=job_id)
    return attach_remote_traceback(err, record.get("traceback") or "", job_id)


def outcome(record: Optional[Dict[str, Any]], exit_code: int, *, job_id: Optional[str],
            status: Optional[Dict[str, Any]] = None, stderr_lines: Iterable[str] = ()) -> Any:
    """The call's value, or raises what the job's outcome calls for (see docs/python.md)."""
    status = status or {}
    if record is None:
        raise error_for_exit(exit_code, job_id=job_id, state=str(status.get("state", "")),
                             error=str(status.get("error", "") or ""), stderr_lines=stderr_lines,
                             delivered=bool(status))
    if record.get("ok"):
        if exit_code != 0:
            raise JobFailedError(f"job {job_id} exited {exit_code} after the function had "
                                 "returned", exit_code=exit_code, job_id=job_id)
        if record.get("unavailable"):
            raise KineticError(f"job {job_id} returned a value whose class cannot be imported "
                               "here; install the module it comes from, or return plain data",
                               exit_code=exit_code, job_id=job_id)
        return record.get("value")
    if record.get("phase") == "setup":
        raise error_for_exit(exit_code or 126, job_id=job_id, state="",
                             error=str(record.get("message") or ""))
    exc = record.get("exception")
    if isinstance(exc, BaseException) and not isinstance(exc, _Unavailable):
        raise attach_remote_traceback(exc, record.get("traceback") or "", job_id)
    raise _remote_error(record, job_id, exit_code)
