"""An in-tree PEP 517 build backend for the kinetic package: standard library only, no build
requirements, so that `pip install ./python` works with no package index (offline, in CI).

It builds a pure-Python wheel (py3-none-any) of the `kinetic` package with a dist-info
(METADATA, WHEEL, RECORD with sha256s), an sdist, and an editable wheel (a .pth file pointing
at the source tree). Metadata comes from pyproject.toml's [project] table.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "kinetic"
WHEEL_TAG = "py3-none-any"
# Reproducible archives: SOURCE_DATE_EPOCH if set, else the zip format's earliest date.
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))


# -- pyproject.toml ------------------------------------------------------------------------------

def _parse_project_fallback(text: str) -> dict:
    # For Python < 3.11 (no tomllib): the [project] table's one-line `key = "str"`,
    # `key = ["a", "b"]` and `key = { text = "x" }` entries, which is all this file uses.
    project, in_project = {}, False
    for raw in text.splitlines():
        line = raw.split(" #")[0].strip()
        if line.startswith("["):
            in_project = line == "[project]"
            continue
        match = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*(.+)$', line)
        if not (in_project and match):
            continue
        key, value = match.group(1), match.group(2).strip()
        if value.startswith("["):
            project[key] = re.findall(r'"([^"]*)"', value)
        elif value.startswith("{"):
            project[key] = dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', value))
        else:
            project[key] = value.strip('"')
    return project


def read_project() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    try:
        import tomllib
    except ImportError:
        return _parse_project_fallback(text)
    return tomllib.loads(text)["project"]


def _dist_name(project: dict) -> str:
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def metadata_text(project: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}",
             f"Version: {project['version']}"]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    license_ = project.get("license")
    if isinstance(license_, dict) and license_.get("text"):
        lines.append(f"License: {license_['text']}")
    lines += [f"Requires-Dist: {dep}" for dep in project.get("dependencies", [])]
    readme = os.path.join(ROOT, str(project.get("readme", "")))
    body = ""
    if project.get("readme") and os.path.isfile(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def wheel_text() -> str:
    return ("Wheel-Version: 1.0\nGenerator: kinetic_build\nRoot-Is-Purelib: true\n"
            f"Tag: {WHEEL_TAG}\n")


# -- the files -----------------------------------------------------------------------------------

def package_files() -> list:
    """(archive name, path) of every file of the package, sorted; caches left out."""
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(dirpath, name)
            out.append((os.path.relpath(path, ROOT).replace(os.sep, "/"), path))
    return out


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _zip_write(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=time.gmtime(max(EPOCH, 315532800))[:6])
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def _write_wheel(wheel_directory: str, contents: list) -> str:
    """contents: (archive name, bytes) of the wheel's files besides the dist-info."""
    project = read_project()
    dist = f"{_dist_name(project)}-{project['version']}"
    info_dir = f"{dist}.dist-info"
    contents = contents + [(f"{info_dir}/METADATA", metadata_text(project).encode()),
                           (f"{info_dir}/WHEEL", wheel_text().encode())]
    record = [_record_line(name, data) for name, data in contents]
    record.append(f"{info_dir}/RECORD,,")
    filename = f"{dist}-{WHEEL_TAG}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as archive:
        for name, data in contents:
            _zip_write(archive, name, data)
        _zip_write(archive, f"{info_dir}/RECORD", ("\n".join(record) + "\n").encode())
    return filename


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# -- PEP 517 / PEP 660 hooks ---------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = read_project()
    info_dir = f"{_dist_name(project)}-{project['version']}.dist-info"
    path = os.path.join(metadata_directory, info_dir)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "METADATA"), "w", encoding="utf-8") as f:
        f.write(metadata_text(project))
    with open(os.path.join(path, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(wheel_text())
    return info_dir


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(name, _read(path)) for name, path in package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth line adds the source tree to sys.path: edits take effect without reinstalling.
    return _write_wheel(wheel_directory, [("__editable__.kinetic.pth", (ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    project = read_project()
    base = f"{_dist_name(project)}-{project['version']}"
    files = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")),
             ("_build/kinetic_build.py", os.path.abspath(__file__))] + package_files()
    if os.path.isfile(os.path.join(ROOT, "README.md")):
        files.append(("README.md", os.path.join(ROOT, "README.md")))
    filename = f"{base}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) \
            as archive:
        _tar_add(archive, f"{base}/PKG-INFO", metadata_text(project).encode())
        for name, path in files:
            _tar_add(archive, f"{base}/{name}", _read(path))
    return filename


def _tar_add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), EPOCH, 0o644
    archive.addfile(info, io.BytesIO(data))
