// What every GKE operation draws on: the target (project, location, cluster), the authed cloud
// transport, credentials for the cluster, the environment (endpoint overrides), how to wait for
// operations, and where to show progress. Built once per command by the CLI.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "auth/token_cache.h"
#include "core/env.h"
#include "core/fs.h"
#include "gcp/operations.h"
#include "gcp/storage.h"
#include "http/transport.h"
#include "job/pricing.h"
#include "render/output.h"
#include "render/status_line.h"

namespace kinetic::gke {

struct Target {
  std::string project;
  std::string location;  // a zone (zonal cluster) or a region (regional cluster)
  std::string region;    // of the registry and the bucket
  std::string cluster;
  std::string ns = "default";
};

struct Session {
  Target target;
  std::shared_ptr<http::Transport> cloud;  // traced(retried(authed(curl)))
  // Another transport like CLOUD, for a thread of its own (a transport is not shared between
  // threads). Null: CLOUD is not to be used from another thread.
  std::function<std::shared_ptr<http::Transport>()> new_cloud;
  std::shared_ptr<auth::TokenCache> credentials;
  const Env* env = nullptr;
  const IOStreams* io = nullptr;
  int verbosity = 0;
  fs::path state_dir;
  PriceBook prices;       // the prices setting (job/pricing.h): what cost lines show
  gcp::PollOptions poll;  // sleeps for real in the CLI
  // The current line of a long wait (operations being polled); cleared before a change is
  // reported.
  std::shared_ptr<StatusLine> progress;
  std::string endpoint(const char* service) const;
  // The job bucket's API on CLOUD (this thread's transport), built once per session.
  gcp::StorageClient& storage() const;
  std::string bucket() const;
  // This session for another thread: its own transport (NEW_CLOUD's) and clients; the
  // credentials and the progress line are shared (both are thread-safe). Throws
  // Error(Errc::internal) when it has no NEW_CLOUD.
  Session for_another_thread() const;

 private:
  mutable std::shared_ptr<gcp::StorageClient> storage_;  // storage(), built on first use
};

// Shows the state of a polled GKE or long-running operation on PROGRESS: "CREATE_CLUSTER:
// RUNNING (1m20s)". Installed as PollOptions::on_poll by the CLI.
void show_operation(StatusLine& progress, const nlohmann::json& operation, double started);

// Checks that the target names a project and a location, with a one-line error saying which
// flag or `kinetic config set` key supplies the missing one.
void require_target(const Target& target, const std::string& command);

}  // namespace kinetic::gke
