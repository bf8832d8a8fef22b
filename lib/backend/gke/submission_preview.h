// What `run` would submit on GKE, without credentials or requests (backend.h
// SubmissionPreview): the image in the region's Artifact Registry, the context in the job
// bucket, and the Job or JobSet with its Secret, built by the same code as submit.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "backend/gke/session.h"

namespace kinetic::gke {

// Throws a config error (require_target) when TARGET lacks a project, location or cluster.
std::unique_ptr<SubmissionPreview> make_submission_preview(const Target& target,
                                                           const std::string& command);

}  // namespace kinetic::gke
