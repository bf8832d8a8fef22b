// Faithful fakes of the Google Cloud control-plane APIs kinetic drives (see
// docs/gcp-api.md §2, §3, §4, §6): Service Usage, GKE (container v1), Cloud
// Build, Artifact Registry, Cloud Resource Manager v1 (project IAM policies) and IAM v1 (custom
// roles), each on its own 127.0.0.1 port (their operation paths overlap). Long-running operations
// are real Operation objects (GKE's own type; google.longrunning for the others) that advance one
// step per poll, never by wall-clock time, so tests are deterministic. Errors are google.rpc.Status
// bodies with ErrorInfo (SERVICE_DISABLED when an API is off). gcloud with api_endpoint_overrides
// is the reference client (tests/gcloud/).
//
// Who may do what: any bearer token is the user's (an owner: full access), except the tokens that
// the Workload Identity metadata servers below mint. Those act as the pod's principal and are
// held to the project's IAM policy, for the GKE routes only (docs/fakes.md has the table and the
// CEL subset conditions are evaluated in).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/fake_images.h"

namespace kinetic::fakes {

class FakeGcs;

struct FakeGcpOptions {
  // Services enabled in every project at start (e.g. {"serviceusage.googleapis.com"}); the other
  // APIs answer 403 SERVICE_DISABLED until enabled through Service Usage.
  std::set<std::string> enabled_services = {"serviceusage.googleapis.com",
                                            "storage.googleapis.com"};
  // Polls an operation takes to reach DONE (0: done in the create response).
  int operation_polls = 1;
  // Build polls spent in QUEUED and in WORKING before the build ends.
  int build_polls = 2;
  // Zones that exist, and the machine types each offers (GKE rejects a pool whose machine type
  // is not offered in its zone with 400 INVALID_ARGUMENT, as a TPU-only zone would).
  std::map<std::string, std::set<std::string>> zone_machine_types;
  // The Kubernetes API of every cluster created (Cluster.endpoint, masterAuth.clusterCaCertificate
  // = base64 of the PEM).
  std::string kube_endpoint;
  std::string kube_ca_pem;
  // Called when a node pool finishes creating (the pool resource, with config, autoscaling,
  // placementPolicy) and when one is deleted (its name), so the fake Kubernetes API can add and
  // remove nodes. Also called for the pools of a created cluster.
  std::function<void(const std::string& cluster, const nlohmann::json& pool)> on_pool_created;
  std::function<void(const std::string& cluster, const std::string& pool)> on_pool_deleted;
  // Called when a cluster's deletion finishes (after its pools').
  std::function<void(const std::string& cluster)> on_cluster_deleted;
  // Where Cloud Build reads build sources (gs://BUCKET/OBJECT, a .tar.gz holding a Dockerfile) and
  // writes build logs (logsBucket/log-ID.txt). Null: sources are not checked, no logs.
  FakeGcs* gcs = nullptr;
  // A build whose source's requirements name a package in this set fails in its docker step
  // (FAILURE, failureInfo USER_BUILD_STEP, a pip-like "No matching distribution" log line).
  std::set<std::string> unknown_packages = {"this-package-does-not-exist"};
  // What images hold: Cloud Build interprets each Dockerfile against it and records what it
  // pushed (fake_images.h). Null: the fake keeps a store of its own.
  FakeImageStore* images = nullptr;
};

class FakeGcp {
 public:
  explicit FakeGcp(FakeGcpOptions options = {});
  ~FakeGcp();
  FakeGcp(const FakeGcp&) = delete;
  FakeGcp& operator=(const FakeGcp&) = delete;

  // Base URL of SERVICE ("serviceusage", "container", "cloudbuild", "artifactregistry",
  // "cloudresourcemanager", "iam") as an endpoint override takes it: "http://127.0.0.1:PORT/".
  std::string url(const std::string& service) const;
  int port(const std::string& service) const;

  // ---- state (seeding and assertions) -------------------------------------------------------
  void enable_service(const std::string& project, const std::string& service);
  bool service_enabled(const std::string& project, const std::string& service) const;
  std::optional<nlohmann::json> cluster(const std::string& project, const std::string& location,
                                        const std::string& name) const;
  // Every cluster, as clusters.get answers it.
  std::vector<nlohmann::json> clusters() const;
  // Whether Artifact Registry holds IMAGE ("LOC-docker.pkg.dev/P/REPO/PKG:TAG"); the fake
  // Kubernetes API asks this before "pulling".
  bool has_image(const std::string& image) const;
  // Adds a tag as a finished build would (seeding a cached image), holding what kinetic's cpu
  // recipe makes unless CONTENT says otherwise.
  void put_image(const std::string& image);
  void put_image(const std::string& image, const FakeImage& content);
  // What the images built and pushed here hold.
  FakeImageStore& images();
  int builds_created() const;

  // ---- IAM: project policies (Cloud Resource Manager) and custom roles (IAM) ----------------
  // PROJECT's policy as getIamPolicy with requestedPolicyVersion 3 answers it ({version, etag,
  // bindings}). Every project starts with roles/owner for user:test@example.com, version 1.
  nlohmann::json project_iam_policy(const std::string& project) const;
  // The custom role projects/PROJECT/roles/ID as roles.get answers it (a deleted one has
  // "deleted": true); nullopt when it was never created.
  std::optional<nlohmann::json> custom_role(const std::string& project,
                                            const std::string& id) const;
  // The service account EMAIL as serviceAccounts.get answers it; nullopt when it does not exist.
  std::optional<nlohmann::json> service_account(const std::string& email) const;

  // ---- Workload Identity --------------------------------------------------------------------
  // "127.0.0.1:PORT" (for GCE_METADATA_HOST) of a GKE metadata server as the pods running as
  // Kubernetes service account NS/KSA in a cluster of PROJECT see it: started on the first call
  // for these three, then the same one; stopped by ~FakeGcp. It requires "Metadata-Flavor:
  // Google" (403 otherwise) and serves .../service-accounts/default/token (a new token each
  // time, which this fake then authorizes as the principal below), .../default/email
  // ("PROJECT.svc.id.goog"), project/project-id and project/numeric-project-id. GKE runs one such
  // server per node and tells pods apart by their IP; every fake pod has 127.0.0.1, hence one
  // server per identity.
  std::string workload_identity_metadata_host(const std::string& project, const std::string& ns,
                                              const std::string& ksa);
  // The IAM principal of those tokens: principal://iam.googleapis.com/projects/NUMBER/locations/
  // global/workloadIdentityPools/PROJECT.svc.id.goog/subject/ns/NS/sa/KSA.
  static std::string workload_identity_principal(const std::string& project, const std::string& ns,
                                                 const std::string& ksa);
  // Tokens minted by the metadata servers so far.
  int workload_identity_tokens() const;

  // ---- deterministic fault injection --------------------------------------------------------
  // The next N requests to SERVICE whose "METHOD /path" starts with ROUTE_PREFIX answer STATUS
  // with a google.rpc.Status body (429 RESOURCE_EXHAUSTED adds RetryInfo; 503 UNAVAILABLE).
  void fail_next(const std::string& service, int n, int status,
                 const std::string& route_prefix = {});
  // The next node pool created ends its operation with an error (e.g. GCE_STOCKOUT or
  // GCE_QUOTA_EXCEEDED as GKE reports them) and the pool in ERROR.
  void fail_next_pool(const std::string& code, const std::string& message);
  // A concurrent writer: right after the next getIamPolicy of PROJECT is answered, MEMBER is added
  // to ROLE (the etag changes), so a setIamPolicy based on that read gets 409 ABORTED and the
  // client must read again and re-apply its change.
  void concurrent_project_iam_change_after_next_get(const std::string& project,
                                                    const std::string& role,
                                                    const std::string& member);
  // IAM's eventual consistency: the next N setIamPolicy calls that newly bind a custom role
  // answer 400 "Role (...) does not exist in the resource's hierarchy.", as they do for a while
  // after the role is created.
  void unseen_roles_for_next(int n);
  // fail_next faults, concurrent policy changes and unseen-role refusals not yet triggered.
  int pending_faults() const;

  // ---- counters: "METHOD /canonical/path" per service; also GET /_fake/counters on each port -
  std::map<std::string, int> request_counts(const std::string& service) const;
  int total_requests() const;
  void reset_counters();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinetic::fakes
