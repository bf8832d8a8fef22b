// The job both --data suites run (test_data.cpp, test_gke_data.cpp): it prints what it sees at
// DST (its files, in order, and their content), and whether a.txt has a write permission bit
// (not os.access: tests may run as root).
#pragma once

namespace kinetic::test {

inline constexpr const char* kShowData =
    "import os, sys\n"
    "root = sys.argv[1]\n"
    "for d, _, files in sorted(os.walk(root, followlinks=True)):\n"
    "    for f in sorted(files):\n"
    "        p = os.path.join(d, f)\n"
    "        print('seen', os.path.relpath(p, root), open(p).read().strip())\n"
    "a = os.path.join(root, 'a.txt')\n"
    "if os.path.exists(a):\n"
    "    print('writable', bool(os.stat(a).st_mode & 0o222))\n";

}  // namespace kinetic::test
