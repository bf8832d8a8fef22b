#include "backend/gke/release.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>

#include "core/duration.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/strings.h"
#include "gcp/operations.h"
#include "http/retry.h"
#include "http/trace.h"
#include "job/spec.h"
#include "pack/sha256.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

// A YAML node as JSON: plain scalars take the type YAML 1.2's core schema gives them (true,
// 12, 1.5, null), quoted ones stay strings.
json yaml_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(yaml_to_json(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = node.Scalar();
      if (node.Tag() != "?") return s;  // quoted, or tagged
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      if (s == "null" || s == "~" || s.empty()) return nullptr;
      json number = json::parse(s, nullptr, false);
      if (number.is_number()) return number;
      return s;
    }
    default:
      return nullptr;
  }
}

std::string download(const Release& release, const std::string& url, const Session& session) {
  // A plain transport: nothing of the user's Google credentials goes to a release download.
  http::CurlOptions curl;
  curl.follow_redirects = true;
  auto transport = http::traced(
      http::retried(http::make_curl_transport(curl)), session.verbosity, [](std::string_view line) {
        std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
      });
  http::Request req;
  req.url = url;
  http::Response r;
  const std::string fix = "; pass " + release.flag + " FILE with a copy of it";
  try {
    r = transport->send(req);
  } catch (const std::exception& e) {
    throw Error(Errc::api, "cannot download the " + release.name + " release from " + url + ": " +
                               e.what() + fix);
  }
  if (r.status != 200)
    throw Error(Errc::api, "cannot download the " + release.name + " release from " + url +
                               ": HTTP " + std::to_string(r.status) + fix);
  return r.body;
}

std::string read_source(const Release& release, const std::string& source, const Session& session) {
  if (starts_with(source, "https://") || starts_with(source, "http://"))
    return download(release, source, session);
  const std::string path = starts_with(source, "file://") ? source.substr(7) : source;
  auto text = read_file(path);
  if (!text)
    throw Error(Errc::config, "cannot read the " + release.name + " manifests " + path +
                                  ": no such file; " + release.flag + " takes a file or a URL");
  return *text;
}

// "v0.10.1" → {0, 10, 1}; unparsable parts are 0.
std::vector<int> version_parts(std::string v) {
  if (!v.empty() && v[0] == 'v') v = v.substr(1);
  std::vector<int> parts;
  for (const auto& p : split(v, '.')) parts.push_back(std::atoi(p.c_str()));
  parts.resize(3, 0);
  return parts;
}

bool controller_available(const json& deployment) {
  const json status = deployment.value("status", json::object());
  const long generation = deployment["metadata"].value("generation", 0L);
  if (status.value("observedGeneration", 0L) < generation) return false;  // not seen the update
  for (const auto& c : status.value("conditions", json::array()))
    if (c.value("type", "") == "Available") return c.value("status", "") == "True";
  return status.value("availableReplicas", 0) > 0;
}

}  // namespace

std::string deployment_path(const Release& release) {
  return "/apis/apps/v1/namespaces/" + release.ns + "/deployments/" + release.deployment;
}

void wait_for_controller(const Release& release, const Session& session, k8s::Client& kube) {
  gcp::PollOptions poll = session.poll;
  poll.deadline = std::min(poll.deadline, std::chrono::seconds(600));
  gcp::Backoff backoff(poll);
  const double started = now_unix();
  for (;;) {
    auto deployment = kube.get(deployment_path(release));
    if (deployment && controller_available(*deployment)) break;
    const std::string waited = format_elapsed(now_unix() - started);
    if (session.progress)
      session.progress->update_ticking(
          release.name + " " + release.version + ": waiting for its controller",
          " (" + waited + ")");
    if (!backoff.wait())
      throw Error(Errc::api, "the " + release.name + " controller (" + release.ns + "/" +
                                 release.deployment + ") is not available after " + waited +
                                 "; see its pods with `kubectl -n " + release.ns +
                                 " get pods`, then run `kinetic up` again");
  }
  if (session.progress) session.progress->clear();
}

std::string manifests_source(const Release& release, const std::string& flag, const Env& env) {
  if (!flag.empty()) return flag;
  if (auto v = env.get(release.env); v && !v->empty()) return *v;
  return release.url;
}

std::string verify_release(const Release& release, const std::string& text,
                           const std::string& source, const std::string& pin) {
  const std::string digest = sha256_hex(text);
  // No pin yet: the HTTPS download is taken as before, and its digest is said where it is
  // installed, so a user can check it.
  if (source != release.url || pin.empty() || digest == pin) return digest;
  throw Error(Errc::api, "refusing the " + release.name + " release from " + source +
                             ": it has sha256 " + digest + ", not the pinned " + pin +
                             "; check a copy yourself and pass " + release.flag + " FILE");
}

std::vector<json> parse_yaml_objects(const std::string& yaml, const std::string& what) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(yaml);
  } catch (const YAML::Exception& e) {
    throw Error(Errc::config,
                what + " are not YAML: line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  std::vector<json> objects;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (!docs[i] || docs[i].IsNull()) continue;
    json object = yaml_to_json(docs[i]);
    if (!object.is_object() || !object.contains("kind"))
      throw Error(Errc::config,
                  what + ": document " + std::to_string(i + 1) + " is not a Kubernetes object");
    objects.push_back(std::move(object));
  }
  if (objects.empty()) throw Error(Errc::config, what + " hold no object");
  return objects;
}

std::string installed_release_version(const Release& release, k8s::Client& kube) {
  auto deployment = kube.get(deployment_path(release));
  if (!deployment) return "";
  const json annotations = (*deployment)["metadata"].value("annotations", json::object());
  if (annotations.contains(release.version_annotation))
    return annotations[release.version_annotation].get<std::string>();
  // Installed by someone else: the release's image tag says which.
  for (const auto& c :
       (*deployment)["spec"]["template"]["spec"].value("containers", json::array())) {
    const std::string image = c.value("image", "");
    if (image.find(release.image) != std::string::npos) return image.substr(image.rfind(':') + 1);
  }
  return "unknown";
}

ClusterChange ensure_release(const Release& release, const Session& session, k8s::Client& kube,
                             const std::string& source, const std::function<void(json&)>& edit) {
  const std::string installed = installed_release_version(release, kube);
  const bool crd =
      kube.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + release.crd)
          .has_value();
  const std::string what = release.version + " (" + release.ns + ")";
  if (crd && !installed.empty() && installed != "unknown" &&
      version_parts(installed) >= version_parts(release.version)) {
    wait_for_controller(release, session, kube);
    return {release.change, installed + " (" + release.ns + ")", "exists"};
  }
  const std::string text = read_source(release, source, session);
  // Checked before it reaches the cluster.
  const std::string digest = verify_release(release, text, source, release.sha256);
  std::vector<json> objects =
      parse_yaml_objects(text, "the " + release.name + " manifests " + source);
  // Namespaces and CRDs first: what the rest lives in or is made of.
  auto rank = [](const json& o) {
    const std::string kind = o.value("kind", "");
    return kind == "Namespace" ? 0 : kind == "CustomResourceDefinition" ? 1 : 2;
  };
  std::stable_sort(objects.begin(), objects.end(),
                   [&](const json& a, const json& b) { return rank(a) < rank(b); });
  for (auto& object : objects) {
    object["metadata"]["annotations"][release.version_annotation] = release.version;
    if (edit) edit(object);
    if (session.progress)
      session.progress->update(release.name + " " + release.version + ": applying " +
                                   object.value("kind", "") + " " +
                                   object["metadata"].value("name", ""),
                               true);
    kube.apply(k8s::object_path(object, release.ns), object, "kinetic");
  }
  wait_for_controller(release, session, kube);
  const std::string from = source == release.url && release.sha256.empty()
                               ? " (not pinned: the release had sha256 " + digest + ")"
                               : "";
  if (installed.empty() || !crd) return {release.change, what, "installed" + from};
  return {release.change, what, "upgraded from " + installed + from};
}

}  // namespace kinetic::gke
