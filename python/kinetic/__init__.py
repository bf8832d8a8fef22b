"""kinetic: run a Python function as a job on a Cloud TPU/GPU on GKE (or on this machine, the
local backend), with the `kinetic` binary doing the shipping. API-compatible with the Keras
team's Kinetic package; docs/python.md says what maps to which kinetic flag and what differs.

    import kinetic

    @kinetic.run(accelerator="v5litepod-1")
    def train(lr):
        ...
        return loss

    loss = train(0.01)                   # runs as a job, logs streamed, value returned
"""

from ._collections import BatchError, BatchHandle, attach_batch
from ._core import RemoteCallable, run
from ._data import Data
from ._errors import (JobCancelledError, JobFailedError, JobLostError, JobStartError,
                      JobTimeoutError, KineticError, RemoteError)
from ._jobs import JobHandle, JobStatus, attach, list_jobs
from ._serve import Server, ServerError, attach_server, list_servers, serve

__version__ = "0.1.0"

__all__ = [
    "run", "RemoteCallable", "Data", "JobHandle", "JobStatus", "attach", "list_jobs",
    "BatchHandle", "BatchError", "attach_batch", "serve", "Server", "ServerError",
    "list_servers", "attach_server", "__version__",
    "KineticError", "JobTimeoutError", "JobStartError", "JobCancelledError", "JobLostError",
    "JobFailedError", "RemoteError",
]
