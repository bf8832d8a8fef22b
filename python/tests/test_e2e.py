"""End to end against the real binary (local backend), as a user's processes see it: the
remote exception, a job attached from another process, Ctrl-C. Set KINETIC_BIN, e.g.

    KINETIC_BIN=$PWD/build/kinetic /usr/bin/python3 -m pytest python/tests/test_e2e.py -q

Each test has its own KINETIC_HOME and project folder (the cwd). test_flow.py checks the argv
the package sends (values, Data, env, outputs, batches); test_gke.py the gke backend."""

import datetime
import io
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import traceback
import urllib.request

import pytest

import kinetic
from conftest import PYTHON_DIR, run_python

pytestmark = pytest.mark.skipif(
    not os.environ.get("KINETIC_BIN"),
    reason="end-to-end tests need the kinetic binary: set KINETIC_BIN=/path/to/build/kinetic")


def kinetic_json(*args):
    out = subprocess.run([os.environ["KINETIC_BIN"], *args, "-o", "json"], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    return json.loads(out)


def test_an_exception_is_reraised_with_the_remote_traceback(project):
    @kinetic.run(accelerator="cpu", context_dir=str(project))
    def broken(n):
        return {}["key-%d" % n]

    with pytest.raises(KeyError) as info:
        broken(3)
    text = "".join(traceback.format_exception(info.type, info.value, info.tb))
    assert "in broken" in text and "KeyError: 'key-3'" in text


def test_run_async_then_attach_from_another_process(project):
    @kinetic.run(accelerator="cpu", context_dir=str(project))
    def greet(name):
        print("hello from the job")
        return f"hi {name}"

    job = greet.run_async("ada")
    assert job.job_id.startswith("job-") and job.func_name.endswith("greet")
    code = f"import kinetic; print(kinetic.attach({job.job_id!r}).result(cleanup=False))"
    proc = run_python(code, project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "hi ada"
    assert job.status() == kinetic.JobStatus.SUCCEEDED
    assert "hello from the job" in job.tail(5)
    assert "hello from the job" in job.logs(since=datetime.timedelta(hours=1))
    assert job.logs(since=datetime.datetime(2099, 1, 1)) == ""
    with pytest.raises(kinetic.KineticError, match="--since"):
        job.logs(since="soon")
    assert kinetic.attach(job.job_id).result(cleanup=False) == "hi ada"
    assert job.result() == "hi ada" and job.result() == "hi ada"  # kept after the cleanup
    assert job.status() == kinetic.JobStatus.NOT_FOUND
    with pytest.raises(kinetic.KineticError, match="no job"):
        kinetic.attach(job.job_id)


def test_port_forward_reaches_the_jobs_server_while_the_block_runs(project):
    with socket.socket() as probe:  # a free port for the job's server
        probe.bind(("127.0.0.1", 0))
        remote = probe.getsockname()[1]

    @kinetic.run(accelerator="cpu", context_dir=str(project))
    def serve(port):
        import http.server

        class Hello(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"hello from the job"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        server = http.server.HTTPServer(("127.0.0.1", port), Hello)
        print("serving", flush=True)
        server.serve_forever()

    job = serve.run_async(remote)
    try:
        # The job's own line says it listens: read through `kinetic logs -f`, no polling.
        with subprocess.Popen([os.environ["KINETIC_BIN"], "logs", "-f", job.job_id],
                              stdout=subprocess.PIPE, text=True) as follower:
            assert any(line.strip() == "serving" for line in follower.stdout)
            follower.terminate()
        with job.port_forward(remote) as local:
            assert local != remote
            with urllib.request.urlopen(f"http://127.0.0.1:{local}/", timeout=30) as answer:
                assert answer.read() == b"hello from the job"
        with pytest.raises(OSError):  # the block's end closed the local port
            socket.create_connection(("127.0.0.1", local), timeout=5).close()
        with pytest.raises(kinetic.KineticError, match="70000") as info:
            with job.port_forward(70000):
                pass
        assert info.value.exit_code == 2
    finally:
        job.cancel()


STANDIN = os.path.join(PYTHON_DIR, "..", "tests", "e2e", "debugpy_standin.py")


def dap_attach(port, nonce):
    """VS Code's attach as a DAP client: initialize, the initialized event, attach (NONCE among
    its arguments), configurationDone; every answer read before the next request."""
    def send(conn, seq, command, arguments):
        body = json.dumps({"seq": seq, "type": "request", "command": command,
                           "arguments": arguments}).encode()
        conn.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def receive(reader):
        length = 0
        for line in iter(reader.readline, b"\r\n"):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(reader.read(length))

    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        reader = conn.makefile("rb")
        send(conn, 1, "initialize", {"adapterID": "debugpy"})
        assert receive(reader)["command"] == "initialize"
        assert receive(reader)["event"] == "initialized"
        send(conn, 2, "attach", {"kineticNonce": nonce})
        assert receive(reader)["success"]
        send(conn, 3, "configurationDone", {})
        assert receive(reader)["command"] == "configurationDone"


def ship_debugpy_standin(project):
    """Ships the debugpy stand-in in PROJECT, as a user ships a package; returns a free port
    for the job's debugpy."""
    (project / "debugpy").mkdir()
    with open(STANDIN) as f:
        (project / "debugpy" / "__init__.py").write_text(f.read())
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_debug_true_waits_for_a_debugger_attached_with_kinetic_debug(project):
    remote = ship_debugpy_standin(project)

    @kinetic.run(accelerator="cpu", context_dir=str(project), debug=True, debug_port=remote)
    def traced(x):
        import debugpy
        return x, debugpy.attach_arguments.get("kineticNonce")

    job = traced.run_async(7)
    try:
        # The launcher's line says debugpy listens: read through `kinetic logs -f`, no polling.
        with subprocess.Popen([os.environ["KINETIC_BIN"], "logs", "-f", job.job_id],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True) as follower:
            assert any("debugpy listens" in line for line in follower.stderr)
            follower.terminate()
        with subprocess.Popen([os.environ["KINETIC_BIN"], "debug", job.job_id, "-o", "json"],
                              stdout=subprocess.PIPE, text=True) as forward:
            attach = json.loads(forward.stdout.readline())
            assert attach["remote_port"] == remote and attach["launch"]["type"] == "debugpy"
            dap_attach(attach["port"], "from-python")
            # It ran once attached: its value carries what only the attach said.
            assert job.result(timeout=60, cleanup=False) == (7, "from-python")
            assert forward.wait(timeout=60) == 1  # the forward ends with the job
    finally:
        job.cancel()
        job.cleanup()


def test_a_debug_true_call_returns_once_a_debugger_attached_to_what_it_printed(project,
                                                                              monkeypatch):
    remote = ship_debugpy_standin(project)

    @kinetic.run(accelerator="cpu", context_dir=str(project), debug=True, debug_port=remote)
    def traced(x):
        import debugpy
        return x, debugpy.attach_arguments.get("kineticNonce")

    # kinetic's stderr reaches sys.stderr line by line: the launch configuration is read there.
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    outcome = {}
    call = threading.Thread(target=lambda: outcome.update(value=traced(5)))
    call.start()
    deadline = time.monotonic() + 60  # a bound against hangs, not a timing assumption
    text = ""
    while "debugpy listens" not in text or "(F5):\n" not in text:
        assert time.monotonic() < deadline, text
        time.sleep(0.02)
        text = err.getvalue()
    launch = text[text.index("(F5):\n") + 6:]
    launch = json.loads(launch[:launch.index("\n}") + 2])
    assert launch["type"] == "debugpy" and launch["pathMappings"][0]["localRoot"] == str(project)
    dap_attach(launch["connect"]["port"], "in-the-foreground")
    call.join(60)
    assert outcome["value"] == (5, "in-the-foreground")


def test_ctrl_c_cancels_the_job_and_raises_keyboard_interrupt(project, tmp_path):
    (project / "blocker.py").write_text(textwrap.dedent("""
        import sys, threading
        import kinetic

        @kinetic.run(accelerator="cpu")
        def block():
            print("job started", flush=True)
            threading.Event().wait()

        try:
            block()
        except KeyboardInterrupt:
            print("KeyboardInterrupt raised", flush=True)
            sys.exit(42)
    """))
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    with open(tmp_path / "blocker.err", "w+") as err:
        proc = subprocess.Popen([sys.executable, "blocker.py"], cwd=str(project), env=env,
                                stdout=subprocess.PIPE, stderr=err, text=True)
        # The job's first line, streamed through kinetic and the package: it is running.
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.strip() == "job started":
                break
        else:
            proc.wait(timeout=30)
            err.seek(0)
            pytest.fail(f"the job never started: {lines} {err.read()}")
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        err.seek(0)
        assert proc.returncode == 42, err.read()
    assert "KeyboardInterrupt raised" in out
    jobs = kinetic_json("status")
    states = [j["state"] for j in jobs.get("jobs", jobs.get("items", []))]
    assert states == ["cancelled"]


def test_a_timeout_raises_job_timeout_error(project):
    @kinetic.run(accelerator="cpu", timeout="1s")
    def forever():
        import os
        import time
        while not os.path.exists("never"):
            time.sleep(0.05)

    with pytest.raises(kinetic.JobTimeoutError) as info:
        forever()
    assert info.value.exit_code == 124
    assert isinstance(info.value, TimeoutError)
    record = kinetic.attach(info.value.job_id).record()
    assert record["state"] == "timeout"
