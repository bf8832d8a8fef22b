// Helpers shared by the auth tests: a scripted http::Transport and temp files.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/fs.h"
#include "http/transport.h"

namespace kinetic::testing {

// Answers every request with HANDLER and records what was sent.
class ScriptedTransport : public http::Transport {
 public:
  using Handler = std::function<http::Response(const http::Request&)>;
  explicit ScriptedTransport(Handler handler) : handler_(std::move(handler)) {}
  http::Response send(const http::Request& request) override {
    {
      std::lock_guard lock(mu_);
      requests_.push_back(request);
    }
    return handler_(request);
  }
  std::vector<http::Request> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  Handler handler_;
  mutable std::mutex mu_;
  std::vector<http::Request> requests_;
};

inline http::Response json_response(int status, std::string body) {
  http::Response r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}};
  r.body = std::move(body);
  return r;
}

inline std::string header_of(const http::Request& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return {};
}

// A temp directory removed at the end of the test.
struct TempDir {
  fs::path path = make_temp_dir(fs::temp_directory_path(), "kinetic-auth-test-");
  ~TempDir() { remove_all_quiet(path); }
  fs::path write(const std::string& name, const std::string& text) const {
    fs::path p = path / name;
    fs::create_directories(p.parent_path());
    atomic_write(p, text, 0600, Durability::unsynced);
    return p;
  }
};

}  // namespace kinetic::testing
