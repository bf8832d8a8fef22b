"""``kinetic.serve(...)``: a long-running server (``kinetic serve``) from Python, reached at a
local URL while the returned ``Server`` lives, stopped by ``stop()`` or the end of a with-block
(docs/serving.md, "From Python").

A foreground server is one ``kinetic serve -o json`` child: its first stdout line (the ``Server``
document) says the server answers and where; SIGINT stops the server and removes everything
kinetic made for it, as Ctrl-C does in a terminal. ``detach=True`` is ``kinetic serve --detach``:
the server outlives this process, and ``port_forward()`` reaches it.
"""

from __future__ import annotations

import atexit
import json
import sys
import weakref
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _data, _engine
from ._errors import (EXIT_INTERRUPTED, JobCancelledError, KineticError, job_id_in,
                      last_error_line)
from ._submit import duration_flag, named_env_flags

# How long stop() waits for kinetic to stop a foreground server and remove it.
STOP_TIMEOUT_S = 300


# Foreground servers still up: stopped when the interpreter exits, since their `kinetic serve`
# child runs in a session of its own (no terminal's signal reaches it) and would otherwise
# leave the server up with nobody to reach or stop it.
_running_in_foreground: "weakref.WeakSet[Server]" = weakref.WeakSet()


def _stop_foreground_servers() -> None:
    for server in list(_running_in_foreground):
        try:
            server.stop()
        except Exception as e:  # exiting: say it, never hide the server
            sys.stderr.write(f"kinetic: could not stop server {server.id}: {e}; "
                             f"`kinetic serve stop {server.id}` removes it\n")


atexit.register(_stop_foreground_servers)


class ServerError(KineticError):
    """A server did not come up: it could not start, ended by itself, or did not answer on its
    port within ``ready_timeout`` (then it is left up: ``server_id`` names it, and
    ``kinetic serve stop`` removes it). ``exit_code`` is kinetic's (1 for these)."""


def _flags(context, project, zone, cluster, namespace) -> _engine.GlobalFlags:
    return _engine.GlobalFlags(context=context, project=project, zone=zone, cluster=cluster,
                               namespace=namespace)


def _value_flags(pairs: Sequence[tuple]) -> List[str]:
    out: List[str] = []
    for flag, value in pairs:
        if value is not None:
            out += [flag, str(value)]
    return out


def _duration(name: str, value: Union[None, int, float, str]) -> Optional[str]:
    if value is None:
        return None
    try:
        return duration_flag(value)
    except ValueError:
        raise ValueError(f"{name}={value!r}: give a positive number of seconds or e.g. '30m'")


def serve_argv(flags: _engine.GlobalFlags, file: Optional[str], *, port: int, accelerator: str,
               args: Sequence[str], container_image: Optional[str], env, capture_env_vars,
               volumes, spot: bool, max_cost, from_job, idle_stop, ready_timeout, labels,
               requirements, context_dir, python, local_port, detach: bool) -> List[str]:
    """``kinetic serve``'s argv for these parameters (ValueError for what Python can tell is
    wrong before kinetic runs)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"port={port!r}: give the port the server listens on, 1 to 65535")
    if not file and not container_image:
        raise ValueError("nothing to serve: give the server's file (e.g. 'server.py'), or "
                         "container_image= an image whose entrypoint serves")
    if isinstance(args, str):
        raise ValueError(f"args={args!r}: give a list of arguments, e.g. ['--model', 'm']")
    argv = _engine.command(flags, "serve") + ([file] if file else [])
    argv += ["--port", str(port), "-a", accelerator, "-o", "json"]
    argv += ["--spot"] if spot else []
    argv += _value_flags([("--image", container_image), ("--requirements", requirements),
                          ("--context-dir", context_dir), ("--python", python),
                          ("--max-cost", max_cost), ("--local-port", local_port),
                          ("--idle-stop", _duration("idle_stop", idle_stop)),
                          ("--ready-timeout", _duration("ready_timeout", ready_timeout)),
                          ("--from", getattr(from_job, "job_id", from_job))])
    argv += named_env_flags(env, capture_env_vars)
    for mount in _data.volume_mounts(volumes):
        argv += ["--data", mount.flag()]
    for key, value in (labels or {}).items():
        argv += ["--label", f"{key}={value}"]
    argv += ["--detach"] if detach else []
    return argv + (["--", *args] if args else [])


class Server:
    """A server ``kinetic.serve`` started (or ``attach_server`` found).

    ``id`` is its job id, ``port`` its port in the job, ``url`` the local URL that reaches it
    (``http://127.0.0.1:LOCAL``; None for a detached or attached server: use
    ``port_forward()``). ``stop()`` (or leaving a with-block) stops it and removes everything
    kinetic made for it."""

    def __init__(self, server_id: str, port: int, flags: _engine.GlobalFlags, *,
                 url: Optional[str] = None, local_port: Optional[int] = None,
                 child: Optional[_engine.ReadyChild] = None):
        self.id = server_id
        self.port = port
        self.url = url
        self.local_port = local_port
        self._flags = flags
        self._child = child
        self._stopped = False

    def __repr__(self) -> str:
        where = self.url or "detached"
        return f"<kinetic.Server {self.id} port {self.port} {where}>"

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _cmd(self, *args: str) -> List[str]:
        return _engine.command(self._flags, *args)

    def status(self) -> Dict[str, Any]:
        """``kinetic serve status -o json``: ``state`` (pending, running, or how it ended),
        ``port``, ``accelerator``, ``cost_per_hour`` and ``cost`` so far (USD), ..."""
        done = _engine.run_captured(self._cmd("serve", "status", self.id, "-o", "json"))
        if done.returncode != 0:
            raise KineticError(f"kinetic serve status {self.id} failed: {done.error_line()}",
                               exit_code=done.returncode, job_id=self.id)
        return json.loads(done.stdout)

    def logs(self, tail: Optional[int] = None) -> str:
        """The server's log so far (its last ``tail`` lines when given)."""
        args = ["serve", "logs", self.id] + (["--tail", str(int(tail))] if tail else [])
        done = _engine.run_captured(self._cmd(*args))
        if done.returncode != 0:
            raise KineticError(f"kinetic serve logs {self.id} failed: {done.error_line()}",
                               exit_code=done.returncode, job_id=self.id)
        return done.stdout

    def port_forward(self, local: int = 0):
        """A context manager forwarding a local port (``local``, or any free one) to the
        server's port while the block runs, as ``kinetic port-forward``; it yields the local
        port. For a detached server, or a second way in to a foreground one."""
        spec = f"{int(local)}:{self.port}" if local else f":{self.port}"
        return _engine.forwarding(self._cmd("port-forward", self.id, spec, "-o", "json"), self.id)

    def stop(self) -> None:
        """Stops the server and removes everything kinetic made for it (``kinetic serve stop``);
        returns once it is gone. Stopping a stopped server does nothing."""
        if self._stopped:
            return
        if self._child is not None and self._child.proc.poll() is None:
            code = self._child.interrupt_and_wait(STOP_TIMEOUT_S)
            if code == 0:  # the foreground kinetic stopped it and removed it
                self._forget()
                return
        if self._child is not None:
            self._child.wait()
        done = _engine.run_captured(self._cmd("serve", "stop", self.id))
        if done.returncode != 0 and "no such" not in done.error_line():
            raise KineticError(f"kinetic serve stop {self.id} failed: {done.error_line()}",
                               exit_code=done.returncode, job_id=self.id)
        self._forget()

    def _forget(self) -> None:
        self._stopped = True
        self.url = None
        _running_in_foreground.discard(self)


def _startup_error(stderr_lines: Sequence[str], code: int) -> KineticError:
    lines = list(stderr_lines)
    server_id = job_id_in(lines)
    reason = last_error_line(lines) or f"kinetic serve exited {code}"
    if code == EXIT_INTERRUPTED:
        return JobCancelledError(f"the server was stopped before it answered: {reason}",
                                 exit_code=code, job_id=server_id)
    if code == 1:
        return ServerError(f"the server did not come up: {reason}", exit_code=code,
                           job_id=server_id)
    return KineticError(f"kinetic serve failed (exit {code}): {reason}", exit_code=code,
                        job_id=server_id)


def _start_foreground(argv: List[str], flags: _engine.GlobalFlags, port: int,
                      stream_logs: bool) -> Server:
    child = _engine.ReadyChild(argv, stream_logs)
    try:
        doc = child.read_ready_document()
    except KeyboardInterrupt:
        child.interrupt_and_wait(STOP_TIMEOUT_S)  # kinetic stops what it started
        raise
    if doc is None:
        raise _startup_error(child.stderr_tail, child.wait())
    server = Server(doc["id"], port, flags, url=doc.get("url"),
                    local_port=doc.get("local_port"), child=child)
    _running_in_foreground.add(server)
    return server


def _start_detached(argv: List[str], flags: _engine.GlobalFlags, port: int) -> Server:
    chunks: List[str] = []
    child = _engine.Streaming(argv, stdout_to=chunks.append)
    try:
        code = child.wait()
    except KeyboardInterrupt:
        child.interrupt_and_wait()
        raise
    if code != 0:
        raise _startup_error(child.stderr_tail, code)
    doc = json.loads("".join(chunks))
    return Server(doc["id"], port, flags)


def serve(file: Optional[str] = None, *, port: int, accelerator: str = "cpu",
          args: Sequence[str] = (), container_image: Optional[str] = None,
          env: Optional[Sequence[str]] = None, capture_env_vars: Optional[Sequence[str]] = None,
          volumes: Optional[Dict[str, _data.Data]] = None, spot: bool = False,
          max_cost: Union[None, int, float] = None, from_job: Any = None,
          idle_stop: Union[None, int, float, str] = None,
          ready_timeout: Union[None, int, float, str] = None,
          labels: Optional[Dict[str, str]] = None, requirements: Optional[str] = None,
          context_dir: Optional[str] = None, python: Optional[str] = None,
          local_port: Optional[int] = None, detach: bool = False, stream_logs: bool = False,
          context: Optional[str] = None, project: Optional[str] = None,
          zone: Optional[str] = None, cluster: Optional[str] = None,
          namespace: Optional[str] = None) -> Server:
    """Starts FILE as a server listening on ``port`` (as ``kinetic serve``) and returns once it
    answers there, with kinetic's progress shown meanwhile::

        with kinetic.serve("server.py", port=8000, accelerator="v5litepod-4",
                           from_job=train_job) as server:
            urllib.request.urlopen(server.url + "/generate", data=...)

    The server runs until ``stop()`` (or the block's end, or this process's end: its
    ``kinetic serve`` child then stops it). ``detach=True`` leaves it up after this process,
    reached with ``port_forward()`` and stopped with ``stop()`` or ``kinetic serve stop ID``.
    ``from_job`` (a job id or JobHandle that succeeded) shows its outputs at
    ``$KINETIC_INPUT_DIR/JOB/``; ``idle_stop`` stops it after that long without a connection.
    ``stream_logs`` writes the server's log here as it comes (default: kept; ``logs()``).

    Raises ValueError for bad parameters, ServerError when the server could not start, ended,
    or did not answer within ``ready_timeout`` (default 10 minutes; it is then left up),
    JobCancelledError when stopped before it answered (KeyboardInterrupt stops it too), and
    KineticError (``exit_code`` 2) for what kinetic refuses."""
    flags = _flags(context, project, zone, cluster, namespace)
    argv = serve_argv(flags, file, port=port, accelerator=accelerator, args=args,
                      container_image=container_image, env=env,
                      capture_env_vars=capture_env_vars, volumes=volumes, spot=spot,
                      max_cost=max_cost, from_job=from_job, idle_stop=idle_stop,
                      ready_timeout=ready_timeout, labels=labels, requirements=requirements,
                      context_dir=context_dir, python=python, local_port=local_port,
                      detach=detach)
    if detach:
        return _start_detached(argv, flags, port)
    return _start_foreground(argv, flags, port, stream_logs)


def _server_of(doc: Dict[str, Any], flags: _engine.GlobalFlags) -> Server:
    return Server(doc["id"], int(doc.get("port") or 0), flags)


def list_servers(*, context: Optional[str] = None, project: Optional[str] = None,
                 zone: Optional[str] = None, cluster: Optional[str] = None,
                 namespace: Optional[str] = None) -> List[Server]:
    """The servers of the context (``kinetic serve ls``), as handles without a URL."""
    flags = _flags(context, project, zone, cluster, namespace)
    done = _engine.run_captured(_engine.command(flags, "serve", "ls", "-o", "json"))
    if done.returncode != 0:
        raise KineticError(f"kinetic serve ls failed: {done.error_line()}",
                           exit_code=done.returncode)
    return [_server_of(doc, flags) for doc in json.loads(done.stdout).get("servers", [])]


def attach_server(server_id: str, *, context: Optional[str] = None,
                  project: Optional[str] = None, zone: Optional[str] = None,
                  cluster: Optional[str] = None, namespace: Optional[str] = None) -> Server:
    """A handle on server SERVER_ID (``kinetic serve status``): ``port_forward()``, ``logs()``,
    ``status()``, ``stop()``. KineticError when there is no such server."""
    flags = _flags(context, project, zone, cluster, namespace)
    done = _engine.run_captured(_engine.command(flags, "serve", "status", server_id, "-o",
                                                "json"))
    if done.returncode != 0:
        raise KineticError(f"no server {server_id}: {done.error_line()}",
                           exit_code=done.returncode, job_id=server_id)
    return _server_of(json.loads(done.stdout), flags)
