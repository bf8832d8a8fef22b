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


def main():
    lib = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..",
                                                              "..", "lib")
    may_use = read_layers(os.path.join(lib, "CMakeLists.txt"))
    problems = []
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
    print(f"layers ok: {len(may_use)} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
