"""From a job's outcome (result record, exit code, status.json) to a value or an exception."""

import traceback

import pytest

import kinetic
from kinetic import _errors, _result


def _failure(exc, tb="Traceback (most recent call last):\n  File \"job.py\", line 3, in f\n"
                     "ValueError: boom\n", phase="call"):
    return {"kinetic_result": 1, "ok": False, "phase": phase, "value": None, "exception": exc,
            "exception_type": "builtins.ValueError" if exc is None else type(exc).__name__,
            "message": "boom", "traceback": tb, "unavailable": False}


def test_a_value_comes_back():
    record = {"kinetic_result": 1, "ok": True, "phase": "call", "value": [1, 2]}
    assert _result.outcome(record, 0, job_id="job-1") == [1, 2]


def test_the_remote_exception_is_raised_as_itself_with_the_remote_traceback():
    with pytest.raises(ValueError, match="boom") as info:
        _result.outcome(_failure(ValueError("boom")), 1, job_id="job-1")
    text = "".join(traceback.format_exception(info.type, info.value, info.tb))
    assert 'File "job.py", line 3, in f' in text
    assert isinstance(info.value.__cause__, _errors.RemoteTraceback)


def test_an_exception_that_did_not_travel_is_a_remote_error():
    with pytest.raises(kinetic.RemoteError) as info:
        _result.outcome(_failure(None), 1, job_id="job-1")
    assert info.value.remote_type == "builtins.ValueError"
    assert "ValueError: boom" in info.value.remote_traceback
    assert info.value.job_id == "job-1" and info.value.exit_code == 1


def test_a_setup_failure_is_a_start_error():
    record = _failure(RuntimeError("kinetic setup failed: Python 3.9 vs 3.11"), phase="setup")
    record["message"] = "kinetic setup failed: Python 3.9 vs 3.11"
    with pytest.raises(kinetic.JobStartError, match="Python 3.9") as info:
        _result.outcome(record, 126, job_id="job-1")
    assert info.value.exit_code == 126


@pytest.mark.parametrize("code,state,cls", [
    (124, "timeout", kinetic.JobTimeoutError),
    (126, "failed", kinetic.JobStartError),
    (127, "failed", kinetic.JobStartError),
    (130, "cancelled", kinetic.JobCancelledError),
    (143, "cancelled", kinetic.JobCancelledError),
    (125, "lost", kinetic.JobLostError),
    (137, "failed", kinetic.JobFailedError),
    (125, "failed", kinetic.KineticError),
])
def test_no_result_maps_exit_code_and_state(code, state, cls):
    status = {"id": "job-1", "state": state, "error": "Killed"}
    with pytest.raises(cls) as info:
        _result.outcome(None, code, job_id="job-1", status=status)
    assert type(info.value) is cls
    assert info.value.exit_code == code and info.value.job_id == "job-1"


def test_the_reason_comes_from_kinetics_last_error_line_when_nothing_was_delivered():
    lines = ["kinetic: packing\n", "error: no python3 on the PATH\n"]
    err = _errors.error_for_exit(127, job_id=None, stderr_lines=lines, delivered=False)
    assert isinstance(err, kinetic.JobStartError) and err.reason == "no python3 on the PATH"
    usage = _errors.error_for_exit(2, stderr_lines=["error: unknown accelerator 'x'\n"],
                                   delivered=False)
    assert type(usage) is kinetic.KineticError and "unknown accelerator" in str(usage)


def test_timeout_error_is_also_a_builtin_timeout_error():
    assert issubclass(kinetic.JobTimeoutError, TimeoutError)


def test_a_result_naming_a_class_missing_here_is_still_read(tmp_path):
    import pickle
    blob = pickle.dumps({"kinetic_result": 1, "ok": False, "phase": "call", "value": None,
                         "exception": ValueError("x"), "exception_type": "mod.Err",
                         "message": "x", "traceback": "tb\n"})
    blob = blob.replace(b"builtins", b"nomodxyz")  # the exception's class cannot be found here
    record = _result.decode_result(blob)
    assert record["unavailable"]
    with pytest.raises(kinetic.RemoteError, match="mod.Err: x"):
        _result.outcome(record, 1, job_id="job-1")


def test_since_takes_a_datetime_a_timedelta_or_a_string():
    import datetime
    from kinetic._jobs import since_argument
    utc = datetime.timezone.utc
    assert since_argument(datetime.datetime(2026, 11, 27, 9, 30)) == "2026-11-27T09:30:00Z"
    paris = datetime.timezone(datetime.timedelta(hours=1))
    assert since_argument(datetime.datetime(2026, 11, 27, 10, 30, tzinfo=paris)) == \
        "2026-11-27T09:30:00Z"
    assert since_argument(datetime.datetime(2026, 1, 1, tzinfo=utc)) == "2026-01-01T00:00:00Z"
    assert since_argument(datetime.timedelta(minutes=10)) == "600s"
    assert since_argument("2h") == "2h"
    with pytest.raises(ValueError, match="future"):
        since_argument(datetime.timedelta(seconds=-5))
    with pytest.raises(TypeError, match="since must be"):
        since_argument(3600)
