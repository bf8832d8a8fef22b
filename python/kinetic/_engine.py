"""Finding the kinetic binary and running it.

Every child kinetic runs in its own session (``start_new_session=True``): a Ctrl-C in the
terminal reaches this Python process only, which then decides what the child gets (a foreground
run is sent SIGINT once, so that kinetic cancels the job and reports it).
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

from ._errors import KineticError, last_error_line

# kinetic's last stderr lines are kept for error messages.
STDERR_LINES_KEPT = 20


def _is_python_script(path: str) -> bool:
    # The keras-team package installs a Python console script also named `kinetic`; that is not
    # the engine.
    try:
        with open(path, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def _candidates() -> List[str]:
    package_dir = os.path.dirname(os.path.abspath(__file__))
    return [
        os.path.join(sys.prefix, "bin", "kinetic"),
        os.path.normpath(os.path.join(package_dir, "..", "..", "..", "..", "bin", "kinetic")),
        os.path.normpath(os.path.join(package_dir, "..", "..", "..", "bin", "kinetic")),
    ]


def find_binary() -> str:
    """The kinetic binary: $KINETIC_BIN, else one installed next to this package (its prefix's
    bin/), else the first `kinetic` on the PATH."""
    explicit = os.environ.get("KINETIC_BIN")
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        raise KineticError(f"KINETIC_BIN={explicit} is not an executable file; point it at the "
                           "kinetic binary (e.g. build/kinetic) or unset it")
    for path in _candidates() + [shutil.which("kinetic") or ""]:
        if path and os.path.isfile(path) and os.access(path, os.X_OK) \
                and not _is_python_script(path):
            return path
    raise KineticError("the kinetic binary was not found; install it on the PATH, or set "
                       "KINETIC_BIN to its path (e.g. build/kinetic after building the repo)")


def child_environment(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """os.environ for a child kinetic, with this interpreter's directory first on the PATH: the
    local backend runs the job with the first python3 on the PATH it is given, so the job gets
    the caller's interpreter (and its packages)."""
    env = dict(os.environ)
    here = os.path.dirname(sys.executable) if sys.executable else ""
    if here:
        env["PATH"] = here + os.pathsep + env.get("PATH", os.defpath)
    env.update(extra or {})
    return env


@dataclass
class GlobalFlags:
    """kinetic's global flags (they go before the command)."""
    context: Optional[str] = None
    project: Optional[str] = None
    zone: Optional[str] = None
    cluster: Optional[str] = None
    namespace: Optional[str] = None

    def argv(self) -> List[str]:
        out: List[str] = []
        for flag in ("context", "project", "zone", "cluster", "namespace"):
            value = getattr(self, flag)
            if value:
                out += ["--" + flag, str(value)]
        return out


@dataclass
class Completed:
    """A finished kinetic command."""
    argv: List[str]
    returncode: int
    stdout: str = ""
    stderr_tail: List[str] = field(default_factory=list)

    def error_line(self) -> str:
        return last_error_line(self.stderr_tail) or (self.stderr_tail[-1].strip()
                                                     if self.stderr_tail else "")


def command(flags: GlobalFlags, *args: str) -> List[str]:
    return [find_binary()] + flags.argv() + list(args)


def run_captured(argv: Sequence[str], *, timeout: Optional[float] = None,
                 merge_stderr: bool = False) -> Completed:
    """Runs kinetic to completion and returns its stdout (and its stderr's last lines, or all of
    it merged into stdout with ``merge_stderr``)."""
    proc = subprocess.run(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                          env=child_environment(), timeout=timeout, start_new_session=True)
    stdout = proc.stdout.decode("utf-8", "replace")
    stderr = (proc.stderr or b"").decode("utf-8", "replace").splitlines(keepends=True)
    return Completed(list(argv), proc.returncode, stdout, stderr[-STDERR_LINES_KEPT:])


def _pump(pipe, write: Callable[[str], None], keep: Optional[collections.deque],
          rewrite: Optional[Callable[[str], str]]) -> None:
    # One line at a time, as kinetic writes it; sys.stdout/sys.stderr are looked up per line so
    # that Jupyter's (or pytest's) replacements capture it.
    with pipe:
        for raw in iter(pipe.readline, b""):
            line = raw.decode("utf-8", "replace")
            if rewrite is not None:
                line = rewrite(line)
            if keep is not None:
                keep.append(line)
            if line:
                write(line)


def _write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _write_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


class Streaming:
    """A kinetic child whose stdout and stderr are copied to sys.stdout and sys.stderr line by
    line as they come (threads), keeping the last stderr lines."""

    def __init__(self, argv: Sequence[str], *, env: Optional[Dict[str, str]] = None,
                 rewrite_stderr: Optional[Callable[[str], str]] = None,
                 stdout_to: Optional[Callable[[str], None]] = None):
        self.argv = list(argv)
        self.stderr_tail: collections.deque = collections.deque(maxlen=STDERR_LINES_KEPT)
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env or child_environment(), start_new_session=True)
        self._threads = [
            threading.Thread(target=_pump, daemon=True,
                             args=(self.proc.stdout, stdout_to or _write_stdout, None, None)),
            threading.Thread(target=_pump, daemon=True,
                             args=(self.proc.stderr, _write_stderr, self.stderr_tail,
                                   rewrite_stderr)),
        ]
        for t in self._threads:
            t.start()

    def wait(self, timeout: Optional[float] = None) -> int:
        code = self.proc.wait(timeout)
        for t in self._threads:
            t.join()
        return code

    def interrupt_and_wait(self) -> int:
        """Sends SIGINT once (kinetic then cancels the job) and waits for kinetic to exit. A
        second Ctrl-C stops the waiting; kinetic carries on cancelling by itself."""
        try:
            self.proc.send_signal(signal.SIGINT)
        except ProcessLookupError:
            pass
        return self.wait()

    def kill(self) -> None:
        """For read-only commands (logs, collect): stopping them leaves the job as it is."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.wait()

    def completed(self) -> Completed:
        return Completed(self.argv, self.proc.returncode, "", list(self.stderr_tail))


def run_foreground(argv: Sequence[str], *, env: Optional[Dict[str, str]] = None,
                   rewrite_stderr: Optional[Callable[[str], str]] = None) -> Completed:
    """Runs a job-owning kinetic command (``run``) in the foreground. On KeyboardInterrupt the
    child gets SIGINT once and is waited for (it cancels the job), then KeyboardInterrupt is
    re-raised."""
    child = Streaming(argv, env=env, rewrite_stderr=rewrite_stderr)
    try:
        child.wait()
    except KeyboardInterrupt:
        child.interrupt_and_wait()
        raise
    return child.completed()


def run_read_only(argv: Sequence[str], *, timeout: Optional[float] = None,
                  rewrite_stderr: Optional[Callable[[str], str]] = None,
                  stdout_to: Optional[Callable[[str], None]] = None) -> Completed:
    """Runs a read-only kinetic command (``logs -f``, ``collect``), streaming its output. On
    timeout or KeyboardInterrupt it is killed (the job is unaffected): TimeoutError or
    KeyboardInterrupt follows."""
    child = Streaming(argv, rewrite_stderr=rewrite_stderr, stdout_to=stdout_to)
    try:
        child.wait(timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        raise TimeoutError(f"{' '.join(argv[1:3])} did not finish within {timeout}s")
    except KeyboardInterrupt:
        child.kill()
        raise
    return child.completed()


_backends: Dict[tuple, str] = {}


def backend_of(flags: GlobalFlags) -> str:
    """The backend ("local", "gke") of the context FLAGS select, asked of kinetic once per
    context and process (``kinetic config view``): the local backend runs the caller's own
    interpreter, so a call there asks for no image. "" when kinetic cannot say (the run itself
    will then say why)."""
    key = (flags.context, os.environ.get("KINETIC_CONTEXT"), os.environ.get("KINETIC_HOME"),
           os.environ.get("XDG_CONFIG_HOME"))
    if key not in _backends:
        argv = [find_binary()] + (["--context", flags.context] if flags.context else []) + \
            ["config", "view", "-o", "json"]
        done = run_captured(argv)
        backend = ""
        if done.returncode == 0:
            try:
                backend = json.loads(done.stdout).get("resolved", {}).get("backend", "")
            except ValueError:
                pass
        _backends[key] = backend
    return _backends[key]


class ReadyChild:
    """A kinetic child whose first stdout line is a JSON document saying it is ready (a
    foreground ``kinetic serve -o json``: the ``Server`` document once the server answers).
    Its progress (stderr) is shown until then; after that its output (the server's log) and
    warnings are kept (the last lines) rather than written into whatever cell or output runs
    next, unless ``stream_logs``."""

    def __init__(self, argv: List[str], stream_logs: bool):
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=child_environment(),
                                     start_new_session=True)
        self.stream_logs = stream_logs
        self.ready = threading.Event()
        self.stderr_tail: collections.deque = collections.deque(maxlen=STDERR_LINES_KEPT)
        self.log_tail: collections.deque = collections.deque(maxlen=1000)
        self._stderr = threading.Thread(target=self._pump_stderr, daemon=True)
        self._stderr.start()
        self._stdout: Optional[threading.Thread] = None

    def _shown(self) -> bool:
        return not self.ready.is_set() or self.stream_logs

    def _pump_stderr(self) -> None:
        with self.proc.stderr:
            for raw in iter(self.proc.stderr.readline, b""):
                line = raw.decode("utf-8", "replace")
                self.stderr_tail.append(line)
                if self._shown():
                    sys.stderr.write(line)
                    sys.stderr.flush()

    def _pump_log(self) -> None:
        with self.proc.stdout:
            for raw in iter(self.proc.stdout.readline, b""):
                line = raw.decode("utf-8", "replace")
                self.log_tail.append(line)
                if self.stream_logs:
                    sys.stdout.write(line)
                    sys.stdout.flush()

    def read_ready_document(self) -> Optional[Dict[str, Any]]:
        """The ``Server`` document once the server answers; None when kinetic ended first."""
        line = self.proc.stdout.readline()
        if not line:
            return None
        self.ready.set()
        self._stdout = threading.Thread(target=self._pump_log, daemon=True)
        self._stdout.start()
        return json.loads(line)

    def interrupt_and_wait(self, timeout: Optional[float]) -> int:
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGINT)
            except ProcessLookupError:
                pass
        return self.wait(timeout)

    def wait(self, timeout: Optional[float] = None) -> int:
        code = self.proc.wait(timeout)
        self._stderr.join()
        if self._stdout is not None:
            self._stdout.join()
        else:
            self.proc.stdout.close()
        return code



# ---- a port-forward while a with-block runs (JobHandle.port_forward, docs/serving.md) ----

FORWARD_STOP_TIMEOUT_S = 30


def _drain_lines(pipe, kept: collections.deque) -> None:
    # Warnings (a refused connection) keep coming while the block runs: a full pipe would stall
    # the forward.
    for line in pipe:
        kept.append(line)


@contextlib.contextmanager
def forwarding(argv: List[str], job_id: str) -> Iterator[int]:
    """Runs ARGV (a port-forward of one port with ``-o json``) and yields the local port once it
    listens; stops it (SIGINT: every connection closed, exit 0) when the block ends. A forward
    that cannot start raises KineticError with kinetic's own line and exit code."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=child_environment(), text=True,
                            start_new_session=True)
    kept: collections.deque = collections.deque(maxlen=STDERR_LINES_KEPT)
    drainer = threading.Thread(target=_drain_lines, args=(proc.stderr, kept), daemon=True)
    drainer.start()
    try:
        line = proc.stdout.readline()
        if not line:
            code = proc.wait()
            drainer.join()
            why = last_error_line(list(kept)) or "it ended before it listened"
            raise KineticError(f"kinetic port-forward {job_id} failed: {why}", exit_code=code,
                               job_id=job_id)
        yield int(json.loads(line)["ports"][0]["local"])
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=FORWARD_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        drainer.join()
        proc.stdout.close()
        proc.stderr.close()
