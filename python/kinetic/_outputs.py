"""Where a job's outputs end up.

kinetic always delivers into an explicit ``--output`` directory. With ``output_dir`` given that
is it. Otherwise it is a private temporary directory, and afterwards the outputs the job wrote
(anything besides kinetic's status.json) move to ``./kinetic-out/JOB/``, where `kinetic run`
would have put them; a job that wrote none leaves nothing in the user's directory. Either way
``.kinetic/`` (the call's result) is deleted once read.
"""

from __future__ import annotations

import os
import re
import shutil
from typing import Callable, Optional

KINETIC_FILES = {".kinetic", "status.json"}


def default_dir(job_id: str) -> str:
    return os.path.abspath(os.path.join("kinetic-out", job_id))


def has_user_outputs(out_dir: str) -> bool:
    try:
        return any(name not in KINETIC_FILES for name in os.listdir(out_dir))
    except OSError:
        return False


def _merge_move(src: str, dst: str) -> None:
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        source, target = os.path.join(src, name), os.path.join(dst, name)
        if os.path.isdir(source) and not os.path.islink(source) and os.path.isdir(target):
            _merge_move(source, target)
        else:
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            shutil.move(source, target)


def finalize(out_dir: str, dest: Optional[str], move_all: bool = False) -> Optional[str]:
    """Drops .kinetic/ from ``out_dir``; when ``dest`` differs from it (a private temporary
    ``out_dir``), moves the outputs to ``dest`` if the job wrote any (or always, with
    ``move_all``: a directory the user named gets status.json too) and removes ``out_dir``.
    Returns where the outputs are, or None when there are none."""
    shutil.rmtree(os.path.join(out_dir, ".kinetic"), ignore_errors=True)
    if dest is None or os.path.abspath(dest) == os.path.abspath(out_dir):
        return out_dir
    moved = None
    if os.path.isdir(out_dir) and (move_all or has_user_outputs(out_dir)):
        _merge_move(out_dir, dest)
        moved = dest
    shutil.rmtree(out_dir, ignore_errors=True)
    return moved


def summary_rewriter(temp_out: str, dest_for: Callable[[str], str]) -> Callable[[str], str]:
    """Rewrites kinetic's summary line, which names the private temporary ``--output``: to the
    final place when the job wrote outputs, else the mention is dropped. (kinetic prints that
    line after delivering, so the directory already says which.)"""
    pattern = re.compile(r"(;\s*)?outputs in " + re.escape(temp_out.rstrip("/")) + r"/?")
    job = re.compile(r"\bjob-[0-9a-f]{4,}\b")

    def rewrite(line: str) -> str:
        if temp_out.rstrip("/") not in line:
            return line
        found = job.search(line)
        if found and has_user_outputs(temp_out):
            dest = os.path.relpath(dest_for(found.group(0)))
            return pattern.sub(lambda m: (m.group(1) or "") + f"outputs in {dest}/", line)
        return pattern.sub("", line)
    return rewrite
