// A function job's call file as the Python package writes one (docs/python.md): a JSON header
// line, then the pickle of (fn, args, kwargs). Plain pickle does for builtins (operator.mul, ...),
// so the engine's tests need neither the package nor cloudpickle; the header names the Python
// and cloudpickle (if any) of the python3 that runs the job here, as the runner checks them.
#pragma once

#include <string>

#include "core/fs.h"
#include "integration/command_output.h"

namespace kinetic::test {

// The call file's bytes for NAME (the header's name) and EXPRESSION, a Python expression of the
// (fn, args, kwargs) tuple, e.g. "(operator.mul, (6, 7), {})". DIR holds the script that makes it.
inline std::string call_file_bytes(const fs::path& dir, const std::string& name,
                                   const std::string& expression) {
  const fs::path maker = dir / "make_call.py";
  atomic_write(maker,
               "import json, operator, pickle, platform, sys\n"
               "try:\n"
               "    import cloudpickle\n"
               "    version = cloudpickle.__version__\n"
               "except ImportError:\n"
               "    version = ''\n"
               "header = {'kinetic_call': 1, 'name': '" +
                   name +
                   "',\n"
                   "          'python': platform.python_version(), 'cloudpickle': version,\n"
                   "          'sys_path': [''], 'data': []}\n"
                   "sys.stdout.buffer.write(json.dumps(header).encode() + b'\\n' + "
                   "pickle.dumps(" +
                   expression + "))\n");
  const CommandOutput made = command_output("python3 " + maker.string());
  return made.status == 0 ? made.out : std::string();
}

}  // namespace kinetic::test
