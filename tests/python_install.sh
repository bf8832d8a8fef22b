#!/bin/sh
# The Python API installs both ways docs/python.md gives (issue #26 point 9), offline:
#   1. `cmake --install` puts the binary and the package in one prefix, and the installed package
#      finds the installed binary (not a build tree's, not the PATH's);
#   2. `pip install ./python` in a venv with system site packages (cloudpickle from Debian), with
#      no package index: the in-tree build backend needs nothing downloaded.
# Usage: python_install.sh PYTHON BUILD_DIR SOURCE_DIR
set -eu
python=$1 build=$2 src=$3
work=$(mktemp -d /tmp/kinetic-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
site=$(find "$work/prefix" -type d -name kinetic -path '*-packages/kinetic')
[ -f "$site/__init__.py" ] || { echo "no package installed under $work/prefix" >&2; exit 1; }
found=$(cd "$work" && env -u KINETIC_BIN PATH=/usr/bin:/bin PYTHONPATH="$(dirname "$site")" \
  "$python" -c 'import kinetic._engine as e; print(e.find_binary())')
[ "$found" = "$work/prefix/bin/kinetic" ] ||
  { echo "the installed package found '$found', not $work/prefix/bin/kinetic" >&2; exit 1; }

"$python" -m venv --system-site-packages "$work/venv"
PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$work/venv/bin/pip" install -q "$src/python"
(cd "$work" && "$work/venv/bin/python" -c '
import kinetic, cloudpickle
assert kinetic.__version__, "no version"
assert "site-packages" in kinetic.__file__, kinetic.__file__
print("installed", kinetic.__version__, "with cloudpickle", cloudpickle.__version__)')
