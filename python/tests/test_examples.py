"""examples/python/ as a user runs them, on the local backend: each finishes, prints what it
promises, and leaves nothing of the jobs behind but what it keeps on purpose."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import PYTHON_DIR, REPO

EXAMPLES = os.path.join(REPO, "examples", "python")

pytestmark = pytest.mark.skipif(not os.environ.get("KINETIC_BIN"),
                                reason="KINETIC_BIN is unset: the examples need the binary")


@pytest.fixture
def examples(tmp_path):
    """A copy of examples/python (its own project: a pyproject.toml) and a private kinetic state:
    the repository is not written to."""
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy)
    env = dict(os.environ, KINETIC_HOME=str(tmp_path / "state"),
               XDG_CACHE_HOME=str(tmp_path / "cache"),
               PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return copy, env


def run_example(examples, name):
    copy, env = examples
    done = subprocess.run([sys.executable, name], cwd=copy, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_simple_demo_fits_the_line(examples):
    out = run_example(examples, "simple_demo.py")
    assert "step 0:" in out and "step 200:" in out
    loss = float(out.strip().splitlines()[-1].split(":")[1])
    assert loss < 0.01


def test_async_jobs(examples):
    out = run_example(examples, "async_jobs.py")
    assert "submitted job-" in out and "attached: job-" in out
    assert "model a training" in out.split("a's log tail:")[1].splitlines()[0]
    assert "loss a:" in out


def test_collections_sweep(examples):
    out = run_example(examples, "collections_sweep.py")
    assert "SUCCEEDED" in out


def test_data_api(examples):
    run_example(examples, "data_api.py")


def test_gemma_sft_says_what_it_would_do_without_a_tpu(examples):
    out = run_example(examples, "gemma_sft.py")
    assert "would run train_gemma on v5litepod-1" in out
