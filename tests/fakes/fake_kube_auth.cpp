// Who may do what in the fake Kubernetes API server: the tokens it mints for service accounts
// (a pod's, as the kubelet asks for one, and the TokenRequest API's), the service-account
// controller's "default" accounts, and RBAC for the requests that carry such a token. The test
// user's token keeps full access.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <random>

#include "fakes/fake_encoding.h"
#include "fakes/fake_kube_internal.h"

namespace kinetic::fakes {

using json = nlohmann::json;
using namespace kube;

namespace {

const ResourceType& type(const char* group, const char* plural) {
  return *find_type(group, "v1", plural);
}
const ResourceType& auth_serviceaccounts_t() {
  static const ResourceType& t = type("", "serviceaccounts");
  return t;
}
const ResourceType& auth_pods_t() {
  static const ResourceType& t = type("", "pods");
  return t;
}

constexpr const char* kRbac = "rbac.authorization.k8s.io";
constexpr const char* kIssuer = "https://kubernetes.default.svc.cluster.local";

std::string token_base64url(std::string_view bytes) {
  std::string s = base64_encode(bytes);
  for (auto& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!s.empty() && s.back() == '=') s.pop_back();
  return s;
}

std::string random_bytes(std::size_t n) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(rng() & 0xff);
  return out;
}

bool contains(const json& list, const std::string& v) {
  if (!list.is_array()) return false;
  return std::any_of(list.begin(), list.end(), [&](const json& x) { return x == v; });
}

// The API server's discovery paths, open to any authenticated caller (the system:discovery and
// system:public-info-viewer ClusterRoles, bound to system:authenticated).
bool discovery_path(const std::string& p) {
  static const char* exact[] = {"/api",      "/apis",    "/openapi", "/version",
                                "/version/", "/healthz", "/livez",   "/readyz"};
  for (auto* e : exact)
    if (p == e) return true;
  for (const char* prefix : {"/api/", "/apis/", "/openapi/"})
    if (p.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

// ---- request attributes and rules ------------------------------------------------------------

RequestAttributes kube::request_attributes(const std::string& method,
                                           const std::vector<std::string>& seg,
                                           const std::string& path, const std::string& watch,
                                           const std::string& field_selector) {
  RequestAttributes a;
  a.path = path;
  std::string verb = method == "POST"     ? "create"
                     : method == "GET"    ? "get"
                     : method == "HEAD"   ? "get"
                     : method == "PUT"    ? "update"
                     : method == "PATCH"  ? "patch"
                     : method == "DELETE" ? "delete"
                                          : "";
  std::size_t base = 0;
  if (seg.size() >= 2 && seg[0] == "api") {
    a.version = seg[1];
    base = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    a.group = seg[1];
    a.version = seg[2];
    base = 3;
  }
  if (base == 0 || seg.size() <= base) {  // /api, /apis/batch/v1, /version, ...
    std::transform(method.begin(), method.end(), std::back_inserter(a.verb),
                   [](char c) { return static_cast<char>(std::tolower(c)); });
    return a;
  }
  a.resource_request = true;
  std::vector<std::string> parts(seg.begin() + static_cast<long>(base), seg.end());
  if (parts[0] == "namespaces" && parts.size() > 1) {
    a.ns = parts[1];
    if (parts.size() > 2 && parts[2] != "status" && parts[2] != "finalize")
      parts.erase(parts.begin(), parts.begin() + 2);
  }
  a.resource = parts[0];
  if (parts.size() >= 2) a.name = parts[1];
  if (parts.size() >= 3) a.subresource = parts[2];
  if (a.name.empty() && verb == "get") {
    verb = (watch == "1" || watch == "true" || watch == "True") ? "watch" : "list";
    // A list or watch of one object by name (kubectl get NAME --watch) names it.
    for (const auto& r : parse_field_selector(field_selector))
      if (r.key == "metadata.name" && r.op == "=" && !r.values.empty()) a.name = r.values[0];
  }
  if (a.name.empty() && verb == "delete") verb = "deletecollection";
  a.verb = verb;
  return a;
}

bool kube::rule_allows(const json& rule, const RequestAttributes& a) {
  const json verbs = rule.value("verbs", json::array());
  if (!contains(verbs, "*") && !contains(verbs, a.verb)) return false;
  if (!a.resource_request) {
    for (const auto& u : rule.value("nonResourceURLs", json::array())) {
      if (!u.is_string()) continue;
      const auto& url = u.get_ref<const std::string&>();
      if (url == "*" || url == a.path) return true;
      if (!url.empty() && url.back() == '*' && a.path.rfind(url.substr(0, url.size() - 1), 0) == 0)
        return true;
    }
    return false;
  }
  const json groups = rule.value("apiGroups", json::array());
  if (!contains(groups, "*") && !contains(groups, a.group)) return false;
  const std::string combined =
      a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  bool resource = false;
  for (const auto& r : rule.value("resources", json::array())) {
    if (!r.is_string()) continue;
    const auto& name = r.get_ref<const std::string&>();
    if (name == "*" || name == combined ||
        (!a.subresource.empty() && name == "*/" + a.subresource)) {
      resource = true;
      break;
    }
  }
  if (!resource) return false;
  // resourceNames cannot restrict list, watch, create or deletecollection: a request without a
  // name never matches a rule that has them.
  const json names = rule.value("resourceNames", json::array());
  return names.empty() || (!a.name.empty() && contains(names, a.name));
}

// ---- authentication --------------------------------------------------------------------------

std::optional<Identity> FakeKube::Impl::authenticate(const std::string& token) {
  if (token.empty()) return std::nullopt;
  auto it = tokens.find(token);
  if (it != tokens.end()) {
    const MintedToken& t = it->second;
    json* sa = find(auth_serviceaccounts_t(), t.ns, t.service_account);
    if (!sa || (*sa)["metadata"].value("uid", "") != t.sa_uid) return std::nullopt;
    if (!t.pod_uid.empty()) {
      json* pod = find(auth_pods_t(), t.ns, t.pod);
      if (!pod || (*pod)["metadata"].value("uid", "") != t.pod_uid) return std::nullopt;
    }
    if (t.expires && SysClock::now() >= *t.expires) return std::nullopt;
    Identity who;
    who.user = "system:serviceaccount:" + t.ns + ":" + t.service_account;
    who.groups = {"system:serviceaccounts", "system:serviceaccounts:" + t.ns,
                  "system:authenticated"};
    who.rbac = true;
    return who;
  }
  if (!options.expected_token.empty() && token != options.expected_token) return std::nullopt;
  Identity who;
  who.user = "kinetic-test-user";
  who.groups = {"system:masters", "system:authenticated"};
  return who;
}

std::string FakeKube::Impl::mint_token(const json& sa, const json* pod,
                                       std::optional<SysClock::time_point> expires) {
  MintedToken t;
  t.ns = sa["metadata"].value("namespace", std::string());
  t.service_account = sa["metadata"].value("name", std::string());
  t.sa_uid = sa["metadata"].value("uid", std::string());
  if (pod) {
    t.pod = (*pod)["metadata"].value("name", std::string());
    t.pod_uid = (*pod)["metadata"].value("uid", std::string());
  }
  t.expires = expires;
  // Shaped as the API server's tokens are (a JWT naming its account), but signed by nobody: the
  // fake knows its tokens by value.
  auto now = SysClock::to_time_t(SysClock::now());
  auto exp = expires ? SysClock::to_time_t(*expires) : now + 3607;
  json claims = {{"aud", {kIssuer}},
                 {"exp", exp},
                 {"iat", now},
                 {"nbf", now},
                 {"iss", kIssuer},
                 {"jti", new_uid()},
                 {"sub", "system:serviceaccount:" + t.ns + ":" + t.service_account},
                 {"kubernetes.io",
                  {{"namespace", t.ns},
                   {"serviceaccount", {{"name", t.service_account}, {"uid", t.sa_uid}}}}}};
  if (pod) claims["kubernetes.io"]["pod"] = {{"name", t.pod}, {"uid", t.pod_uid}};
  std::string token = token_base64url(json{{"alg", "RS256"}, {"kid", "kinetic-fake"}}.dump()) +
                      "." + token_base64url(claims.dump()) + "." +
                      token_base64url(random_bytes(64));
  tokens[token] = std::move(t);
  return token;
}

json FakeKube::Impl::token_request(const std::string& ns, const std::string& name, json request) {
  json* sa = find(auth_serviceaccounts_t(), ns, name);
  if (!sa) throw not_found(auth_serviceaccounts_t(), name);
  json spec = request.value("spec", json::object());
  if (!spec.is_object()) spec = json::object();
  long seconds = 3600;
  if (spec.contains("expirationSeconds") && spec["expirationSeconds"].is_number())
    seconds = spec["expirationSeconds"].get<long>();
  if (seconds < 600)
    throw ApiError{
        422, "Invalid",
        "TokenRequest.authentication.k8s.io \"" + name +
            "\" is invalid: spec.expirationSeconds: Invalid value: " + std::to_string(seconds) +
            ": may not specify a duration less than 10 minutes",
        json{{"name", name},
             {"group", "authentication.k8s.io"},
             {"kind", "TokenRequest"},
             {"causes",
              {{{"reason", "FieldValueInvalid"},
                {"message", "Invalid value: " + std::to_string(seconds) +
                                ": may not specify a duration less than 10 minutes"},
                {"field", "spec.expirationSeconds"}}}}}};
  const json* pod = nullptr;
  if (spec.contains("boundObjectRef") && spec["boundObjectRef"].is_object()) {
    const json& ref = spec["boundObjectRef"];
    if (ref.value("kind", "") != "Pod")
      throw bad_request("kinetic fake Kubernetes API: tokens are bound to pods only, not to a " +
                        ref.value("kind", std::string("(no kind)")));
    pod = find(auth_pods_t(), ns, ref.value("name", std::string()));
    if (!pod) throw not_found(auth_pods_t(), ref.value("name", std::string()));
    if (!ref.value("uid", std::string()).empty() &&
        ref["uid"] != (*pod)["metadata"].value("uid", ""))
      throw ApiError{409, "Conflict",
                     "the UID in the bound object reference (" + ref["uid"].get<std::string>() +
                         ") does not match the UID in record. The object might have been deleted "
                         "and then recreated",
                     json::object()};
  }
  auto expires = SysClock::now() + std::chrono::seconds(seconds);
  if (!spec.contains("audiences") || !spec["audiences"].is_array() || spec["audiences"].empty())
    spec["audiences"] = {kIssuer};
  spec["expirationSeconds"] = seconds;
  if (!spec.contains("boundObjectRef")) spec["boundObjectRef"] = nullptr;
  return {{"kind", "TokenRequest"},
          {"apiVersion", "authentication.k8s.io/v1"},
          {"metadata",
           {{"name", name}, {"namespace", ns}, {"creationTimestamp", rfc3339(SysClock::now())}}},
          {"spec", spec},
          {"status",
           {{"token", mint_token(*sa, pod, expires)}, {"expirationTimestamp", rfc3339(expires)}}}};
}

void FakeKube::Impl::ensure_default_service_accounts() {
  for (json* n : list(*find_type("", "v1", "namespaces"), "")) {
    const auto ns = (*n)["metadata"].value("name", std::string());
    if (find(auth_serviceaccounts_t(), ns, "default")) continue;
    json sa = {{"apiVersion", "v1"},
               {"kind", "ServiceAccount"},
               {"metadata", {{"name", "default"}, {"namespace", ns}}}};
    stamp_new(sa);
    sa["metadata"].erase("generation");
    insert(auth_serviceaccounts_t(), std::move(sa));
  }
}

// ---- RBAC ------------------------------------------------------------------------------------

void FakeKube::Impl::authorize(const Identity& who, const RequestAttributes& a) {
  if (!who.rbac) return;
  if (!a.resource_request && discovery_path(a.path)) return;
  // Whether SUBJECT (of a binding in BINDING_NS, "" for a ClusterRoleBinding) is WHO.
  auto applies = [&](const json& subject, const std::string& binding_ns) {
    const auto kind = subject.value("kind", std::string());
    const auto name = subject.value("name", std::string());
    if (kind == "User") return name == who.user;
    if (kind == "Group")
      return std::find(who.groups.begin(), who.groups.end(), name) != who.groups.end();
    if (kind != "ServiceAccount") return false;
    auto sa_ns = subject.value("namespace", std::string());
    if (sa_ns.empty()) sa_ns = binding_ns;
    return !sa_ns.empty() && who.user == "system:serviceaccount:" + sa_ns + ":" + name;
  };
  auto rules_of = [&](const json& ref, const std::string& binding_ns) -> json {
    if (ref.value("apiGroup", std::string(kRbac)) != kRbac) return json::array();
    const auto kind = ref.value("kind", std::string());
    json* role = nullptr;
    if (kind == "Role" && !binding_ns.empty())
      role = find(type(kRbac, "roles"), binding_ns, ref.value("name", std::string()));
    else if (kind == "ClusterRole")
      role = find(type(kRbac, "clusterroles"), "", ref.value("name", std::string()));
    return role ? role->value("rules", json::array()) : json::array();
  };
  auto grants = [&](const json& binding, const std::string& binding_ns) {
    bool bound = false;
    for (const auto& s : binding.value("subjects", json::array()))
      bound = bound || applies(s, binding_ns);
    if (!bound) return false;
    for (const auto& rule : rules_of(binding.value("roleRef", json::object()), binding_ns))
      if (rule_allows(rule, a)) return true;
    return false;
  };
  for (json* b : list(type(kRbac, "clusterrolebindings"), ""))
    if (grants(*b, "")) return;
  if (!a.ns.empty())
    for (json* b : list(type(kRbac, "rolebindings"), a.ns))
      if (grants(*b, a.ns)) return;

  // responsewriters.Forbidden: the message names the user, the verb and what it was refused.
  std::string why;
  json details = json::object();
  std::string message;
  if (!a.resource_request) {
    message = "forbidden: User \"" + who.user + "\" cannot " + a.verb + " path \"" + a.path + "\"";
  } else {
    const auto resource = a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
    why = "User \"" + who.user + "\" cannot " + a.verb + " resource \"" + resource +
          "\" in API group \"" + a.group + "\"" +
          (a.ns.empty() ? std::string(" at the cluster scope")
                        : " in the namespace \"" + a.ns + "\"");
    const auto qualified = a.group.empty() ? a.resource : a.resource + "." + a.group;
    message = qualified + (a.name.empty() ? std::string() : " \"" + a.name + "\"") +
              " is forbidden: " + why;
    if (!a.name.empty()) details["name"] = a.name;
    if (!a.group.empty()) details["group"] = a.group;
    details["kind"] = a.resource;
  }
  throw ApiError{403, "Forbidden", message, details};
}

}  // namespace kinetic::fakes
