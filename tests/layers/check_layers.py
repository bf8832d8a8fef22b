#!/usr/bin/env python3
"""Fails when a lib/ folder includes a header of a folder it may not use.

The layers are docs/architecture.md "Layers": lower layers never include higher ones. What
each folder may use is written once, in lib/CMakeLists.txt: its kinetic_layer() call names it
with FOLDER and the folders it links with USES (and those whose inline headers alone it may
include with INCLUDES). This script reads those calls, so the link lines and the include rule
cannot drift apart; it runs before anything compiles (target kinetic_layers_check) and as the
ctest `layers`. A folder with sources but no kinetic_layer() call fails too, so a new folder's
place is decided once.

    tests/layers/check_layers.py [LIB_DIR]
"""
import os
import re
import sys

CALL = re.compile(r"^kinetic_layer\((.*?)\)", re.S | re.M)
KEYWORDS = {"FOLDER", "USES", "INCLUDES", "SYSTEM", "LINK", "SOURCES"}
INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)/[^/"]+"')


def read_layers(cmake_file):
    """{folder: set of folders it may include}, from the kinetic_layer() calls."""
    with open(cmake_file, encoding="utf-8") as f:
        text = re.sub(r"#[^\n]*", "", f.read())
    may_use = {}
    for call in CALL.finditer(text):
        words = call.group(1).split()
        args = {k: [] for k in KEYWORDS}
        key = None
        for word in words[1:]:
            if word in KEYWORDS:
                key = word
            elif key:
                args[key].append(word)
        if len(args["FOLDER"]) != 1:
            raise SystemExit(f"{cmake_file}: kinetic_layer({words[0]} ...) needs one FOLDER")
        folder = args["FOLDER"][0]
        may_use.setdefault(folder, set()).update(args["USES"], args["INCLUDES"])
    return may_use


# The Python API (python/kinetic) is the layer above the CLI: it drives the engine by running
# the kinetic binary and reading what it prints (-o json, docs/schemas.md), never a second copy
# of the journey. So it imports the standard library, cloudpickle and itself; only _engine.py
# starts processes, which makes it the one door to the engine.
PY_IMPORT = re.compile(r"^\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+(\.*[\w.]*)\s+import)",
                       re.M)
PY_THIRD_PARTY = {"cloudpickle"}
PY_ENGINE_DOOR = "_engine.py"
PY_PROCESS_CALLS = re.compile(r"\bos\.(?:system|popen|exec\w*|spawn\w*|posix_spawn\w*|fork)\b")


def python_layer_problems(package):
    """What in PACKAGE (python/kinetic) breaks the Python API's layer rule."""
    problems = []
    for name in sorted(os.listdir(package)):
        if not name.endswith(".py"):
            continue
        path = os.path.join(package, name)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        where = os.path.relpath(path, os.path.dirname(os.path.dirname(package)))
        for m in PY_IMPORT.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            modules = [x.strip() for x in m.group(1).split(",")] if m.group(1) else [m.group(2)]
            for module in modules:
                top = module.split(".")[0]
                if module.startswith(".") or top == "__future__":
                    continue
                if top == "subprocess" and name != PY_ENGINE_DOOR:
                    problems.append(f"{where}:{line}: imports subprocess; only {PY_ENGINE_DOOR} "
                                    "runs the kinetic binary (docs/architecture.md \"Layers\")")
                elif top not in sys.stdlib_module_names and top not in PY_THIRD_PARTY and \
                        top != "kinetic":
                    problems.append(f"{where}:{line}: imports {top}, which is neither the standard "
                                    "library nor cloudpickle (docs/python.md: no other dependency)")
        if name != PY_ENGINE_DOOR:
            for m in PY_PROCESS_CALLS.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{where}:{line}: {m.group(0)} starts a process; only "
                                f"{PY_ENGINE_DOOR} runs the kinetic binary")
    return problems


def main():
    lib = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..",
                                                              "..", "lib")
    may_use = read_layers(os.path.join(lib, "CMakeLists.txt"))
    problems = []
    package = os.path.join(lib, "..", "python", "kinetic")
    if os.path.isdir(package):
        problems += python_layer_problems(os.path.normpath(package))
    for folder, uses in sorted(may_use.items()):
        for used in sorted(uses - set(may_use)):
            problems.append(f"lib/CMakeLists.txt: lib/{folder}/ uses {used}/, which has no "
                            "kinetic_layer() call")
    for root, _, files in os.walk(lib):
        folder = os.path.relpath(root, lib)
        sources = [f for f in files if f.endswith((".cpp", ".h", ".hpp"))]
        if not sources:
            continue
        if folder not in may_use:
            problems.append(f"lib/{folder}/: a folder without a layer; give it a kinetic_layer() "
                            "call in lib/CMakeLists.txt and a row in docs/architecture.md")
            continue
        for name in sorted(sources):
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    used = m.group(1)
                    if used == folder or used in may_use[folder]:
                        continue
                    problems.append(f"lib/{folder}/{name}:{number}: includes {used}/, which "
                                    f"lib/{folder}/ may not use (its kinetic_layer() call in "
                                    "lib/CMakeLists.txt; docs/architecture.md \"Layers\")")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"layers ok: {len(may_use)} folders and the Python API")
    return 0


if __name__ == "__main__":
    sys.exit(main())
