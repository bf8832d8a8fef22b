"""lib/job/function_runner.py, run as the engine runs it (a subprocess in the job's working
directory), on call files written by the package. Each test also runs the runner as the binary
embeds it (comment and blank lines stripped, cmake/embed_python.cmake)."""

import collections
import json
import os
import pickle
import re
import subprocess
import sys
import threading

import cloudpickle
import pytest

from conftest import RUNNER
from kinetic import _data, _payload

HERE = os.path.dirname(os.path.abspath(__file__))
Point = collections.namedtuple("Point", "x y")


def _embedded_source():
    with open(RUNNER) as f:
        source = f.read()
    assert '"""' not in source and ')PY"' not in source
    source = re.sub(r"\n[ \t]*#[^\n]*", "", "\n" + source)
    return re.sub(r"\n([ \t]*\n)+", "\n", source).lstrip("\n")


@pytest.fixture(params=["file", "embedded"])
def runner(request, tmp_path):
    if request.param == "file":
        return RUNNER
    path = tmp_path / "embedded_runner.py"
    path.write_text(_embedded_source())
    return str(path)


class Job:
    def __init__(self, runner, root):
        self.runner, self.root = runner, root
        self.work = root / "work"
        self.work.mkdir(exist_ok=True)
        self.out = root / "out"

    def write(self, fn, args=(), kwargs=None, header_changes=None):
        sub = _data.substitute(tuple(args), kwargs or {})
        header = _payload.build_header("t.fn", str(self.root), sub.entries)
        header.update(header_changes or {})
        # The test module is pickled by value, as a caller's own code under its root would be.
        blob = _payload.encode_call(header, fn, sub.args, sub.kwargs, HERE)
        (self.root / "call.pkl").write_bytes(blob)
        return sub

    def run(self, env_extra=None):
        env = dict(os.environ, KINETIC_OUTPUT_DIR=str(self.out), **(env_extra or {}))
        proc = subprocess.run([sys.executable, "-u", self.runner, str(self.root / "call.pkl"),
                               str(self.root)], cwd=str(self.work), env=env,
                              capture_output=True, text=True, timeout=30)
        path = self.out / ".kinetic" / "result.pkl"
        result = pickle.loads(path.read_bytes()) if path.exists() else None
        return proc, result


@pytest.fixture
def job(runner, tmp_path):
    root = tmp_path / "ctx"
    root.mkdir()
    return Job(runner, root)


def test_a_value_is_returned(job):
    job.write(lambda a, b=0: {"sum": a + b}, (2,), {"b": 3})
    proc, result = job.run()
    assert proc.returncode == 0, proc.stderr
    assert result["ok"] and result["value"] == {"sum": 5} and result["phase"] == "call"
    assert result["kinetic_result"] == 1
    assert not [p for p in os.listdir(job.out / ".kinetic") if p != "result.pkl"]


def _raises(x):
    raise ValueError(f"bad value {x}")


def test_an_exception_travels_with_its_traceback(job):
    job.write(_raises, (7,))
    proc, result = job.run()
    assert proc.returncode == 1
    assert proc.stderr.rstrip().splitlines()[-1] == "ValueError: bad value 7"
    assert "Traceback (most recent call last):" in proc.stderr and "in _raises" in proc.stderr
    assert "function_runner" not in proc.stderr and "embedded_runner" not in proc.stderr
    assert not result["ok"] and result["phase"] == "call"
    assert isinstance(result["exception"], ValueError)
    assert result["exception_type"] == "ValueError" and result["message"] == "bad value 7"
    assert result["traceback"].rstrip().endswith("ValueError: bad value 7")


class Unpicklable(Exception):
    def __init__(self):
        super().__init__("cannot travel")
        self.lock = threading.Lock()


def _raise_unpicklable():
    raise Unpicklable()


def test_an_exception_that_cannot_be_pickled_is_sent_as_text(job):
    job.write(_raise_unpicklable)
    proc, result = job.run()
    assert proc.returncode == 1 and result["exception"] is None
    assert result["exception_type"].endswith("Unpicklable")
    assert result["message"] == "cannot travel" and "cannot travel" in result["traceback"]


def test_a_result_that_cannot_be_pickled_is_a_failure_naming_its_type(job):
    job.write(lambda: threading.Lock())
    proc, result = job.run()
    assert proc.returncode == 1 and result["phase"] == "result"
    assert isinstance(result["exception"], RuntimeError)
    assert "lock" in result["message"] and "could not be pickled" in result["message"]


@pytest.mark.parametrize("code,ok", [(None, True), (0, True), (3, False)])
def test_system_exit(job, code, ok):
    job.write(lambda: sys.exit(code))
    proc, result = job.run()
    assert result["ok"] is ok and proc.returncode == (0 if ok else 1)
    if not ok:
        assert result["message"] == "function called sys.exit(3)"
        assert proc.stderr.rstrip().endswith("RuntimeError: function called sys.exit(3)")


def test_keyboard_interrupt_becomes_a_failure(job):
    def interrupted():
        raise KeyboardInterrupt("stop")
    job.write(interrupted)
    proc, result = job.run()
    assert proc.returncode == 1 and result["message"] == "KeyboardInterrupt: stop"


@pytest.mark.parametrize("change", [{"python": "2.7.18"}, {"cloudpickle": "0.0.1"}])
def test_a_version_mismatch_is_a_setup_failure(job, change):
    job.write(lambda: 1, header_changes=change)
    proc, result = job.run()
    assert proc.returncode == 126
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: kinetic setup failed: ")
    assert list(change.values())[0] in lines[0]
    assert result["phase"] == "setup" and not result["ok"]


def test_not_a_call_file_and_no_output_dir(job):
    (job.root / "call.pkl").write_bytes(b"not json\n")
    proc, result = job.run()
    assert proc.returncode == 126 and "not a kinetic call file" in proc.stderr
    assert result["phase"] == "setup"
    env = {k: v for k, v in os.environ.items() if k != "KINETIC_OUTPUT_DIR"}
    proc = subprocess.run([sys.executable, job.runner, str(job.root / "call.pkl"),
                           str(job.root)], env=env, capture_output=True, text=True)
    assert proc.returncode == 126 and "KINETIC_OUTPUT_DIR" in proc.stderr


def test_data_paths_become_absolute_in_the_jobs_working_directory(job, tmp_path):
    data_dir = tmp_path / "d"
    data_dir.mkdir()
    d = _data.Data(str(data_dir))
    sub = job.write(lambda *a, **k: (a, k), ([d, ("x", d)], Point(d, 1)), {"m": {"k": [d]}})
    assert len(sub.mounts) == 1
    proc, result = job.run()
    assert proc.returncode == 0, proc.stderr
    mount = os.path.join(str(job.work), ".kinetic-data", "0")
    args, kwargs = result["value"]
    assert args == ([mount, ("x", mount)], Point(mount, 1)) and type(args[1]) is Point
    assert kwargs == {"m": {"k": [mount]}}


def test_sys_path_entries_are_prepended_from_the_context_root(job, monkeypatch):
    src = job.root / "src"
    src.mkdir()
    (src / "shipped_mod_kt.py").write_text("def where():\n    return __file__\n")
    monkeypatch.syspath_prepend(str(src))
    import shipped_mod_kt
    # Pickled by reference (not registered by value): the job imports it from CONTEXT/src.
    blob = cloudpickle.dumps((shipped_mod_kt.where, (), {}))
    header = {"kinetic_call": 1, "name": "t", "python": _payload.platform.python_version(),
              "cloudpickle": cloudpickle.__version__, "sys_path": ["src"], "data": []}
    (job.root / "call.pkl").write_bytes(json.dumps(header).encode() + b"\n" + blob)
    proc, result = job.run()
    assert proc.returncode == 0, proc.stderr
    assert result["value"] == str(src / "shipped_mod_kt.py")


def test_a_module_missing_in_the_job_is_a_setup_failure_with_a_hint(job, monkeypatch, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "absent_mod_kt.py").write_text("def f():\n    return 1\n")
    monkeypatch.syspath_prepend(str(elsewhere))
    import absent_mod_kt
    blob = cloudpickle.dumps((absent_mod_kt.f, (), {}))
    header = _payload.build_header("t", str(job.root), [])
    (job.root / "call.pkl").write_bytes(json.dumps(header).encode() + b"\n" + blob)
    proc, result = job.run()
    assert proc.returncode == 126 and "absent_mod_kt" in proc.stderr
    assert "requirements" in proc.stderr
