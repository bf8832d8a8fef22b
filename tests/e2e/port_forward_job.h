// What the port-forward suites share (test_port_forward.cpp, test_gke_port_forward.cpp): a job
// serving HTTP on a port it picks and prints, and a plain HTTP/1.0 client.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/socket.h"

namespace kinetic::test {

// A job that serves GET /PATH with "hello from the job /PATH\n" on a free port of 127.0.0.1,
// prints "serving on PORT", and ends once the file GO exists.
inline std::string http_job_script(const std::string& go) {
  return "import http.server, os, threading, time\n"
         "class Hello(http.server.BaseHTTPRequestHandler):\n"
         "    def do_GET(self):\n"
         "        body = ('hello from the job ' + self.path + '\\n').encode()\n"
         "        self.send_response(200)\n"
         "        self.send_header('Content-Length', str(len(body)))\n"
         "        self.end_headers()\n"
         "        self.wfile.write(body)\n"
         "    def log_message(self, *args):\n"
         "        pass\n"
         "server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Hello)\n"
         "print('serving on', server.server_address[1], flush=True)\n"
         "threading.Thread(target=server.serve_forever, daemon=True).start()\n"
         "while not os.path.exists('" +
         go + "'):\n    time.sleep(0.01)\n";
}

// The port in a job's log's "serving on PORT" line, or "".
inline std::string served_port(const std::string& log) {
  const size_t at = log.find("serving on ");
  if (at == std::string::npos) return "";
  return log.substr(at + 11, log.find('\n', at) - at - 11);
}

// Sends GET PATH on FD and returns the whole answer (HTTP/1.0: the server closes after it).
inline std::string http_exchange(int fd, const std::string& path) {
  const std::string request = "GET " + path + " HTTP/1.0\r\n\r\n";
  if (!send_all(fd, request)) return "(send failed)";
  std::string answer;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) answer.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return answer;
}

inline std::string http_get(int port, const std::string& path) {
  const int fd = connect_loopback(port);
  if (fd < 0) return "(connect failed)";
  return http_exchange(fd, path);
}

// The body of an HTTP answer.
inline std::string body_of(const std::string& answer) {
  const size_t at = answer.find("\r\n\r\n");
  return at == std::string::npos ? "(no body: " + answer + ")" : answer.substr(at + 4);
}

// The bodies of N GETs /c0../cN-1 through LOCAL, all connections opened before any request is
// sent, then sent from a thread each: a forward must serve them at once.
inline std::vector<std::string> bodies_at_once(int local, int n) {
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) fds.push_back(connect_loopback(local));
  std::vector<std::string> answers(fds.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < fds.size(); ++i)
    clients.emplace_back([&, i] { answers[i] = http_exchange(fds[i], "/c" + std::to_string(i)); });
  for (auto& t : clients) t.join();
  for (auto& a : answers) a = body_of(a);
  return answers;
}

// The local port of `port-forward -o json`'s first line (0 when missing).
inline int forwarded_port(const std::string& json_line) {
  const auto doc = nlohmann::json::parse(json_line, nullptr, false);
  if (doc.is_discarded() || !doc.contains("ports") || doc["ports"].empty()) return 0;
  return doc["ports"][0].value("local", 0);
}

}  // namespace kinetic::test
