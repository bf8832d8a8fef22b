# The bootstrap's unpacker (lib/job/bootstrap.py extract_safely) against hostile archives: run by
# test_bootstrap.cpp BootstrapUnpack with the function's source as argv[1]. Every case is
# refused with exit code 126 and leaves nothing outside the destination, whatever the Python's
# tarfile filter does (issue #28 point 10). Prints what went wrong; exits 1 if anything did.
import io
import os
import shutil
import sys
import tarfile
import tempfile


class Failure(Exception):
    pass


exec(open(sys.argv[1]).read())


def archive(path, members):
    with tarfile.open(path, "w") as t:
        for name, kind, arg in members:
            info = tarfile.TarInfo(name)
            if kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, arg
                t.addfile(info)
            elif kind == "hard":
                info.type, info.linkname = tarfile.LNKTYPE, arg
                t.addfile(info)
            elif kind == "dev":
                info.type = tarfile.CHRTYPE
                t.addfile(info)
            else:
                data = arg.encode()
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))


def unpack(members):
    # ROOT/above/dest: a link that escapes by one or two levels lands in ROOT/above or ROOT.
    root = tempfile.mkdtemp()
    dest = os.path.join(root, "above", "dest")
    path = os.path.join(root, "a.tar")
    archive(path, members)
    try:
        with tarfile.open(path) as t:
            extract_safely(t, dest, "outputs of step s")
        return root, dest, None
    except Failure as e:
        return root, dest, e


def escapes(root, dest):
    # Anything written outside DEST, or a link left in it that resolves outside.
    found = []
    if sorted(os.listdir(root)) != ["a.tar", "above"]:
        found.append("wrote %s" % sorted(os.listdir(root)))
    if os.listdir(os.path.join(root, "above")) != ["dest"]:
        found.append("wrote %s" % os.listdir(os.path.join(root, "above")))
    real = os.path.realpath(dest)
    for dirpath, dirs, files in os.walk(dest):
        for n in dirs + files:
            p = os.path.realpath(os.path.join(dirpath, n))
            if p != real and not p.startswith(real + os.sep):
                found.append("left %s -> %s" % (n, p))
    return found


REFUSED = [
    ("a chained link", [("x", "link", "."), ("a", "link", "x/..")], "resolving outside"),
    ("the chain the other way", [("a", "link", "x/.."), ("x", "link", ".")], "resolving outside"),
    ("a chain two levels up", [("d/x", "link", ".."), ("d/a", "link", "x/../..")],
     "resolving outside"),
    ("a write through a chained link",
     [("x", "link", "."), ("a", "link", "x/.."), ("a/escaped.txt", "file", "pwned")],
     "goes through the symlink a"),
    ("a write through a link inside", [("d", "link", "."), ("d/f", "file", "x")],
     "goes through the symlink d"),
    ("an absolute name", [("/tmp/kinetic-escaped", "file", "x")], "absolute path"),
    ("a '..' name", [("a/../../escaped", "file", "x")], "'..' component"),
    ("an absolute link", [("l", "link", "/etc/passwd")], "absolute path"),
    ("a climbing link", [("d/l", "link", "../../x")], "pointing outside"),
    ("a device", [("dev", "dev", None)], "device"),
    ("a hard link outside", [("h", "hard", "../../etc/passwd")], "hard link"),
    ("a hard link to nothing unpacked", [("h", "hard", "missing")], "hard link"),
]

bad = 0
# Twice: with this Python's data filter, and as on a Python without one (before 3.11.4/3.12),
# where kinetic's own checks are all there is and each case is refused for its own reason.
for with_filter in (True, False):
    if not with_filter and hasattr(tarfile, "data_filter"):
        del tarfile.data_filter
    for label, members, why in REFUSED:
        label += "" if with_filter else " (no data filter)"
        root, dest, failure = unpack(members)
        if failure is None:
            bad += 1
            print("%s: unpacked" % label)
        elif failure.args[0] != 126 or (not with_filter and why not in failure.args[1]):
            bad += 1
            print("%s: %r" % (label, failure.args))
        for problem in escapes(root, dest):
            bad += 1
            print("%s: %s" % (label, problem))
        shutil.rmtree(root)

# What a job's outputs hold is unpacked: links that stay inside (one climbing back in), a hard
# link to a file already there.
root, dest, failure = unpack([("sub/f", "file", "hi"), ("l", "link", "sub/f"),
                              ("sub/up", "link", "../sub/f"), ("sub/h", "hard", "sub/f")])
if failure is not None:
    bad += 1
    print("a safe archive: %r" % (failure.args,))
else:
    for name in ("sub/f", "l", "sub/up", "sub/h"):
        with open(os.path.join(dest, name)) as f:
            if f.read() != "hi":
                bad += 1
                print("a safe archive: %s" % name)
shutil.rmtree(root)
sys.exit(1 if bad else 0)
