"""The call file (CALL.pkl): one line of JSON (the header), then
``cloudpickle.dumps((fn, args, kwargs))``. docs/python.md has the contract.

Modules whose file lies under the context root (the caller's own code) are pickled by value for
the dump, as the original does: the job then needs none of them importable, and a function
edited since the last import ships as it is now. kinetic itself and installed packages (a
.venv inside the project) stay by reference.
"""

from __future__ import annotations

import json
import os
import pickle
import platform
import sys
import threading
from typing import Any, Callable, Dict, List, Optional

import cloudpickle

CALL_FORMAT = 1
ROOT_MARKERS = ("pyproject.toml", "requirements.txt", "setup.py", "setup.cfg", ".git")

# cloudpickle's by-value registry is process-wide: calls pickled from several threads (a batch)
# must not undo each other's registrations.
_REGISTRY_LOCK = threading.Lock()


def defining_dir(fn: Callable) -> str:
    """The directory of the file that defines ``fn``; the cwd for a REPL or a notebook."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    return os.path.dirname(os.path.abspath(path)) if path else os.getcwd()


def find_context_root(start: str) -> str:
    """The folder shipped with the job: $KINETIC_PACKAGE_ROOT, else the nearest ancestor of
    ``start`` (above any package it is in) holding one of ROOT_MARKERS, else ``start``. Never
    $HOME or /."""
    override = os.environ.get("KINETIC_PACKAGE_ROOT")
    if override:
        return os.path.abspath(os.path.expanduser(override))
    home = os.path.abspath(os.path.expanduser("~"))
    here = os.path.abspath(start)
    while os.path.isfile(os.path.join(here, "__init__.py")) and os.path.dirname(here) != here:
        here = os.path.dirname(here)
    probe = here
    while probe not in (home, os.path.dirname(probe)):
        if any(os.path.exists(os.path.join(probe, m)) for m in ROOT_MARKERS):
            return probe
        probe = os.path.dirname(probe)
    if here in (home, os.path.dirname(here)):
        raise ValueError(f"kinetic will not ship {here} (your home or /) as the job's folder; "
                         "move the code into a project folder, or pass context_dir= or set "
                         "KINETIC_PACKAGE_ROOT")
    return here


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def sys_path_entries(root: str) -> List[str]:
    """The caller's sys.path entries inside ``root``, relative to it ("" = the root), in order."""
    out: List[str] = []
    for entry in sys.path:
        full = os.path.abspath(entry or os.getcwd())
        if _inside(full, root):
            rel = os.path.relpath(full, root)
            rel = "" if rel == "." else rel.replace(os.sep, "/")
            if rel not in out:
                out.append(rel)
    return out


def _is_installed(path: str) -> bool:
    parts = path.split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


def modules_to_pickle_by_value(root: str) -> List[Any]:
    chosen = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not path or name == "__main__" or name == "kinetic" or name.startswith("kinetic."):
            continue
        path = os.path.abspath(path)
        if _inside(path, root) and not _is_installed(path):
            chosen.append(module)
    return chosen


def _dumps_by_value(obj: Any, root: str) -> bytes:
    registered = []
    with _REGISTRY_LOCK:
        try:
            for module in modules_to_pickle_by_value(root):
                if not _registered(module):
                    cloudpickle.register_pickle_by_value(module)
                    registered.append(module)
            return cloudpickle.dumps(obj)
        finally:
            for module in registered:
                cloudpickle.unregister_pickle_by_value(module)


def _registered(module) -> bool:
    check = getattr(cloudpickle.cloudpickle, "_is_registered_pickle_by_value", None)
    return bool(check and check(module))


def pickling_error(fn: Callable, args: tuple, kwargs: dict, root: str, cause: Exception):
    """The ValueError naming the piece that cannot be pickled (tried one at a time)."""
    pieces = [("the function " + getattr(fn, "__qualname__", repr(fn)), fn)]
    pieces += [(f"argument {i}", a) for i, a in enumerate(args)]
    pieces += [(f"keyword argument {k!r}", v) for k, v in kwargs.items()]
    for what, value in pieces:
        try:
            _dumps_by_value(value, root)
        except Exception as e:
            return ValueError(f"kinetic could not pickle {what} (type {type(value).__name__}): "
                              f"{type(e).__name__}: {e}")
    return ValueError(f"kinetic could not pickle the call: {type(cause).__name__}: {cause}")


def display_name(fn: Callable) -> str:
    """module.qualname; a script's own functions are named after the script's file."""
    module = getattr(fn, "__module__", None) or ""
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "call")
    if module == "__main__":
        path = getattr(sys.modules.get("__main__"), "__file__", None)
        module = os.path.splitext(os.path.basename(path))[0] if path else "__main__"
    return f"{module}.{qualname}" if module else qualname


def build_header(name: str, root: str, data_entries: List[Dict[str, Any]],
                 python: Optional[str] = None) -> Dict[str, Any]:
    return {"kinetic_call": CALL_FORMAT, "name": name,
            "python": python or platform.python_version(),
            "cloudpickle": cloudpickle.__version__,
            "sys_path": sys_path_entries(root), "data": data_entries}


def encode_call(header: Dict[str, Any], fn: Callable, args: tuple, kwargs: dict,
                root: str) -> bytes:
    """The call file's bytes. A pickling failure is a ValueError naming the argument."""
    try:
        body = _dumps_by_value((fn, tuple(args), dict(kwargs)), root)
    except (pickle.PicklingError, TypeError, AttributeError, ValueError,
            RecursionError, NotImplementedError) as e:
        raise pickling_error(fn, args, kwargs, root, e) from e
    line = json.dumps(header, separators=(",", ":"), ensure_ascii=False)
    return line.encode("utf-8") + b"\n" + body


def decode_call(blob: bytes):
    """(header, (fn, args, kwargs)) from a call file's bytes (for tests and tools)."""
    line, _, body = blob.partition(b"\n")
    return json.loads(line.decode("utf-8")), pickle.loads(body)


def write_call_file(directory: str, blob: bytes) -> str:
    path = os.path.join(directory, "call.pkl")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(blob)
    return path
