"""run_async_map's input mapping and argument checks (no binary needed)."""

import pytest

from kinetic._collections import BatchError, call_with_input, map_inputs


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
