// What the `run --debug` suites share (test_debug.cpp, test_gke_debug.cpp): a stand-in for
// debugpy, which this machine does not have, shipped in the test's project folder as a user may
// ship a package (never lent by the fakes); a job that shows when it ran; and a DAP client.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "core/socket.h"

namespace kinetic::test {

// The stand-in for debugpy (tests/e2e/debugpy_standin.py), to ship as a project's
// debugpy/__init__.py.
inline std::string debugpy_standin() {
  std::ifstream in(KINETIC_SOURCE_DIR "/tests/e2e/debugpy_standin.py");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A job that says what attached it (the attach arguments, which only the test's client knows)
// and where its file is, which is what the debugger's pathMappings map.
inline std::string debug_job_script() {
  return "import debugpy\n"
         "print('job body ran, attached with', debugpy.attach_arguments.get('kineticNonce'),\n"
         "      'from', __file__, flush=True)\n";
}

// One DAP message on FD.
inline bool dap_send(int fd, const nlohmann::json& message) {
  const std::string body = message.dump();
  return send_all(fd, "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
}

// The next DAP message on FD; null when the connection ended first.
inline nlohmann::json dap_receive(int fd) {
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (::recv(fd, &c, 1, 0) != 1) return nullptr;
    head += c;
  }
  const size_t at = head.find("Content-Length: ");
  if (at == std::string::npos) return nullptr;
  std::string body(std::stoul(head.substr(at + 16)), '\0');
  for (size_t got = 0; got < body.size();) {
    const ssize_t n = ::recv(fd, body.data() + got, body.size() - got, 0);
    if (n <= 0) return nullptr;
    got += static_cast<size_t>(n);
  }
  return nlohmann::json::parse(body, nullptr, false);
}

// VS Code's attach through PORT: initialize, the initialized event, attach (NONCE among its
// arguments), configurationDone. Returns "" or what went wrong.
inline std::string dap_attach(int port, const std::string& nonce) {
  const int fd = connect_loopback(port);
  if (fd < 0) return "cannot connect to 127.0.0.1:" + std::to_string(port);
  std::string wrong;
  auto request = [&](int seq, const std::string& command, const nlohmann::json& arguments) {
    if (!wrong.empty()) return;
    dap_send(fd,
             {{"seq", seq}, {"type", "request"}, {"command", command}, {"arguments", arguments}});
    const nlohmann::json answer = dap_receive(fd);
    if (answer.is_null() || answer.value("command", "") != command ||
        !answer.value("success", false))
      wrong = command + " was answered " + (answer.is_null() ? "by nothing" : answer.dump());
  };
  request(1, "initialize", {{"clientID", "vscode"}, {"adapterID", "debugpy"}});
  if (wrong.empty()) {
    const nlohmann::json event = dap_receive(fd);
    if (event.is_null() || event.value("event", "") != "initialized")
      wrong = "no initialized event after initialize: " + (event.is_null() ? "" : event.dump());
  }
  request(2, "attach", {{"kineticNonce", nonce}});
  request(3, "configurationDone", nlohmann::json::object());
  ::close(fd);
  return wrong;
}

// The launch configuration printed in TEXT (the JSON object after "(F5):" or at the start of
// `kinetic debug`'s stdout); null when there is none yet.
inline nlohmann::json launch_in(const std::string& text) {
  size_t at = text.find("(F5):\n");
  at = at == std::string::npos ? text.find('{') : at + 6;
  if (at == std::string::npos) return nullptr;
  const size_t end = text.find("\n}", at);
  if (end == std::string::npos) return nullptr;
  return nlohmann::json::parse(text.substr(at, end + 2 - at), nullptr, false);
}

// The launch configuration once FILE (kinetic's stderr) shows it and the job's debugpy says it
// listens on PORT; null (and a failed expectation) when that does not come.
inline nlohmann::json launch_when_listening(const fs::path& file, int port) {
  nlohmann::json launch;
  EXPECT_TRUE(eventually([&] {
    const std::string text = slurp(file);
    launch = launch_in(text);
    return !launch.is_null() && !launch.is_discarded() &&
           text.find("debugpy listens on port " + std::to_string(port)) != std::string::npos;
  })) << slurp(file);
  return launch;
}

}  // namespace kinetic::test
