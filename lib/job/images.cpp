#include "job/images.h"

namespace kinetic {

std::string_view base_image_for(AcceleratorFamily family) {
  switch (family) {
    case AcceleratorFamily::gpu:
      return "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04";
    case AcceleratorFamily::tpu:
    case AcceleratorFamily::cpu:
      return "python:3.11-slim";
  }
  return "python:3.11-slim";
}

std::string image_reference(const std::string& location, const std::string& project,
                            const std::string& tag) {
  return location + "-docker.pkg.dev/" + project + "/kinetic/base:" + tag;
}

}  // namespace kinetic
