// The Kubernetes objects of a job. Keys are in the order people write manifests in (apiVersion,
// kind, metadata, spec; name before labels; a container's name, image and command first), which
// nlohmann::ordered_json keeps through to the JSON and YAML printers.
//
// Choices, for the record:
// - Accelerator resources (google.com/tpu, nvidia.com/gpu) are set as limits only: for extended
//   resources the API server defaults requests to the limits, and the two may not differ.
// - CPU jobs request a modest cpu "1" and memory "2Gi", with no limits, so they are not
//   BestEffort (first to be evicted) and may use the rest of the node. Accelerator jobs request
//   no cpu or memory: they get a whole host.
// - JAX_PLATFORMS is set to tpu, gpu or cpu as Kinetic does ("gpu" is JAX's alias for the CUDA
//   or ROCm backend), so JAX neither probes for missing backends nor silently falls back to
//   the CPU; a JAX_PLATFORMS in the job's own environment (plain or secret) replaces it.
// - Secret values never appear in the Job: secret variables are secretKeyRefs into the Secret.
// - A --data gs:// source is an inline (ephemeral) CSI volume of GKE's Cloud Storage FUSE driver,
//   which mounts as the pod's Kubernetes service account through Workload Identity: the pod
//   template's gke-gcsfuse/volumes annotation has GKE inject the driver's sidecar. implicit-dirs
//   shows folders that exist only as object name prefixes (what `gcloud storage cp -r` makes);
//   only-dir mounts the prefix alone.

#include "job/manifest.h"

#include <set>

#include "core/checksum.h"
#include "core/error.h"
#include "core/strings.h"

namespace kinetic {
namespace {

using json = nlohmann::ordered_json;

constexpr long kTerminationGracePeriodSeconds = 30;

json labels_for(const ManifestInput& in) {
  json labels = json::object();
  labels["app.kubernetes.io/managed-by"] = "kinetic";
  labels["kinetic.dev/job"] = in.job_id;
  // Kinetic's own labels win: cleanup and status find objects by them.
  for (const auto& [key, value] : in.labels) {
    if (!labels.contains(key)) labels[key] = value;
  }
  return labels;
}

json metadata_for(const ManifestInput& in) {
  json metadata = json::object();
  metadata["name"] = k8s_object_name(in.job_id);
  metadata["namespace"] = in.namespace_;
  metadata["labels"] = labels_for(in);
  if (!in.annotations.empty()) {
    json annotations = json::object();
    for (const auto& [key, value] : in.annotations) annotations[key] = value;
    metadata["annotations"] = annotations;
  }
  return metadata;
}

const char* jax_platform(AcceleratorFamily family) {
  switch (family) {
    case AcceleratorFamily::tpu:
      return "tpu";
    case AcceleratorFamily::gpu:
      return "gpu";
    case AcceleratorFamily::cpu:
      break;
  }
  return "cpu";
}

json env_var(const std::string& name, const std::string& value) {
  json e = json::object();
  e["name"] = name;
  e["value"] = value;
  return e;
}

json container_env(const ManifestInput& in) {
  std::set<std::string> names;
  for (const auto& [name, value] : in.env) names.insert(name);
  names.insert(in.secret_env.begin(), in.secret_env.end());

  json env = json::array();
  if (!names.contains("JAX_PLATFORMS")) {
    env.push_back(env_var("JAX_PLATFORMS", jax_platform(in.accelerator.family)));
  }
  // The slice a TPU job runs on: its topology (the node label GKE schedules by) and host count.
  if (in.accelerator.family == AcceleratorFamily::tpu && !in.accelerator.topology.empty()) {
    env.push_back(env_var("KINETIC_SLICE_TOPOLOGY", in.accelerator.topology));
    env.push_back(env_var("KINETIC_SLICE_HOSTS", std::to_string(in.accelerator.hosts)));
  }
  for (const auto& [name, value] : in.env) env.push_back(env_var(name, value));
  // The pod's own name, for the bootstrap's attempt records (docs/run-record.md).
  json pod_name = json::object();
  pod_name["name"] = "KINETIC_POD_NAME";
  pod_name["valueFrom"]["fieldRef"]["fieldPath"] = "metadata.name";
  env.push_back(pod_name);
  for (const auto& name : in.secret_env) {
    json ref = json::object();
    ref["name"] = k8s_object_name(in.job_id);
    ref["key"] = name;
    json e = json::object();
    e["name"] = name;
    e["valueFrom"]["secretKeyRef"] = ref;
    env.push_back(e);
  }
  return env;
}

json container_resources(const Accelerator& acc) {
  json resources = json::object();
  if (!acc.resource_name.empty() && acc.chips_per_host > 0) {
    resources["limits"][acc.resource_name] = std::to_string(acc.chips_per_host);
  } else if (acc.family == AcceleratorFamily::cpu) {
    resources["requests"]["cpu"] = "1";
    resources["requests"]["memory"] = "2Gi";
  }
  return resources;
}

json toleration(const std::string& key, const char* op, const char* value) {
  json t = json::object();
  t["key"] = key;
  t["operator"] = op;
  if (value != nullptr) t["value"] = value;
  t["effect"] = "NoSchedule";
  return t;
}

// The CSI volume of the I-th gs:// mount.
json gcs_volume(const DataMount& m, size_t i) {
  std::string options = "implicit-dirs";
  if (!m.prefix().empty()) options += ",only-dir=" + m.prefix();
  json volume = json::object();
  volume["name"] = "data-" + std::to_string(i);
  volume["csi"]["driver"] = "gcsfuse.csi.storage.gke.io";
  volume["csi"]["readOnly"] = !m.writable;
  volume["csi"]["volumeAttributes"]["bucketName"] = m.bucket();
  volume["csi"]["volumeAttributes"]["mountOptions"] = options;
  return volume;
}

// /dev/shm: the container runtime gives a pod 64 MiB of it, which PyTorch's DataLoader workers
// and NCCL between the GPUs of one node outgrow at once ("Bus error", "No space left on
// device"). As xpk does, a memory-backed emptyDir is mounted there, with no sizeLimit: the
// kubelet sizes the tmpfs to the pod's memory limit, else the node's allocatable memory, and
// every page in it is charged to the container's memory, so the job can put there what it could
// otherwise allocate, no more. Every job gets it: an accelerator job has its host to itself, and
// a CPU job's DataLoader needs it as much (its pages still count against the node's memory).
json shm_volume() {
  json volume = json::object();
  volume["name"] = "dshm";
  volume["emptyDir"]["medium"] = "Memory";
  return volume;
}

json shm_mount() {
  json mount = json::object();
  mount["name"] = "dshm";
  mount["mountPath"] = "/dev/shm";
  return mount;
}

json pod_template(const ManifestInput& in) {
  const Accelerator& acc = in.accelerator;

  json container = json::object();
  container["name"] = "main";
  container["image"] = in.image;
  if (!in.command.empty()) container["command"] = in.command;
  container["env"] = container_env(in);
  container["resources"] = container_resources(acc);
  json volumes = json::array();
  json mounts = json::array();
  for (size_t i = 0; i < in.gcs_data.size(); ++i) {
    const DataMount& m = in.gcs_data[i];
    volumes.push_back(gcs_volume(m, i));
    json mount = json::object();
    mount["name"] = "data-" + std::to_string(i);
    mount["mountPath"] = csi_mount_path(m);
    mount["readOnly"] = !m.writable;
    mounts.push_back(mount);
  }
  volumes.push_back(shm_volume());
  mounts.push_back(shm_mount());
  container["volumeMounts"] = mounts;

  json spec = json::object();
  spec["restartPolicy"] = "Never";
  spec["terminationGracePeriodSeconds"] = kTerminationGracePeriodSeconds;
  if (!in.service_account.empty()) spec["serviceAccountName"] = in.service_account;

  json selector = json::object();
  for (const auto& [key, value] : acc.node_selector) selector[key] = value;
  if (acc.spot) selector["cloud.google.com/gke-spot"] = "true";
  // GKE labels the nodes of a flex-start pool so: a flex-start job waits for them, never taking
  // an on-demand pool's node of the same shape (docs/gke-conformance.md "Flex-start").
  if (acc.flex_start) selector["cloud.google.com/gke-flex-start"] = "true";
  if (!selector.empty()) spec["nodeSelector"] = selector;

  // GKE taints TPU nodes (google.com/tpu=present), GPU nodes in mixed clusters
  // (nvidia.com/gpu=present) and Spot nodes (cloud.google.com/gke-spot=true), all NoSchedule.
  json tolerations = json::array();
  if (acc.family == AcceleratorFamily::tpu) {
    tolerations.push_back(toleration("google.com/tpu", "Exists", nullptr));
  } else if (acc.family == AcceleratorFamily::gpu) {
    tolerations.push_back(toleration("nvidia.com/gpu", "Exists", nullptr));
  }
  if (acc.spot) tolerations.push_back(toleration("cloud.google.com/gke-spot", "Equal", "true"));
  if (!tolerations.empty()) spec["tolerations"] = tolerations;

  spec["containers"] = json::array({container});
  spec["volumes"] = volumes;

  json tmpl = json::object();
  tmpl["metadata"]["labels"] = labels_for(in);
  if (!in.gcs_data.empty()) tmpl["metadata"]["annotations"]["gke-gcsfuse/volumes"] = "true";
  tmpl["spec"] = spec;
  return tmpl;
}

void check_input(const ManifestInput& in) {
  if (in.job_id.empty()) throw Error(Errc::internal, "manifest: the job id is empty");
  // The name is also a label value and a DNS label (JobSet pod host names): 63 characters of
  // [a-z0-9-], starting and ending alphanumeric.
  const std::string name = k8s_object_name(in.job_id);
  bool valid = name.size() <= 63 && name.back() != '-';
  for (char c : name) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  }
  if (!valid) {
    throw Error(Errc::usage, "invalid job id \"" + in.job_id +
                                 "\": use lowercase letters, digits and '-', at most " +
                                 std::to_string(63 - 8) + " characters");
  }
  if (in.image.empty()) throw Error(Errc::internal, "manifest: the image is empty");
  if (in.accelerator.hosts < 1) {
    throw Error(Errc::internal, "manifest: accelerator " + in.accelerator.name + " has no hosts");
  }
  if (in.accelerator.slices < 1) {
    throw Error(Errc::internal, "manifest: accelerator " + in.accelerator.name + " has no slices");
  }
}

// The JobSet's failure policy, evaluated on the failed Job's reason and message (JobSet v0.10+):
// a run that is over (exit kRunOverExitCode) fails the JobSet; a preemption restarts the slice
// without counting against --retries (the bootstrap caps preemptions itself); any other failure
// restarts it, up to RETRIES times.
// With a deadline, a child Job that ran past its activeDeadlineSeconds fails the JobSet too:
// matching no rule, it would be restarted (JobSet's default action) as a new child with a fresh
// deadline, and --timeout or --max-cost would start over on every restart (issue #27). The
// deadline is the run's, counted from its submit; the bootstrap stops every attempt when it
// passes (docs/cost.md), so this rule is the backstop for a slice that never ran it (pending).
json slice_failure_policy(int retries, bool deadline) {
  json rules = json::array();
  if (deadline) {
    json expired = json::object();
    expired["name"] = "DeadlineExceeded";
    expired["action"] = "FailJobSet";
    expired["onJobFailureReasons"] = json::array({"DeadlineExceeded"});
    rules.push_back(expired);
  }
  json over = json::object();
  over["name"] = "RunOver";
  over["action"] = "FailJobSet";
  over["onJobFailureReasons"] = json::array({"PodFailurePolicy"});
  over["onJobFailureMessagePatterns"] = json::array(
      {"failed with exit code " + std::to_string(kRunOverExitCode) + " matching FailJob rule"});
  json preempted = json::object();
  preempted["name"] = "Preempted";
  preempted["action"] = "RestartJobSetAndIgnoreMaxRestarts";
  preempted["onJobFailureReasons"] = json::array({"PodFailurePolicy"});
  preempted["onJobFailureMessagePatterns"] =
      json::array({"has condition DisruptionTarget matching FailJob rule"});
  // A host stopped from outside (exit 143): Kueue suspended the JobSet to admit a higher-priority
  // job, and the Job controller deleted the hosts' pods. The slice starts again whole once
  // admitted; the bootstrap's --max-preemptions bounds how often.
  json stopped = json::object();
  stopped["name"] = "Stopped";
  stopped["action"] = "RestartJobSetAndIgnoreMaxRestarts";
  stopped["onJobFailureReasons"] = json::array({"PodFailurePolicy"});
  stopped["onJobFailureMessagePatterns"] = json::array(
      {"failed with exit code " + std::to_string(kStoppedExitCode) + " matching FailJob rule"});
  json policy = json::object();
  policy["maxRestarts"] = retries;
  rules.push_back(over);
  rules.push_back(preempted);
  rules.push_back(stopped);
  policy["rules"] = rules;
  return policy;
}

// A Job's pod failure policy. ON_DISRUPTION is what a disrupted pod (Spot reclaim, maintenance,
// scale-down: the DisruptionTarget condition) does to it:
// - "Ignore" for a single-host Job (docs/run-record.md): preemption is not failure, it does not
//   count against --retries (backoffLimit) and a replacement pod starts;
// - "FailJob" for a slice's Job (docs/multihost.md): one host never restarts alone, the Job fails
//   and the JobSet's failure policy restarts the whole slice, telling this rule's message from
//   the next one's.
// Either way the bootstrap's exit code kRunOverExitCode (the preemption cap was reached, or
// nobody follows the run) ends the Job at once. kStoppedExitCode, a pod that a signal from
// outside stopped (Kueue suspended the Job, or its JobSet, to admit a higher-priority one: its
// pods are deleted, and the Job controller counts each as failed, as it would a crash), is a
// preemption too, and gets ON_DISRUPTION's action: a single-host Job waits to be resumed
// instead of failing; a slice's Job fails with this rule's message, which the JobSet's
// "Stopped" rule restarts whole (slice_failure_policy).
json pod_failure_policy(const char* on_disruption) {
  json disrupted = json::object();
  disrupted["action"] = on_disruption;
  disrupted["onPodConditions"] = json::array({json{{"type", "DisruptionTarget"}}});
  json over = json::object();
  over["action"] = "FailJob";
  over["onExitCodes"]["containerName"] = "main";
  over["onExitCodes"]["operator"] = "In";
  over["onExitCodes"]["values"] = json::array({kRunOverExitCode});
  json policy = json::object();
  json stopped = json::object();
  stopped["action"] = on_disruption;
  stopped["onExitCodes"]["containerName"] = "main";
  stopped["onExitCodes"]["operator"] = "In";
  stopped["onExitCodes"]["values"] = json::array({kStoppedExitCode});
  policy["rules"] = json::array({disrupted, over, stopped});
  return policy;
}

json build_job(const ManifestInput& in) {
  json spec = json::object();
  spec["backoffLimit"] = in.retries;
  spec["podFailurePolicy"] = pod_failure_policy("Ignore");
  if (in.timeout_seconds) spec["activeDeadlineSeconds"] = *in.timeout_seconds;
  spec["ttlSecondsAfterFinished"] = in.ttl_seconds_after_finished;
  spec["template"] = pod_template(in);

  json job = json::object();
  job["apiVersion"] = "batch/v1";
  job["kind"] = "Job";
  job["metadata"] = metadata_for(in);
  job["spec"] = spec;
  return job;
}

// A multislice run's own variables (docs/multihost.md "Multislice"): how many slices, and which
// one this pod's is: the JobSet labels every pod of child Job S with jobset.sigs.k8s.io/job-index
// S (jobset v0.10.1 labelAndAnnotateObject), read here through the downward API. The bootstrap
// numbers hosts across slices with them (slice S's host H is S * HOSTS + H). GKE injects the
// MEGASCALE_* variables JAX's multislice runtime reads; kinetic does not write them.
void add_slice_env(json& env, int slices) {
  env.push_back(env_var("KINETIC_SLICES", std::to_string(slices)));
  json slice_id = json::object();
  slice_id["name"] = "KINETIC_SLICE_ID";
  slice_id["valueFrom"]["fieldRef"]["fieldPath"] =
      "metadata.labels['jobset.sigs.k8s.io/job-index']";
  env.push_back(slice_id);
}

// A multi-host TPU slice: one Indexed Job of HOSTS pods, one per host, wrapped in a JobSet for
// its headless Service (stable host names, which GKE turns into TPU_WORKER_HOSTNAMES) and
// exclusive placement of the slice on one node pool. One slice, one fate: a failed host fails
// the Job (its other hosts are stopped) and the whole JobSet restarts, up to RETRIES times;
// never one host alone, which would hang the others in their collectives.
// Multislice (SLICES > 1): the replicated Job has SLICES replicas, child Jobs
// kinetic-ID-slice-S, each placed alone on a node pool of its own by the exclusive-topology
// annotation; any slice's failure is a failed child Job, which the same failure policy answers
// for the whole JobSet (every slice restarts, or all stop), so the run has one fate.
json build_jobset(const ManifestInput& in) {
  const int hosts = in.accelerator.hosts;
  const int slices = in.accelerator.slices;

  json job_spec = json::object();
  job_spec["parallelism"] = hosts;
  job_spec["completions"] = hosts;
  job_spec["completionMode"] = "Indexed";
  job_spec["backoffLimit"] = 0;
  job_spec["podFailurePolicy"] = pod_failure_policy("FailJob");
  if (in.timeout_seconds) job_spec["activeDeadlineSeconds"] = *in.timeout_seconds;
  job_spec["template"] = pod_template(in);
  // jax.distributed.initialize() with no arguments: host 0 of the (first) slice coordinates (its
  // stable name under the JobSet's headless Service; 8476 is JAX's port for TPU clusters).
  const std::string name = k8s_object_name(in.job_id);
  json& env = job_spec["template"]["spec"]["containers"][0]["env"];
  env.push_back(env_var("JAX_COORDINATOR_ADDRESS", name + "-slice-0-0." + name + ":8476"));
  if (slices > 1) add_slice_env(env, slices);

  json job_template = json::object();
  job_template["metadata"]["labels"] = labels_for(in);
  job_template["spec"] = job_spec;

  json replicated = json::object();
  replicated["name"] = "slice";
  replicated["replicas"] = slices;
  replicated["template"] = job_template;

  json spec = json::object();
  spec["failurePolicy"] = slice_failure_policy(in.retries, in.timeout_seconds.has_value());
  spec["ttlSecondsAfterFinished"] = in.ttl_seconds_after_finished;
  spec["network"]["enableDNSHostnames"] = true;
  spec["replicatedJobs"] = json::array({replicated});

  json metadata = metadata_for(in);
  metadata["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] =
      "cloud.google.com/gke-nodepool";

  json jobset = json::object();
  jobset["apiVersion"] = "jobset.x-k8s.io/v1alpha2";
  jobset["kind"] = "JobSet";
  jobset["metadata"] = metadata;
  jobset["spec"] = spec;
  return jobset;
}

}  // namespace

std::string k8s_object_name(const std::string& job_id) {
  return "kinetic-" + job_id;
}

nlohmann::ordered_json build_workload(const ManifestInput& in) {
  check_input(in);
  return in.accelerator.hosts > 1 || in.accelerator.slices > 1 ? build_jobset(in) : build_job(in);
}

nlohmann::ordered_json build_pod_template(const ManifestInput& in) {
  check_input(in);
  return pod_template(in);
}

std::optional<nlohmann::ordered_json> build_secret(
    const ManifestInput& in, const std::map<std::string, std::string>& values) {
  if (in.secret_env.empty()) return std::nullopt;
  check_input(in);
  json data = json::object();
  json binary = json::object();
  for (const auto& name : in.secret_env) {
    const auto it = values.find(name);
    if (it == values.end()) {
      throw Error(Errc::internal, "manifest: no value for the secret variable " + name);
    }
    // stringData is readable in --dry-run; a value that is not UTF-8 (which JSON cannot
    // carry) goes base64 under data, so any bytes pass.
    if (is_utf8(it->second)) {
      data[name] = it->second;
    } else {
      binary[name] = base64_encode(it->second);
    }
  }
  json secret = json::object();
  secret["apiVersion"] = "v1";
  secret["kind"] = "Secret";
  secret["metadata"] = metadata_for(in);
  secret["type"] = "Opaque";
  if (!binary.empty()) secret["data"] = binary;
  if (!data.empty()) secret["stringData"] = data;
  return secret;
}

std::vector<nlohmann::ordered_json> build_manifests(
    const ManifestInput& in, const std::map<std::string, std::string>& secret_values) {
  std::vector<nlohmann::ordered_json> out;
  if (auto secret = build_secret(in, secret_values)) out.push_back(std::move(*secret));
  out.push_back(build_workload(in));
  return out;
}

}  // namespace kinetic
