#include "backend/gke/job_manifest.h"

#include "backend/gke/job_state.h"
#include "backend/gke/names.h"
#include "job/bootstrap.h"
#include "pack/sha256.h"

namespace kinetic::gke {

ManifestInput manifest_input(const JobSpec& spec, const std::string& bucket,
                             const std::string& ns) {
  ManifestInput in;
  in.job_id = spec.id;
  in.namespace_ = ns;
  in.service_account = kJobServiceAccount;
  in.accelerator = resolve_accelerator(spec.accelerator);
  in.accelerator.slices = spec.slices;
  in.image = spec.image;
  in.command = bootstrap_command();
  in.env = bootstrap_env({.job_id = spec.id,
                          .context_uri = spec.context_uri,
                          .context_sha256 = spec.context_sha256,
                          .spec_uri = "gs://" + bucket + "/" + spec_object(spec.id),
                          .spec_sha256 = sha256_hex(spec_document(spec)),
                          .results_uri = "gs://" + bucket + "/" + results_prefix(spec.id)});
  for (const auto& kv : spec.env) in.env.push_back(kv);
  in.secret_env = spec.secret_env;
  for (const auto& m : spec.data)
    if (m.is_gcs()) in.gcs_data.push_back(m);
  // A deadline from the job's start is the bootstrap's alone: a Job's activeDeadlineSeconds
  // counts from the Job's creation, so it would count the wait for a node too (docs/capacity.md).
  if (spec.timeout_from != "start") in.timeout_seconds = spec.timeout_seconds;
  in.retries = spec.retries;
  in.annotations = {{kFileAnnotation, spec.file},
                    {kAcceleratorAnnotation, spec.accelerator},
                    {kOutputAnnotation, spec.output_dir}};
  if (spec.slices > 1) in.annotations[kSlicesAnnotation] = std::to_string(spec.slices);
  if (spec.hold_on_failure_seconds > 0)
    in.annotations[kHoldAnnotation] = std::to_string(spec.hold_on_failure_seconds);
  if (!spec.labels.empty()) in.annotations[kLabelsAnnotation] = labels_json(spec.labels).dump();
  return in;
}

}  // namespace kinetic::gke
