// The shell idioms CI scripts run kinetic with (issue #34 point 4), one table for both backends:
// each idiom's script, its exit code and what it prints. test_ci_contract.cpp runs it on the
// local backend, test_gke_ci_contract.cpp on gke.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.h"

namespace kinetic::test {

// The jobs the idioms run, in DIR (relative to the sandbox root), Python so that both backends
// run them: ok.py prints "hello"; fail3.py prints "out" and "err" (stderr) and exits 3; many.py
// prints 1..20000, writes result.txt and exits 4; gate.py (local only) waits for `go` in its
// working directory and exits 7.
inline void write_ci_jobs(Sandbox& sb, const std::string& dir) {
  sb.write(dir + "/ok.py", "print('hello')\n");
  sb.write(dir + "/fail3.py",
           "import sys\nprint('out', flush=True)\nprint('err', file=sys.stderr)\nsys.exit(3)\n");
  sb.write(dir + "/many.py",
           "import os, sys\n"
           "for i in range(1, 20001):\n    print(i)\n"
           "open(os.path.join(os.environ['KINETIC_OUTPUT_DIR'], 'result.txt'), 'w')"
           ".write('written\\n')\n"
           "sys.exit(4)\n");
  sb.write(dir + "/gate.py",
           "import os, sys, time\n"
           "print('waiting', flush=True)\n"
           "while not os.path.exists('go'):\n    time.sleep(0.05)\n"
           "sys.exit(7)\n");
}

struct CiIdiom {
  std::string name;
  std::string script;  // bash -c, in the project directory, `kinetic` on PATH, stdin /dev/null
  int exit_code;
  std::string out;  // its exact stdout
  // What else must hold (files it wrote, its stderr); may be empty.
  std::function<void(const CliResult&, const fs::path& dir)> check;
};

// GKE: a pod's log is one stream (the Kubernetes log API merges the container's stdout and
// stderr, as `kubectl logs` shows it), so a job's stderr lines reach kinetic's stdout; keeping
// them apart is issue #30's ("stdout and stderr stay distinguishable").
inline std::vector<CiIdiom> ci_idioms(bool gke) {
  const std::string job_stdout = gke ? "out\nerr\n" : "out\n";
  return {
      {"set -euo pipefail: run --detach, wait, then status agrees",
       "set -euo pipefail\n"
       "J=$(kinetic run ok.py --detach)\n"
       "kinetic wait \"$J\" > /dev/null\n"
       "kinetic status \"$J\" -o json > st.json\n"
       "echo done\n",
       0, "done\n",
       [](const CliResult&, const fs::path& dir) {
         auto st = nlohmann::json::parse(slurp(dir / "st.json"));
         EXPECT_EQ(st["state"], "succeeded");
         EXPECT_EQ(st["exit_code"], 0);
       }},
      {"set -e stops at a failing run with its exit code",
       "set -e\nkinetic run fail3.py > /dev/null 2>&1\necho unreachable\n",
       3,
       "",
       {}},
      {"timeout", "timeout 300 kinetic run ok.py", 0, "hello\n", {}},
      {"closed stdin", "kinetic run ok.py <&-", 0, "hello\n", {}},
      {"> file holds the job's stdout alone",
       "kinetic run fail3.py > out.txt 2> err.txt; echo \"exit=$?\"", 0, "exit=3\n",
       [job_stdout, gke](const CliResult&, const fs::path& dir) {
         EXPECT_EQ(slurp(dir / "out.txt"), job_stdout);
         const std::string err = slurp(dir / "err.txt");
         if (!gke) {
           EXPECT_NE(err.find("err\n"), std::string::npos) << err;
         }
         EXPECT_NE(err.find(" failed (exit 3)"), std::string::npos) << err;
       }},
      {"2>&1 | tee: no redraws, no colour",
       "set -o pipefail\nkinetic run ok.py 2>&1 | tee all.txt > /dev/null", 0, "",
       [](const CliResult&, const fs::path& dir) {
         const std::string all = slurp(dir / "all.txt");
         EXPECT_NE(all.find("hello\n"), std::string::npos) << all;
         EXPECT_NE(all.find(" succeeded in "), std::string::npos) << all;
         EXPECT_EQ(all.find('\r'), std::string::npos) << all;
         EXPECT_EQ(all.find('\033'), std::string::npos) << all;
       }},
      {"| head -1 ends the output, not the run",
       "kinetic run many.py 2> /dev/null | head -1; echo \"kinetic=${PIPESTATUS[0]}\"",
       0,
       "1\nkinetic=4\n",
       {}},
      {"--quiet prints only data and errors", "kinetic --quiet run ok.py 2> err.txt", 0, "hello\n",
       [](const CliResult&, const fs::path& dir) { EXPECT_EQ(slurp(dir / "err.txt"), ""); }},
      {"no prompt without a TTY: the flag to pass", "kinetic down", 2, "",
       [](const CliResult& r, const fs::path&) {
         EXPECT_NE(r.err.find("pass --yes"), std::string::npos) << r.err;
         EXPECT_EQ(line_count(r.err), 1u) << r.err;
       }},
  };
}

// R is what IDIOM's script did in DIR: its code and output as the table says, and no terminal
// control anywhere (stdout and stderr are not a TTY).
inline void check_idiom(const CiIdiom& idiom, const CliResult& r, const fs::path& dir) {
  EXPECT_EQ(r.exit_code, idiom.exit_code) << r.err;
  EXPECT_EQ(r.out, idiom.out) << r.err;
  for (const std::string* s : {&r.out, &r.err}) {
    EXPECT_EQ(s->find('\r'), std::string::npos) << *s;
    EXPECT_EQ(s->find('\033'), std::string::npos) << *s;
  }
  if (idiom.check) idiom.check(r, dir);
}

}  // namespace kinetic::test
