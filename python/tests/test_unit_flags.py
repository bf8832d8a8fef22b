"""The kinetic flags ``@kinetic.run(...)`` options become (docs/python.md)."""
import pytest

import kinetic
from kinetic import _submit


def test_slices_become_the_slices_flag_only_when_more_than_one():
    # A ready image: the flags need no kinetic binary to ask the backend.
    image = "us-docker.pkg.dev/p/r/i:1"
    two = _submit.run_flags(
        _submit.RunOptions(accelerator="v5litepod-16", container_image=image, slices=2), [])
    assert two[two.index("--slices") + 1] == "2"
    one = _submit.RunOptions(accelerator="v5litepod-16", container_image=image)
    assert "--slices" not in _submit.run_flags(one, [])


def test_priority_becomes_the_priority_flag_and_a_bad_one_is_refused():
    image = "us-docker.pkg.dev/p/r/i:1"
    high = _submit.run_flags(
        _submit.RunOptions(accelerator="v5litepod-4", container_image=image, priority="high"), [])
    assert high[high.index("--priority") + 1] == "high"
    plain = _submit.RunOptions(accelerator="v5litepod-4", container_image=image)
    assert "--priority" not in _submit.run_flags(plain, [])
    with pytest.raises(ValueError, match="priority='urgent'"):
        kinetic.run(accelerator="v5litepod-4", priority="urgent")


def test_zero_slices_is_refused_before_anything_runs():
    with pytest.raises(ValueError, match="slices=0"):
        kinetic.run(accelerator="v5litepod-16", slices=0)


def test_flex_start_and_timeout_from_become_their_flags():
    image = "us-docker.pkg.dev/p/r/i:1"
    flags = _submit.run_flags(
        _submit.RunOptions(accelerator="v6e-8", container_image=image, flex_start=True,
                           timeout="2h", timeout_from="start"), [])
    assert "--flex-start" in flags and "--spot" not in flags
    assert flags[flags.index("--timeout-from") + 1] == "start"
    plain = _submit.run_flags(_submit.RunOptions(accelerator="v6e-8", container_image=image), [])
    assert "--flex-start" not in plain and "--timeout-from" not in plain


def test_flex_start_with_spot_or_a_bad_timeout_from_is_refused():
    with pytest.raises(ValueError, match="pick one"):
        kinetic.run(accelerator="v6e-8", spot=True, flex_start=True)
    with pytest.raises(ValueError, match="timeout_from='later'"):
        kinetic.run(accelerator="v6e-8", timeout="1h", timeout_from="later")
    with pytest.raises(ValueError, match="give timeout= too"):
        kinetic.run(accelerator="v6e-8", timeout_from="start")
