#include "backend/gke/image_builder.h"

#include <algorithm>
#include <chrono>

#include "backend/gke/image_source.h"
#include "backend/gke/names.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"
#include "gcp/artifact_registry.h"
#include "gcp/cloud_build.h"
#include "gcp/storage.h"
#include "job/image_recipe.h"
#include "job/spec.h"
#include "render/status_line.h"

namespace kinetic::gke {

namespace {

constexpr long kBuildTimeoutSeconds = 3600;

// The line of a build log worth quoting: kinetic's smoke test's verdict; else a program a RUN
// step needs that the image lacks (the shell's "/bin/sh: 1: python3: not found"); else the last
// error the build itself printed (pip's "No matching distribution found for X" comes after its
// "Could not find a version"), not Cloud Build's own "build step 0 ... failed" trailer; else the
// last line.
std::string log_excerpt(const std::string& log) {
  std::string error, last, smoke, missing;
  for (const auto& raw : split(log, '\n')) {
    std::string line(trim(raw));
    // Cloud Build prefixes step output with "Step #0: " (or "Step #0 - \"id\": ").
    if (starts_with(line, "Step #")) {
      if (auto colon = line.find(": "); colon != std::string::npos) line = line.substr(colon + 2);
    }
    if (line.empty()) continue;
    last = line;
    // kinetic's own smoke test says best what the image lacks (image_recipe.cpp).
    if (auto at = line.find("kinetic-smoke: ERROR: "); at != std::string::npos)
      smoke = "the image's smoke test failed: " + line.substr(at + 22);
    if (starts_with(line, "/bin/sh: ") && ends_with(line, ": not found") && missing.empty()) {
      auto program = line.substr(0, line.size() - 11);
      program = program.substr(program.rfind(": ") + 2);
      missing = "the image has no " + program + " on its PATH, which a build step runs (" + line +
                "); use a base image that has it";
    }
    const bool is_error =
        line.find("ERROR") != std::string::npos || line.find("error:") != std::string::npos;
    // Cloud Build ends a failed log with a bare "ERROR" and "ERROR: build step N ... failed".
    if (is_error && line != "ERROR" && line.find("build step") == std::string::npos) error = line;
  }
  if (!smoke.empty()) return smoke;
  if (!missing.empty()) return missing;
  return error.empty() ? last : error;
}

}  // namespace

std::string ensure_image(const Session& session, const ImageRecipe& recipe, bool* built) {
  const Target& t = session.target;
  const std::string image = image_reference(t.region, t.project, recipe.tag);
  *built = false;
  gcp::ArtifactRegistryClient registry(*session.cloud, session.endpoint("artifactregistry"),
                                       session.poll);
  if (registry.has_tag(t.project, t.region, kRepository, kImagePackage, recipe.tag)) return image;

  // Not built yet: ship the Dockerfile and requirements to Cloud Build.
  const std::string bucket = session.bucket();
  const std::string object = std::string(kBuildsPrefix) + recipe.tag + ".tar.gz";
  {
    TempDir dir(session.state_dir / "tmp", "build-");
    fs::path source = dir / "source.tar.gz";
    write_build_source(source, recipe.build_files());
    gcp::StorageClient& storage = session.storage();
    storage.upload_file(bucket, object, source, {.content_type = "application/gzip"});
  }

  gcp::CloudBuildClient builds(*session.cloud, session.endpoint("cloudbuild"));
  const std::string logs = "gs://" + bucket + "/" + kBuildsPrefix + "logs";
  gcp::BuildInfo build =
      builds.create(t.project, t.region,
                    gcp::docker_build_request(bucket, object, image, logs, kBuildTimeoutSeconds));
  *built = true;
  StatusLine line(*session.io);
  const double start = now_unix();
  session.io->info("kinetic: building " + recipe.summary() + " " + recipe.tag +
                   " with Cloud Build (build " + build.id +
                   "); its recipe changed or it was never built");
  gcp::PollOptions poll = session.poll;
  // Builds take minutes: poll half as often as for other operations.
  poll.initial *= 2;
  poll.max = std::max(poll.max, poll.initial);
  poll.deadline = std::chrono::seconds(kBuildTimeoutSeconds + 600);
  build = builds.wait(t.project, t.region, build.id, poll, [&](const gcp::BuildInfo& b) {
    line.update_ticking("building image " + recipe.tag + ": " + b.status,
                        " (" + format_elapsed(now_unix() - start) + ")");
  });
  line.clear();
  if (build.succeeded()) {
    session.io->info("kinetic: built " + image + " in " + format_elapsed(now_unix() - start));
    return image;
  }

  // Say what failed: the step, Cloud Build's detail, and the log's own error line.
  std::string message = "image build " + build.id + " " + to_lower(build.status);
  if (build.failed_step >= 0)
    message += " at step " + std::to_string(build.failed_step) +
               (build.failed_step_name.empty() ? "" : " (" + build.failed_step_name + ")");
  std::string log_object = std::string(kBuildsPrefix) + "logs/log-" + build.id + ".txt";
  std::string why;
  try {
    gcp::StorageClient& storage = session.storage();
    why = log_excerpt(storage.download_string(bucket, log_object));
  } catch (const Error&) {
    // No log (yet): Cloud Build's own words will do.
  }
  if (why.empty()) why = !build.failure_detail.empty() ? build.failure_detail : build.status_detail;
  if (!why.empty()) message += ": " + why;
  message += "; full log: gs://" + bucket + "/" + log_object;
  throw Error(Errc::job_start, message);
}

}  // namespace kinetic::gke
