"""A job's port reached from this process while a ``with`` block runs: ``kinetic port-forward JOB
[LOCAL]:REMOTE -o json`` as a child, ended as Ctrl-C ends it (docs/serving.md)."""

from __future__ import annotations

import collections
import contextlib
import json
import signal
import subprocess
import threading
from typing import Iterator, List

from . import _engine
from ._errors import KineticError, last_error_line

STDERR_LINES_KEPT = 20
STOP_TIMEOUT_S = 30


def _drain(pipe, kept: collections.deque) -> None:
    # Warnings (a refused connection) keep coming while the block runs: a full pipe would stall
    # the forward.
    for line in pipe:
        kept.append(line)


@contextlib.contextmanager
def forwarded(argv: List[str], job_id: str) -> Iterator[int]:
    """Runs ARGV (a port-forward of one port with ``-o json``) and yields the local port once it
    listens; stops it (SIGINT: every connection closed, exit 0) when the block ends. A forward
    that cannot start raises KineticError with kinetic's own line and exit code."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_engine.child_environment(), text=True,
                            start_new_session=True)
    kept: collections.deque = collections.deque(maxlen=STDERR_LINES_KEPT)
    drainer = threading.Thread(target=_drain, args=(proc.stderr, kept), daemon=True)
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
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        drainer.join()
        proc.stdout.close()
        proc.stderr.close()
