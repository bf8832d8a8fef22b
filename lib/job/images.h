// Base images per accelerator family and the image reference of a job (DESIGN.md "Image tag").
#pragma once

#include <string>
#include <string_view>

#include "job/catalog.h"

namespace kinetic {

// The public base image the job image is built FROM: a Python image for cpu and TPU (JAX's TPU
// wheels bring their own runtime), a CUDA runtime image for GPUs.
std::string_view base_image_for(AcceleratorFamily family);

// LOCATION-docker.pkg.dev/PROJECT/kinetic/base:TAG
std::string image_reference(const std::string& location, const std::string& project,
                            const std::string& tag);

}  // namespace kinetic
