// FakeGcp: GKE Workload Identity metadata servers. On GKE a pod's Google client (google-auth,
// gcloud, kinetic's ADC) finds the node's metadata server (GCE_METADATA_HOST here) and gets tokens
// for the pod's Kubernetes service account, which IAM knows as a principal of the project's
// workload pool. One small server per (project, namespace, service account) stands in for the
// node-local one that tells pods apart by IP (every fake pod is 127.0.0.1). Each token it mints is
// remembered with its principal so that fake_gcp_authz.cpp can hold it to the project's policy.
#include "fakes/fake_gcp_internal.h"
#include "fakes/fake_metadata_flavor.h"

namespace kinetic::fakes {

using namespace gcp_detail;

std::string FakeGcp::workload_identity_principal(const std::string& project, const std::string& ns,
                                                 const std::string& ksa) {
  return "principal://iam.googleapis.com/projects/" + project_number(project) +
         "/locations/global/workloadIdentityPools/" + project + ".svc.id.goog/subject/ns/" + ns +
         "/sa/" + ksa;
}

std::string FakeGcp::Impl::metadata_host(const std::string& project, const std::string& ns,
                                         const std::string& ksa) {
  std::lock_guard wi_lock(wi_mu);
  const std::string key = project + "/" + ns + "/" + ksa;
  auto it = wi_servers.find(key);
  if (it != wi_servers.end()) return "127.0.0.1:" + std::to_string(it->second->port);

  auto s = std::make_unique<Server>();
  s->service = "metadata " + key;
  const WiIdentity who{project, ns, ksa, FakeGcp::workload_identity_principal(project, ns, ksa)};
  const std::string email = project + ".svc.id.goog";
  const std::string sa = "/computeMetadata/v1/instance/service-accounts/";
  auto text = [](const std::string& body) {
    return [body](const httplib::Request& req, httplib::Response& res) {
      if (metadata_flavor(req, res)) res.set_content(body, "application/text");
    };
  };
  s->http.Get("/", text("computeMetadata/\n"));
  s->http.Get(sa, text("default/\n" + email + "/\n"));
  s->http.Get("/computeMetadata/v1/project/project-id", text(project));
  s->http.Get("/computeMetadata/v1/project/numeric-project-id", text(project_number(project)));
  for (const std::string& account : {std::string("default"), email}) {
    s->http.Get(sa + account + "/email", text(email));
    s->http.Get(sa + account + "/", [email](const httplib::Request& req, httplib::Response& res) {
      if (!metadata_flavor(req, res)) return;
      if (req.get_param_value("recursive") != "true") {
        res.set_content("aliases\nemail\nidentity\nscopes\ntoken\n", "application/text");
        return;
      }
      json info = {{"aliases", json::array({"default"})},
                   {"email", email},
                   {"scopes", json::array({"https://www.googleapis.com/auth/cloud-platform",
                                           "https://www.googleapis.com/auth/userinfo.email"})}};
      res.set_content(info.dump(), "application/json");
    });
    s->http.Get(
        sa + account + "/token", [this, who](const httplib::Request& req, httplib::Response& res) {
          if (!metadata_flavor(req, res)) return;
          std::string token;
          {
            std::lock_guard lock(mu);
            token = "ya29.c.wi-" + hex(48);
            wi_tokens[token] = who;
            ++wi_tokens_minted;
          }
          res.set_content(
              json{{"access_token", token}, {"expires_in", 3599}, {"token_type", "Bearer"}}.dump(),
              "application/json");
        });
  }
  listen(*s);
  auto port = s->port;
  wi_servers[key] = std::move(s);
  return "127.0.0.1:" + std::to_string(port);
}

std::string FakeGcp::workload_identity_metadata_host(const std::string& project,
                                                     const std::string& ns,
                                                     const std::string& ksa) {
  return impl_->metadata_host(project, ns, ksa);
}

int FakeGcp::workload_identity_tokens() const {
  std::lock_guard lock(impl_->mu);
  return impl_->wi_tokens_minted;
}

}  // namespace kinetic::fakes
