"""``kinetic.Data``: a local directory or file, or a gs:// prefix, shown to the job.

As an argument (at any depth in lists, tuples and dict values) it becomes a ``--data`` mount and
the function receives the absolute path of that mount in the job, as a string:

- a local directory ``D``      → ``--data D:.kinetic-data/N:ro``, the argument ``.kinetic-data/N``;
- a local file ``F`` (name X)  → F is copied into a content-addressed cache directory
  ``$XDG_CACHE_HOME/kinetic/data-files/<sha256>/X`` (default ~/.cache), which is mounted:
  ``--data CACHE:.kinetic-data/N:ro``, the argument ``.kinetic-data/N/X``;
- ``gs://bucket/prefix``       → ``--data gs://bucket/prefix:.kinetic-data/N``.

The runner in the job turns those relative paths into absolute ones. In ``volumes=`` a Data
is mounted at the given absolute path instead (``--data SRC:/abs``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

DATA_DIR = ".kinetic-data"


class Data:
    """Data for a job: a local file or directory (relative, absolute or ``~``) or
    ``gs://bucket/prefix``.

    ``fuse`` is accepted for compatibility and changes nothing: on GKE kinetic always mounts
    gs:// data with Cloud Storage FUSE and copies local data. ``hf://`` is not supported.
    """

    def __init__(self, path: str, fuse: bool = False, hf_trust_remote_code: bool = False):
        if not isinstance(path, str) or not path:
            raise ValueError("Data(path): path must be a non-empty string")
        if path.startswith("hf://"):
            raise ValueError(f"Data({path!r}): hf:// data is not supported by kinetic; save the "
                             "dataset to a directory or gs:// prefix and pass that instead")
        if "://" in path and not path.startswith("gs://"):
            raise ValueError(f"Data({path!r}): only local paths and gs:// URIs are supported")
        self._fuse = bool(fuse)
        self._hf_trust_remote_code = bool(hf_trust_remote_code)
        self._hash: Optional[str] = None
        self._lock = threading.Lock()
        if path.startswith("gs://"):
            if len(path) <= len("gs://") or path[len("gs://")] == "/":
                raise ValueError(f"Data({path!r}): name a bucket: gs://BUCKET[/PREFIX]")
            self._path = path
        else:
            self._path = os.path.abspath(os.path.expanduser(path))
            if not os.path.exists(self._path):
                raise FileNotFoundError(f"Data({path!r}): {self._path} does not exist")

    path = property(lambda self: self._path, doc="abspath for local data, the URI otherwise")
    fuse = property(lambda self: self._fuse)
    hf_trust_remote_code = property(lambda self: self._hf_trust_remote_code)
    is_gcs = property(lambda self: self._path.startswith("gs://"))
    is_hf = property(lambda self: False)

    @property
    def is_dir(self) -> bool:
        """A gs:// Data always names a prefix (a directory)."""
        return self.is_gcs or os.path.isdir(self._path)

    def content_hash(self) -> str:
        """SHA-256 of the contents, "dir:"- or "file:"-prefixed; computed once (a snapshot)."""
        if self.is_gcs:
            raise ValueError(f"{self!r}: content_hash() needs local data")
        with self._lock:
            if self._hash is None:
                self._hash = _hash_local(self._path)
            return self._hash

    def __repr__(self) -> str:
        return f"Data({self._path!r}{', fuse=True' if self._fuse else ''})"

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_lock", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()


def _hash_local(path: str) -> str:
    digest = hashlib.sha256()
    if os.path.isfile(path):
        _hash_file_into(digest, path)
        return "file:" + digest.hexdigest()
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            digest.update(os.path.relpath(full, path).encode() + b"\0")
            _hash_file_into(digest, full)
    return "dir:" + digest.hexdigest()


def _hash_file_into(digest, path: str) -> None:
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)


def _file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    _hash_file_into(digest, path)
    return digest.hexdigest()


def cache_root() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kinetic", "data-files")


def cached_file_dir(path: str) -> str:
    """The cache directory holding a copy of file ``path`` under its own name (content-addressed,
    so an unchanged file is copied once). Mounting a directory, not the file, is what --data
    takes; the copy keeps the mount from exposing the file's siblings."""
    name = os.path.basename(path)
    target_dir = os.path.join(cache_root(), _file_sha256(path))
    target = os.path.join(target_dir, name)
    if os.path.isfile(target):
        return target_dir
    os.makedirs(target_dir, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=target_dir, prefix=".partial-")
    os.close(fd)
    try:
        shutil.copyfile(path, temp)
        os.chmod(temp, 0o644)
        os.replace(temp, target)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    return target_dir


@dataclass
class Mount:
    """One --data flag: SRC:DST[:ro]."""
    source: str
    dest: str
    read_only: bool

    def flag(self) -> str:
        return f"{self.source}:{self.dest}" + (":ro" if self.read_only else "")


def mount_for(data: Data, dest: str) -> Tuple[Mount, str]:
    """The mount for ``data`` at ``dest`` and the path the function gets (relative to the job's
    working directory when ``dest`` is)."""
    if data.is_gcs:
        return Mount(data.path.rstrip("/") or data.path, dest, False), dest
    if os.path.isdir(data.path):
        return Mount(data.path, dest, True), dest
    name = os.path.basename(data.path)
    return Mount(cached_file_dir(data.path), dest, True), dest + "/" + name


@dataclass
class Substituted:
    """The arguments with every Data replaced by its path, and what the call needs for that."""
    args: tuple
    kwargs: dict
    mounts: List[Mount]
    entries: List[Dict[str, Any]]  # the call header's "data": [{"at": [...], "path": ...}]


class _Walker:
    def __init__(self) -> None:
        self.by_identity: Dict[int, str] = {}
        self.mounts: List[Mount] = []
        self.entries: List[Dict[str, Any]] = []

    def path_for(self, data: Data) -> str:
        known = self.by_identity.get(id(data))
        if known is not None:
            return known
        mount, path = mount_for(data, f"{DATA_DIR}/{len(self.mounts)}")
        self.mounts.append(mount)
        self.by_identity[id(data)] = path
        return path

    def walk(self, node: Any, at: List[Any]) -> Any:
        if isinstance(node, Data):
            path = self.path_for(node)
            self.entries.append({"at": list(at), "path": path})
            return path
        if isinstance(node, (list, tuple)):
            items = [self.walk(item, at + [i]) for i, item in enumerate(node)]
            return _rebuild_sequence(node, items)
        if isinstance(node, dict):
            return _rebuild_mapping(node, {k: self._walk_value(k, v, at) for k, v in node.items()})
        if isinstance(node, (set, frozenset)) and any(isinstance(x, Data) for x in node):
            raise ValueError("a kinetic.Data cannot be in a set; use a list")
        return node

    def _walk_value(self, key: Any, value: Any, at: List[Any]) -> Any:
        if isinstance(key, Data):
            raise ValueError("a kinetic.Data cannot be a dict key; use it as a value")
        if not _contains_data(value):
            return value
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            raise ValueError(f"a kinetic.Data under a dict key of type {type(key).__name__} is "
                             "not supported; use str or int keys")
        return self.walk(value, at + [key])


def _contains_data(node: Any) -> bool:
    if isinstance(node, Data):
        return True
    if isinstance(node, (list, tuple, set, frozenset)):
        return any(_contains_data(x) for x in node)
    if isinstance(node, dict):
        return any(isinstance(k, Data) or _contains_data(v) for k, v in node.items())
    return False


def _rebuild_sequence(node, items):
    if isinstance(node, list):
        if type(node) is list:
            return items
        try:
            return type(node)(items)
        except Exception:
            return items
    if hasattr(type(node), "_make"):  # a named tuple
        return type(node)._make(items)
    try:
        return type(node)(items)
    except Exception:
        return tuple(items)


def _rebuild_mapping(node, items):
    if type(node) is dict:
        return items
    try:
        rebuilt = type(node)()
        rebuilt.update(items)
        return rebuilt
    except Exception:
        return items


def substitute(args: tuple, kwargs: dict) -> Substituted:
    """Replaces every Data in args/kwargs (deduplicated by identity) by its job path."""
    walker = _Walker()
    if not _contains_data(list(args)) and not _contains_data(kwargs):
        return Substituted(tuple(args), dict(kwargs), [], [])
    new_args = tuple(walker.walk(a, ["args", i]) for i, a in enumerate(args))
    new_kwargs = {k: (walker.walk(v, ["kwargs", k]) if _contains_data(v) else v)
                  for k, v in kwargs.items()}
    return Substituted(new_args, new_kwargs, walker.mounts, walker.entries)


def volume_mounts(volumes: Optional[Dict[str, Data]]) -> List[Mount]:
    """``volumes={"/abs": Data(...)}`` as mounts at those absolute paths (a file's cache
    directory is mounted there, so the file is /abs/NAME)."""
    return [mount_for(data, dest)[0] for dest, data in (volumes or {}).items()]


def validate_volumes(volumes: Any) -> None:
    """The original's checks, at decoration time."""
    if volumes is None:
        return
    if not isinstance(volumes, dict):
        raise TypeError("volumes must be a dict of '/abs/path': Data, not "
                        f"{type(volumes).__name__}")
    for dest, data in volumes.items():
        if not isinstance(dest, str) or not dest.startswith("/"):
            raise ValueError(f"volumes: mount path {dest!r} must be an absolute path string")
        if not isinstance(data, Data):
            raise TypeError(f"volumes[{dest!r}] must be a kinetic.Data, not "
                            f"{type(data).__name__}")
