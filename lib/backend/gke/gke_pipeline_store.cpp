#include "backend/gke/gke_pipeline_store.h"

#include "backend/gke/names.h"
#include "core/error.h"
#include "gcp/storage.h"
#include "pack/archive.h"

namespace kinetic::gke {

namespace {

constexpr const char* kOutputsObject = "outputs.tar.gz";

// The object of LOCATION in this session's bucket; a location elsewhere is none of ours.
std::string object_of(const Session& session, const std::string& location) {
  const std::string prefix = "gs://" + session.bucket() + "/";
  if (location.rfind(prefix, 0) != 0 || location.size() == prefix.size())
    throw Error(Errc::not_found,
                "the outputs at " + location + " are not in this cluster's bucket");
  return location.substr(prefix.size());
}

}  // namespace

void unpack_job_outputs(const fs::path& archive, const fs::path& dir, const IOStreams& io) {
  std::vector<std::string> unsafe;
  unpack_archive(archive, dir, UnsafeLinks::skip, &unsafe);
  if (unsafe.empty()) return;
  std::string names;
  for (const auto& u : unsafe) names += (names.empty() ? "" : ", ") + u;
  io.warn("left out of the outputs: unsafe symlinks " + names);
}

std::optional<std::string> GkePipelineStore::read(const std::string& name) {
  try {
    return session_.storage().download_string(session_.bucket(), kPipelinesPrefix + name);
  } catch (const Error& e) {
    if (e.code() == Errc::not_found) return std::nullopt;
    throw;
  }
}

void GkePipelineStore::write(const std::string& name, const std::string& data) {
  session_.storage().upload_string(session_.bucket(), kPipelinesPrefix + name, data,
                                   {.content_type = "application/json"});
}

std::string GkePipelineStore::outputs_of(const std::string& job, const fs::path&) const {
  return "gs://" + session_.bucket() + "/" + results_prefix(job) + kOutputsObject;
}

std::string GkePipelineStore::location(const std::string& name) const {
  return "gs://" + session_.bucket() + "/" + kPipelinesPrefix + name;
}

bool GkePipelineStore::outputs_present(const std::string& location) {
  try {
    return session_.storage()
        .get_object(session_.bucket(), object_of(session_, location))
        .has_value();
  } catch (const Error& e) {
    if (e.code() == Errc::not_found) return false;
    throw;
  }
}

void GkePipelineStore::fetch_outputs(const std::string& location, const fs::path& dir) {
  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = session_.bucket();
  const std::string object = object_of(session_, location);
  TempDir tmp(session_.state_dir / "tmp", "step-outputs-");
  const fs::path archive = tmp / kOutputsObject;
  storage.download_file(bucket, object, archive);
  make_dirs(dir, 0755);
  unpack_job_outputs(archive, dir, *session_.io);
  const std::string results = object.substr(0, object.size() - std::string(kOutputsObject).size());
  try {
    atomic_write(dir / "status.json", storage.download_string(bucket, results + "status.json"),
                 0644, Durability::unsynced);
  } catch (const Error& e) {
    if (e.code() != Errc::not_found) throw;
  }
}

}  // namespace kinetic::gke
