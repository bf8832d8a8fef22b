"""``@kinetic.run(...)`` and ``RemoteCallable``: a function that runs as a kinetic job."""

from __future__ import annotations

import functools
import operator
import re
from typing import Any, Callable, Dict, Generic, Iterable, List, Optional, TypeVar, Union

from . import _data, _engine, _submit
from ._jobs import JobHandle

R = TypeVar("R")

BACKENDS = (None, "gke", "pathways")


class RemoteCallable(Generic[R]):
    """What ``@kinetic.run`` returns. Calling it runs the function as a job and returns its
    value (logs streamed meanwhile); ``run_async`` returns a JobHandle once submitted;
    ``run_async_map`` submits one job per input (a BatchHandle)."""

    def __init__(self, func: Callable[..., R], options: _submit.RunOptions):
        self._func = func
        self._options = options
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any, **kwargs: Any) -> R:
        return _submit.call_sync(self._options, self._func, args, kwargs)

    def run_async(self, *args: Any, **kwargs: Any) -> JobHandle:
        return _submit.submit(self._options, self._func, args, kwargs)

    def run_async_map(self, inputs: Iterable[Any], **kwargs: Any):
        from ._collections import map_inputs
        return map_inputs(self, inputs, **kwargs)

    def _submit_child(self, args: tuple, kwargs: dict, labels: List[str]) -> JobHandle:
        return _submit.submit(self._options, self._func, args, kwargs, labels=labels,
                              quiet=True)

    def __get__(self, instance: Any, owner: Any = None):
        if instance is None:
            return self
        return _BoundRemoteCallable(self, instance)

    def __reduce__(self):
        # Pickled (e.g. reached inside another call's payload) it is the plain function: in the
        # job it runs there, in-process; jobs do not submit jobs.
        return operator.itemgetter(0), ((self._func,),)

    def __repr__(self) -> str:
        return f"<kinetic.RemoteCallable {getattr(self._func, '__qualname__', self._func)!r}>"


class _BoundRemoteCallable:
    """A RemoteCallable reached through an instance: ``self`` goes first."""

    def __init__(self, remote: RemoteCallable, instance: Any):
        self._remote = remote
        self._instance = instance

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._remote(self._instance, *args, **kwargs)

    def run_async(self, *args: Any, **kwargs: Any) -> JobHandle:
        return self._remote.run_async(self._instance, *args, **kwargs)

    def run_async_map(self, inputs: Iterable[Any], **kwargs: Any):
        from ._collections import map_inputs
        return map_inputs(self, inputs, **kwargs)

    def _submit_child(self, args: tuple, kwargs: dict, labels: List[str]) -> JobHandle:
        return self._remote._submit_child((self._instance,) + tuple(args), kwargs, labels)


def _validate_callable(func: Any) -> None:
    if isinstance(func, (classmethod, staticmethod)):
        raise TypeError("@kinetic.run must be applied below @classmethod/@staticmethod, "
                        "directly on the function")
    if hasattr(func, "cache_clear") and hasattr(func, "cache_info"):
        raise TypeError("@kinetic.run cannot wrap an lru_cache/cache function; apply the "
                        "cache inside the job instead")
    if not callable(func):
        raise TypeError(f"@kinetic.run needs a callable, not {type(func).__name__}")


def _ensure_name(func: Any) -> None:
    if getattr(func, "__name__", None):
        return
    base = getattr(getattr(func, "func", None), "__name__", None) or type(func).__name__
    try:
        func.__name__ = re.sub(r"\W", "_", base) or "call"
    except (AttributeError, TypeError):
        raise TypeError(f"@kinetic.run: {func!r} has no __name__ and none can be set; wrap it "
                        "in a def")


def _validate_options(backend: Optional[str], volumes: Any, retries: int) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"Unknown backend {backend!r}: use 'gke' or None (kinetic picks a "
                         "JobSet for multi-host TPU slices by itself)")
    _data.validate_volumes(volumes)
    if retries is None or int(retries) < 0:
        raise ValueError(f"retries={retries!r}: give 0 or more")


def run(accelerator: str = "tpu-v5e-1", container_image: Optional[str] = None,
        base_image_repo: Optional[str] = None, zone: Optional[str] = None,
        project: Optional[str] = None, capture_env_vars: Optional[List[str]] = None,
        cluster: Optional[str] = None, backend: Optional[str] = None,
        namespace: Optional[str] = None, volumes: Optional[Dict[str, _data.Data]] = None,
        spot: bool = False, output_dir: Optional[str] = None, debug: bool = False, *,
        timeout: Union[None, int, float, str] = None, retries: int = 0, slices: int = 1,
        priority: Optional[str] = None, max_cost: Union[None, int, float, str] = None,
        notify: Union[None, str, List[str]] = None, context: Optional[str] = None,
        context_dir: Optional[str] = None, env: Optional[List[str]] = None,
        python: Optional[str] = None, flex_start: bool = False,
        timeout_from: Optional[str] = None,
        debug_port: int = 5678) -> Callable[[Callable[..., R]], RemoteCallable[R]]:
    """Decorator: run the function as a kinetic job (see docs/python.md for every parameter
    and the kinetic flag it becomes). Use with parentheses: ``@kinetic.run(accelerator="cpu")``.
    """
    _validate_options(backend, volumes, retries)
    if slices is None or int(slices) < 1:
        raise ValueError(f"slices={slices!r}: give 1 or more (slices of a multi-host TPU)")
    if priority not in (None, "low", "normal", "high"):
        raise ValueError(f"priority={priority!r}: give 'low', 'normal' or 'high' (a job's turn "
                         "in a cluster's queue: docs/capacity.md)")
    if timeout is not None:
        _submit.duration_flag(timeout)
    if spot and flex_start:
        raise ValueError("spot=True and flex_start=True are two kinds of capacity; pick one")
    if timeout_from not in (None, "submit", "start"):
        raise ValueError(f"timeout_from={timeout_from!r}: give 'submit' (a wait for capacity "
                         "counts) or 'start' (it does not)")
    if timeout_from is not None and timeout is None and max_cost is None:
        raise ValueError("timeout_from says what timeout counts from; give timeout= too")
    if base_image_repo is not None:
        _submit.warn_ignored("base_image_repo", "kinetic builds its own image (or use "
                             "container_image= for a ready one)")
    if output_dir and "://" in output_dir:
        raise ValueError(f"output_dir={output_dir!r}: kinetic delivers outputs to a local "
                         "directory; the job writes them under $KINETIC_OUTPUT_DIR")
    options = _submit.RunOptions(
        accelerator=accelerator, container_image=container_image,
        capture_env_vars=list(capture_env_vars or []), volumes=volumes, spot=spot,
        output_dir=output_dir, timeout=timeout, retries=int(retries), slices=int(slices),
        priority=priority, max_cost=max_cost, flex_start=bool(flex_start),
        timeout_from=timeout_from, debug=bool(debug), debug_port=int(debug_port),
        notify=notify, context_dir=context_dir, env=list(env or []), python=python,
        flags=_engine.GlobalFlags(context, project, zone, cluster, namespace))

    def decorate(func: Callable[..., R]) -> RemoteCallable[R]:
        _validate_callable(func)
        _ensure_name(func)
        return RemoteCallable(func, options)
    return decorate
