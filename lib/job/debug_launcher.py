# `kinetic run --debug`'s launcher (lib/job/debug_spec.h): it starts debugpy listening in the job,
# waits for a debugger to attach, then runs the job's Python in this same process, so that the
# debugger sees the job's code from its first line.
#
# Standard library only, plus debugpy: from the job's image (kinetic's own images get it with
# --debug), or from the project folder when it ships one. The build embeds this file into the
# binary with comment lines and blank lines removed (cmake/embed_python.cmake); keep it free of
# triple-quoted strings and of the raw-string delimiter (a closing parenthesis, PY and a quote).
#
# The contract (the local runner and the pod's bootstrap start it in the job's working directory,
# with the job's environment):
#
#     python3 -u debug_launcher.py PORT WAIT_SECONDS REMOTE_ROOT CONTEXT_ROOT RELEASE_FD \
#         -- TARGET [ARGS...]
#
# - REMOTE_ROOT becomes a link to CONTEXT_ROOT, and TARGET, ARGS and the working directory are
#   taken through it: the files the debugger sees are under REMOTE_ROOT, a path known before the
#   job ran, which the launch configuration kinetic prints maps to the project folder. When the
#   link cannot be made the job runs from CONTEXT_ROOT, and one line says which path to map.
# - debugpy listens on 127.0.0.1:PORT (the kubelet's port-forward connects to the pod's own
#   localhost, and locally the forward connects to this machine's: no other pod or machine
#   reaches a debugger that runs any code it is sent) and the job waits up to WAIT_SECONDS for a debugger (debugpy's
#   wait_for_client, which returns once the debugger's configuration is done). Then, attached or
#   not, RELEASE_FD (unless -1) gets one byte and is closed: what the other hosts of a slice wait
#   for (the pod's bootstrap passes it on).
# - breakpoint() in the job stops in the debugger (PYTHONBREAKPOINT=debugpy.breakpoint, unless
#   the job's environment sets it).
# - TARGET runs as `python3 TARGET ARGS` would run it (runpy, as __main__, sys.argv and sys.path[0]
#   set alike); its exit code is the job's.
# Exit 126 with one line on stderr when debugpy cannot be imported or cannot listen.

import atexit
import os
import runpy
import sys
import threading

EXIT_SETUP = 126


def say(line):
    sys.stderr.write("kinetic: " + line + "\n")
    sys.stderr.flush()


def fail(line):
    sys.stderr.write("error: kinetic --debug: " + line + "\n")
    sys.stderr.flush()
    sys.exit(EXIT_SETUP)


def duration_text(seconds):
    if seconds >= 60 and seconds % 60 == 0:
        return "%dm" % (seconds // 60)
    return "%ds" % seconds


def link_context(remote_root, context_root):
    # A retried attempt finds its own earlier link: it is replaced. Anything else there is kept.
    try:
        os.makedirs(os.path.dirname(remote_root), exist_ok=True)
        if os.path.islink(remote_root):
            os.unlink(remote_root)
        os.symlink(context_root, remote_root)
    except OSError as e:
        say("cannot link %s to the context (%s); map the debugger's remoteRoot to %s instead"
            % (remote_root, e.strerror, context_root))
        return context_root
    atexit.register(unlink_quietly, remote_root)
    return remote_root


def unlink_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def through(path, context_root, root):
    # PATH under the context, taken through ROOT; any other path as it is.
    for prefix in (context_root, os.path.realpath(context_root)):
        if path == prefix or path.startswith(prefix.rstrip(os.sep) + os.sep):
            return root + path[len(prefix):]
    return path


def import_debugpy(root):
    # The project folder first, so that a project shipping its own debugpy gets it.
    sys.path.insert(0, root)
    try:
        import debugpy
    except ImportError as e:
        fail("debugpy cannot be imported in the job (%s): kinetic's own images install it with "
             "--debug; with --image, or on the local backend, install debugpy in the python3 "
             "the job runs (pip install debugpy), or run without --debug" % e)
    finally:
        sys.path.remove(root)
    return debugpy


def wait_for_debugger(debugpy, port, wait_seconds):
    try:
        debugpy.listen(("127.0.0.1", port))
    except Exception as e:
        fail("debugpy cannot listen on port %d in the job (%s): pick another with --debug-port"
             % (port, e))
    say("debugpy listens on port %d; the job waits up to %s for a debugger (`kinetic debug %s`)"
        % (port, duration_text(wait_seconds), os.environ.get("KINETIC_JOB_ID", "JOB")))
    attached = threading.Event()

    def wait():
        debugpy.wait_for_client()
        attached.set()

    threading.Thread(target=wait, daemon=True).start()
    if attached.wait(wait_seconds):
        say("debugger attached; the job runs")
    else:
        say("no debugger attached in %s; the job runs without one" % duration_text(wait_seconds))


def release(fd):
    if fd < 0:
        return
    try:
        os.write(fd, b"1")
        os.close(fd)
    except OSError:
        pass


def main(argv):
    if len(argv) < 8 or argv[6] != "--":
        fail("usage: debug_launcher.py PORT WAIT_SECONDS REMOTE_ROOT CONTEXT_ROOT RELEASE_FD -- "
             "TARGET [ARGS...]")
    port, wait_seconds = int(argv[1]), int(argv[2])
    context_root, release_fd = argv[4], int(argv[5])
    root = link_context(argv[3], context_root)
    target = through(argv[7], context_root, root)
    args = [through(a, context_root, root) for a in argv[8:]]
    os.chdir(through(os.getcwd(), context_root, root))
    debugpy = import_debugpy(root)
    os.environ.setdefault("PYTHONBREAKPOINT", "debugpy.breakpoint")
    try:
        wait_for_debugger(debugpy, port, wait_seconds)
    finally:
        release(release_fd)
    sys.argv = [target] + args
    sys.path[0] = os.path.dirname(target)
    runpy.run_path(target, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv)
