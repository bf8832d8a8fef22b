"""kinetic.serve(...) against the real binary (local backend): a server reached at its URL,
stopped by the with-block, a detached one reached through port_forward(), one that cannot come
up, and a server whose Python process exits without stopping it (docs/serving.md, "From
Python"). Set KINETIC_BIN, e.g.

    KINETIC_BIN=$PWD/build/kinetic /usr/bin/python3 -m pytest python/tests/test_serve.py -q
"""

import json
import os
import shutil
import socket
import subprocess
import textwrap
import urllib.request

import pytest

import kinetic
from conftest import REPO, run_python

pytestmark = pytest.mark.skipif(
    not os.environ.get("KINETIC_BIN"),
    reason="end-to-end tests need the kinetic binary: set KINETIC_BIN=/path/to/build/kinetic")

EXAMPLE = os.path.join(REPO, "examples", "serve-http", "server.py")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get_json(url):
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.loads(answer.read())


def kinetic_json(*args):
    out = subprocess.run([os.environ["KINETIC_BIN"], *args, "-o", "json"], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    return json.loads(out)


def job_ids():
    return {job["id"] for job in kinetic_json("status").get("jobs", [])}


@pytest.fixture
def server_py(project):
    shutil.copy(EXAMPLE, project / "server.py")
    return "server.py"


def refused(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except OSError:
        return True
    return False


def test_a_server_answers_at_its_url_until_the_block_ends(server_py):
    with kinetic.serve(server_py, port=free_port()) as server:
        assert server.url == f"http://127.0.0.1:{server.local_port}"
        assert get_json(server.url + "/")["message"] == "hello from kinetic serve"
        assert server.status()["state"] == "running"
        assert [s.id for s in kinetic.list_servers()] == [server.id]
    assert server.url is None
    assert kinetic.list_servers() == []
    assert server.id not in job_ids()  # stopped and removed: nothing left
    assert refused(server.local_port)
    server.stop()  # a second stop does nothing


def test_a_detached_server_is_reached_through_port_forward_and_stopped(server_py):
    server = kinetic.serve(server_py, port=free_port(), detach=True, labels={"team": "a"})
    try:
        assert server.url is None
        again = kinetic.attach_server(server.id)
        assert again.port == server.port
        with again.port_forward() as local:
            assert get_json(f"http://127.0.0.1:{local}/")["requests"] == 1
        log = again.logs()
        assert f"serving on port {server.port}" in log
        assert '"GET / HTTP/1.1" 200' in log  # the server's own line for the request
    finally:
        server.stop()
    assert server.id not in job_ids()
    with pytest.raises(kinetic.KineticError) as info:
        kinetic.attach_server(server.id)
    assert info.value.job_id == server.id


def test_a_server_that_ends_before_it_answers_raises_ServerError(project):
    (project / "broken.py").write_text("import sys\nprint('no model here', flush=True)\n"
                                       "sys.exit(3)\n")
    with pytest.raises(kinetic.ServerError) as info:
        kinetic.serve("broken.py", port=free_port())
    assert info.value.exit_code == 1
    assert info.value.job_id and info.value.job_id.startswith("job-")
    assert "ended" in str(info.value)


def test_bad_parameters_are_ValueError_before_anything_runs(project):
    with pytest.raises(ValueError, match="port=0"):
        kinetic.serve("server.py", port=0)
    with pytest.raises(ValueError, match="nothing to serve"):
        kinetic.serve(port=8000)
    with pytest.raises(ValueError, match="args="):
        kinetic.serve("server.py", port=8000, args="--model m")
    with pytest.raises(ValueError, match="idle_stop="):
        kinetic.serve("server.py", port=8000, idle_stop=-1)
    assert job_ids() == set()


def test_what_kinetic_refuses_is_a_KineticError_with_its_exit_code(server_py):
    with pytest.raises(kinetic.KineticError) as info:
        kinetic.serve(server_py, port=free_port(), from_job="job-00000000")
    assert info.value.exit_code in (1, 2)
    assert "job-00000000" in str(info.value)


def test_a_foreground_server_stops_when_its_python_process_exits(server_py, project):
    port = free_port()
    code = textwrap.dedent(f"""
        import kinetic
        server = kinetic.serve({server_py!r}, port={port})
        print(server.id, server.local_port, flush=True)
    """)  # no stop(): the interpreter's exit must stop it
    done = run_python(code, project, timeout=120)
    assert done.returncode == 0, done.stderr
    server_id, local = done.stdout.split()
    assert server_id not in job_ids()
    assert refused(int(local))
    assert refused(port)
