// The build source of a job image: a Dockerfile FROM the family's public base image that
// installs the job's requirements, and nothing kinetic-specific (the bootstrap travels in the
// Job), so upgrading kinetic never rebuilds an image (DESIGN.md "Image tag").
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"
#include "job/catalog.h"

namespace kinetic::gke {

// The Dockerfile for FAMILY's BASE_IMAGE; with REQUIREMENTS it copies requirements.txt and
// pip-installs it. CUDA runtime images have no Python, so GPU images get python3 and pip first.
std::string dockerfile_for(AcceleratorFamily family, const std::string& base_image,
                           bool has_requirements);

// Writes the Cloud Build source, a deterministic .tar.gz of the Dockerfile and (when any) the
// normalized requirements.txt, to OUT.
void write_build_source(const fs::path& out, const std::string& dockerfile,
                        const std::vector<std::string>& requirements);

}  // namespace kinetic::gke
