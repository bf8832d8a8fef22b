// Runs a shell command and returns what it printed (stdout; add 2>&1 for stderr) and its exit
// status: for tests that drive a script (python3 over an embedded source, say) to its end.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace kinetic::test {

struct CommandOutput {
  int status = -1;  // the exit code; -1 when it could not run or did not exit
  std::string out;
};

inline CommandOutput command_output(const std::string& command) {
  CommandOutput r;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int raw = ::pclose(p);
  r.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

}  // namespace kinetic::test
