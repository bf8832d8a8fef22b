#!/usr/bin/env python3
"""What the Python API adds to `kinetic run` (issue #26: goal, at most 50 ms more per call).

    /usr/bin/python3 bench/python_overhead.py [KINETIC_BIN] [RUNS]

On the local backend, in a temp project with its own KINETIC_HOME and XDG_CONFIG_HOME (no user
config), a function that returns at once:
  - `kinetic run --function CALL` of a call file written once (the engine alone: what any cached
    rerun costs), RUNS times, each from a fresh process;
  - the decorated function called RUNS times in one Python process (the package: pickling the
    call, one `kinetic` process per call, streaming, reading the result), after one warm-up call
    (which also asks `kinetic config view` the backend, once per process);
  - `import kinetic` in a fresh interpreter next to a bare interpreter start.
Prints the median and min of each and the difference. Figures, not assertions: exits 0.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def timed(fn, runs):
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def row(name, ms):
    print(f"  {name:44s} median {statistics.median(ms):7.1f} ms   min {min(ms):7.1f} ms")


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                             os.environ.get("KINETIC_BIN", os.path.join(REPO, "build", "kinetic")))
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    work = tempfile.mkdtemp(prefix="kinetic-py-bench-")
    try:
        project = os.path.join(work, "proj")
        os.makedirs(project)
        with open(os.path.join(project, "pyproject.toml"), "w") as f:
            f.write("[project]\nname = 'bench'\n")
        os.environ.update(KINETIC_BIN=binary, KINETIC_HOME=os.path.join(work, "state"),
                          XDG_CONFIG_HOME=os.path.join(work, "config"),
                          XDG_CACHE_HOME=os.path.join(work, "cache"))
        os.chdir(project)
        sys.path.insert(0, os.path.join(REPO, "python"))
        import kinetic
        from kinetic import _engine, _payload, _submit

        # The project alone is shipped (this script's own folder is the repository's).
        @kinetic.run(accelerator="cpu", context_dir=project)
        def noop():
            return 1

        sink = open(os.devnull, "w")
        real_out, real_err = sys.stdout, sys.stderr

        def call():
            sys.stdout, sys.stderr = sink, sink
            try:
                assert noop() == 1
            finally:
                sys.stdout, sys.stderr = real_out, real_err

        call()  # warm-up: the backend lookup, the staged context
        prepared = _submit.prepare(_submit.RunOptions(accelerator="cpu", context_dir=project),
                                   noop.__wrapped__, (), {})
        call_path = _payload.write_call_file(work, prepared.blob)
        out = os.path.join(work, "out")

        def engine():
            shutil.rmtree(out, ignore_errors=True)
            subprocess.run([binary, "run", "--function", call_path, "--context-dir", project,
                            "--output", out], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True,
                           env=_engine.child_environment())  # this python3 first, as the API

        engine()
        base = timed(engine, runs)
        api = timed(call, runs)
        bare = timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), 10)
        imported = timed(lambda: subprocess.run(
            [sys.executable, "-c", "import kinetic"], check=True,
            env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))), 10)
        print(f"python {sys.version.split()[0]}, {runs} runs, local backend, {binary}")
        row("kinetic run --function CALL (engine alone)", base)
        row("noop() through @kinetic.run", api)
        print(f"  {'per-call overhead of the Python layer':44s} median "
              f"{statistics.median(api) - statistics.median(base):7.1f} ms (goal <= 50 ms)")
        row("python3 -c pass", bare)
        row("python3 -c 'import kinetic'", imported)
    finally:
        os.chdir("/")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
