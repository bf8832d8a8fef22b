#include "job/incluster_common.h"

namespace kinetic {

// lib/job/incluster_common.py, embedded at build time (cmake/embed_python.cmake).
extern const std::string_view kInclusterCommonSource;

std::string_view incluster_common_source() {
  return kInclusterCommonSource;
}

}  // namespace kinetic
