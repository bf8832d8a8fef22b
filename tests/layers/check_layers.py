#!/usr/bin/env python3
"""Fails when a lib/ folder includes a header of a folder it may not use.

The layers are docs/architecture.md "Layers": lower layers never include higher ones. Each
folder below names the folders it may include (besides its own and the standard library);
a new folder must be added here, so its place is decided once.

    tests/layers/check_layers.py [LIB_DIR]
"""
import os
import re
import sys

MAY_USE = {
    "core": set(),
    "http": {"core"},
    "config": {"core"},
    "render": {"core"},
    "auth": {"core", "http", "config"},
    "gcp": {"core", "http", "auth"},
    "k8s": {"core", "http", "auth", "gcp"},
    "pack": {"core"},
    "job": {"core", "pack"},
    "backend": {"core", "job", "pack", "render"},
    "backend/local": {"core", "config", "job", "pack", "render", "backend"},
    "backend/gke": {"core", "config", "http", "auth", "gcp", "k8s", "job", "pack", "render",
                    "backend"},
    "run": {"core", "config", "job", "pack", "render", "backend", "backend/gke"},
    "lazy": {"core"},
}

INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)/[^/"]+"')


def main():
    lib = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..",
                                                              "..", "lib")
    problems = []
    for root, _, files in os.walk(lib):
        folder = os.path.relpath(root, lib)
        sources = [f for f in files if f.endswith((".cpp", ".h", ".hpp"))]
        if not sources:
            continue
        if folder not in MAY_USE:
            problems.append(f"lib/{folder}/: a folder without a layer; add it to MAY_USE in "
                            "tests/layers/check_layers.py and to docs/architecture.md")
            continue
        for name in sorted(sources):
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    used = m.group(1)
                    if used == folder or used in MAY_USE[folder]:
                        continue
                    problems.append(f"lib/{folder}/{name}:{number}: includes {used}/, which "
                                    f"lib/{folder}/ may not use (docs/architecture.md \"Layers\")")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"layers ok: {len(MAY_USE)} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
