"""Shared fixtures. The tests import the package from this source tree (python/), not from an
installed copy, and run with Debian's /usr/bin/python3 (python3-pytest, python3-cloudpickle):

    /usr/bin/python3 -m pytest python/tests -q                      # unit + runner only
    KINETIC_BIN=$PWD/build/kinetic /usr/bin/python3 -m pytest python/tests -q   # + the binary
    KINETIC_BIN=$PWD/build/kinetic KINETIC_FAKE_CLOUD=$PWD/build/tests/kinetic_fake_cloud \
        /usr/bin/python3 -m pytest python/tests -q                  # + the gke backend (fake cloud)
"""

import json
import os
import subprocess
import sys

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PYTHON_DIR)
RUNNER = os.path.join(REPO, "lib", "job", "function_runner.py")
GLOBAL_FLAGS = ("--context", "--project", "--zone", "--cluster", "--namespace")

if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder (with a pyproject.toml marker) as the cwd, and kinetic's state, config
    and caches in tmp_path: nothing is written outside it, and no user config (a gke context)
    applies."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv("KINETIC_HOME", str(tmp_path / "kinetic-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("KINETIC_PACKAGE_ROOT", "KINETIC_CONTEXT"):
        monkeypatch.delenv(name, raising=False)
    return root


WRAPPER = """#!{python} -S
# Logs this invocation's argv (one JSON line), then becomes the real kinetic binary.
import json, os, sys
fd = os.open({log!r}, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
os.write(fd, (json.dumps(sys.argv[1:]) + "\\n").encode())
os.close(fd)
os.execv({real!r}, [{real!r}] + sys.argv[1:])
"""


class ArgvLog:
    """The argv (without argv[0]) of every kinetic command the package ran, in order."""

    def __init__(self, path):
        self.path = path

    def all(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path) as f:
            return [json.loads(line) for line in f]

    def commands(self, name):
        """The invocations of command NAME (after the global flags), global flags dropped."""
        out = []
        for argv in self.all():
            i = 0
            while i < len(argv) and argv[i] in GLOBAL_FLAGS:
                i += 2
            if argv[i:i + 1] == [name]:
                out.append(argv[i:])
        return out

    def run(self):
        """The argv of the only `run` invocation (from `run` on)."""
        (run,) = self.commands("run")
        return run


@pytest.fixture
def kinetic_argv(tmp_path, monkeypatch):
    """KINETIC_BIN pointing at a wrapper that logs each argv and execs the real binary (the
    KINETIC_BIN in the environment): returns the ArgvLog. Needs KINETIC_BIN (tests skip
    without it)."""
    real = os.environ.get("KINETIC_BIN")
    if not real:
        pytest.skip("needs the kinetic binary: set KINETIC_BIN=/path/to/build/kinetic")
    real = os.path.abspath(real)
    log = str(tmp_path / "kinetic-argv.jsonl")
    wrapper = tmp_path / "kinetic-wrapper"
    wrapper.write_text(WRAPPER.format(python=sys.executable, log=log, real=real))
    wrapper.chmod(0o755)
    monkeypatch.setenv("KINETIC_BIN", str(wrapper))
    return ArgvLog(log)


def option(argv, flag):
    """The value after FLAG in ARGV."""
    return argv[argv.index(flag) + 1]


def options(argv, flag):
    """Every value after FLAG in ARGV."""
    return [argv[i + 1] for i, a in enumerate(argv) if a == flag]


def run_python(code, cwd, env=None, timeout=60):
    """Runs `python -c code` (this interpreter) with the source tree importable."""
    full_env = dict(os.environ if env is None else env)
    full_env["PYTHONPATH"] = PYTHON_DIR + os.pathsep + full_env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], cwd=str(cwd), env=full_env,
                          capture_output=True, text=True, timeout=timeout)
