// The Python code kinetic's in-cluster scripts share (lib/job/incluster_common.py): kinetic's exit
// codes, its back-off curve, the metadata server's token, Cloud Storage's calls and the cluster's
// API. The build embeds it ahead of each script (the bootstrap, auto-down's check, a detached
// pipeline's runner), so each travels as one `python3 -c SOURCE`; docs/architecture.md
// "In-cluster scripts".
#pragma once

#include <string_view>

namespace kinetic {

// The shared code alone, as embedded (comments and blank lines dropped): each script's embedded
// source starts with it.
std::string_view incluster_common_source();

}  // namespace kinetic
