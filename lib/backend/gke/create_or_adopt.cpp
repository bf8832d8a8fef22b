#include "backend/gke/create_or_adopt.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "backend/gke/names.h"
#include "core/backoff.h"
#include "core/error.h"
#include "http/retry.h"
#include "http/transport.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

std::string job_label(const json& object) {
  const json meta = object.value("metadata", json::object());
  const json labels = meta.value("labels", json::object());
  return labels.is_object() ? labels.value(kJobLabel, "") : "";
}

}  // namespace

json create_or_adopt(k8s::Client& client, const std::string& collection, const json& object,
                     int attempts) {
  const std::string name = object.value("metadata", json::object()).value("name", "");
  const std::string path = collection + "/" + name;
  const std::string ours = job_label(object);
  // The object under NAME, if it is ours; throws when someone else's holds the name.
  auto adopt = [&]() -> std::optional<json> {
    std::optional<json> found = client.get(path);
    if (!found) return std::nullopt;
    if (!ours.empty() && job_label(*found) == ours) {
      // Ours, but going away (cancelled meanwhile): not to be adopted; creating again meets a
      // 409 until it is gone, and the tries are bounded.
      if (found->value("metadata", json::object()).contains("deletionTimestamp"))
        return std::nullopt;
      return found;
    }
    throw Error(Errc::job_start, path + " already exists and was not created by this run; " +
                                     "delete it (kubectl delete " +
                                     collection.substr(collection.rfind('/') + 1) + " " + name +
                                     ") or run again");
  };
  // A short curve: the object is usually there (or gone) a moment later.
  constexpr BackoffCurve kRetry{std::chrono::milliseconds(200), std::chrono::seconds(2), 2.0};
  for (int attempt = 1;; ++attempt) {
    try {
      return client.create(collection, object);
    } catch (const k8s::ApiError& e) {
      if (e.code() == 409) {
        if (auto found = adopt()) return *found;
        if (attempt >= attempts) throw;
        // Gone meanwhile, or ours still going away: create it again after a little while.
        std::this_thread::sleep_for(kRetry.delay(attempt));
        continue;
      }
      // A 429 reaching here is the retry layer giving up after waiting out the server's limit
      // (it resends 429s itself; the server did not act): trying again would wait as long again.
      if (e.code() == 429 || !http::retryable_status(e.code()) || attempt >= attempts) throw;
      // The server may have acted before failing: wait a little, then look.
      std::this_thread::sleep_for(kRetry.delay(attempt));
    } catch (const http::TransportError& e) {
      // The connection dropped after the request went out: it may have been created.
      if (!e.retryable() || attempt >= attempts) throw;
    }
    if (auto found = adopt()) return *found;
  }
}

void remove_if_ours(k8s::Client& client, const std::string& path, const std::string& job_id) {
  try {
    std::optional<json> found = client.get(path);
    if (found && !job_id.empty() && job_label(*found) == job_id) client.remove(path);
  } catch (const Error&) {
    // Best effort: `kinetic cleanup` finds what is left by its labels.
  }
}

}  // namespace kinetic::gke
