"""The call file the package writes (no binary needed)."""

import json
import os
import sys
import threading

import cloudpickle
import pytest

from kinetic import _payload


def double(x):
    return 2 * x


def test_header_has_every_contract_key(project):
    header = _payload.build_header("mod.f", str(project), [])
    assert set(header) == {"kinetic_call", "name", "python", "cloudpickle", "sys_path", "data"}
    assert header["kinetic_call"] == 1
    assert header["cloudpickle"] == cloudpickle.__version__
    assert header["python"].split(".")[:2] == [str(v) for v in sys.version_info[:2]]


def test_call_file_is_a_json_line_then_the_pickle(project):
    header = _payload.build_header("m.double", str(project), [])
    blob = _payload.encode_call(header, double, (21,), {"unused": None}, str(project))
    first, _, _ = blob.partition(b"\n")
    assert json.loads(first)["name"] == "m.double"
    decoded_header, (fn, args, kwargs) = _payload.decode_call(blob)
    assert decoded_header == header
    assert fn(*args) == 42 and kwargs == {"unused": None}


def test_sys_path_entries_inside_the_root_are_relative(project, monkeypatch):
    (project / "src").mkdir()
    monkeypatch.setattr(sys, "path", [str(project / "src"), "", "/usr/lib/python3", str(project)])
    assert _payload.sys_path_entries(str(project)) == ["src", ""]


def test_a_pickling_failure_names_the_argument(project):
    header = _payload.build_header("m.double", str(project), [])
    with pytest.raises(ValueError, match=r"could not pickle argument 1 \(type lock\)"):
        _payload.encode_call(header, double, (1, threading.Lock()), {}, str(project))
    with pytest.raises(ValueError, match=r"keyword argument 'lock' \(type lock\)"):
        _payload.encode_call(header, double, (), {"lock": threading.Lock()}, str(project))


def test_modules_under_the_root_go_by_value_and_registration_is_undone(project, monkeypatch):
    (project / "helper_mod_kt.py").write_text("def triple(x):\n    return 3 * x\n")
    monkeypatch.syspath_prepend(str(project))
    import helper_mod_kt
    header = _payload.build_header("helper_mod_kt.triple", str(project), [])
    blob = _payload.encode_call(header, helper_mod_kt.triple, (2,), {}, str(project))
    assert b"helper_mod_kt" in blob
    del sys.modules["helper_mod_kt"]
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(project)])
    _, (fn, args, _) = _payload.decode_call(blob)  # loads without the module importable
    assert fn(*args) == 6
    assert not _payload._registered(helper_mod_kt)


def test_context_root_walks_up_to_a_marker_above_packages(project):
    pkg = project / "src" / "pkg" / "sub"
    pkg.mkdir(parents=True)
    for d in (project / "src" / "pkg", pkg):
        (d / "__init__.py").write_text("")
    assert _payload.find_context_root(str(pkg)) == str(project)


def test_context_root_override_and_home_refusal(tmp_path, monkeypatch):
    monkeypatch.setenv("KINETIC_PACKAGE_ROOT", str(tmp_path))
    assert _payload.find_context_root("/somewhere") == str(tmp_path)
    monkeypatch.delenv("KINETIC_PACKAGE_ROOT")
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ValueError, match="home or /"):
        _payload.find_context_root(str(tmp_path))


def test_display_name_of_a_script_function_uses_the_file(monkeypatch):
    main = type(sys)("__main__")
    main.__file__ = "/x/train.py"
    monkeypatch.setitem(sys.modules, "__main__", main)

    def fit():
        pass
    fit.__module__ = "__main__"
    assert _payload.display_name(fit).startswith("train.")


def test_call_file_is_private(tmp_path):
    path = _payload.write_call_file(str(tmp_path), b"x")
    assert os.stat(path).st_mode & 0o777 == 0o600
