"""Turning one call into a kinetic job: the call file, the `kinetic run --function` argv, and
the synchronous (foreground) and asynchronous (``--detach``) ways of running it."""

from __future__ import annotations

import datetime
import json
import math
import os
import shutil
import tempfile
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

import cloudpickle

from . import _data, _engine, _outputs, _payload, _result
from ._errors import KineticError, job_id_in
from ._jobs import JobHandle

# Containers that mean "kinetic builds the image": the original's bundled/prebuilt modes.
BUILT_IMAGE_NAMES = (None, "bundled", "prebuilt")


@dataclass
class RunOptions:
    """What ``@kinetic.run(...)`` was given (validated by the decorator)."""
    accelerator: str = "tpu-v5e-1"
    container_image: Optional[str] = None
    capture_env_vars: Optional[List[str]] = None
    volumes: Optional[Dict[str, _data.Data]] = None
    spot: bool = False
    output_dir: Optional[str] = None
    timeout: Union[None, int, float, str] = None
    retries: int = 0
    slices: int = 1
    priority: Optional[str] = None
    max_cost: Union[None, int, float, str] = None
    notify: Optional[List[str]] = None
    context_dir: Optional[str] = None
    env: Optional[List[str]] = None
    python: Optional[str] = None
    flex_start: bool = False  # --flex-start (docs/capacity.md)
    timeout_from: Optional[str] = None  # --timeout-from submit|start
    # `run --debug` (docs/serving.md): the call waits under debugpy for a debugger; kinetic
    # forwards a port to it and prints the launch configuration (run_async: `kinetic debug JOB`).
    debug: bool = False
    debug_port: int = 5678
    flags: _engine.GlobalFlags = field(default_factory=_engine.GlobalFlags)


def duration_flag(timeout: Union[int, float, str]) -> str:
    """Seconds (a number) or a kinetic duration string ("30m") as --timeout's value."""
    if isinstance(timeout, str):
        return timeout
    if isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f"timeout={timeout!r}: give a positive number of seconds or e.g. '30m'")
    return f"{int(math.ceil(timeout))}s"


def _python_version(options: RunOptions) -> str:
    import platform
    return options.python or ".".join(platform.python_version_tuple()[:2])


def image_flags(options: RunOptions) -> List[str]:
    """A custom image is used as is; kinetic's own image gets the caller's Python and
    cloudpickle versions, which the runner requires. The local backend builds no image: the
    job runs this interpreter (_engine.child_environment), so it is asked for none."""
    if options.container_image not in BUILT_IMAGE_NAMES:
        return ["--image", options.container_image]
    if _engine.backend_of(options.flags) == "local" and not options.python:
        return []
    return ["--python", _python_version(options), "--with",
            f"cloudpickle=={cloudpickle.__version__}"]


def env_flags(options: RunOptions) -> List[str]:
    return named_env_flags(options.env, options.capture_env_vars)


def named_env_flags(env: Optional[Sequence[str]],
                    capture_env_vars: Optional[Sequence[str]]) -> List[str]:
    """--env NAME: kinetic takes the value from its own environment (a copy of ours), so it
    never appears in argv; --capture-env GLOB each (``run`` and ``serve`` alike)."""
    out: List[str] = []
    for name in env or []:
        if name not in os.environ:
            raise ValueError(f"env={list(env)!r}: {name} is not set in this process's "
                             "environment; set it (os.environ) or drop it from env=")
        out += ["--env", name]
    for glob in capture_env_vars or []:
        out += ["--capture-env", glob]
    return out


def run_flags(options: RunOptions, mounts: Sequence[_data.Mount]) -> List[str]:
    out = ["-a", options.accelerator] + (["--spot"] if options.spot else [])
    out += ["--flex-start"] if options.flex_start else []
    out += image_flags(options) + env_flags(options)
    for mount in list(mounts) + _data.volume_mounts(options.volumes):
        out += ["--data", mount.flag()]
    if options.timeout is not None:
        out += ["--timeout", duration_flag(options.timeout)]
    if options.max_cost is not None:
        out += ["--max-cost", str(options.max_cost)]
    if options.timeout_from is not None:
        out += ["--timeout-from", options.timeout_from]
    if options.retries:
        out += ["--retries", str(int(options.retries))]
    if options.slices != 1:
        out += ["--slices", str(int(options.slices))]
    if options.priority is not None:
        out += ["--priority", options.priority]
    if options.debug:
        out += ["--debug", "--debug-port", str(options.debug_port)]
    notify = [options.notify] if isinstance(options.notify, str) else (options.notify or [])
    for url in notify:
        out += ["--notify", url]
    return out


@dataclass
class PreparedCall:
    name: str
    root: str
    blob: bytes
    mounts: List[_data.Mount]


def prepare(options: RunOptions, fn: Callable, args: tuple, kwargs: dict) -> PreparedCall:
    """The call file's bytes, with every Data replaced by its path in the job."""
    root = os.path.abspath(options.context_dir) if options.context_dir else \
        _payload.find_context_root(_payload.defining_dir(fn))
    if not os.path.isdir(root):
        raise ValueError(f"context_dir={root!r} is not a directory")
    substituted = _data.substitute(args, kwargs)
    name = _payload.display_name(fn)
    header = _payload.build_header(name, root, substituted.entries)
    blob = _payload.encode_call(header, fn, substituted.args, substituted.kwargs, root)
    return PreparedCall(name, root, blob, substituted.mounts)


@contextmanager
def private_dir() -> Iterator[str]:
    """A 0700 temporary directory (mkdtemp's mode) for the call file and outputs."""
    path = tempfile.mkdtemp(prefix="kinetic-call-")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def run_argv(options: RunOptions, call: PreparedCall, call_path: str,
             output: Optional[str], extra: Sequence[str] = ()) -> List[str]:
    argv = _engine.command(options.flags, "run", "--function", call_path,
                           "--context-dir", call.root)
    if output:
        argv += ["--output", output]
    return argv + run_flags(options, call.mounts) + list(extra)


def call_sync(options: RunOptions, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """Runs the call in the foreground (logs streamed) and returns its value or raises."""
    call = prepare(options, fn, args, kwargs)
    with private_dir() as temp:
        call_path = _payload.write_call_file(temp, call.blob)
        explicit = os.path.abspath(options.output_dir) if options.output_dir else None
        out = explicit or os.path.join(temp, "out")
        rewrite = None if explicit else _outputs.summary_rewriter(out, _outputs.default_dir)
        argv = run_argv(options, call, call_path, out)
        try:
            done = _engine.run_foreground(argv, rewrite_stderr=rewrite)
        except KeyboardInterrupt:
            _deliver(out, explicit)
            raise
        status = _result.load_status(out)
        blob = _result.read_result_bytes(out)
        job_id = status.get("id") or job_id_in(done.stderr_tail)
        _deliver(out, explicit, job_id)
    return _result.outcome(_result.decode_result(blob), done.returncode, job_id=job_id,
                           status=status, stderr_lines=done.stderr_tail)


def _deliver(out: str, explicit: Optional[str], job_id: Optional[str] = None) -> None:
    if explicit:
        _outputs.finalize(out, None)
    else:
        status_id = _result.load_status(out).get("id")
        job = job_id or status_id
        _outputs.finalize(out, _outputs.default_dir(job) if job else None)


def _now_iso() -> str:
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%SZ")


def submit(options: RunOptions, fn: Callable, args: tuple, kwargs: dict, *,
           labels: Sequence[str] = (), quiet: bool = False) -> JobHandle:
    """Submits the call with --detach and returns its handle. kinetic's progress lines go to
    sys.stderr unless ``quiet`` (a batch's children)."""
    call = prepare(options, fn, args, kwargs)
    explicit = os.path.abspath(options.output_dir) if options.output_dir else None
    extra = [a for label in labels for a in ("--label", label)] + ["--detach", "-o", "json"]
    with private_dir() as temp:
        call_path = _payload.write_call_file(temp, call.blob)
        argv = run_argv(options, call, call_path, explicit, extra)
        done = _run_detached(argv, quiet)
    if done.returncode != 0:
        raise KineticError(f"kinetic could not submit {call.name}: {done.error_line()}",
                           exit_code=done.returncode)
    submitted = _submitted_job(done.stdout)
    job_id = submitted["id"]
    flags = options.flags
    return JobHandle(job_id=job_id, func_name=call.name, accelerator=options.accelerator,
                     created_at=_now_iso(), output_dir=explicit or _outputs.default_dir(job_id),
                     context=flags.context, project=flags.project, zone=flags.zone,
                     cluster=flags.cluster, namespace=flags.namespace,
                     explicit_output=bool(explicit))


def _run_detached(argv: List[str], quiet: bool) -> _engine.Completed:
    if quiet:
        return _engine.run_captured(argv)
    chunks: List[str] = []
    child = _engine.Streaming(argv, stdout_to=chunks.append)
    child.wait()
    done = child.completed()
    done.stdout = "".join(chunks)
    return done


def _submitted_job(stdout: str) -> Dict[str, Any]:
    try:
        doc = json.loads(stdout)
    except ValueError:
        raise KineticError(f"kinetic run --detach -o json printed no JSON: {stdout[:200]!r}")
    if not isinstance(doc, dict) or not doc.get("id"):
        raise KineticError(f"kinetic run --detach -o json printed no job id: {stdout[:200]!r}")
    return doc


def warn_ignored(name: str, why: str) -> None:
    warnings.warn(f"kinetic.run({name}=...) is ignored: {why}", UserWarning, stacklevel=4)
