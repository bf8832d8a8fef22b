// Step 3 on GKE: the image for a job. Looks the tag up in Artifact Registry (tags get, so the
// endpoint override applies); when missing, uploads the build source, creates a Cloud Build
// build, follows its status and, on failure, says which step failed and why (exit 126).
#pragma once

#include <string>

#include "backend/backend.h"
#include "backend/gke/session.h"

namespace kinetic::gke {

// Returns the image reference; *BUILT says whether a build ran.
std::string ensure_image(const Session& session, const ImageRecipe& recipe, bool* built);

}  // namespace kinetic::gke
