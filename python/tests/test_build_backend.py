"""The in-tree PEP 517 backend builds a valid wheel and sdist with the standard library."""

import base64
import csv
import hashlib
import importlib
import io
import os
import sys
import tarfile
import zipfile

from conftest import PYTHON_DIR

sys.path.insert(0, os.path.join(PYTHON_DIR, "_build"))
kinetic_build = importlib.import_module("kinetic_build")


def test_no_build_requirements():
    assert kinetic_build.get_requires_for_build_wheel() == []
    assert kinetic_build.get_requires_for_build_sdist() == []


def test_wheel_has_the_package_and_a_correct_record(tmp_path):
    name = kinetic_build.build_wheel(str(tmp_path))
    assert name == "kinetic-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / name) as wheel:
        names = wheel.namelist()
        assert "kinetic/__init__.py" in names and "kinetic/_engine.py" in names
        assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
        metadata = wheel.read("kinetic-0.1.0.dist-info/METADATA").decode()
        assert "Name: kinetic\n" in metadata and "Requires-Dist: cloudpickle" in metadata
        assert "Requires-Python: >=3.9" in metadata
        assert "Tag: py3-none-any" in wheel.read("kinetic-0.1.0.dist-info/WHEEL").decode()
        rows = list(csv.reader(io.StringIO(wheel.read("kinetic-0.1.0.dist-info/RECORD").decode())))
        assert {r[0] for r in rows} == set(names)
        for path, digest, size in rows:
            if path.endswith("RECORD"):
                assert digest == size == ""
                continue
            data = wheel.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + expected.decode() and int(size) == len(data)


def test_metadata_and_sdist(tmp_path):
    info = kinetic_build.prepare_metadata_for_build_wheel(str(tmp_path))
    assert (tmp_path / info / "METADATA").read_text().startswith("Metadata-Version: 2.1")
    sdist = kinetic_build.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / sdist) as tar:
        names = tar.getnames()
    assert "kinetic-0.1.0/pyproject.toml" in names and "kinetic-0.1.0/PKG-INFO" in names
    assert "kinetic-0.1.0/_build/kinetic_build.py" in names


def test_the_fallback_toml_reader_agrees_with_tomllib():
    with open(os.path.join(PYTHON_DIR, "pyproject.toml")) as f:
        text = f.read()
    fallback = kinetic_build._parse_project_fallback(text)
    for key in ("name", "version", "requires-python", "dependencies"):
        assert fallback[key] == kinetic_build.read_project()[key]
