#include "backend/gke/jobset_release.h"

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
json to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(to_json(item));
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

std::string download(const std::string& url, const Session& session) {
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
  try {
    r = transport->send(req);
  } catch (const std::exception& e) {
    throw Error(Errc::api, "cannot download the JobSet release from " + url + ": " + e.what() +
                               "; pass --jobset-manifests FILE with a copy of it");
  }
  if (r.status != 200)
    throw Error(Errc::api, "cannot download the JobSet release from " + url + ": HTTP " +
                               std::to_string(r.status) +
                               "; pass --jobset-manifests FILE with a copy of it");
  return r.body;
}

std::string read_source(const std::string& source, const Session& session) {
  if (starts_with(source, "https://") || starts_with(source, "http://"))
    return download(source, session);
  const std::string path = starts_with(source, "file://") ? source.substr(7) : source;
  auto text = read_file(path);
  if (!text)
    throw Error(Errc::config, "cannot read the JobSet manifests " + path +
                                  ": no such file; --jobset-manifests takes a file or a URL");
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

std::string deployment_path() {
  return std::string("/apis/apps/v1/namespaces/") + kJobSetNamespace + "/deployments/" +
         kJobSetDeployment;
}

void wait_for_controller(const Session& session, k8s::Client& kube) {
  gcp::PollOptions poll = session.poll;
  poll.deadline = std::min(poll.deadline, std::chrono::seconds(600));
  gcp::Backoff backoff(poll);
  const double started = now_unix();
  for (;;) {
    auto deployment = kube.get(deployment_path());
    if (deployment && controller_available(*deployment)) break;
    const std::string waited = format_elapsed(now_unix() - started);
    if (session.progress) {
      std::string line = "JobSet ";
      line += kJobSetVersion;
      line += ": waiting for its controller (";
      line += waited;
      line += ")";
      session.progress->update(line, true);
    }
    if (!backoff.wait()) {
      std::string message = "the JobSet controller (";
      message += kJobSetNamespace;
      message += "/";
      message += kJobSetDeployment;
      message += ") is not available after " + waited + "; see its pods with `kubectl -n ";
      message += kJobSetNamespace;
      message += " get pods`, then run `kinetic up` again";
      throw Error(Errc::api, message);
    }
  }
  if (session.progress) session.progress->clear();
}

}  // namespace

std::string default_jobset_manifests_url() {
  return std::string("https://github.com/kubernetes-sigs/jobset/releases/download/") +
         kJobSetVersion + "/manifests.yaml";
}

std::string jobset_manifests_source(const std::string& flag, const Env& env) {
  if (!flag.empty()) return flag;
  if (auto v = env.get("KINETIC_JOBSET_MANIFESTS"); v && !v->empty()) return *v;
  return default_jobset_manifests_url();
}

std::string verify_manifests(const std::string& text, const std::string& source,
                             const std::string& pin) {
  const std::string digest = sha256_hex(text);
  // No pin yet (see kJobSetManifestsSha256): the HTTPS download is taken as before, and its
  // digest is said where it is installed, so a user can check it.
  if (source != default_jobset_manifests_url() || pin.empty() || digest == pin) return digest;
  throw Error(Errc::api, "refusing the JobSet release from " + source + ": it has sha256 " +
                             digest + ", not the pinned " + pin +
                             "; check a copy yourself and pass --jobset-manifests FILE");
}

std::vector<json> parse_manifests(const std::string& yaml, const std::string& source) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(yaml);
  } catch (const YAML::Exception& e) {
    throw Error(Errc::config, "the JobSet manifests " + source + " are not YAML: line " +
                                  std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  std::vector<json> objects;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (!docs[i] || docs[i].IsNull()) continue;
    json object = to_json(docs[i]);
    if (!object.is_object() || !object.contains("kind"))
      throw Error(Errc::config, "the JobSet manifests " + source + ": document " +
                                    std::to_string(i + 1) + " is not a Kubernetes object");
    objects.push_back(std::move(object));
  }
  if (objects.empty())
    throw Error(Errc::config, "the JobSet manifests " + source + " hold no object");
  return objects;
}

std::string installed_jobset_version(k8s::Client& kube) {
  auto deployment = kube.get(deployment_path());
  if (!deployment) return "";
  const json annotations = (*deployment)["metadata"].value("annotations", json::object());
  if (annotations.contains(kJobSetVersionAnnotation))
    return annotations[kJobSetVersionAnnotation].get<std::string>();
  // Installed by someone else: the release's image tag says which.
  for (const auto& c :
       (*deployment)["spec"]["template"]["spec"].value("containers", json::array())) {
    const std::string image = c.value("image", "");
    if (image.find("/jobset:") != std::string::npos) return image.substr(image.rfind(':') + 1);
  }
  return "unknown";
}

ClusterChange ensure_jobset(const Session& session, k8s::Client& kube, const std::string& source) {
  const std::string installed = installed_jobset_version(kube);
  const bool crd = kube.get(
                           "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                           "jobsets.jobset.x-k8s.io")
                       .has_value();
  const std::string what = std::string(kJobSetVersion) + " (" + kJobSetNamespace + ")";
  if (crd && !installed.empty() && installed != "unknown" &&
      version_parts(installed) >= version_parts(kJobSetVersion)) {
    wait_for_controller(session, kube);
    return {"jobset", installed + " (" + kJobSetNamespace + ")", "exists"};
  }
  const std::string text = read_source(source, session);
  const std::string digest = verify_manifests(text, source);  // before it reaches the cluster
  std::vector<json> objects = parse_manifests(text, source);
  // Namespaces and CRDs first: what the rest lives in or is made of.
  auto rank = [](const json& o) {
    const std::string kind = o.value("kind", "");
    return kind == "Namespace" ? 0 : kind == "CustomResourceDefinition" ? 1 : 2;
  };
  std::stable_sort(objects.begin(), objects.end(),
                   [&](const json& a, const json& b) { return rank(a) < rank(b); });
  for (auto& object : objects) {
    object["metadata"]["annotations"][kJobSetVersionAnnotation] = kJobSetVersion;
    if (session.progress)
      session.progress->update("JobSet " + std::string(kJobSetVersion) + ": applying " +
                                   object.value("kind", "") + " " +
                                   object["metadata"].value("name", ""),
                               true);
    kube.apply(k8s::object_path(object, kJobSetNamespace), object, "kinetic");
  }
  wait_for_controller(session, kube);
  const std::string from =
      source == default_jobset_manifests_url() && std::string(kJobSetManifestsSha256).empty()
          ? " (not pinned: the release had sha256 " + digest + ")"
          : "";
  if (installed.empty() || !crd) return {"jobset", what, "installed" + from};
  return {"jobset", what, "upgraded from " + installed + from};
}

}  // namespace kinetic::gke
