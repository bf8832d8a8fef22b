// What every GCE metadata server answers first (fake_oauth.cpp's, and the Workload Identity ones
// in fake_gcp_metadata.cpp): only requests carrying "Metadata-Flavor: Google" are served, and
// every answer carries it (clients detect the server by it).
#pragma once

#include <httplib.h>

namespace kinetic::fakes {

// False, with the real 403 set on RES, when REQ lacks the header.
inline bool metadata_flavor(const httplib::Request& req, httplib::Response& res) {
  res.set_header("Metadata-Flavor", "Google");
  if (req.get_header_value("Metadata-Flavor") == "Google") return true;
  res.status = 403;
  res.set_content(
      "Your client does not have permission to get URL from this server. Missing "
      "Metadata-Flavor:Google header.",
      "text/html");
  return false;
}

}  // namespace kinetic::fakes
