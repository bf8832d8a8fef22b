# The in-job runner of a function job (`kinetic run --function CALL.pkl`): it unpickles the call
# the Python package wrote, calls it, and leaves the outcome where the package reads it back.
#
# Standard library only (Python 3.8+), plus cloudpickle when importable: the job's image or host
# may hold nothing kinetic-specific. The build embeds this file into the binary with comment
# lines and blank lines removed (cmake/embed_python.cmake); keep it free of triple-quoted strings
# and of the raw-string delimiter (a closing parenthesis, PY and a double quote).
#
# The contract (the binary starts it in the job's working directory, with the job's environment):
#
#     python3 -u function_runner.py CALL.pkl CONTEXT_ROOT
#
# CALL.pkl is one line of JSON (the header), a newline, then cloudpickle.dumps((fn, args, kwargs)).
# The outcome goes to $KINETIC_OUTPUT_DIR/.kinetic/result.pkl (written to a temporary name, then
# renamed, so a reader never sees half a file):
#   {"kinetic_result": 1, "ok": bool, "phase": "setup" | "call" | "result", "value": ...,
#    "exception": the exception or None when it cannot be pickled, "exception_type": "mod.Qual",
#    "message": str(exc), "traceback": the formatted traceback}
# Exit codes: 0 ok; 1 the function raised (its traceback on stderr as Python prints an uncaught
# exception, so the log's last line names it) or its return value cannot be pickled; 126 a setup
# failure (bad call file, Python or cloudpickle version mismatch, unpickling failed), with one
# line on stderr saying what and how to fix it.

import json
import os
import pickle
import platform
import sys
import threading
import traceback

try:
    import cloudpickle
except ImportError:
    # Only needed to be importable: pickle.loads rebuilds what cloudpickle wrote as long as the
    # module is there. Its absence is reported as a setup failure once the output dir is known.
    cloudpickle = None

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_SETUP = 126
RESULT_RELPATH = os.path.join(".kinetic", "result.pkl")


class SetupError(Exception):
    # A failure before the function runs: the job could not start (exit 126).
    pass


def qualified_type_name(exc):
    cls = type(exc)
    module = getattr(cls, "__module__", "") or ""
    if module in ("builtins", "__main__", ""):
        return cls.__qualname__
    return module + "." + cls.__qualname__


def read_call_file(path):
    try:
        with open(path, "rb") as f:
            header_line = f.readline()
            body = f.read()
    except OSError as e:
        raise SetupError("cannot read the call file " + path + ": " + e.strerror)
    try:
        header = json.loads(header_line.decode("utf-8"))
    except ValueError:
        raise SetupError(path + " is not a kinetic call file (its first line is not JSON)")
    if not isinstance(header, dict) or header.get("kinetic_call") != 1:
        raise SetupError(path + " is not a kinetic call file version 1; upgrade the kinetic "
                         "binary or the kinetic Python package so that they match")
    return header, body


def check_versions(header):
    # Pickles of code are only portable between equal Python minor versions and (for cloudpickle's
    # own reducers) equal cloudpickle versions.
    caller_python = str(header.get("python", ""))
    here = "%d.%d" % sys.version_info[:2]
    if ".".join(caller_python.split(".")[:2]) != here:
        raise SetupError("the call was pickled by Python " + caller_python + " but the job runs "
                         "Python " + here + "; run with python=\"" + here + "\" or a matching "
                         "container_image, or call from a Python " + here + " interpreter")
    wanted = str(header.get("cloudpickle", ""))
    if cloudpickle is None:
        raise SetupError("cloudpickle is not installed where the job runs; install "
                         "cloudpickle==" + wanted + " in its image or environment")
    if cloudpickle.__version__ != wanted:
        raise SetupError("the call was pickled by cloudpickle " + wanted + " but the job has "
                         "cloudpickle " + cloudpickle.__version__ + "; install "
                         "cloudpickle==" + wanted + " in the job's image or environment")


def extend_sys_path(header, context_root):
    # Prepended in order, so the caller's first entry stays first, as it was when pickling.
    entries = header.get("sys_path") or []
    paths = [os.path.join(context_root, entry) if entry else context_root for entry in entries]
    sys.path[0:0] = [os.path.abspath(p) for p in paths]


def unpickle_call(body):
    try:
        fn, args, kwargs = pickle.loads(body)
    except Exception as e:
        raise SetupError("could not unpickle the call (" + type(e).__name__ + ": " + str(e) +
                         "); a module it needs may be missing in the job (add it to the "
                         "requirements) or installed at a different version")
    return fn, list(args), dict(kwargs)


def replace_at(container, key, value):
    # Returns the container with container[key] = value, rebuilding tuples (and named tuples),
    # which cannot be changed in place.
    if isinstance(container, tuple):
        items = list(container)
        items[key] = value
        if hasattr(type(container), "_make"):
            return type(container)._make(items)
        return type(container)(items)
    container[key] = value
    return container


def substitute_at(node, keys, value):
    if not keys:
        return value
    child = substitute_at(node[keys[0]], keys[1:], value)
    return replace_at(node, keys[0], child)


def substitute_data(header, args, kwargs):
    # The package put each kinetic.Data's mount path (relative to the job's working directory, or
    # absolute for volumes) at data[i].at; the function gets the absolute path.
    root = {"args": args, "kwargs": kwargs}
    for entry in header.get("data") or []:
        at = list(entry.get("at") or [])
        if len(at) < 2 or at[0] not in root:
            raise SetupError("the call file's data entry " + json.dumps(entry) + " names no "
                             "argument; upgrade the kinetic binary or package so they match")
        try:
            root[at[0]] = substitute_at(root[at[0]], at[1:], os.path.abspath(entry["path"]))
        except (KeyError, IndexError, TypeError) as e:
            raise SetupError("the call file's data entry " + json.dumps(entry) +
                             " does not match the arguments (" + repr(e) + ")")
    return tuple(root["args"]), root["kwargs"]


def drop_runner_frames(exc):
    # The user's traceback starts at their function, not at this runner's call site.
    # (Compared by code object file name: __file__ is unset when the source runs with -c.)
    here = drop_runner_frames.__code__.co_filename
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == here:
        tb = tb.tb_next
    return exc.with_traceback(tb) if tb is not None else exc


def as_failure(exc):
    # What an exception the call let out becomes: SystemExit(0|None) is success (returns None);
    # another SystemExit, KeyboardInterrupt and other BaseExceptions become a RuntimeError whose
    # cause is the original, so the traceback still shows where it came from.
    if isinstance(exc, Exception):
        return exc
    if isinstance(exc, SystemExit):
        err = RuntimeError("function called sys.exit(" + repr(exc.code) + ")")
    else:
        err = RuntimeError(type(exc).__name__ + ": " + str(exc))
    err.__cause__ = exc
    return err


def call_function(fn, args, kwargs):
    # Returns ("ok", value) or ("raised", exception).
    try:
        return "ok", fn(*args, **kwargs)
    except SystemExit as e:
        if e.code is None or e.code == 0:
            return "ok", None
        return "raised", as_failure(drop_runner_frames(e))
    except BaseException as e:
        return "raised", as_failure(drop_runner_frames(e))


def format_traceback(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def dumps(obj):
    return cloudpickle.dumps(obj) if cloudpickle is not None else pickle.dumps(obj)


def failure_record(phase, exc):
    record = {"kinetic_result": 1, "ok": False, "phase": phase, "value": None,
              "exception": exc, "exception_type": qualified_type_name(exc),
              "message": str(exc), "traceback": format_traceback(exc)}
    try:
        dumps(exc)
    except Exception:
        # Sent without the object: its type name, message and traceback still say what happened.
        record["exception"] = None
    return record


def success_payload(value):
    # Returns the pickled success record, or None when the value cannot be pickled.
    record = {"kinetic_result": 1, "ok": True, "phase": "call", "value": value,
              "exception": None, "exception_type": "", "message": "", "traceback": ""}
    try:
        return dumps(record)
    except Exception:
        return None


def write_result(output_dir, payload):
    path = os.path.join(output_dir, RESULT_RELPATH)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temp = path + ".tmp." + str(os.getpid())
    with open(temp, "wb") as f:
        f.write(payload)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, path)


def setup_and_call(call_path, context_root):
    # Returns (exit code, pickled result record); raises SetupError before the call.
    header, body = read_call_file(call_path)
    check_versions(header)
    extend_sys_path(header, context_root)
    fn, args, kwargs = unpickle_call(body)
    args, kwargs = substitute_data(header, args, kwargs)
    outcome, value = call_function(fn, args, kwargs)
    if outcome == "raised":
        sys.stderr.write(format_traceback(value))
        return EXIT_FAILED, dumps(failure_record("call", value))
    payload = success_payload(value)
    if payload is not None:
        return EXIT_OK, payload
    err = RuntimeError("the function's return value (type " + qualified_type_name(value) +
                       ") could not be pickled; return plain data (numbers, strings, lists, "
                       "dicts, arrays) or save it under KINETIC_OUTPUT_DIR")
    sys.stderr.write("RuntimeError: " + str(err) + "\n")
    return EXIT_FAILED, dumps(failure_record("result", err))


def finish(code):
    sys.stdout.flush()
    sys.stderr.flush()
    # A thread the function left running (not a daemon) would keep the job alive forever.
    lingering = [t for t in threading.enumerate()
                 if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if lingering:
        os._exit(code)
    sys.exit(code)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: function_runner.py CALL.pkl CONTEXT_ROOT\n")
        return EXIT_SETUP
    output_dir = os.environ.get("KINETIC_OUTPUT_DIR", "")
    if not output_dir:
        sys.stderr.write("error: KINETIC_OUTPUT_DIR is not set; function jobs run under "
                         "`kinetic run --function`, which sets it\n")
        return EXIT_SETUP
    try:
        code, payload = setup_and_call(argv[1], argv[2])
    except SetupError as e:
        sys.stderr.write("error: kinetic setup failed: " + str(e) + "\n")
        code, payload = EXIT_SETUP, dumps(failure_record("setup", RuntimeError(
            "kinetic setup failed: " + str(e))))
    try:
        write_result(output_dir, payload)
    except OSError as e:
        sys.stderr.write("error: could not write " + os.path.join(output_dir, RESULT_RELPATH) +
                         ": " + str(e) + "\n")
        return EXIT_FAILED if code == EXIT_OK else code
    return code


finish(main(sys.argv))
