"""run_async_map's input mapping and argument checks (no binary needed)."""

import threading
import types

import pytest

from kinetic._collections import MAX_SUBMITTING, BatchError, call_with_input, map_inputs
from kinetic._jobs import JobHandle


@pytest.mark.parametrize("item,expected", [
    ({"lr": 0.1, "epochs": 2}, ((), {"lr": 0.1, "epochs": 2})),
    ([1, 2], ((1, 2), {})),
    ((1,), ((1,), {})),
    (0.5, ((0.5,), {})),
    ({"not an identifier": 1}, (({"not an identifier": 1},), {})),
    ({"class": 1}, (({"class": 1},), {})),
    ({}, (({},), {})),
])
def test_auto_mode(item, expected):
    assert call_with_input(item, "auto") == expected


def test_explicit_modes():
    assert call_with_input([1, 2], "single") == (([1, 2],), {})
    assert call_with_input((1, 2), "args") == ((1, 2), {})
    assert call_with_input({"a": 1}, "kwargs") == ((), {"a": 1})
    with pytest.raises(TypeError):
        call_with_input(1, "args")
    with pytest.raises(TypeError):
        call_with_input([1], "kwargs")


class _Remote:
    def _submit_child(self, args, kwargs, labels):
        raise AssertionError("nothing is submitted when the arguments are wrong")


@pytest.mark.parametrize("kwargs,error", [
    ({"inputs": []}, ValueError),
    ({"inputs": [1], "max_concurrent": 0}, ValueError),
    ({"inputs": [1], "retries": -1}, ValueError),
    ({"inputs": [1], "input_mode": "zip"}, ValueError),
])
def test_bad_map_arguments(kwargs, error):
    with pytest.raises(error):
        map_inputs(_Remote(), **kwargs)


def test_map_needs_a_kinetic_function():
    with pytest.raises(TypeError):
        map_inputs(len, [1])


def test_batch_error_message():
    err = BatchError("grp-1", [None], [1, None, 3], {2: RuntimeError("x")})
    assert str(err) == "Batch grp-1: 1 of 3 jobs failed" and err.failures == []


class _CountingRemote:
    """Submissions that meet at a barrier of WIDTH: they pass only when WIDTH run at once, so a
    bound below WIDTH breaks it (a submission error) and one above it shows in the peak."""

    def __init__(self, width):
        self._options = types.SimpleNamespace(flags=None)
        self.barrier = threading.Barrier(width, timeout=30)
        self.lock = threading.Lock()
        self.active = self.peak = 0

    def _submit_child(self, args, kwargs, labels):
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            self.barrier.wait()
        finally:
            with self.lock:
                self.active -= 1
        return JobHandle(job_id=f"job-{args[0]}", func_name="f", accelerator="cpu",
                         created_at="", output_dir="")


def test_map_submits_a_bounded_number_at_once():
    # Issue #30 point 3: 20 inputs, 4 submissions at a time (the barrier needs exactly 4).
    remote = _CountingRemote(4)
    batch = map_inputs(remote, range(20), max_concurrent=None, max_submitting=4)
    assert batch.submission_failures == {}
    assert remote.peak == 4
    assert [job.job_id for job in batch.jobs] == [f"job-{i}" for i in range(20)]


def test_map_submits_eight_at_a_time_by_default():
    assert MAX_SUBMITTING == 8
    remote = _CountingRemote(8)
    batch = map_inputs(remote, range(16), max_concurrent=None)
    assert batch.submission_failures == {} and remote.peak == 8


def test_max_submitting_must_be_positive():
    with pytest.raises(ValueError):
        map_inputs(_Remote(), [1], max_submitting=0)
