"""The package on the gke backend, against the fake Google Cloud ($KINETIC_FAKE_CLOUD: GCS, GKE,
Cloud Build, Artifact Registry, IAM and a Kubernetes API whose pods run as local processes):

    KINETIC_BIN=$PWD/build/kinetic KINETIC_FAKE_CLOUD=$PWD/build/tests/kinetic_fake_cloud \\
        /usr/bin/python3 -m pytest python/tests/test_gke.py -q

One fake cloud and one `kinetic up` for the module (as bench/gke_run_bench.sh sets them up);
each test has its own project folder as the cwd. A pod's python is a venv over this machine's
python3 with only what kinetic's image installed: the call works only because the package asks
for the caller's Python and cloudpickle (`--python X.Y --with cloudpickle==V`)."""

import json
import os
import platform
import queue
import subprocess
import sys
import threading
import traceback

import cloudpickle
import pytest

import kinetic
from kinetic import _engine
from conftest import option, run_python

FAKE_CLOUD = os.environ.get("KINETIC_FAKE_CLOUD")

pytestmark = [
    pytest.mark.skipif(not FAKE_CLOUD, reason="the gke tests need the fake cloud: set "
                       "KINETIC_FAKE_CLOUD=/path/to/build/tests/kinetic_fake_cloud"),
    pytest.mark.skipif(not os.environ.get("KINETIC_BIN"), reason="the gke tests need the "
                       "kinetic binary: set KINETIC_BIN=/path/to/build/kinetic"),
]

# Safety nets only (a hung fake or kinetic fails the test instead of hanging it).
READY_LIMIT = 30
COMMAND_LIMIT = 60

# kinetic settings of the caller's environment that would point it elsewhere.
CLEARED = ("KINETIC_CONTEXT", "KINETIC_PROJECT", "KINETIC_ZONE", "KINETIC_REGION",
           "KINETIC_CLUSTER", "KINETIC_NAMESPACE", "KINETIC_PACKAGE_ROOT",
           "GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "KUBECONFIG")


def _pump(pipe, lines):
    # Every stdout line of the fake, then None at its end; keeps reading after the blank line
    # so that the fake never blocks on a full pipe.
    for line in pipe:
        lines.put(line)
    lines.put(None)


def _start_fake(work):
    """Starts the fake cloud and returns (process, exports) once it has printed its blank line."""
    errors = open(os.path.join(work, "fake-cloud.stderr"), "w+")
    proc = subprocess.Popen([FAKE_CLOUD, "--enable-all"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=errors, text=True)
    lines = queue.Queue()
    threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
    exports = {}
    while True:
        try:
            line = lines.get(timeout=READY_LIMIT)
        except queue.Empty:
            line = None
        if line is None:
            proc.kill()
            proc.wait()
            errors.seek(0)
            pytest.fail(f"the fake cloud exited or never got ready (exit {proc.returncode}): "
                        f"{errors.read()[-2000:]}")
        if line == "\n":
            return proc, exports
        assert line.startswith("export ") and "=" in line, line
        name, value = line[len("export "):].rstrip("\n").split("=", 1)
        exports[name] = value


@pytest.fixture(scope="module")
def cloud(tmp_path_factory):
    """The fake cloud with `kinetic up --project pyapi` done, its exports (and a private HOME,
    config, state and cache) in os.environ for the module; the environment is restored and
    the fake stopped afterwards."""
    work = str(tmp_path_factory.mktemp("gke"))
    saved = dict(os.environ)
    proc = None
    try:
        for name in CLEARED:
            os.environ.pop(name, None)
        for name, sub in [("HOME", "home"), ("XDG_CONFIG_HOME", "config"),
                          ("KINETIC_HOME", "state"), ("XDG_CACHE_HOME", "cache")]:
            os.environ[name] = os.path.join(work, sub)
            os.makedirs(os.environ[name])
        os.environ["GCE_METADATA_HOST"] = "127.0.0.1:9"  # no metadata server: fail fast
        proc, exports = _start_fake(work)
        os.environ.update(exports)
        up = subprocess.run([os.environ["KINETIC_BIN"], "-q", "up", "--project", "pyapi",
                             "--zone", "us-central1-a"], stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=COMMAND_LIMIT)
        assert up.returncode == 0, up.stdout + up.stderr
        yield work
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def project(cloud, tmp_path, monkeypatch):
    """A project folder (a pyproject.toml marker) as the cwd and as the folder shipped
    (KINETIC_PACKAGE_ROOT: the functions are defined in this file, inside the repository)."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv("KINETIC_PACKAGE_ROOT", str(root))
    # The backend is asked of kinetic once per process and context: ask afresh in every test.
    monkeypatch.setattr(_engine, "_backends", {})
    return root


def kinetic_cmd(*args):
    return subprocess.run([os.environ["KINETIC_BIN"], *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=COMMAND_LIMIT)


def test_a_value_comes_back_from_a_pod(kinetic_argv, project, capsys):
    @kinetic.run(accelerator="cpu")
    def where(x):
        import cloudpickle as pod_cloudpickle
        print("running on", os.environ.get("KINETIC_BACKEND"))
        return (x * 2, os.environ.get("KINETIC_BACKEND"), os.environ.get("KINETIC_JOB_ID"),
                platform.python_version(), pod_cloudpickle.__version__, sys.prefix)

    value, backend, job_id, python, pickler, prefix = where(21)
    assert value == 42 and backend == "gke"
    assert python == platform.python_version() and pickler == cloudpickle.__version__
    assert prefix != sys.prefix  # the pod's interpreter (a venv), not this one
    out, err = capsys.readouterr()
    assert "running on gke" in out
    assert f"kinetic: {job_id} succeeded" in err
    assert os.listdir(project) == ["pyproject.toml"]

    assert kinetic_argv.all()[0] == ["config", "view", "-o", "json"]
    run = kinetic_argv.run()
    assert option(run, "-a") == "cpu" and option(run, "--context-dir") == str(project)
    assert option(run, "--python") == ".".join(platform.python_version_tuple()[:2])
    assert option(run, "--with") == f"cloudpickle=={cloudpickle.__version__}"
    assert "--image" not in run


def test_a_remote_exception_is_reraised_with_its_traceback(kinetic_argv, project):
    @kinetic.run(accelerator="cpu")
    def broken(n):
        return {}["key-%d" % n]

    with pytest.raises(KeyError) as info:
        broken(3)
    assert info.value.args == ("key-3",)
    text = "".join(traceback.format_exception(info.type, info.value, info.tb))
    # The frame of `broken` is the pod's: the function never ran here.
    assert "RemoteTraceback" in text and "in broken" in text and "KeyError: 'key-3'" in text
    if sys.version_info >= (3, 11):
        assert "Raised in kinetic job job-" in text
    assert option(kinetic_argv.run(), "--python")


def test_run_async_then_attach_from_another_process(kinetic_argv, project):
    @kinetic.run(accelerator="cpu")
    def greet(name):
        return f"hi {name} from {os.environ.get('KINETIC_BACKEND')}"

    job = greet.run_async("ada")
    assert job.job_id.startswith("job-")
    run = kinetic_argv.run()
    assert "--detach" in run and option(run, "--with") == f"cloudpickle=={cloudpickle.__version__}"
    code = f"import kinetic; print(kinetic.attach({job.job_id!r}).result(cleanup=False))"
    proc = run_python(code, project, timeout=COMMAND_LIMIT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "hi ada from gke"
    assert job.status() == kinetic.JobStatus.SUCCEEDED
    assert job.result() == "hi ada from gke"


def test_status_and_logs_of_a_job(project):
    @kinetic.run(accelerator="cpu")
    def talk():
        print("hello from the pod")
        return os.environ["KINETIC_JOB_ID"]

    job_id = talk()
    status = kinetic_cmd("status", job_id, "-o", "json")
    assert status.returncode == 0, status.stderr
    record = json.loads(status.stdout)
    assert record["id"] == job_id and record["state"] == "succeeded"
    assert record["backend"] == "gke" and record["accelerator"] == "cpu"
    assert record["file"].endswith("talk")
    logs = kinetic_cmd("logs", job_id)
    assert logs.returncode == 0, logs.stderr
    assert "hello from the pod" in logs.stdout.splitlines()


def test_no_pool_for_the_accelerator_is_a_start_error_with_the_reason(project, monkeypatch):
    # The fake schedules at once: no grace before a pod that cannot be placed is reported.
    monkeypatch.setenv("KINETIC_SCHEDULING_GRACE_SECONDS", "0")

    @kinetic.run(accelerator="v5litepod-1")  # `up` made the default pool alone
    def needs_a_tpu():
        return 1

    with pytest.raises(kinetic.JobStartError) as info:
        needs_a_tpu()
    assert info.value.exit_code == 126
    assert "kinetic pool add --accelerator v5litepod-1" in str(info.value)
    assert os.listdir(project) == ["pyproject.toml"]


def test_a_python_the_images_lack_is_refused_before_anything_is_submitted(project):
    @kinetic.run(accelerator="v5litepod-1", python="3.9")
    def old():
        return 1

    before = json.loads(kinetic_cmd("status", "-o", "json").stdout)["jobs"]
    with pytest.raises(kinetic.KineticError) as info:
        old()
    assert info.value.exit_code == 2
    assert str(info.value).startswith("no kinetic image for this accelerator has Python 3.9")
    assert "Python 3.11" in str(info.value) and "container_image=" in str(info.value)
    assert json.loads(kinetic_cmd("status", "-o", "json").stdout)["jobs"] == before


def test_a_server_on_gke_answers_at_its_url_and_the_block_removes_it(project):
    import shutil
    import socket
    import urllib.request
    shutil.copy(os.path.join(os.path.dirname(kinetic.__file__), "..", "..", "examples",
                             "serve-http", "server.py"), project / "server.py")
    with socket.socket() as probe:  # the fake's pods share this machine's network
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with kinetic.serve("server.py", port=port, ready_timeout=READY_LIMIT * 4) as server:
        with urllib.request.urlopen(server.url + "/", timeout=COMMAND_LIMIT) as answer:
            assert json.loads(answer.read())["message"] == "hello from kinetic serve"
        state = server.status()
        assert state["state"] == "running" and state["backend"] == "gke"
    listed = kinetic_cmd("serve", "ls", "-o", "json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["servers"] == []
