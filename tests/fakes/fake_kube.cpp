// The fake Kubernetes API server: TLS, authentication, discovery and OpenAPI, the REST verbs over
// the object store, watches and pod logs. The control plane lives in fake_kube_control.cpp.
#include "fakes/fake_kube.h"

#include "fakes/fake_encoding.h"
#include "fakes/fake_latency.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <random>
#include <sstream>
#include <stdexcept>

#include "fakes/fake_kube_internal.h"

namespace kinetic::fakes {

using json = nlohmann::json;
namespace kube {

// ---- resource types --------------------------------------------------------------------------

const std::vector<ResourceType>& resource_types() {
  static const std::vector<ResourceType> types = {
      {"", "v1", "namespaces", "namespace", "Namespace", false, {"ns"}, {}},
      {"", "v1", "pods", "pod", "Pod", true, {"po"}, {"all"}},
      {"", "v1", "events", "event", "Event", true, {"ev"}, {}},
      {"", "v1", "secrets", "secret", "Secret", true, {}, {}},
      {"", "v1", "services", "service", "Service", true, {"svc"}, {"all"}},
      {"", "v1", "nodes", "node", "Node", false, {"no"}, {}},
      {"", "v1", "configmaps", "configmap", "ConfigMap", true, {"cm"}, {}},
      {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, {"sa"}, {}},
      {"apps", "v1", "deployments", "deployment", "Deployment", true, {"deploy"}, {"all"}},
      {"batch", "v1", "jobs", "job", "Job", true, {}, {"all"}},
      {"batch", "v1", "cronjobs", "cronjob", "CronJob", true, {"cj"}, {"all"}},
      {"apiextensions.k8s.io",
       "v1",
       "customresourcedefinitions",
       "customresourcedefinition",
       "CustomResourceDefinition",
       false,
       {"crd", "crds"},
       {}},
      {"rbac.authorization.k8s.io", "v1", "roles", "role", "Role", true, {}, {}},
      {"rbac.authorization.k8s.io",
       "v1",
       "rolebindings",
       "rolebinding",
       "RoleBinding",
       true,
       {},
       {}},
      {"rbac.authorization.k8s.io",
       "v1",
       "clusterroles",
       "clusterrole",
       "ClusterRole",
       false,
       {},
       {}},
      {"rbac.authorization.k8s.io",
       "v1",
       "clusterrolebindings",
       "clusterrolebinding",
       "ClusterRoleBinding",
       false,
       {},
       {}},
      {"admissionregistration.k8s.io",
       "v1",
       "mutatingwebhookconfigurations",
       "mutatingwebhookconfiguration",
       "MutatingWebhookConfiguration",
       false,
       {},
       {}},
      {"admissionregistration.k8s.io",
       "v1",
       "validatingwebhookconfigurations",
       "validatingwebhookconfiguration",
       "ValidatingWebhookConfiguration",
       false,
       {},
       {}},
      // Served only once its CustomResourceDefinition exists (FakeKube::Impl::served).
      {"jobset.x-k8s.io", "v1alpha2", "jobsets", "jobset", "JobSet", true, {}, {}},
      // Kueue v0.17.1's storage version (fake_kube_kueue.cpp), its short names as its
      // +kubebuilder:resource markers give them.
      {"kueue.x-k8s.io",
       "v1beta2",
       "resourceflavors",
       "resourceflavor",
       "ResourceFlavor",
       false,
       {"flavor", "flavors", "rf"},
       {}},
      {"kueue.x-k8s.io",
       "v1beta2",
       "clusterqueues",
       "clusterqueue",
       "ClusterQueue",
       false,
       {"cq"},
       {}},
      {"kueue.x-k8s.io",
       "v1beta2",
       "localqueues",
       "localqueue",
       "LocalQueue",
       true,
       {"queue", "queues", "lq"},
       {}},
      {"kueue.x-k8s.io",
       "v1beta2",
       "workloads",
       "workload",
       "Workload",
       true,
       {"kwl", "kueueworkload", "kueueworkloads"},
       {}},
      {"kueue.x-k8s.io",
       "v1beta2",
       "workloadpriorityclasses",
       "workloadpriorityclass",
       "WorkloadPriorityClass",
       false,
       {},
       {}},
  };
  return types;
}

const ResourceType* find_type(const std::string& group, const std::string& version,
                              const std::string& plural) {
  for (auto& t : resource_types())
    if (t.group == group && t.version == version && t.plural == plural) return &t;
  return nullptr;
}

const ResourceType* type_of_kind(const std::string& kind) {
  for (auto& t : resource_types())
    if (t.kind == kind) return &t;
  return nullptr;
}

// ---- errors ----------------------------------------------------------------------------------

json status_json(const ApiError& e) {
  json j = {{"kind", "Status"},    {"apiVersion", "v1"},   {"metadata", json::object()},
            {"status", "Failure"}, {"message", e.message}, {"reason", e.reason}};
  if (!e.details.is_null()) j["details"] = e.details;
  j["code"] = e.code;
  return j;
}

ApiError not_found(const ResourceType& rt, const std::string& name) {
  json details = {{"name", name}};
  if (!rt.group.empty()) details["group"] = rt.group;
  details["kind"] = rt.plural;
  return {404, "NotFound", rt.qualified() + " \"" + name + "\" not found", details};
}

// Where OBJECT first holds a null ("spec.admissionScope"), or "".
std::string first_null_field(const json& object, const std::string& at) {
  if (object.is_null()) return at;
  if (!object.is_object()) return "";
  for (const auto& [key, value] : object.items()) {
    std::string found = first_null_field(value, at.empty() ? key : at + "." + key);
    if (!found.empty()) return found;
  }
  return "";
}

ApiError bad_request(const std::string& message) {
  return {400, "BadRequest", message};
}

ApiError invalid(const ResourceType& rt, const std::string& name,
                 const std::vector<std::pair<std::string, std::string>>& causes) {
  std::string msg = rt.qualified_kind() + " \"" + name + "\" is invalid: ";
  json jc = json::array();
  std::vector<std::string> parts;
  for (auto& [field, m] : causes) {
    parts.push_back(field + ": " + m);
    std::string reason = m.rfind("Required value", 0) == 0      ? "FieldValueRequired"
                         : m.rfind("Unsupported value", 0) == 0 ? "FieldValueNotSupported"
                                                                : "FieldValueInvalid";
    jc.push_back({{"reason", reason}, {"message", m}, {"field", field}});
  }
  if (parts.size() == 1) {
    msg += parts[0];
  } else {
    msg += "[";
    for (std::size_t i = 0; i < parts.size(); ++i) msg += (i ? ", " : "") + parts[i];
    msg += "]";
  }
  json details = {{"name", name}};
  if (!rt.group.empty()) details["group"] = rt.group;
  details["kind"] = rt.kind;
  details["causes"] = jc;
  return {422, "Invalid", msg, details};
}

// A custom resource's schema (a CRD's structural schema) refuses null for a field it does not
// mark nullable, in a server-side apply too (kubernetes/kubernetes issues 103011, 117447): the
// fake knows no schema and refuses every null.
void refuse_null_fields(const ResourceType& rt, const std::string& name, const std::string& body) {
  const json object = json::parse(body, nullptr, false);
  if (object.is_discarded()) return;
  const std::string field = first_null_field(object, "");
  if (!field.empty())
    throw invalid(rt, name,
                  {{field, "Invalid value: \"null\": " + field +
                               " in body must be of type object: \"null\""}});
}

// ---- time and ids ----------------------------------------------------------------------------

std::string rfc3339(SysClock::time_point t) {
  auto secs = SysClock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string rfc3339_nano(SysClock::time_point t) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  auto secs = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(ns % 1000000000));
  return buf;
}

std::optional<SysClock::time_point> parse_rfc3339(const std::string& s) {
  int y, mo, d, h, mi, sec, n = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 ||
      n == 0)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  auto t = SysClock::from_time_t(timegm(&tm));
  std::size_t i = static_cast<std::size_t>(n);
  if (i < s.size() && s[i] == '.') {
    ++i;
    long long frac = 0;
    int digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (digits < 9) {
        frac = frac * 10 + (s[i] - '0');
        ++digits;
      }
      ++i;
    }
    while (digits++ < 9) frac *= 10;
    t += std::chrono::duration_cast<SysClock::duration>(std::chrono::nanoseconds(frac));
  }
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) return t;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh = 0, om = 0;
    if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &oh, &om) != 2) return std::nullopt;
    auto off = std::chrono::hours(oh) + std::chrono::minutes(om);
    return s[i] == '+' ? t - off : t + off;
  }
  return std::nullopt;
}

namespace {
std::mt19937_64& rng() {
  static thread_local std::mt19937_64 r{std::random_device{}()};
  return r;
}
}  // namespace

std::string new_uid() {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) s += '-';
    int v = static_cast<int>(rng()() % 16);
    if (i == 12) v = 4;
    if (i == 16) v = 8 + (v & 3);
    s += hex[v];
  }
  return s;
}

std::string random_suffix(int n) {
  static const char* alphabet = "bcdfghjklmnpqrstvwxz2456789";  // apimachinery utilrand
  std::string s;
  for (int i = 0; i < n; ++i) s += alphabet[rng()() % 27];
  return s;
}

// ---- selectors -------------------------------------------------------------------------------

namespace {

std::string trim_kube(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_top(const std::string& s) {  // commas outside parentheses
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim_kube(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim_kube(cur).empty() || !out.empty()) out.push_back(trim_kube(cur));
  return out;
}

}  // namespace

std::vector<Requirement> parse_label_selector(const std::string& s) {
  std::vector<Requirement> out;
  for (auto& part : split_top(s)) {
    if (part.empty())
      throw bad_request("unable to parse requirement: found '', expected: identifier");
    Requirement r;
    auto set_pos = [&](const std::string& op) -> bool {
      auto pos = part.find(" " + op + " ");
      if (pos == std::string::npos) return false;
      r.key = trim_kube(part.substr(0, pos));
      r.op = op;
      auto rest = trim_kube(part.substr(pos + op.size() + 2));
      if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')')
        throw bad_request("unable to parse requirement: found '" + rest + "', expected: '('");
      std::stringstream ss(rest.substr(1, rest.size() - 2));
      std::string v;
      while (std::getline(ss, v, ',')) r.values.push_back(trim_kube(v));
      return true;
    };
    if (set_pos("notin") || set_pos("in")) {
      // done
    } else if (auto p = part.find("!="); p != std::string::npos) {
      r = {trim_kube(part.substr(0, p)), "!=", {trim_kube(part.substr(p + 2))}};
    } else if (auto p2 = part.find("=="); p2 != std::string::npos) {
      r = {trim_kube(part.substr(0, p2)), "=", {trim_kube(part.substr(p2 + 2))}};
    } else if (auto p3 = part.find('='); p3 != std::string::npos) {
      r = {trim_kube(part.substr(0, p3)), "=", {trim_kube(part.substr(p3 + 1))}};
    } else if (part[0] == '!') {
      r = {trim_kube(part.substr(1)), "!exists", {}};
    } else {
      r = {part, "exists", {}};
    }
    if (r.key.empty() || r.key.find(' ') != std::string::npos)
      throw bad_request("unable to parse requirement: invalid label key \"" + r.key + "\"");
    out.push_back(std::move(r));
  }
  return out;
}

namespace {
bool requirement_holds(const Requirement& r, const std::optional<std::string>& v) {
  if (r.op == "exists") return v.has_value();
  if (r.op == "!exists") return !v.has_value();
  if (r.op == "=") return v && *v == r.values[0];
  if (r.op == "!=") return !v || *v != r.values[0];
  bool in = v && std::find(r.values.begin(), r.values.end(), *v) != r.values.end();
  if (r.op == "in") return in;
  if (r.op == "notin") return !in;
  return false;
}
}  // namespace

bool labels_match(const std::vector<Requirement>& sel, const json& labels) {
  for (auto& r : sel) {
    std::optional<std::string> v;
    if (labels.is_object() && labels.contains(r.key) && labels[r.key].is_string())
      v = labels[r.key].get<std::string>();
    if (!requirement_holds(r, v)) return false;
  }
  return true;
}

std::vector<Requirement> parse_field_selector(const std::string& s) {
  std::vector<Requirement> out;
  for (auto& part : split_top(s)) {
    if (part.empty()) continue;
    Requirement r;
    if (auto p = part.find("!="); p != std::string::npos) {
      r = {trim_kube(part.substr(0, p)), "!=", {trim_kube(part.substr(p + 2))}};
    } else if (auto p2 = part.find("=="); p2 != std::string::npos) {
      r = {trim_kube(part.substr(0, p2)), "=", {trim_kube(part.substr(p2 + 2))}};
    } else if (auto p3 = part.find('='); p3 != std::string::npos) {
      r = {trim_kube(part.substr(0, p3)), "=", {trim_kube(part.substr(p3 + 1))}};
    } else {
      throw bad_request("invalid selector: '" + s + "'; can't understand '" + part + "'");
    }
    out.push_back(std::move(r));
  }
  return out;
}

bool fields_match(const std::vector<Requirement>& sel, const json& obj) {
  for (auto& r : sel) {
    const json* cur = &obj;
    std::stringstream ss(r.key);
    std::string seg;
    while (cur && std::getline(ss, seg, '.')) {
      if (cur->is_object() && cur->contains(seg))
        cur = &(*cur)[seg];
      else
        cur = nullptr;
    }
    std::optional<std::string> v;
    if (cur && cur->is_string()) v = cur->get<std::string>();
    if (cur && cur->is_number()) v = cur->dump();
    if (!v) v = std::string();  // an absent field compares as ""
    if (!requirement_holds(r, v)) return false;
  }
  return true;
}

}  // namespace kube

using namespace kube;

namespace {

constexpr const char* kKubeVersion = "v1.32.2-gke.1182003";
constexpr std::size_t kHistoryLimit = 20000;

std::string param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : std::string();
}

bool kube_truthy(const std::string& v) {
  return v == "1" || v == "true" || v == "True";
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream ss(path);
  std::string seg;
  while (std::getline(ss, seg, '/'))
    if (!seg.empty()) out.push_back(httplib::detail::decode_url(seg, false));
  return out;
}

// "GET /apis/batch/v1/namespaces/{ns}/jobs/{name}": names replaced, as request_counts() keys.
std::string canonical_route(const std::string& method, const std::vector<std::string>& seg) {
  std::vector<std::string> s = seg;
  std::size_t base = 0;
  if (s.size() >= 2 && s[0] == "api") base = 2;
  if (s.size() >= 3 && s[0] == "apis") base = 3;
  if (base > 0 && s.size() > base) {
    std::size_t i = base;
    if (s[i] == "namespaces" && s.size() >= i + 3) {
      s[i + 1] = "{ns}";
      i += 2;
    }
    if (s.size() > i + 1) s[i + 1] = "{name}";
  }
  std::string out = method + " ";
  for (auto& x : s) out += "/" + x;
  if (s.empty()) out += "/";
  return out;
}

bool valid_dns_subdomain(const std::string& n) {
  if (n.empty() || n.size() > 253) return false;
  std::stringstream ss(n);
  std::string label;
  while (std::getline(ss, label, '.')) {
    if (label.empty()) return false;
    for (char c : label)
      if (!(std::islower(static_cast<unsigned char>(c)) ||
            std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
        return false;
    if (label.front() == '-' || label.back() == '-') return false;
  }
  return n.back() != '.';
}

bool valid_dns_label(const std::string& n) {
  return n.size() <= 63 && n.find('.') == std::string::npos && valid_dns_subdomain(n);
}

const std::string kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

bool valid_base64(const std::string& s) {
  if (s.size() % 4 != 0) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/') continue;
    if (c == '=' && i + 2 >= s.size()) continue;
    return false;
  }
  return true;
}

std::string human_age(SysClock::duration d) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s < 0) s = 0;
  char buf[32];
  if (s < 120)
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  else if (s < 600)
    std::snprintf(buf, sizeof buf, "%lldm%llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  else if (s < 3 * 3600)
    std::snprintf(buf, sizeof buf, "%lldm", static_cast<long long>(s / 60));
  else if (s < 48 * 3600)
    std::snprintf(buf, sizeof buf, "%lldh", static_cast<long long>(s / 3600));
  else
    std::snprintf(buf, sizeof buf, "%lldd", static_cast<long long>(s / 86400));
  return buf;
}

// ---- TLS material ----------------------------------------------------------------------------

struct TlsMaterial {
  X509* cert = nullptr;
  EVP_PKEY* key = nullptr;
  std::string ca_pem;
  ~TlsMaterial() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
};

void add_ext(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, ctx, nid, value);
  if (!ext) throw std::runtime_error("FakeKube: bad certificate extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

X509* make_cert(EVP_PKEY* key, const char* cn, X509* issuer, EVP_PKEY* issuer_key, bool ca) {
  X509* x = X509_new();
  X509_set_version(x, 2);
  BIGNUM* bn = BN_new();
  BN_rand(bn, 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 365L * 24 * 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer ? issuer : x, x, nullptr, nullptr, 0);
  if (ca) {
    add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature,keyCertSign,cRLSign");
    add_ext(x, &ctx, NID_subject_key_identifier, "hash");
  } else {
    add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    add_ext(x, &ctx, NID_ext_key_usage, "serverAuth");
    add_ext(x, &ctx, NID_subject_alt_name,
            "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,"
            "DNS:kubernetes.default.svc");
    add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always");
  }
  X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256());
  return x;
}

void make_tls(TlsMaterial& m) {
  EVP_PKEY* ca_key = EVP_EC_gen("P-256");
  m.key = EVP_EC_gen("P-256");
  if (!ca_key || !m.key) throw std::runtime_error("FakeKube: key generation failed");
  X509* ca = make_cert(ca_key, "kinetic-fake-kube-ca", nullptr, nullptr, true);
  m.cert = make_cert(m.key, "kube-apiserver", ca, ca_key, false);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, ca);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  m.ca_pem.assign(data, static_cast<std::size_t>(len));
  BIO_free(bio);
  X509_free(ca);
  EVP_PKEY_free(ca_key);
}

// ---- discovery -------------------------------------------------------------------------------

json resource_list(const std::string& group_version) {
  static const json verbs = {"create", "delete", "deletecollection", "get",
                             "list",   "patch",  "update",           "watch"};
  json resources = json::array();
  for (auto& t : resource_types()) {
    if (t.group_version() != group_version) continue;
    json r = {{"name", t.plural},
              {"singularName", t.singular},
              {"namespaced", t.namespaced},
              {"kind", t.kind},
              {"verbs", verbs},
              {"storageVersionHash", "fake"}};
    if (!t.short_names.empty()) r["shortNames"] = t.short_names;
    if (!t.categories.empty()) r["categories"] = t.categories;
    resources.push_back(r);
    if (t.plural == "pods")
      resources.push_back({{"name", "pods/log"},
                           {"singularName", ""},
                           {"namespaced", true},
                           {"kind", "Pod"},
                           {"verbs", {"get"}}});
    if (t.plural == "serviceaccounts")
      resources.push_back({{"name", "serviceaccounts/token"},
                           {"singularName", ""},
                           {"namespaced", true},
                           {"group", "authentication.k8s.io"},
                           {"version", "v1"},
                           {"kind", "TokenRequest"},
                           {"verbs", {"create"}}});
    static const std::set<std::string> no_status = {"events",
                                                    "secrets",
                                                    "configmaps",
                                                    "serviceaccounts",
                                                    "roles",
                                                    "rolebindings",
                                                    "clusterroles",
                                                    "clusterrolebindings",
                                                    "mutatingwebhookconfigurations",
                                                    "validatingwebhookconfigurations"};
    if (!no_status.count(t.plural))
      resources.push_back({{"name", t.plural + "/status"},
                           {"singularName", ""},
                           {"namespaced", t.namespaced},
                           {"kind", t.kind},
                           {"verbs", {"get", "patch", "update"}}});
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group_version},
          {"resources", resources}};
}

json api_group(const std::string& name, const std::string& version) {
  json gv = {{"groupVersion", name + "/" + version}, {"version", version}};
  return {{"name", name}, {"versions", {gv}}, {"preferredVersion", gv}};
}

// An OpenAPI v3 document for one group/version: enough paths (with the fieldValidation query
// parameter on PATCH, which is what kubectl checks before relying on server-side validation) and
// permissive schemas.
json openapi_v3(const std::string& group_version) {
  json paths = json::object();
  json schemas = json::object();
  json field_validation = {{"name", "fieldValidation"},
                           {"in", "query"},
                           {"description",
                            "fieldValidation instructs the server on how to handle "
                            "objects in the request containing unknown or "
                            "duplicate fields."},
                           {"schema", {{"type", "string"}, {"uniqueItems", true}}}};
  for (auto& t : resource_types()) {
    if (t.group_version() != group_version) continue;
    json gvk = {{"group", t.group}, {"version", t.version}, {"kind", t.kind}};
    std::string schema_name =
        (t.group.empty() ? "io.k8s.api.core.v1." : t.group + "." + t.version + ".") + t.kind;
    json ref = {{"$ref", "#/components/schemas/" + schema_name}};
    json body = {{"content", {{"application/json", {{"schema", ref}}}}}, {"required", true}};
    json ok = {{"description", "OK"}, {"content", {{"application/json", {{"schema", ref}}}}}};
    auto op = [&](const std::string& action, bool with_body) {
      json o = {{"x-kubernetes-action", action},
                {"x-kubernetes-group-version-kind", gvk},
                {"responses", {{"200", ok}}},
                {"parameters", json::array()}};
      if (with_body) {
        o["requestBody"] = body;
        o["parameters"].push_back(field_validation);
        o["parameters"].push_back(
            {{"name", "dryRun"}, {"in", "query"}, {"schema", {{"type", "string"}}}});
      }
      return o;
    };
    std::string base = t.prefix();
    json ns_param = {{"name", "namespace"},
                     {"in", "path"},
                     {"required", true},
                     {"schema", {{"type", "string"}}}};
    json name_param = {
        {"name", "name"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}};
    std::string coll =
        t.namespaced ? base + "/namespaces/{namespace}/" + t.plural : base + "/" + t.plural;
    json coll_item = {{"get", op("list", false)}, {"post", op("post", true)}};
    coll_item["parameters"] = t.namespaced ? json::array({ns_param}) : json::array();
    paths[coll] = coll_item;
    json item = {{"get", op("get", false)},
                 {"put", op("put", true)},
                 {"patch", op("patch", true)},
                 {"delete", op("delete", false)}};
    item["parameters"] =
        t.namespaced ? json::array({name_param, ns_param}) : json::array({name_param});
    paths[coll + "/{name}"] = item;
    schemas[schema_name] = {{"type", "object"},
                            {"x-kubernetes-group-version-kind", {gvk}},
                            {"x-kubernetes-preserve-unknown-fields", true}};
  }
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", kKubeVersion}}},
          {"paths", paths},
          {"components", {{"schemas", schemas}}}};
}

// ---- server-side printing (kubectl asks for as=Table) -----------------------------------------

std::string pod_status_text(const json& pod) {
  if (pod["metadata"].contains("deletionTimestamp")) return "Terminating";
  auto phase = pod["status"].value("phase", std::string("Pending"));
  if (pod["status"].contains("containerStatuses")) {
    for (auto& cs : pod["status"]["containerStatuses"]) {
      auto& st = cs["state"];
      if (st.contains("waiting") && st["waiting"].contains("reason"))
        return st["waiting"]["reason"].get<std::string>();
      if (st.contains("terminated") && st["terminated"].contains("reason"))
        return st["terminated"]["reason"].get<std::string>();
    }
  }
  return phase;
}

// `kubectl get deploy` (READY UP-TO-DATE AVAILABLE) and `get svc` (TYPE PORT(S)) cells.
void deployment_or_service_cells(const ResourceType& rt, const json& o, json& cells) {
  const json status = o.value("status", json::object());
  if (rt.plural == "deployments") {
    cells.push_back(std::to_string(status.value("readyReplicas", 0)) + "/" +
                    std::to_string(o["spec"].value("replicas", 1)));
    cells.push_back(status.value("updatedReplicas", 0));
    cells.push_back(status.value("availableReplicas", 0));
    return;
  }
  std::string ports;
  for (const auto& p : o["spec"].value("ports", json::array()))
    ports += (ports.empty() ? "" : ",") + std::to_string(p.value("port", 0)) + "/" +
             p.value("protocol", std::string("TCP"));
  cells.push_back(o["spec"].value("type", std::string("ClusterIP")));
  cells.push_back(ports.empty() ? "<none>" : ports);
}

json table_for(const ResourceType& rt, const std::vector<json>& items, const std::string& rv,
               bool full_object) {
  json cols = json::array();
  auto col = [&](const char* name, const char* type, const char* fmt = "") {
    cols.push_back(
        {{"name", name}, {"type", type}, {"format", fmt}, {"description", name}, {"priority", 0}});
  };
  col("Name", "string", "name");
  if (rt.plural == "pods") {
    col("Ready", "string");
    col("Status", "string");
    col("Restarts", "string");
  } else if (rt.plural == "jobs") {
    col("Status", "string");
    col("Completions", "string");
    col("Duration", "string");
  } else if (rt.plural == "cronjobs") {
    col("Schedule", "string");
    col("Timezone", "string");
    col("Suspend", "boolean");
    col("Active", "integer");
    col("Last Schedule", "string");
  } else if (rt.plural == "serviceaccounts") {
    col("Secrets", "string");
  } else if (rt.plural == "deployments") {
    col("Ready", "string");
    col("Up-to-date", "integer");
    col("Available", "integer");
  } else if (rt.plural == "services") {
    col("Type", "string");
    col("Port(s)", "string");
  } else if (rt.plural == "rolebindings" || rt.plural == "clusterrolebindings") {
    col("Role", "string");
  } else if (rt.plural == "nodes" || rt.plural == "namespaces") {
    col("Status", "string");
  } else if (rt.plural == "events") {
    col("Type", "string");
    col("Reason", "string");
    col("Message", "string");
  }
  const bool created_at = rt.plural == "roles" || rt.plural == "clusterroles";
  if (created_at)
    col("Created At", "date");
  else
    col("Age", "string");
  json rows = json::array();
  auto now = SysClock::now();
  for (auto& o : items) {
    json cells = {o["metadata"].value("name", std::string())};
    if (rt.plural == "pods") {
      int ready = 0, total = 0, restarts = 0;
      if (o["spec"].contains("containers"))
        total = static_cast<int>(o["spec"]["containers"].size());
      for (auto& cs : o["status"].value("containerStatuses", json::array())) {
        if (cs.value("ready", false)) ++ready;
        restarts += cs.value("restartCount", 0);
      }
      cells.push_back(std::to_string(ready) + "/" + std::to_string(total));
      cells.push_back(pod_status_text(o));
      cells.push_back(std::to_string(restarts));
    } else if (rt.plural == "jobs") {
      std::string status = "Running";
      for (auto& c : o["status"].value("conditions", json::array())) {
        if (c.value("status", "") != "True") continue;
        auto type = c.value("type", std::string());
        if (type == "Complete") status = "Complete";
        if (type == "Failed") status = "Failed";
        if (type == "FailureTarget" && status == "Running") status = "FailureTarget";
        if (type == "Suspended") status = "Suspended";
      }
      auto completions = o["spec"].value("completions", 1);
      cells.push_back(status);
      cells.push_back(std::to_string(o["status"].value("succeeded", 0)) + "/" +
                      std::to_string(completions));
      std::string duration;
      if (auto st = parse_rfc3339(o["status"].value("startTime", std::string()))) {
        auto end = parse_rfc3339(o["status"].value("completionTime", std::string()));
        duration = human_age((end ? *end : now) - *st);
      }
      cells.push_back(duration);
    } else if (rt.plural == "cronjobs") {
      const json spec = o.value("spec", json::object());
      const json status = o.value("status", json::object());
      cells.push_back(spec.value("schedule", std::string()));
      cells.push_back(spec.contains("timeZone") ? spec["timeZone"] : json("<none>"));
      cells.push_back(spec.value("suspend", false) ? "True" : "False");
      cells.push_back(status.value("active", json::array()).size());
      auto last = parse_rfc3339(status.value("lastScheduleTime", std::string()));
      cells.push_back(last ? human_age(now - *last) : "<none>");
    } else if (rt.plural == "serviceaccounts") {
      cells.push_back(std::to_string(o.value("secrets", json::array()).size()));
    } else if (rt.plural == "deployments" || rt.plural == "services") {
      deployment_or_service_cells(rt, o, cells);
    } else if (rt.plural == "rolebindings" || rt.plural == "clusterrolebindings") {
      const json ref = o.value("roleRef", json::object());
      cells.push_back(ref.value("kind", std::string()) + "/" + ref.value("name", std::string()));
    } else if (rt.plural == "nodes") {
      cells.push_back("Ready");
    } else if (rt.plural == "namespaces") {
      cells.push_back(o["status"].value("phase", std::string("Active")));
    } else if (rt.plural == "events") {
      cells.push_back(o.value("type", std::string()));
      cells.push_back(o.value("reason", std::string()));
      cells.push_back(o.value("message", std::string()));
    }
    auto created = parse_rfc3339(o["metadata"].value("creationTimestamp", std::string()));
    if (created_at)
      cells.push_back(o["metadata"].value("creationTimestamp", std::string()));
    else
      cells.push_back(created ? human_age(now - *created) : "<unknown>");
    json obj = full_object ? o
                           : json{{"kind", "PartialObjectMetadata"},
                                  {"apiVersion", "meta.k8s.io/v1"},
                                  {"metadata", o["metadata"]}};
    rows.push_back({{"cells", cells}, {"object", obj}});
  }
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"resourceVersion", rv}}},
          {"columnDefinitions", cols},
          {"rows", rows}};
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
  for (auto& [k, v] : e.headers) res.set_header(k, v);
  send_json(res, e.code, status_json(e));
}

// What the write quota counts (set_write_quota).
bool is_kube_write(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

// Marks a response for lose_next_response (taken off again before anything is sent).
constexpr const char* kLoseResponse = "X-Fake-Lose-Response";

ApiError injected(int status) {
  switch (status) {
    case 400:
      return bad_request("injected failure");
    case 403:
      return {403, "Forbidden", "forbidden: injected failure"};
    case 404:
      return {404, "NotFound", "the server could not find the requested resource"};
    case 409:
      return {409, "Conflict",
              "the object has been modified; please apply your changes "
              "to the latest version and try again"};
    case 410:
      return {410, "Expired", "The provided continue parameter is too old"};
    case 429:
      return {429,
              "TooManyRequests",
              "Too many requests, please try again later.",
              json{{"retryAfterSeconds", 1}},
              {{"Retry-After", "1"}}};
    case 503:
      return {503, "ServiceUnavailable", "the server is currently unable to handle the request"};
    case 504:
      return {504, "Timeout",
              "the server was unable to return a response in the time allotted, "
              "but may still be processing the request"};
    default:
      return {status, "InternalError", "Internal error occurred: injected failure"};
  }
}

}  // namespace

// ---- store -----------------------------------------------------------------------------------

bool FakeKube::Impl::served(const ResourceType& rt) const {
  if (rt.group != "jobset.x-k8s.io" && rt.group != "kueue.x-k8s.io") return true;
  std::lock_guard lock(mu);
  auto crds = store.find("customresourcedefinitions.apiextensions.k8s.io");
  return crds != store.end() && crds->second.count("/" + rt.plural + "." + rt.group);
}

json* FakeKube::Impl::find(const ResourceType& rt, const std::string& ns, const std::string& name) {
  auto s = store.find(rt.qualified());
  if (s == store.end()) return nullptr;
  auto it = s->second.find(key(rt.namespaced ? ns : "", name));
  return it == s->second.end() ? nullptr : &it->second;
}

std::vector<json*> FakeKube::Impl::list(const ResourceType& rt, const std::string& ns) {
  std::vector<json*> out;
  for (auto& [k, obj] : store[rt.qualified()]) {
    if (!ns.empty() && rt.namespaced && obj["metadata"].value("namespace", "") != ns) continue;
    out.push_back(&obj);
  }
  return out;
}

void FakeKube::Impl::record(const std::string& type, const ResourceType& rt, const json& obj) {
  history.push_back({rv, type, &rt, obj});
  while (history.size() > kHistoryLimit) {
    history_floor = history.front().rv;
    history.pop_front();
  }
  changed.notify_all();
}

void FakeKube::Impl::kick() {
  dirty = true;
  controller_cv.notify_all();
  changed.notify_all();
}

json& FakeKube::Impl::insert(const ResourceType& rt, json obj) {
  obj["metadata"]["resourceVersion"] = std::to_string(++rv);
  auto ns = rt.namespaced ? obj["metadata"].value("namespace", std::string()) : std::string();
  auto& slot = store[rt.qualified()][key(ns, obj["metadata"]["name"].get<std::string>())];
  slot = std::move(obj);
  record("ADDED", rt, slot);
  kick();
  return slot;
}

void FakeKube::Impl::update(const ResourceType& rt, json& obj) {
  obj["metadata"]["resourceVersion"] = std::to_string(++rv);
  record("MODIFIED", rt, obj);
  kick();
}

void FakeKube::Impl::erase(const ResourceType& rt, const std::string& ns, const std::string& name) {
  auto& s = store[rt.qualified()];
  auto it = s.find(key(rt.namespaced ? ns : "", name));
  if (it == s.end()) return;
  json obj = std::move(it->second);
  s.erase(it);
  obj["metadata"]["resourceVersion"] = std::to_string(++rv);
  record("DELETED", rt, obj);
  kick();
}

void FakeKube::Impl::stamp_new(json& obj) {
  auto& md = obj["metadata"];
  md["uid"] = new_uid();
  md["creationTimestamp"] = rfc3339(SysClock::now());
  if (!md.contains("generation")) md["generation"] = 1;
}

json FakeKube::Impl::new_event(const json& involved, const std::string& type,
                               const std::string& reason, const std::string& message,
                               const std::string& component, const std::string& host) {
  auto& ev_type = *find_type("", "v1", "events");
  const auto& md = involved["metadata"];
  std::string ns = md.value("namespace", std::string("default"));
  std::string uid = md.value("uid", std::string());
  auto now = rfc3339(SysClock::now());
  // Repeats of the same event bump its count, as the event recorder's aggregation does.
  for (auto* e : list(ev_type, ns)) {
    if ((*e)["involvedObject"].value("uid", "") == uid && (*e).value("reason", "") == reason &&
        (*e).value("message", "") == message) {
      (*e)["count"] = (*e).value("count", 1) + 1;
      (*e)["lastTimestamp"] = now;
      update(ev_type, *e);
      return *e;
    }
  }
  json involved_ref = {{"kind", involved.value("kind", std::string())},
                       {"namespace", ns},
                       {"name", md.value("name", std::string())},
                       {"uid", uid},
                       {"apiVersion", involved.value("apiVersion", std::string())},
                       {"resourceVersion", md.value("resourceVersion", std::string())}};
  if (involved.value("kind", "") == "Pod") involved_ref["fieldPath"] = "spec.containers{main}";
  if (reason == "Scheduled" || reason == "FailedScheduling" ||
      reason.find("ScaleUp") != std::string::npos)
    involved_ref.erase("fieldPath");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(rng()()));
  json source = {{"component", component}};
  if (!host.empty()) source["host"] = host;
  json ev = {
      {"kind", "Event"},
      {"apiVersion", "v1"},
      {"metadata", {{"name", md.value("name", std::string()) + "." + hex}, {"namespace", ns}}},
      {"involvedObject", involved_ref},
      {"reason", reason},
      {"message", message},
      {"source", source},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1},
      {"type", type},
      {"eventTime", nullptr},
      {"reportingComponent", component},
      {"reportingInstance", host}};
  stamp_new(ev);
  ev["metadata"].erase("generation");
  return insert(ev_type, std::move(ev));
}

// ---- create / delete -------------------------------------------------------------------------

namespace {

void validate_pod_spec(const json& spec, const std::string& path,
                       std::vector<std::pair<std::string, std::string>>& causes) {
  if (!spec.is_object() || !spec.contains("containers") || !spec["containers"].is_array() ||
      spec["containers"].empty()) {
    causes.push_back({path + ".containers", "Required value"});
    return;
  }
  for (std::size_t i = 0; i < spec["containers"].size(); ++i) {
    auto& c = spec["containers"][i];
    auto p = path + ".containers[" + std::to_string(i) + "]";
    auto name = c.value("name", std::string());
    if (name.empty())
      causes.push_back({p + ".name", "Required value"});
    else if (!valid_dns_label(name))
      causes.push_back({p + ".name", "Invalid value: \"" + name +
                                         "\": a lowercase RFC 1123 label must consist of lower "
                                         "case alphanumeric characters or '-', and must start and "
                                         "end with an alphanumeric character (e.g. 'my-name',  or "
                                         "'123-abc', regex used for validation is "
                                         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"});
    if (c.value("image", std::string()).empty()) causes.push_back({p + ".image", "Required value"});
  }
}

// A Job's spec (PATH "spec"), or a CronJob's jobTemplate's ("spec.jobTemplate.spec").
void validate_job_spec(json& spec, const std::string& path,
                       std::vector<std::pair<std::string, std::string>>& causes) {
  if (!spec.contains("template") || !spec["template"].is_object())
    spec["template"] = json::object();
  auto& tspec = spec["template"]["spec"];
  if (!tspec.is_object()) tspec = json::object();
  validate_pod_spec(tspec, path + ".template.spec", causes);
  auto policy = tspec.value("restartPolicy", std::string());
  if (policy != "Never" && policy != "OnFailure") {
    if (policy.empty())
      causes.push_back({path + ".template.spec.restartPolicy",
                        "Required value: valid values: \"OnFailure\", \"Never\""});
    else
      causes.push_back(
          {path + ".template.spec.restartPolicy",
           "Unsupported value: \"" + policy + "\": supported values: \"OnFailure\", \"Never\""});
  }
  if (spec.contains("completionMode") && spec["completionMode"] == "Indexed" &&
      (!spec.contains("completions") || spec["completions"].is_null()))
    causes.push_back({path + ".completions", "Required value: when completion mode is Indexed"});
}

std::string non_negative(const json& v) {
  return "Invalid value: " + v.dump() + ": must be greater than or equal to 0";
}

// SetDefaults_CronJob: no startingDeadlineSeconds, no timeZone.
void default_cronjob_spec(json& spec) {
  if (!spec.contains("concurrencyPolicy") || spec["concurrencyPolicy"] == "")
    spec["concurrencyPolicy"] = "Allow";
  if (!spec.contains("suspend") || spec["suspend"].is_null()) spec["suspend"] = false;
  if (!spec.contains("successfulJobsHistoryLimit") || spec["successfulJobsHistoryLimit"].is_null())
    spec["successfulJobsHistoryLimit"] = 3;
  if (!spec.contains("failedJobsHistoryLimit") || spec["failedJobsHistoryLimit"].is_null())
    spec["failedJobsHistoryLimit"] = 1;
}

// ValidateCronJobSpec (pkg/apis/batch/validation), on a defaulted CronJob.
void validate_cronjob_spec(json& spec, bool schedule_had_tz,
                           std::vector<std::pair<std::string, std::string>>& causes) {
  auto schedule = spec.value("schedule", std::string());
  if (schedule.empty()) {
    causes.push_back({"spec.schedule", "Required value"});
  } else {
    auto quoted = json(schedule).dump();
    auto why = cron_schedule_error(schedule);
    if (!why.empty()) causes.push_back({"spec.schedule", "Invalid value: " + quoted + ": " + why});
    if (!schedule_had_tz && schedule.find("TZ") != std::string::npos)
      causes.push_back({"spec.schedule",
                        "Invalid value: " + quoted +
                            ": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"});
  }
  if (spec.contains("startingDeadlineSeconds") && spec["startingDeadlineSeconds"].is_number() &&
      spec["startingDeadlineSeconds"].get<long>() < 0)
    causes.push_back(
        {"spec.startingDeadlineSeconds", non_negative(spec["startingDeadlineSeconds"])});
  auto policy = spec.value("concurrencyPolicy", std::string());
  if (policy != "Allow" && policy != "Forbid" && policy != "Replace")
    causes.push_back({"spec.concurrencyPolicy",
                      policy.empty() ? std::string("Required value")
                                     : "Unsupported value: \"" + policy +
                                           "\": supported values: \"Allow\", \"Forbid\", "
                                           "\"Replace\""});
  auto& jt = spec["jobTemplate"];
  if (!jt.is_object()) jt = json::object();
  if (!jt["spec"].is_object()) jt["spec"] = json::object();
  validate_job_spec(jt["spec"], "spec.jobTemplate.spec", causes);
  for (const char* limit : {"successfulJobsHistoryLimit", "failedJobsHistoryLimit"})
    if (spec.contains(limit) && spec[limit].is_number() && spec[limit].get<long>() < 0)
      causes.push_back({std::string("spec.") + limit, non_negative(spec[limit])});
}

const char* kRbacGroup = "rbac.authorization.k8s.io";

// ValidatePolicyRule for each rule of a Role (NAMESPACED) or ClusterRole.
void validate_rules(const json& obj, bool namespaced,
                    std::vector<std::pair<std::string, std::string>>& causes) {
  const json rules = obj.value("rules", json::array());
  if (!rules.is_array()) throw bad_request("rules must be a list");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const json& r = rules[i];
    const auto p = "rules[" + std::to_string(i) + "]";
    auto empty = [&](const char* k) { return !r.contains(k) || !r[k].is_array() || r[k].empty(); };
    if (empty("verbs"))
      causes.push_back({p + ".verbs", "Required value: verbs must contain at least one value"});
    if (!empty("nonResourceURLs")) {
      if (namespaced)
        causes.push_back(
            {p + ".nonResourceURLs", "Invalid value: " + r["nonResourceURLs"].dump() +
                                         ": namespaced rules cannot apply to non-resource URLs"});
      if (!empty("apiGroups") || !empty("resources") || !empty("resourceNames"))
        causes.push_back(
            {p + ".nonResourceURLs",
             "Invalid value: " + r["nonResourceURLs"].dump() +
                 ": rules cannot apply to both regular resources and non-resource URLs"});
      continue;
    }
    if (empty("apiGroups"))
      causes.push_back(
          {p + ".apiGroups", "Required value: resource rules must supply at least one api group"});
    if (empty("resources"))
      causes.push_back(
          {p + ".resources", "Required value: resource rules must supply at least one resource"});
  }
}

// SetDefaults_RoleBinding/Subject, then ValidateRoleBinding (CLUSTER: a ClusterRoleBinding).
void default_and_validate_binding(json& obj, bool cluster,
                                  std::vector<std::pair<std::string, std::string>>& causes) {
  auto& ref = obj["roleRef"];
  if (!ref.is_object()) ref = json::object();
  if (ref.value("apiGroup", std::string()).empty()) ref["apiGroup"] = kRbacGroup;
  if (ref["apiGroup"] != kRbacGroup)
    causes.push_back({"roleRef.apiGroup", "Unsupported value: " + ref["apiGroup"].dump() +
                                              ": supported values: \"" + kRbacGroup + "\""});
  auto kind = ref.value("kind", std::string());
  if (cluster ? kind != "ClusterRole" : kind != "Role" && kind != "ClusterRole")
    causes.push_back(
        {"roleRef.kind", "Unsupported value: " + json(kind).dump() + ": supported values: " +
                             (cluster ? "\"ClusterRole\"" : "\"Role\", \"ClusterRole\"")});
  if (ref.value("name", std::string()).empty())
    causes.push_back({"roleRef.name", "Required value"});
  if (!obj.contains("subjects")) return;
  if (!obj["subjects"].is_array()) throw bad_request("subjects must be a list");
  for (std::size_t i = 0; i < obj["subjects"].size(); ++i) {
    auto& sub = obj["subjects"][i];
    const auto p = "subjects[" + std::to_string(i) + "]";
    auto skind = sub.value("kind", std::string());
    if ((skind == "User" || skind == "Group") && sub.value("apiGroup", std::string()).empty())
      sub["apiGroup"] = kRbacGroup;
    if (sub.value("name", std::string()).empty()) causes.push_back({p + ".name", "Required value"});
    auto group = sub.value("apiGroup", std::string());
    if (skind == "ServiceAccount") {
      if (!group.empty())
        causes.push_back({p + ".apiGroup",
                          "Unsupported value: " + json(group).dump() + ": supported values: \"\""});
      if (cluster && sub.value("namespace", std::string()).empty())
        causes.push_back({p + ".namespace", "Required value"});
    } else if (skind == "User" || skind == "Group") {
      if (group != kRbacGroup)
        causes.push_back({p + ".apiGroup", "Unsupported value: " + json(group).dump() +
                                               ": supported values: \"" + kRbacGroup + "\""});
    } else {
      causes.push_back({p + ".kind", "Unsupported value: " + json(skind).dump() +
                                         ": supported values: \"ServiceAccount\", \"User\", "
                                         "\"Group\""});
    }
  }
}

bool rbac_type(const ResourceType& rt) {
  return rt.group == kRbacGroup;
}

// RBAC names are path segments (ValidateRBACName), so "system:auth-delegator" is one.
bool valid_path_segment(const std::string& n) {
  return !n.empty() && n != "." && n != ".." && n.find('/') == std::string::npos &&
         n.find('%') == std::string::npos;
}

}  // namespace

void kube::default_pod_spec(json& spec) {
  if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Always";
  if (!spec.contains("terminationGracePeriodSeconds")) spec["terminationGracePeriodSeconds"] = 30;
  if (!spec.contains("dnsPolicy")) spec["dnsPolicy"] = "ClusterFirst";
  if (!spec.contains("schedulerName")) spec["schedulerName"] = "default-scheduler";
  if (!spec.contains("securityContext")) spec["securityContext"] = json::object();
  if (spec.contains("containers") && spec["containers"].is_array()) {
    for (auto& c : spec["containers"]) {
      if (!c.is_object()) continue;
      if (!c.contains("terminationMessagePath"))
        c["terminationMessagePath"] = "/dev/termination-log";
      if (!c.contains("terminationMessagePolicy")) c["terminationMessagePolicy"] = "File";
      if (!c.contains("resources")) c["resources"] = json::object();
      if (!c.contains("imagePullPolicy")) {
        auto image = c.value("image", std::string());
        bool latest = image.find(':') == std::string::npos || image.ends_with(":latest");
        c["imagePullPolicy"] =
            latest && image.find('@') == std::string::npos ? "Always" : "IfNotPresent";
      }
      // requests default to limits
      if (c["resources"].contains("limits") && !c["resources"].contains("requests"))
        c["resources"]["requests"] = c["resources"]["limits"];
    }
  }
}

json FakeKube::Impl::create(const ResourceType& rt, const std::string& ns, json obj, bool dry_run) {
  if (!obj.is_object()) throw bad_request("the body of the request was in an unknown format");
  if (obj.contains("apiVersion") && obj["apiVersion"] != rt.group_version())
    throw bad_request("the API version in the data (" + obj["apiVersion"].get<std::string>() +
                      ") does not match the expected API version (" + rt.group_version() + ")");
  if (obj.contains("kind") && obj["kind"] != rt.kind)
    throw bad_request("the kind in the data (" + obj["kind"].get<std::string>() +
                      ") does not match the expected kind (" + rt.kind + ")");
  obj["apiVersion"] = rt.group_version();
  obj["kind"] = rt.kind;
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = json::object();
  auto& md = obj["metadata"];
  if (rt.namespaced) {
    auto body_ns = md.value("namespace", std::string());
    if (!body_ns.empty() && body_ns != ns)
      throw bad_request(
          "the namespace of the provided object does not match the namespace sent on the request");
    md["namespace"] = ns;
    auto& nst = *find_type("", "v1", "namespaces");
    if (!find(nst, "", ns)) {
      auto e = not_found(nst, ns);
      throw e;
    }
  }
  for (const char* k : {"uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"})
    md.erase(k);
  auto name = md.value("name", std::string());
  const bool generated = name.empty() && md.contains("generateName");
  if (name.empty() && md.contains("generateName")) {
    auto base = md["generateName"].get<std::string>();
    if (base.size() > 58) base = base.substr(0, 58);
    for (int tries = 0; tries < 100; ++tries) {
      name = base + random_suffix(5);
      if (!find(rt, ns, name)) break;
    }
    md["name"] = name;
  }
  std::vector<std::pair<std::string, std::string>> causes;
  if (name.empty()) {
    causes.push_back({"metadata.name", "Required value: name or generateName is required"});
  } else if (rbac_type(rt)) {
    if (!valid_path_segment(name))
      causes.push_back({"metadata.name", "Invalid value: \"" + name +
                                             "\": may not contain '/' or '%', or be '.' or '..'"});
  } else if (!valid_dns_subdomain(name) ||
             ((rt.plural == "namespaces" || rt.plural == "services") && !valid_dns_label(name))) {
    causes.push_back({"metadata.name", "Invalid value: \"" + name + "\": " + kSubdomainMsg});
  }
  if (md.contains("labels") && !md["labels"].is_object())
    throw bad_request("metadata.labels must be an object");
  // kind-specific validation and defaults
  if (rt.plural == "pods") {
    if (!obj.contains("spec") || !obj["spec"].is_object()) obj["spec"] = json::object();
    // The ServiceAccount admission plugin, before validation: it names the pod as it was sent
    // (its generateName when the name is generated).
    auto& spec = obj["spec"];
    auto sa = spec.value("serviceAccountName", std::string());
    if (sa.empty()) sa = spec.value("serviceAccount", std::string());
    if (sa.empty()) sa = "default";
    spec["serviceAccountName"] = sa;
    spec["serviceAccount"] = sa;
    if (!find(*find_type("", "v1", "serviceaccounts"), ns, sa)) {
      auto shown = generated ? md["generateName"].get<std::string>() : name;
      throw ApiError{403, "Forbidden",
                     "pods \"" + shown + "\" is forbidden: error looking up service account " + ns +
                         "/" + sa + ": serviceaccount \"" + sa + "\" not found",
                     json{{"name", shown}, {"kind", "pods"}}};
    }
    validate_pod_spec(spec, "spec", causes);
  } else if (rt.plural == "jobs") {
    if (!obj.contains("spec")) obj["spec"] = json::object();
    auto& spec = obj["spec"];
    if (!name.empty() && name.size() > 63 && valid_dns_subdomain(name))
      causes.push_back(
          {"metadata.name", "Invalid value: \"" + name + "\": must be no more than 63 characters"});
    validate_job_spec(spec, "spec", causes);
  } else if (rt.plural == "cronjobs") {
    if (!obj.contains("spec") || !obj["spec"].is_object()) obj["spec"] = json::object();
    auto& spec = obj["spec"];
    default_cronjob_spec(spec);
    // The name leaves room for the controller's "-<minutes>" (ValidateCronJobCreate).
    if (name.size() > 52 && valid_dns_subdomain(name))
      causes.push_back(
          {"metadata.name", "Invalid value: \"" + name + "\": must be no more than 52 characters"});
    validate_cronjob_spec(spec, false, causes);
  } else if (rt.plural == "roles" || rt.plural == "clusterroles") {
    validate_rules(obj, rt.plural == "roles", causes);
  } else if (rt.plural == "rolebindings" || rt.plural == "clusterrolebindings") {
    default_and_validate_binding(obj, rt.plural == "clusterrolebindings", causes);
  } else if (rt.plural == "jobsets") {
    if (!obj.contains("spec") || !obj["spec"].contains("replicatedJobs") ||
        !obj["spec"]["replicatedJobs"].is_array() || obj["spec"]["replicatedJobs"].empty())
      causes.push_back({"spec.replicatedJobs", "Required value"});
    else
      for (std::size_t i = 0; i < obj["spec"]["replicatedJobs"].size(); ++i) {
        auto& rj = obj["spec"]["replicatedJobs"][i];
        auto p = "spec.replicatedJobs[" + std::to_string(i) + "]";
        if (rj.value("name", std::string()).empty())
          causes.push_back({p + ".name", "Required value"});
        if (!rj.contains("template") || !rj["template"].contains("spec") ||
            !rj["template"]["spec"].contains("template"))
          causes.push_back({p + ".template.spec.template", "Required value"});
        else
          validate_pod_spec(rj["template"]["spec"]["template"].value("spec", json::object()),
                            p + ".template.spec.template.spec", causes);
      }
  } else if (rt.plural == "secrets") {
    if (obj.contains("data")) {
      if (!obj["data"].is_object()) throw bad_request("Secret.data must be an object");
      for (auto& [k, v] : obj["data"].items())
        if (!v.is_string() || !valid_base64(v.get<std::string>()))
          throw bad_request(
              "Secret in version \"v1\" cannot be handled as a Secret: illegal "
              "base64 data at input byte 0");
    }
  }
  if (!causes.empty()) throw invalid(rt, name, causes);
  if (find(rt, ns, name)) {
    json details = {{"name", name}};
    if (!rt.group.empty()) details["group"] = rt.group;
    details["kind"] = rt.plural;
    throw ApiError{409, "AlreadyExists", rt.qualified() + " \"" + name + "\" already exists",
                   details};
  }
  stamp_new(obj);
  if (rt.plural == "pods") {
    if (!obj["spec"].contains("terminationGracePeriodSeconds"))
      obj["spec"]["terminationGracePeriodSeconds"] = options.default_grace_seconds;
    default_pod_spec(obj["spec"]);
    if (!obj["spec"].contains("enableServiceLinks")) obj["spec"]["enableServiceLinks"] = true;
    obj["status"] = {{"phase", "Pending"}, {"qosClass", "BestEffort"}};
  } else if (rt.plural == "jobs") {
    apply_job_defaults(obj);
  } else if (rt.plural == "cronjobs") {
    auto& tspec = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    if (!tspec.contains("terminationGracePeriodSeconds"))
      tspec["terminationGracePeriodSeconds"] = options.default_grace_seconds;
    default_pod_spec(tspec);
    obj["status"] = json::object();
  } else if (rt.plural == "namespaces") {
    md["labels"]["kubernetes.io/metadata.name"] = name;
    obj["spec"] = {{"finalizers", {"kubernetes"}}};
    obj["status"] = {{"phase", "Active"}};
  } else if (rt.plural == "secrets") {
    if (!obj.contains("type")) obj["type"] = "Opaque";
    if (obj.contains("stringData")) {
      for (auto& [k, v] : obj["stringData"].items())
        obj["data"][k] = base64_encode(v.is_string() ? v.get<std::string>() : v.dump());
      obj.erase("stringData");
    }
  } else if (rt.plural == "services") {
    auto& spec = obj["spec"];
    if (!spec.is_object()) spec = json::object();
    if (!spec.contains("type")) spec["type"] = "ClusterIP";
    if (!spec.contains("clusterIP")) {
      spec["clusterIP"] =
          "10.96." + std::to_string(rng()() % 250 + 1) + "." + std::to_string(rng()() % 250 + 1);
    }
    spec["clusterIPs"] = {spec["clusterIP"]};
    if (!spec.contains("sessionAffinity")) spec["sessionAffinity"] = "None";
    obj["status"] = {{"loadBalancer", json::object()}};
  } else if (rt.plural == "deployments") {
    // The API server stores a new Deployment with an empty status; its controller fills it in.
    obj["status"] = json::object();
  } else if (rt.plural == "jobsets") {
    auto& spec = obj["spec"];
    if (!spec.contains("network")) spec["network"] = json::object();
    if (!spec["network"].contains("enableDNSHostnames"))
      spec["network"]["enableDNSHostnames"] = true;
    if (!spec.contains("successPolicy")) spec["successPolicy"] = {{"operator", "All"}};
    if (!spec.contains("failurePolicy")) spec["failurePolicy"] = {{"maxRestarts", 0}};
    for (auto& rj : spec["replicatedJobs"])
      if (!rj.contains("replicas")) rj["replicas"] = 1;
    obj["status"] = json::object();
  }
  kueue_default_suspend(rt, obj);
  if (dry_run) return obj;
  json stored = insert(rt, std::move(obj));
  // The service-account controller gives a new namespace its "default" ServiceAccount (at once
  // here, so that a pod created right after the namespace finds it).
  if (rt.plural == "namespaces") ensure_default_service_accounts();
  return stored;
}

void FakeKube::Impl::validate_update(const ResourceType& rt, const json& old, const json& next) {
  std::vector<std::pair<std::string, std::string>> causes;
  const auto name = old["metadata"].value("name", std::string());
  if (rt.plural == "cronjobs") {
    json spec = next.value("spec", json::object());
    default_cronjob_spec(spec);
    const auto before = old["spec"].value("schedule", std::string());
    validate_cronjob_spec(spec, before.find("TZ") != std::string::npos, causes);
  } else if (rt.plural == "roles" || rt.plural == "clusterroles") {
    validate_rules(next, rt.plural == "roles", causes);
  } else if (rt.plural == "rolebindings" || rt.plural == "clusterrolebindings") {
    json copy = next;
    default_and_validate_binding(copy, rt.plural == "clusterrolebindings", causes);
    const json& a = old["roleRef"];
    const json& b = copy["roleRef"];
    if (causes.empty() && a != b)
      causes.push_back(
          {"roleRef",
           "Invalid value: rbac.RoleRef{APIGroup:" + b.value("apiGroup", json("")).dump() +
               ", Kind:" + b.value("kind", json("")).dump() +
               ", Name:" + b.value("name", json("")).dump() + "}: cannot change roleRef"});
  }
  if (!causes.empty()) throw invalid(rt, name, causes);
}

json FakeKube::Impl::delete_object(const ResourceType& rt, const std::string& ns,
                                   const std::string& name, const std::string& propagation,
                                   std::optional<int> grace,
                                   std::map<std::string, std::string>* headers) {
  json* obj = find(rt, ns, name);
  if (!obj) throw not_found(rt, name);
  json success = {
      {"kind", "Status"},
      {"apiVersion", "v1"},
      {"metadata", json::object()},
      {"status", "Success"},
      {"details", {{"name", name}, {"kind", rt.plural}, {"uid", (*obj)["metadata"]["uid"]}}}};
  if (!rt.group.empty()) success["details"]["group"] = rt.group;
  if (rt.plural == "namespaces") {
    if (name == "default" || name == "kube-system")
      throw ApiError{403, "Forbidden",
                     "namespaces \"" + name + "\" is forbidden: this namespace may not be deleted",
                     json{{"name", name}, {"kind", "namespaces"}}};
    for (auto& t : resource_types()) {
      if (!t.namespaced) continue;
      std::vector<std::string> names;
      for (auto* o : list(t, name)) names.push_back((*o)["metadata"]["name"]);
      for (auto& n : names)
        if (find(t, name, n)) delete_object(t, name, n, "Background", 0, nullptr);
    }
    json copy = *find(rt, "", name);
    erase(rt, "", name);
    copy["status"]["phase"] = "Terminating";
    return copy;
  }
  if (rt.plural == "pods") {
    auto& pod = *obj;
    auto* prt = pods.count(pod["metadata"]["uid"]) ? pods[pod["metadata"]["uid"]].get() : nullptr;
    int g = grace
                ? *grace
                : pod["spec"].value("terminationGracePeriodSeconds", options.default_grace_seconds);
    if (prt && prt->running && g > 0) {
      if (!pod["metadata"].contains("deletionTimestamp")) {
        pod["metadata"]["deletionTimestamp"] = rfc3339(SysClock::now() + std::chrono::seconds(g));
        pod["metadata"]["deletionGracePeriodSeconds"] = g;
        update(rt, pod);
        terminate_pod(pod, g, true);
      }
      return pod;
    }
    json copy = pod;
    if (prt && prt->running) terminate_pod(pod, 0, true);
    erase(rt, ns, name);
    return copy;
  }
  if (rt.plural == "jobs" || rt.plural == "jobsets" || rt.plural == "cronjobs" ||
      rt.plural == "deployments") {
    auto uid = (*obj)["metadata"]["uid"].get<std::string>();
    const std::string own_uid = uid;
    // A Deployment's pods belong to its ReplicaSet, which goes with it (apps/v1 deletes
    // dependents by default): the fake stores no ReplicaSet, so its pods go here.
    if (rt.plural == "deployments") {
      auto rs = deployment_replica_sets.find(uid);
      const std::string owner = rs == deployment_replica_sets.end() ? uid : rs->second;
      if (rs != deployment_replica_sets.end()) deployment_replica_sets.erase(rs);
      uid = owner;
    }
    std::string policy = propagation;
    if (policy.empty() && rt.plural == "jobs") {
      policy = "Orphan";
      if (headers)
        (*headers)["Warning"] =
            "299 - \"child pods are preserved by default when jobs are deleted; set "
            "propagationPolicy=Background to remove them or set propagationPolicy=Orphan to "
            "suppress this warning\"";
    }
    if (policy.empty()) policy = "Background";  // batch/v1 CronJobs: DeleteDependents
    auto& child_type = rt.plural == "jobs" || rt.plural == "deployments"
                           ? *find_type("", "v1", "pods")
                           : *find_type("batch", "v1", "jobs");
    std::vector<std::string> children;
    for (auto* c : list(child_type, ns))
      for (auto& ref : (*c)["metadata"].value("ownerReferences", json::array()))
        if (ref.value("uid", "") == uid) children.push_back((*c)["metadata"]["name"]);
    erase(rt, ns, name);
    for (auto& child : children) {
      json* c = find(child_type, ns, child);
      if (!c) continue;
      if (policy == "Orphan") {
        auto refs = json::array();
        for (auto& ref : (*c)["metadata"]["ownerReferences"])
          if (ref.value("uid", "") != uid) refs.push_back(ref);
        if (refs.empty())
          (*c)["metadata"].erase("ownerReferences");
        else
          (*c)["metadata"]["ownerReferences"] = refs;
        update(child_type, *c);
      } else {
        delete_object(child_type, ns, child, "Background", std::nullopt, nullptr);
      }
    }
    // The garbage collector's work for what a Deployment owns besides its ReplicaSet (a
    // server's Service and Secret): deleted with it unless the deletion orphans them.
    if (rt.plural == "deployments" && policy != "Orphan")
      delete_owned(own_uid, ns, {"services", "secrets"});
    if (rt.plural == "jobsets") {  // the headless Service it owns
      auto& svc = *find_type("", "v1", "services");
      std::vector<std::string> owned;
      for (auto* s : list(svc, ns))
        for (auto& ref : (*s)["metadata"].value("ownerReferences", json::array()))
          if (ref.value("uid", "") == uid) owned.push_back((*s)["metadata"]["name"]);
      for (auto& s : owned) erase(svc, ns, s);
    }
    return success;
  }
  if (rt.plural == "nodes") {
    auto& pt = *find_type("", "v1", "pods");
    std::vector<std::pair<std::string, std::string>> victims;
    for (auto* p : list(pt, ""))
      if ((*p)["spec"].value("nodeName", "") == name)
        victims.push_back({(*p)["metadata"]["namespace"], (*p)["metadata"]["name"]});
    erase(rt, "", name);
    for (auto& [pns, pname] : victims)
      if (json* p = find(pt, pns, pname)) node_lost(*p);
    return success;
  }
  json copy = *obj;
  erase(rt, ns, name);
  return rt.plural == "events" || rt.plural == "secrets" || rt.plural == "services" ? success
                                                                                    : copy;
}

void FakeKube::Impl::delete_owned(const std::string& owner_uid, const std::string& ns,
                                  const std::vector<std::string>& plurals) {
  for (const std::string& plural : plurals) {
    const ResourceType& type = *find_type("", "v1", plural);
    std::vector<std::string> owned;
    for (auto* o : list(type, ns))
      for (const auto& ref : (*o)["metadata"].value("ownerReferences", json::array()))
        if (ref.value("uid", "") == owner_uid) owned.push_back((*o)["metadata"]["name"]);
    for (const auto& name : owned) erase(type, ns, name);
  }
}

// ---- request handling ------------------------------------------------------------------------

void FakeKube::Impl::handle(const httplib::Request& req, httplib::Response& res,
                            const std::string& body) {
  // httplib would gzip text answers (and buffer the chunks of a watch or a log stream) for a client
  // that accepts it; the API server answers these uncompressed.
  const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
  try {
    serve(req, res, body);
  } catch (const ApiError& e) {
    send_error(res, e);
  } catch (const json::exception& e) {
    send_error(res, bad_request(std::string("invalid object: ") + e.what()));
  }
  if (res.has_header(kLoseResponse)) {
    // lose_next_response: the work is done; the status line goes out, then the connection is
    // dropped before the body (a chunked body that never comes), as when a proxy or the network
    // fails after the server acted.
    res.headers.erase(kLoseResponse);
    res.body.clear();
    res.set_chunked_content_provider("application/json",
                                     [](std::size_t, httplib::DataSink&) { return false; });
  }
}

bool FakeKube::Impl::throttled(const httplib::Request& req, httplib::Response& res) {
  if (!is_kube_write(req.method) || write_quota.take()) return false;
  ++counters["rate_limited"];
  // What kube-apiserver's APF filter answers (apiserver/pkg/server/filters/maxinflight.go
  // tooManyRequests): a fixed Retry-After of 1 and Go's http.Error text, not a Status (client-go
  // makes one up, reason TooManyRequests); plus the UIDs of the flow schema and priority level.
  res.status = 429;
  res.set_header("Retry-After", std::to_string(write_quota.seconds_until_token()));
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Kubernetes-PF-FlowSchema-UID", "4d3f4b2e-0000-4000-8000-00000000f10a");
  res.set_header("X-Kubernetes-PF-PriorityLevel-UID", "4d3f4b2e-0000-4000-8000-00000000b0a7");
  res.set_content("Too many requests, please try again later.\n", "text/plain; charset=utf-8");
  return true;
}

void FakeKube::Impl::serve(const httplib::Request& req, httplib::Response& res,
                           const std::string& sent_body) {
  std::string body = sent_body;  // JSON, once a protobuf body is decoded
  auto seg = split_path(req.path);
  if (seg.size() == 2 && seg[0] == "_fake" && seg[1] == "counters") {
    std::lock_guard lock(mu);
    return send_json(res, 200, json(counters));
  }
  auto route = canonical_route(req.method, seg);
  {
    std::lock_guard lock(mu);
    ++counters[route];
    ++total;
  }
  // authentication
  auto auth = req.get_header_value("Authorization");
  std::string token = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : std::string();
  kube::Identity who;
  {
    std::lock_guard lock(mu);
    auto id = authenticate(token);
    if (!id) throw ApiError{401, "Unauthorized", "Unauthorized"};
    who = std::move(*id);
  }
  if (is_kube_write(req.method)) write_gathering.arrive();
  {
    std::lock_guard lock(mu);
    auto raw = req.method + " " + req.path;
    for (auto it = failures.begin(); it != failures.end(); ++it) {
      if (raw.rfind(it->prefix, 0) != 0 && route.rfind(it->prefix, 0) != 0) continue;
      int status = it->status;
      if (--it->remaining <= 0) failures.erase(it);
      throw injected(status);
    }
    if (throttled(req, res)) return;
    for (auto it = lost_responses.begin(); it != lost_responses.end(); ++it) {
      if (raw.rfind(*it, 0) != 0 && route.rfind(*it, 0) != 0) continue;
      lost_responses.erase(it);
      res.set_header(kLoseResponse, "1");
      break;
    }
  }
  // authorization: RBAC for the tokens of service accounts
  if (who.rbac) {
    auto attrs = request_attributes(req.method, seg, req.path, param(req, "watch"),
                                    param(req, "fieldSelector"));
    std::lock_guard lock(mu);
    authorize(who, attrs);
  }
  const bool get = req.method == "GET";
  // discovery
  if (get && seg.size() == 1 && seg[0] == "version")
    return send_json(res, 200,
                     {{"major", "1"},
                      {"minor", "32"},
                      {"gitVersion", kKubeVersion},
                      {"gitCommit", "0000000000000000000000000000000000000000"},
                      {"gitTreeState", "clean"},
                      {"buildDate", "2025-03-01T00:00:00Z"},
                      {"goVersion", "go1.23.6 X:boringcrypto"},
                      {"compiler", "gc"},
                      {"platform", "linux/amd64"}});
  if (get && seg.size() == 1 && (seg[0] == "healthz" || seg[0] == "livez" || seg[0] == "readyz")) {
    res.set_content("ok", "text/plain");
    return;
  }
  if (get && seg.size() == 1 && seg[0] == "api")
    return send_json(res, 200,
                     {{"kind", "APIVersions"},
                      {"versions", {"v1"}},
                      {"serverAddressByClientCIDRs",
                       {{{"clientCIDR", "0.0.0.0/0"},
                         {"serverAddress", "127.0.0.1:" + std::to_string(port)}}}}});
  if (get && seg.size() == 2 && seg[0] == "api" && seg[1] == "v1")
    return send_json(res, 200, resource_list("v1"));
  if (get && seg.size() == 1 && seg[0] == "apis") {
    json groups = json::array();
    std::set<std::string> seen;
    for (auto& t : resource_types())
      if (!t.group.empty() && served(t) && seen.insert(t.group).second)
        groups.push_back(api_group(t.group, t.version));
    return send_json(res, 200,
                     {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}});
  }
  if (get && seg.size() == 2 && seg[0] == "apis") {
    for (auto& t : resource_types())
      if (!t.group.empty() && t.group == seg[1] && served(t)) {
        json g = api_group(t.group, t.version);
        g["kind"] = "APIGroup";
        g["apiVersion"] = "v1";
        return send_json(res, 200, g);
      }
  }
  if (get && seg.size() == 3 && seg[0] == "apis") {
    auto gv = seg[1] + "/" + seg[2];
    for (auto& t : resource_types())
      if (t.group_version() == gv && served(t)) return send_json(res, 200, resource_list(gv));
  }
  if (get && seg.size() >= 2 && seg[0] == "openapi") {
    if (seg[1] == "v3" && seg.size() == 2) {
      json paths = json::object();
      for (auto& t : resource_types()) {
        if (!served(t)) continue;
        const std::string gv = t.group.empty() ? "api/v1" : "apis/" + t.group_version();
        paths[gv] = {{"serverRelativeURL", "/openapi/v3/" + gv + "?hash=F4KE"}};
      }
      return send_json(res, 200, {{"paths", paths}});
    }
    if (seg[1] == "v3" && seg.size() >= 4) {
      std::string gv = seg[2] == "api" ? seg[3] : (seg.size() >= 5 ? seg[3] + "/" + seg[4] : "");
      auto doc = openapi_v3(gv);
      if (!doc["paths"].empty()) return send_json(res, 200, doc);
    }
    // No OpenAPI v2 document: kubectl only needs v3 (see tests/kubectl/run_kubectl.sh).
    throw ApiError{404, "NotFound", "the server could not find the requested resource",
                   json::object()};
  }

  // Kueue's visibility API (an aggregated API server of its own in a real cluster)
  if (get && seg.size() == 8 && seg[0] == "apis" && seg[1] == "visibility.kueue.x-k8s.io" &&
      seg[2] == "v1beta2" && seg[3] == "namespaces" && seg[5] == "localqueues" &&
      seg[7] == "pendingworkloads")
    return send_json(res, 200, kueue_pending_workloads(seg[4], seg[6], ""));
  if (get && seg.size() == 6 && seg[0] == "apis" && seg[1] == "visibility.kueue.x-k8s.io" &&
      seg[2] == "v1beta2" && seg[3] == "clusterqueues" && seg[5] == "pendingworkloads")
    return send_json(res, 200, kueue_pending_workloads("", "", seg[4]));

  // resources
  std::size_t base = 0;
  std::string group, version;
  if (seg.size() >= 3 && seg[0] == "api" && seg[1] == "v1") {
    base = 2;
    version = "v1";
  } else if (seg.size() >= 4 && seg[0] == "apis") {
    base = 3;
    group = seg[1];
    version = seg[2];
  }
  if (base == 0)
    throw ApiError{404, "NotFound", "the server could not find the requested resource",
                   json::object()};
  std::vector<std::string> rest(seg.begin() + static_cast<long>(base), seg.end());
  std::string ns, plural, name, sub;
  if (rest[0] == "namespaces" && rest.size() >= 3) {
    ns = rest[1];
    plural = rest[2];
    if (rest.size() >= 4) name = rest[3];
    if (rest.size() >= 5) sub = rest[4];
    if (rest.size() > 5) plural.clear();
  } else {
    plural = rest[0];
    if (rest.size() >= 2) name = rest[1];
    if (rest.size() >= 3) sub = rest[2];
    if (rest.size() > 3) plural.clear();
  }
  const ResourceType* rtp = plural.empty() ? nullptr : find_type(group, version, plural);
  if (!rtp || (!rtp->namespaced && !ns.empty()) || !served(*rtp))
    throw ApiError{404, "NotFound", "the server could not find the requested resource",
                   json::object()};
  const auto& rt = *rtp;
  if (!sub.empty() &&
      !(sub == "status" || (sub == "log" && rt.plural == "pods") ||
        (sub == "exec" && rt.plural == "pods") || (sub == "portforward" && rt.plural == "pods") ||
        (sub == "token" && rt.plural == "serviceaccounts")))
    throw ApiError{404, "NotFound", "the server could not find the requested resource",
                   json::object()};

  if (!get && !body.empty() &&
      req.get_header_value("Content-Type").find("protobuf") != std::string::npos) {
    // Built-in kinds are read from protobuf (kubectl's typed commands send it); a custom
    // resource only ever from JSON.
    if (rt.group == "jobset.x-k8s.io")
      throw ApiError{415, "UnsupportedMediaType",
                     "the body of the request was in an unknown format - accepted media types "
                     "include: application/json, application/merge-patch+json, "
                     "application/strategic-merge-patch+json"};
    body = decode_protobuf(body).dump();
  }
  if (sub == "token") {
    if (req.method != "POST") throw kube::method_not_allowed();
    json request = json::parse(body, nullptr, false);
    if (request.is_discarded() || !request.is_object())
      throw bad_request("the body of the request must be a TokenRequest");
    std::lock_guard lock(mu);
    return send_json(res, 201, token_request(ns, name, std::move(request)));
  }
  if (get && sub == "log") return serve_log(req, res, ns, name);
  if (sub == "exec") return serve_exec(req, res, ns, name);
  if (sub == "portforward") return serve_port_forward(req, res, ns, name);
  if (get && name.empty() && kube_truthy(param(req, "watch"))) return serve_watch(req, res, rt, ns);

  std::unique_lock lock(mu);
  if (get && !name.empty()) {
    json* obj = find(rt, ns, name);
    if (!obj) throw not_found(rt, name);
    if (req.get_header_value("Accept").find("as=Table") != std::string::npos)
      return send_json(
          res, 200,
          table_for(rt, {*obj}, std::to_string(rv), param(req, "includeObject") == "Object"));
    return send_json(res, 200, *obj);
  }
  if (get) {
    auto labels = parse_label_selector(param(req, "labelSelector"));
    auto fields = parse_field_selector(param(req, "fieldSelector"));
    std::vector<json> items;
    for (auto* o : list(rt, ns))
      if (labels_match(labels, (*o)["metadata"].value("labels", json::object())) &&
          fields_match(fields, *o))
        items.push_back(*o);
    if (req.get_header_value("Accept").find("as=Table") != std::string::npos)
      return send_json(
          res, 200,
          table_for(rt, items, std::to_string(rv), param(req, "includeObject") == "Object"));
    return send_json(res, 200,
                     {{"kind", rt.kind + "List"},
                      {"apiVersion", rt.group_version()},
                      {"metadata", {{"resourceVersion", std::to_string(rv)}}},
                      {"items", items}});
  }
  if (req.method == "POST") {
    if (!name.empty()) throw kube::method_not_allowed();
    json obj = json::parse(body, nullptr, false);
    if (obj.is_discarded())
      throw bad_request("the object provided is unrecognized (must be of type " + rt.kind +
                        "): couldn't get version/kind; json parse error");
    bool dry_run = param(req, "dryRun") == "All";
    json created = create(rt, rt.namespaced ? ns : std::string(), std::move(obj), dry_run);
    return send_json(res, 201, created);
  }
  if (req.method == "DELETE") {
    if (name.empty()) throw kube::method_not_allowed();
    std::string propagation = param(req, "propagationPolicy");
    std::optional<int> grace;
    if (!param(req, "gracePeriodSeconds").empty())
      grace = std::stoi(param(req, "gracePeriodSeconds"));
    if (kube_truthy(param(req, "orphanDependents"))) propagation = "Orphan";
    if (!body.empty()) {
      json opts = json::parse(body, nullptr, false);
      if (opts.is_discarded()) throw bad_request("invalid DeleteOptions");
      if (opts.contains("propagationPolicy") && opts["propagationPolicy"].is_string())
        propagation = opts["propagationPolicy"];
      if (opts.contains("gracePeriodSeconds") && opts["gracePeriodSeconds"].is_number())
        grace = opts["gracePeriodSeconds"].get<int>();
      if (opts.value("orphanDependents", false)) propagation = "Orphan";
    }
    if (!propagation.empty() && propagation != "Orphan" && propagation != "Background" &&
        propagation != "Foreground")
      throw invalid(rt, name,
                    {{"propagationPolicy", "Unsupported value: \"" + propagation +
                                               "\": supported values: \"Foreground\", "
                                               "\"Background\", \"Orphan\", \"nil\""}});
    std::map<std::string, std::string> headers;
    json out = delete_object(rt, ns, name, propagation, grace, &headers);
    for (auto& [k, v] : headers) res.set_header(k, v);
    return send_json(res, 200, out);
  }
  const bool apply = req.method == "PATCH" &&
                     req.get_header_value("Content-Type").find("apply-patch") != std::string::npos;
  if (apply && param(req, "fieldManager").empty())
    throw ApiError{422, "Invalid",
                   "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
                   "required for apply patch",
                   json{{"group", "meta.k8s.io"},
                        {"kind", "PatchOptions"},
                        {"causes",
                         {{{"reason", "FieldValueRequired"},
                           {"message", "Required value: is required for apply patch"},
                           {"field", "fieldManager"}}}}}};
  if (apply && rt.group.ends_with("x-k8s.io")) refuse_null_fields(rt, name, body);
  if (apply && !find(rt, ns, name)) {
    // Server-side apply creates what does not exist yet (JSON is YAML: the fake reads JSON).
    json obj = json::parse(body, nullptr, false);
    if (obj.is_discarded() || !obj.is_object())
      throw bad_request("error decoding YAML: the fake API server reads apply patches as JSON");
    if (obj["metadata"].value("name", name) != name)
      throw bad_request("the name of the object (" + obj["metadata"].value("name", "") +
                        ") does not match the name on the URL (" + name + ")");
    json created = create(rt, rt.namespaced ? ns : std::string(), std::move(obj), false);
    return send_json(res, 201, created);
  }
  if (req.method == "PUT" || req.method == "PATCH") {
    json* obj = find(rt, ns, name);
    if (!obj) throw not_found(rt, name);
    json in = json::parse(body, nullptr, false);
    if (in.is_discarded() || !in.is_object()) throw bad_request("invalid JSON body");
    json next;
    if (req.method == "PUT") {
      auto want = in["metadata"].value("resourceVersion", std::string());
      if (!want.empty() && want != (*obj)["metadata"]["resourceVersion"])
        throw ApiError{409, "Conflict",
                       "Operation cannot be fulfilled on " + rt.qualified() + " \"" + name +
                           "\": the object has been modified; please apply your changes to the "
                           "latest version and try again",
                       json{{"name", name}, {"kind", rt.plural}}};
      next = in;
      if (sub != "status" && obj->contains("status")) next["status"] = (*obj)["status"];
    } else {
      next = *obj;
      next.merge_patch(in);  // merge and strategic-merge patches alike (lists are replaced)
    }
    for (const char* k : {"uid", "creationTimestamp", "namespace", "name", "generation"})
      if ((*obj)["metadata"].contains(k)) next["metadata"][k] = (*obj)["metadata"][k];
    if (rt.plural == "cronjobs" && sub != "status" && next["spec"].is_object())
      default_cronjob_spec(next["spec"]);
    if (sub != "status") validate_update(rt, *obj, next);
    // A change of spec is a new generation, for the controllers to observe.
    if (sub != "status" && next.value("spec", json()) != obj->value("spec", json()))
      next["metadata"]["generation"] = (*obj)["metadata"].value("generation", 1) + 1;
    next["apiVersion"] = rt.group_version();
    next["kind"] = rt.kind;
    *obj = std::move(next);
    update(rt, *obj);
    return send_json(res, 200, *obj);
  }
  throw kube::method_not_allowed();
}

// ---- watch -----------------------------------------------------------------------------------

void FakeKube::Impl::serve_watch(const httplib::Request& req, httplib::Response& res,
                                 const ResourceType& rt, const std::string& ns) {
  auto labels = parse_label_selector(param(req, "labelSelector"));
  auto fields = parse_field_selector(param(req, "fieldSelector"));
  bool bookmarks = kube_truthy(param(req, "allowWatchBookmarks"));
  int timeout = 1800;
  if (!param(req, "timeoutSeconds").empty())
    timeout = std::max(0, std::stoi(param(req, "timeoutSeconds")));
  auto rv_param = param(req, "resourceVersion");
  struct State {
    std::vector<std::string> pending;
    std::int64_t last = 0;
    std::uint64_t generation = 0;
    Steady::time_point deadline;
    bool closing = false;
  };
  auto st = std::make_shared<State>();
  st->deadline = Steady::now() + std::chrono::seconds(timeout);
  auto matches = [labels, fields, ns, &rt](const json& obj) {
    if (!ns.empty() && rt.namespaced && obj["metadata"].value("namespace", "") != ns) return false;
    return labels_match(labels, obj["metadata"].value("labels", json::object())) &&
           fields_match(fields, obj);
  };
  {
    std::lock_guard lock(mu);
    st->generation = expire_generation;
    // expire_next_watch: this watch's resourceVersion is compacted away, as after an API server
    // restart; the pods held back for it may be placed now.
    if (expire_next_watches > 0 && !rv_param.empty() && rv_param != "0") {
      --expire_next_watches;
      kick();
      throw ApiError{410, "Expired",
                     "too old resource version: " + rv_param + " (" + std::to_string(rv) + ")"};
    }
    if (!rv_param.empty() && rv_param != "0") {
      char* end = nullptr;
      long long r = std::strtoll(rv_param.c_str(), &end, 10);
      if (*end != '\0' || r < 0)
        throw bad_request("resourceVersion: Invalid value: \"" + rv_param + "\"");
      if (r < history_floor)
        throw ApiError{410, "Expired",
                       "too old resource version: " + rv_param + " (" +
                           std::to_string(history_floor + 1) + ")"};
      st->last = r;
    } else {
      st->last = rv;
      for (auto* o : list(rt, ns))
        if (matches(*o))
          st->pending.push_back(json{{"type", "ADDED"}, {"object", *o}}.dump() + "\n");
    }
  }
  res.set_header("Cache-Control", "no-cache, private");
  res.set_chunked_content_provider("application/json", [this, st, matches, bookmarks, &rt](
                                                           std::size_t, httplib::DataSink& sink) {
    std::vector<std::string> out;
    bool done = false;
    {
      std::unique_lock lock(mu);
      while (true) {
        out.swap(st->pending);
        if (stopping) {
          done = true;
          break;
        }
        if (st->generation != expire_generation) {
          json status = status_json({410, "Expired",
                                     "too old resource version: " + std::to_string(st->last) +
                                         " (" + std::to_string(history_floor + 1) + ")"});
          out.push_back(json{{"type", "ERROR"}, {"object", status}}.dump() + "\n");
          done = true;
          break;
        }
        auto it = std::upper_bound(history.begin(), history.end(), st->last,
                                   [](std::int64_t v, const WatchEvent& e) { return v < e.rv; });
        for (; it != history.end(); ++it) {
          st->last = it->rv;
          if (it->rt != &rt || !matches(it->object)) continue;
          out.push_back(json{{"type", it->type}, {"object", it->object}}.dump() + "\n");
        }
        if (!out.empty()) break;
        if (Steady::now() >= st->deadline) {
          if (bookmarks)
            out.push_back(json{{"type", "BOOKMARK"},
                               {"object",
                                {{"kind", rt.kind},
                                 {"apiVersion", rt.group_version()},
                                 {"metadata", {{"resourceVersion", std::to_string(rv)}}}}}}
                              .dump() +
                          "\n");
          done = true;
          break;
        }
        changed.wait_until(lock, st->deadline);
      }
    }
    for (auto& line : out)
      if (!sink.write(line.data(), line.size())) return false;
    if (done) sink.done();
    return true;
  });
}

// ---- logs ------------------------------------------------------------------------------------

void FakeKube::Impl::serve_log(const httplib::Request& req, httplib::Response& res,
                               const std::string& ns, const std::string& name) {
  auto& pt = *find_type("", "v1", "pods");
  std::unique_lock lock(mu);
  json* pod = find(pt, ns, name);
  if (!pod) throw not_found(pt, name);
  auto& containers = (*pod)["spec"]["containers"];
  auto container = param(req, "container");
  if (container.empty()) {
    if (containers.size() > 1) {
      std::string names;
      for (auto& c : containers)
        names += (names.empty() ? "" : " ") + c.value("name", std::string());
      throw bad_request("a container name must be specified for pod " + name +
                        ", choose one of: [" + names + "]");
    }
    container = containers[0].value("name", std::string());
  }
  bool known = false;
  for (auto& c : containers) known = known || c.value("name", "") == container;
  if (!known) throw bad_request("container " + container + " is not valid for pod " + name);
  auto uid = (*pod)["metadata"]["uid"].get<std::string>();
  PodRuntime* prt = pods.count(uid) ? pods[uid].get() : nullptr;
  bool first = containers[0].value("name", "") == container;
  if (!prt || !prt->started || !first) {
    std::string reason = "ContainerCreating";
    for (auto& cs : (*pod)["status"].value("containerStatuses", json::array()))
      if (cs.value("name", "") == container && cs["state"].contains("waiting"))
        reason = cs["state"]["waiting"].value("reason", reason);
    throw bad_request("container \"" + container + "\" in pod \"" + name +
                      "\" is waiting to start: " + reason);
  }
  if (kube_truthy(param(req, "previous")))
    throw bad_request("previous terminated container \"" + container + "\" in pod \"" + name +
                      "\" not found");
  bool follow = kube_truthy(param(req, "follow"));
  bool stamps = kube_truthy(param(req, "timestamps"));
  std::optional<SysClock::time_point> since;
  if (!param(req, "sinceTime").empty()) {
    since = parse_rfc3339(param(req, "sinceTime"));
    if (!since) throw bad_request("sinceTime: Invalid value: \"" + param(req, "sinceTime") + "\"");
  }
  if (!param(req, "sinceSeconds").empty())
    since = SysClock::now() - std::chrono::seconds(std::stoll(param(req, "sinceSeconds")));
  std::optional<std::size_t> limit;
  if (!param(req, "limitBytes").empty()) limit = std::stoull(param(req, "limitBytes"));
  std::size_t start = 0;
  if (since)
    while (start < prt->log.size() && prt->log[start].time < *since) ++start;
  if (!param(req, "tailLines").empty()) {
    auto tail = static_cast<std::size_t>(std::max(0LL, std::stoll(param(req, "tailLines"))));
    if (prt->log.size() - start > tail) start = prt->log.size() - tail;
  }
  auto render = [stamps](const LogLine& l) {
    return stamps ? rfc3339_nano(l.time) + " " + l.text : l.text;
  };
  if (!follow) {
    std::string out;
    for (std::size_t i = start; i < prt->log.size(); ++i) out += render(prt->log[i]);
    if (limit && out.size() > *limit) out.resize(*limit);
    res.set_content(out, "text/plain");
    return;
  }
  struct State {
    std::size_t next;
    std::size_t sent = 0;
    std::optional<std::size_t> cut;
    std::optional<std::size_t> end_after_exit;
    bool hold = false;
  };
  auto st = std::make_shared<State>();
  st->next = start;
  st->cut = cut_log_after;
  cut_log_after.reset();
  st->end_after_exit = end_log_after_exit;
  end_log_after_exit.reset();
  st->hold = hold_log_after_exit;
  hold_log_after_exit = false;
  res.set_chunked_content_provider(
      "text/plain", [this, st, prt, render, limit, since](std::size_t, httplib::DataSink& sink) {
        std::string out;
        bool done = false;
        {
          std::unique_lock lock(mu);
          while (true) {
            for (; st->next < prt->log.size(); ++st->next) {
              if (since && prt->log[st->next].time < *since) continue;
              out += render(prt->log[st->next]);
            }
            if (!out.empty()) break;
            if (prt->log_done && st->hold && !stopping) {
              // Held open: nothing more to send, and no end either. (A client that drops the
              // stream is not seen here: this httplib cannot tell.)
              changed.wait_for(lock, std::chrono::seconds(60), [&] { return stopping; });
              if (!stopping) ++held_log_streams_ended;
              st->hold = false;
            }
            if (prt->log_done || stopping) {
              done = true;
              break;
            }
            changed.wait(lock);
          }
        }
        if (limit && st->sent + out.size() >= *limit) {
          out.resize(*limit - st->sent);
          done = true;
        }
        if (st->end_after_exit && st->sent + out.size() >= *st->end_after_exit) {
          out.resize(*st->end_after_exit - st->sent);
          if (!out.empty() && !sink.write(out.data(), out.size())) return false;
          std::unique_lock lock(mu);
          changed.wait(lock, [&] { return prt->log_done || stopping; });
          lock.unlock();
          sink.done();  // a clean end, though the log goes on
          return true;
        }
        if (st->cut && st->sent + out.size() >= *st->cut) {
          out.resize(*st->cut - st->sent);
          if (!out.empty()) sink.write(out.data(), out.size());
          return false;  // the connection is dropped without the last chunk
        }
        if (!out.empty() && !sink.write(out.data(), out.size())) return false;
        st->sent += out.size();
        if (done) sink.done();
        return true;
      });
}

// ---- public API ------------------------------------------------------------------------------

FakeKube::FakeKube(FakeKubeOptions options) : impl_(std::make_unique<Impl>()) {
  auto* impl = impl_.get();
  impl->options = std::move(options);
  if (impl->options.work_root.empty()) {
    auto tmpl = (std::filesystem::temp_directory_path() / "fake-kube-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw std::runtime_error("FakeKube: mkdtemp failed");
    impl->work_root = buf.data();
    impl->own_work_root = true;
  } else {
    impl->work_root = impl->options.work_root;
    std::filesystem::create_directories(impl->work_root);
  }
  TlsMaterial tls;
  make_tls(tls);
  impl->ca_pem = tls.ca_pem;
  impl->server = std::make_unique<httplib::Server>();
  auto handler = [impl](const httplib::Request& req, httplib::Response& res) {
    impl->handle(req, res, req.body);
  };
  impl->server->Get(".*", handler);
  impl->server->Post(".*", handler);
  impl->server->Put(".*", handler);
  impl->server->Patch(".*", handler);
  impl->server->Delete(".*", handler);
  impl->server->set_keep_alive_max_count(1000);
  impl->server->set_keep_alive_timeout(2);
  impl->server->new_task_queue = [] { return new httplib::ThreadPool(64); };
  impl->server->set_tcp_nodelay(true);
  simulate_round_trips(*impl->server);
  const int internal_port = impl->server->bind_to_any_port("127.0.0.1");
  if (internal_port <= 0) throw std::runtime_error("FakeKube: cannot bind 127.0.0.1");
  impl->front = std::make_unique<TlsFront>(
      tls.cert, tls.key, internal_port,
      [impl](const std::string& head, std::string& extra, TlsConnection& conn) {
        return impl->claim_exec(head, extra, conn) || impl->claim_port_forward(head, extra, conn);
      });
  impl->port = impl->front->port();

  {
    std::lock_guard lock(impl->mu);
    for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
      json obj = {{"metadata", {{"name", ns}}}};
      impl->create(*find_type("", "v1", "namespaces"), "", obj, false);
    }
    if (impl->options.jobset_installed) {
      json crd = {{"metadata", {{"name", "jobsets.jobset.x-k8s.io"}}},
                  {"spec",
                   {{"group", "jobset.x-k8s.io"},
                    {"names", {{"kind", "JobSet"}, {"plural", "jobsets"}}},
                    {"scope", "Namespaced"}}}};
      impl->create(*find_type("apiextensions.k8s.io", "v1", "customresourcedefinitions"), "", crd,
                   false);
    }
    json svc = {{"metadata",
                 {{"name", "kubernetes"},
                  {"labels", {{"component", "apiserver"}, {"provider", "kubernetes"}}}}},
                {"spec",
                 {{"clusterIP", "10.96.0.1"},
                  {"ports",
                   {{{"name", "https"},
                     {"port", 443},
                     {"protocol", "TCP"},
                     {"targetPort", impl->port}}}}}}};
    impl->create(*find_type("", "v1", "services"), "default", svc, false);
  }
  impl->controller_thread = std::thread([impl] { impl->controller_loop(); });
  impl->server_thread = std::thread([impl] { impl->server->listen_after_bind(); });
  while (!impl->server->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeKube::~FakeKube() {
  auto* impl = impl_.get();
  {
    std::lock_guard lock(impl->mu);
    impl->stopping = true;
    impl->controller_cv.notify_all();
    impl->changed.notify_all();
  }
  impl->front->stop();
  impl->server->stop();
  if (impl->server_thread.joinable()) impl->server_thread.join();
  if (impl->controller_thread.joinable()) impl->controller_thread.join();
  impl->kill_all();
  if (impl->own_work_root) {
    std::error_code ec;
    std::filesystem::remove_all(impl->work_root, ec);
  }
}

int FakeKube::port() const {
  return impl_->port;
}
std::string FakeKube::endpoint() const {
  return "127.0.0.1:" + std::to_string(impl_->port);
}
std::string FakeKube::url() const {
  return "https://" + endpoint();
}
std::string FakeKube::ca_pem() const {
  return impl_->ca_pem;
}

void FakeKube::set_node_pool(const FakeNodePool& pool) {
  std::lock_guard lock(impl_->mu);
  impl_->set_pool(pool);
  impl_->kick();
}
void FakeKube::remove_node_pool(const std::string& name) {
  std::lock_guard lock(impl_->mu);
  impl_->drop_pool(name);
  impl_->kick();
}
std::vector<FakeNodePool> FakeKube::node_pools() const {
  std::lock_guard lock(impl_->mu);
  std::vector<FakeNodePool> out;
  for (auto& [name, ps] : impl_->pools) out.push_back(ps.pool);
  return out;
}

void FakeKube::fail_scale_up(const std::string& pool, const std::string& message) {
  std::lock_guard lock(impl_->mu);
  impl_->pools[pool].fail_next = message;
  if (impl_->pools[pool].pool.name.empty()) impl_->pools.erase(pool);
}
void FakeKube::hold_capacity(const std::string& pool) {
  std::lock_guard lock(impl_->mu);
  if (auto it = impl_->pools.find(pool); it != impl_->pools.end()) it->second.capacity_held = true;
}
void FakeKube::release_capacity(const std::string& pool) {
  std::lock_guard lock(impl_->mu);
  if (auto it = impl_->pools.find(pool); it != impl_->pools.end()) {
    it->second.capacity_held = false;
    impl_->kick();
  }
}
bool FakeKube::preempt_node_of(const std::string& ns, const std::string& pod_name) {
  std::lock_guard lock(impl_->mu);
  return impl_->preempt_node_of(ns, pod_name);
}

void FakeKube::end_next_log_stream_after_exit(std::size_t bytes) {
  std::lock_guard lock(impl_->mu);
  impl_->end_log_after_exit = bytes;
}

void FakeKube::hold_next_log_stream_open() {
  std::lock_guard lock(impl_->mu);
  impl_->hold_log_after_exit = true;
}

void FakeKube::hold_exit_reports() {
  std::lock_guard lock(impl_->mu);
  impl_->hold_exit_reports = true;
}

void FakeKube::release_exit_reports() {
  std::lock_guard lock(impl_->mu);
  impl_->hold_exit_reports = false;
  for (const auto& uid : impl_->held_exits) {
    auto it = impl_->pods.find(uid);
    if (it != impl_->pods.end() && it->second) impl_->on_exit(*it->second);
  }
  impl_->held_exits.clear();
  impl_->kick();
}

int FakeKube::held_log_streams_ended() const {
  std::lock_guard lock(impl_->mu);
  return impl_->held_log_streams_ended;
}

void FakeKube::cut_next_log_stream_after(std::size_t bytes) {
  std::lock_guard lock(impl_->mu);
  impl_->cut_log_after = bytes;
}
void FakeKube::expire_watches() {
  std::lock_guard lock(impl_->mu);
  impl_->history.clear();
  impl_->history_floor = impl_->rv;
  ++impl_->expire_generation;
  impl_->changed.notify_all();
}
void FakeKube::fail_next(int n, int status, const std::string& route_prefix) {
  std::lock_guard lock(impl_->mu);
  if (n > 0) impl_->failures.push_back({n, status, route_prefix});
}
void FakeKube::set_write_quota(double writes_per_second) {
  impl_->write_quota.set_rate(writes_per_second);
}
void FakeKube::gather_next_writes(int n) {
  impl_->write_gathering.gather_next(n);
}
void FakeKube::lose_next_response(const std::string& route_prefix) {
  std::lock_guard lock(impl_->mu);
  impl_->lost_responses.push_back(route_prefix);
}
int FakeKube::pending_faults() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<int>(impl_->failures.size() + impl_->lost_responses.size()) +
         (impl_->cut_log_after ? 1 : 0) + (impl_->end_log_after_exit ? 1 : 0) +
         (impl_->hold_log_after_exit ? 1 : 0) + impl_->expire_next_watches;
}

void FakeKube::clear_faults() {
  std::lock_guard lock(impl_->mu);
  impl_->failures.clear();
  impl_->lost_responses.clear();
  impl_->cut_log_after.reset();
  impl_->end_log_after_exit.reset();
  impl_->hold_log_after_exit = false;
  impl_->pod_create_failure.clear();
  impl_->expire_next_watches = 0;
  impl_->kick();
}

void FakeKube::expire_next_watch() {
  std::lock_guard lock(impl_->mu);
  ++impl_->expire_next_watches;
}

void FakeKube::fail_pod_creates(const std::string& message) {
  std::lock_guard lock(impl_->mu);
  impl_->pod_create_failure = message;
  impl_->kick();
}

std::vector<std::string> FakeKube::pod_names(const std::string& ns,
                                             const std::string& selector) const {
  std::lock_guard lock(impl_->mu);
  auto sel = kube::parse_label_selector(selector);
  std::vector<std::pair<std::string, std::string>> found;  // creation time, name
  for (json* p : impl_->list(*kube::find_type("", "v1", "pods"), ns))
    if (kube::labels_match(sel, (*p)["metadata"].value("labels", json::object())))
      found.emplace_back((*p)["metadata"].value("creationTimestamp", ""),
                         (*p)["metadata"].value("name", ""));
  std::sort(found.begin(), found.end());
  std::vector<std::string> names;
  for (auto& f : found) names.push_back(f.second);
  return names;
}

std::map<std::string, int> FakeKube::request_counts() const {
  std::lock_guard lock(impl_->mu);
  return impl_->counters;
}
int FakeKube::total_requests() const {
  std::lock_guard lock(impl_->mu);
  return impl_->total;
}
void FakeKube::reset_counters() {
  std::lock_guard lock(impl_->mu);
  impl_->counters.clear();
  impl_->total = 0;
}

namespace {
// "/apis/batch/v1/namespaces/default/jobs/x" -> type, namespace, name
std::optional<std::tuple<const ResourceType*, std::string, std::string>> parse_object_path(
    const std::string& path) {
  auto seg = split_path(path);
  std::size_t base = 0;
  std::string group, version;
  if (seg.size() >= 3 && seg[0] == "api") {
    base = 2;
    version = seg[1];
  } else if (seg.size() >= 4 && seg[0] == "apis") {
    base = 3;
    group = seg[1];
    version = seg[2];
  } else {
    return std::nullopt;
  }
  std::vector<std::string> rest(seg.begin() + static_cast<long>(base), seg.end());
  if (rest.size() == 4 && rest[0] == "namespaces") {
    if (auto* t = find_type(group, version, rest[2])) return std::make_tuple(t, rest[1], rest[3]);
  } else if (rest.size() == 2) {
    if (auto* t = find_type(group, version, rest[0]))
      return std::make_tuple(t, std::string(), rest[1]);
  }
  return std::nullopt;
}
}  // namespace

std::optional<json> FakeKube::object(const std::string& path) const {
  auto parsed = parse_object_path(path);
  if (!parsed) return std::nullopt;
  std::lock_guard lock(impl_->mu);
  auto [t, ns, name] = *parsed;
  if (auto* o = impl_->find(*t, ns, name)) return *o;
  return std::nullopt;
}

void FakeKube::delete_cluster_objects() {
  std::lock_guard lock(impl_->mu);
  auto& impl = *impl_;
  const std::set<std::string> system = {"default", "kube-system", "kube-public", "kube-node-lease"};
  for (auto& t : kube::resource_types()) {
    if (!t.namespaced) continue;
    std::vector<std::pair<std::string, std::string>> names;
    for (auto* o : impl.list(t, ""))
      names.emplace_back((*o)["metadata"].value("namespace", ""), (*o)["metadata"]["name"]);
    for (auto& [ns, name] : names) {
      if (ns == "kube-system" || (t.plural == "services" && name == "kubernetes")) continue;
      if (impl.find(t, ns, name)) impl.delete_object(t, ns, name, "Background", 0, nullptr);
    }
  }
  for (auto& t : kube::resource_types()) {
    if (t.namespaced || t.plural == "nodes") continue;  // nodes go with their pools
    std::vector<std::string> names;
    for (auto* o : impl.list(t, "")) names.push_back((*o)["metadata"]["name"]);
    for (auto& name : names) {
      if (t.plural == "namespaces" && system.count(name)) continue;
      // A cluster made with JobSet keeps it: it came with the cluster, not from kinetic.
      if (t.plural == "customresourcedefinitions" && impl.options.jobset_installed) continue;
      if (impl.find(t, "", name)) impl.erase(t, "", name);
    }
  }
  impl.ensure_default_service_accounts();
  impl.kick();
}

bool FakeKube::merge_patch(const std::string& path, const nlohmann::json& patch) {
  auto parsed = parse_object_path(path);
  if (!parsed) return false;
  std::lock_guard lock(impl_->mu);
  auto [t, ns, name] = *parsed;
  json* o = impl_->find(*t, ns, name);
  if (!o) return false;
  o->merge_patch(patch);
  impl_->update(*t, *o);
  return true;
}

bool FakeKube::wait_for_object(const std::string& path,
                               const std::function<bool(const nlohmann::json&)>& pred,
                               int timeout_ms) const {
  auto parsed = parse_object_path(path);
  if (!parsed) return false;
  auto [t, ns, name] = *parsed;
  std::unique_lock lock(impl_->mu);
  return impl_->changed.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    auto* o = impl_->find(*t, ns, name);
    return pred(o ? *o : json(nullptr));
  });
}

bool FakeKube::wait_for_pods(const std::string& ns,
                             const std::function<bool(const std::vector<nlohmann::json>&)>& pred,
                             int timeout_ms) const {
  std::unique_lock lock(impl_->mu);
  return impl_->changed.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    std::vector<json> pods;
    for (auto* p : impl_->list(*find_type("", "v1", "pods"), ns)) pods.push_back(*p);
    return pred(pods);
  });
}

bool FakeKube::remove(const std::string& path) {
  auto parsed = parse_object_path(path);
  if (!parsed) return false;
  std::lock_guard lock(impl_->mu);
  auto [t, ns, name] = *parsed;
  if (!impl_->find(*t, ns, name)) return false;
  impl_->delete_object(*t, ns, name, "Background", std::nullopt, nullptr);
  return true;
}

std::string FakeKube::trigger_cronjob(const std::string& ns, const std::string& name) {
  std::lock_guard lock(impl_->mu);
  return impl_->trigger_cronjob(ns, name);
}

bool FakeKube::wait_for_cronjob_job_done(const std::string& ns, const std::string& job,
                                         int timeout_ms) const {
  auto& jobs_t = *find_type("batch", "v1", "jobs");
  auto& cronjobs_t = *find_type("batch", "v1", "cronjobs");
  std::unique_lock lock(impl_->mu);
  json* j = impl_->find(jobs_t, ns, job);
  if (!j) return false;
  const std::string uid = (*j)["metadata"]["uid"];
  std::string owner;
  for (auto& ref : (*j)["metadata"].value("ownerReferences", json::array()))
    if (ref.value("kind", "") == "CronJob" && ref.value("controller", false))
      owner = ref.value("name", std::string());
  return impl_->changed.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    json* cj = owner.empty() ? nullptr : impl_->find(cronjobs_t, ns, owner);
    if (cj)
      for (auto& ref : (*cj)["status"].value("active", json::array()))
        if (ref.value("uid", "") == uid) return false;
    json* now = impl_->find(jobs_t, ns, job);
    if (!now || (*now)["metadata"].value("uid", "") != uid) return true;  // deleted
    for (auto& c : (*now)["status"].value("conditions", json::array()))
      if ((c.value("type", "") == "Complete" || c.value("type", "") == "Failed") &&
          c.value("status", "") == "True")
        return true;
    return false;
  });
}

std::vector<json> FakeKube::events_for(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(impl_->mu);
  std::vector<json> out;
  for (auto* e : impl_->list(*find_type("", "v1", "events"), ns))
    if ((*e)["involvedObject"].value("name", "") == name) out.push_back(*e);
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return std::stoll(a["metadata"]["resourceVersion"].get<std::string>()) <
           std::stoll(b["metadata"]["resourceVersion"].get<std::string>());
  });
  return out;
}

bool FakeKube::wait_for_event(const std::string& ns, const std::string& reason,
                              int timeout_ms) const {
  std::unique_lock lock(impl_->mu);
  return impl_->changed.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    for (auto* e : impl_->list(*find_type("", "v1", "events"), ns))
      if ((*e).value("reason", "") == reason) return true;
    return false;
  });
}

int FakeKube::running_pods() const {
  std::lock_guard lock(impl_->mu);
  int n = 0;
  for (auto& [uid, p] : impl_->pods) n += p->running ? 1 : 0;
  return n;
}

bool FakeKube::wait_idle(int timeout_ms) const {
  std::unique_lock lock(impl_->mu);
  return impl_->changed.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    for (auto& [uid, p] : impl_->pods)
      if (p->running || (p->started && !p->log_done)) return false;
    return true;
  });
}

}  // namespace kinetic::fakes
