# No in-cluster script defines a name lib/job/incluster_common.py defines: the build puts the
# shared code ahead of each script in one module, so a script's own `quote` or `Kube` would
# silently replace the shared one, for the shared code too. Run by
# tests/integration/test_incluster_common.cpp with the source tree's root; exits 1 naming each
# clash.
import os
import symtable
import sys

SHARED = "lib/job/incluster_common.py"
SCRIPTS = ("lib/job/bootstrap.py", "lib/backend/gke/auto_down.py",
           "lib/backend/gke/pipeline_runner.py")


def defined(root, path):
    with open(os.path.join(root, path)) as f:
        table = symtable.symtable(f.read(), path, "exec")
    return {s.get_name() for s in table.get_symbols() if s.is_assigned() and not s.is_imported()}


def main(root):
    shared = defined(root, SHARED)
    clashes = 0
    for script in SCRIPTS:
        for name in sorted(shared & defined(root, script)):
            print("%s defines %s, which %s defines too" % (script, name, SHARED))
            clashes += 1
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
