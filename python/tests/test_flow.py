"""The package's flow against the real binary (local backend), with the argv it sends kinetic
logged by a wrapper (conftest.kinetic_argv): argv, values, Data, env, outputs, batches, and the
decorator's own checks. test_e2e.py has the exception, attach-from-another-process and Ctrl-C
cases; test_gke.py the gke backend.

    KINETIC_BIN=$PWD/build/kinetic /usr/bin/python3 -m pytest python/tests/test_flow.py -q
"""

import json
import os
import sys

import cloudpickle
import pytest

import kinetic
from conftest import option, options


def test_a_call_returns_its_value_and_leaves_nothing_behind(kinetic_argv, project, capsys):
    @kinetic.run(accelerator="cpu", context_dir=str(project))
    def add(a, b):
        print("adding", a, b)
        return a + b, os.path.realpath(sys.executable)

    total, interpreter = add(2, b=3)
    assert total == 5
    assert "adding 2 3" in capsys.readouterr().out
    assert sorted(os.listdir(project)) == ["pyproject.toml"]
    # The backend is asked first (once per process and context), then the job is run.
    assert kinetic_argv.all()[0] == ["config", "view", "-o", "json"]
    run = kinetic_argv.run()
    assert run[:2] == ["run", "--function"]
    assert option(run, "--context-dir") == str(project)
    assert option(run, "-a") == "cpu"
    assert "kinetic-call-" in option(run, "--output")
    # The local backend builds no image: the job runs the caller's interpreter.
    assert "--python" not in run and "--with" not in run and "--image" not in run
    assert interpreter == os.path.realpath(sys.executable)


def test_outputs_move_to_kinetic_out_job(kinetic_argv, project, capsys):
    @kinetic.run(accelerator="cpu", context_dir=str(project))
    def save():
        with open(os.path.join(os.environ["KINETIC_OUTPUT_DIR"], "model.txt"), "w") as f:
            f.write("weights")

    assert save() is None
    (job,) = os.listdir(project / "kinetic-out")
    assert sorted(os.listdir(project / "kinetic-out" / job)) == ["model.txt", "status.json"]
    assert (project / "kinetic-out" / job / "model.txt").read_text() == "weights"
    assert f"outputs in kinetic-out/{job}/" in capsys.readouterr().err
    assert "kinetic-call-" in option(kinetic_argv.run(), "--output")


def test_output_dir_is_used_as_is(kinetic_argv, project):
    @kinetic.run(accelerator="cpu", context_dir=str(project), output_dir="results")
    def nothing():
        return None

    assert nothing() is None
    assert os.listdir(project / "results") == ["status.json"]
    assert option(kinetic_argv.run(), "--output") == str(project / "results")
    assert sorted(os.listdir(project)) == ["pyproject.toml", "results"]


def test_data_of_a_directory_and_a_file(kinetic_argv, project, tmp_path):
    (project / "ds").mkdir()
    (project / "ds" / "a.csv").write_text("1")
    (tmp_path / "config.json").write_text('{"lr": 0.5}')

    @kinetic.run(accelerator="cpu", context_dir=str(project))
    def look(data_dir, cfg):
        with open(cfg) as f:
            return sorted(os.listdir(data_dir)), os.path.basename(cfg), os.path.isabs(cfg), \
                f.read()

    got = look(kinetic.Data("ds"), cfg=kinetic.Data(str(tmp_path / "config.json")))
    assert got == (["a.csv"], "config.json", True, '{"lr": 0.5}')
    mounts = options(kinetic_argv.run(), "--data")
    assert mounts[0] == f"{project / 'ds'}:.kinetic-data/0:ro"
    # A file is mounted as its copy's directory, in the data-file cache.
    cache = os.path.join(os.environ["XDG_CACHE_HOME"], "kinetic", "data-files")
    assert mounts[1].startswith(cache + os.sep) and mounts[1].endswith(":.kinetic-data/1:ro")
    assert len(mounts) == 2


def test_env_names_travel_by_name_only(kinetic_argv, project, monkeypatch):
    monkeypatch.setenv("KT_SECRET_TOKEN", "s3cret")

    @kinetic.run(accelerator="cpu", context_dir=str(project), env=["KT_SECRET_TOKEN"],
                 capture_env_vars=["WANDB_*"], timeout=90, max_cost=5, retries=2, spot=True)
    def token():
        return os.environ.get("KT_SECRET_TOKEN")

    assert token() == "s3cret"  # it reached the job through kinetic's environment
    run = kinetic_argv.run()
    assert "s3cret" not in json.dumps(kinetic_argv.all())
    for flag, value in [("--env", "KT_SECRET_TOKEN"), ("--capture-env", "WANDB_*"),
                        ("--timeout", "90s"), ("--max-cost", "5"), ("--retries", "2")]:
        assert option(run, flag) == value
    assert "--spot" in run

    monkeypatch.delenv("KT_SECRET_TOKEN")
    with pytest.raises(ValueError, match="KT_SECRET_TOKEN is not set"):
        token()


def test_a_batch_with_one_failure(kinetic_argv, project):
    @kinetic.run(accelerator="cpu", context_dir=str(project))
    def inverse(x):
        return 1 / x

    batch = inverse.run_async_map([1, 0, 4], max_concurrent=2)
    results = batch.results(return_exceptions=True, cleanup=False)
    assert results[0] == 1 and results[2] == 0.25 and isinstance(results[1], ZeroDivisionError)
    assert [j.group_index for j in batch.failures()] == [1]
    runs = kinetic_argv.commands("run")
    assert len(runs) == 3 and all("--detach" in run for run in runs)
    labels = sorted(tuple(options(run, "--label")) for run in runs)
    assert labels == [(f"kinetic.dev/group={batch.group_id}", f"kinetic.dev/group-index={i}",
                       "kinetic.dev/group-size=3") for i in range(3)]
    attached = kinetic.attach_batch(batch.group_id)
    assert [j.job_id for j in attached.jobs] == [j.job_id for j in batch.jobs]
    assert attached.status_counts() == {"SUCCEEDED": 2, "FAILED": 1}
    with pytest.raises(kinetic.BatchError) as info:
        attached.results()
    assert info.value.partial_results == [1, None, 0.25]


def test_debug_runs_the_call_under_debugpy_which_the_job_must_have(kinetic_argv, project):
    @kinetic.run(accelerator="cpu", context_dir=str(project), debug=True)
    def traced():
        return 1

    job = traced.run_async()
    run = kinetic_argv.run()
    assert "--debug" in run and "--detach" in run and option(run, "--debug-port") == "5678"
    # This machine's python3 has no debugpy and the project ships none: the job cannot start.
    with pytest.raises(kinetic.JobStartError, match="debugpy cannot be imported in the job"):
        job.result(timeout=60)


def test_decorator_checks():
    with pytest.raises(ValueError, match="Unknown backend"):
        kinetic.run(backend="ray")
    with pytest.raises(TypeError):
        kinetic.run()(staticmethod(len))
    with pytest.raises(ValueError):
        kinetic.run(timeout=-1)


def test_a_missing_binary_is_a_clear_error(project, monkeypatch, tmp_path):
    monkeypatch.setenv("KINETIC_BIN", str(tmp_path / "nope"))

    @kinetic.run(accelerator="cpu", context_dir=str(project))
    def f():
        return 1

    with pytest.raises(kinetic.KineticError, match="KINETIC_BIN"):
        f()


def test_methods_and_pickling_as_the_plain_function(kinetic_argv, project):
    class Model:
        factor = 3

        @kinetic.run(accelerator="cpu", context_dir=str(project))
        def scale(self, x):
            return self.factor * x

    assert Model().scale(2) == 6
    assert option(kinetic_argv.run(), "-a") == "cpu"
    plain = cloudpickle.loads(cloudpickle.dumps(Model.__dict__["scale"]))
    assert not isinstance(plain, kinetic.RemoteCallable) and plain(Model(), 1) == 3
