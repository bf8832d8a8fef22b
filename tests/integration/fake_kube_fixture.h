// What the fake Kubernetes API's own tests share (test_fake_kube.cpp, test_fake_kube_cronjobs.cpp):
// a fake per test with a one-node pool, its own work directory, and requests over HTTPS through
// kinetic's curl transport with the fake's CA pinned.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "fakes/fake_kube.h"
#include "http/transport.h"

namespace kinetic::test {

class FakeKubeFixture : public ::testing::Test {
 protected:
  explicit FakeKubeFixture(std::string prefix) : prefix_(std::move(prefix)) {}

  // Starts the fake with OPTIONS (its pods under this test's directory) and, unless told
  // otherwise, one always-up node in pool "cpu".
  void start(fakes::FakeKubeOptions options = {}, bool cpu_pool = true) {
    options.work_root = dir_ + "/pods";
    kube_ = std::make_unique<fakes::FakeKube>(std::move(options));
    http_ = http::make_curl_transport({.ca_pem = kube_->ca_pem()});
    if (cpu_pool) {
      fakes::FakeNodePool pool;
      pool.name = "cpu";
      pool.nodes = 1;
      pool.max_nodes = 1;
      kube_->set_node_pool(pool);
    }
  }
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            (prefix_ + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    http_.reset();  // close the connections before the server stops
    kube_.reset();
    std::filesystem::remove_all(dir_);
  }

  // METHOD PATH with BODY (as CONTENT_TYPE) and TOKEN as the bearer (none when empty).
  http::Response call(const std::string& method, const std::string& path,
                      const nlohmann::json& body = nullptr, const std::string& token = "test-token",
                      const std::string& content_type = "application/json") {
    http::Request r;
    r.method = method;
    r.url = kube_->url() + path;
    if (!token.empty()) r.headers.push_back({"Authorization", "Bearer " + token});
    if (!body.is_null()) {
      r.body = body.dump();
      r.headers.push_back({"Content-Type", content_type});
    }
    return http_->send(r);
  }
  nlohmann::json get(const std::string& path) {
    auto r = call("GET", path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return nlohmann::json::parse(r.body);
  }

  std::string prefix_;
  std::string dir_;
  std::unique_ptr<fakes::FakeKube> kube_;
  std::unique_ptr<http::Transport> http_;
};

}  // namespace kinetic::test
