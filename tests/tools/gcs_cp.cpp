// A test tool: copies a file to or from Cloud Storage with kinetic's own client, so a script can
// check that what kinetic writes, Google's clients read, and the other way round.
//   gcs_cp upload ENDPOINT FILE BUCKET NAME [CHUNK_KIB]
//   gcs_cp download ENDPOINT BUCKET NAME FILE
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gcp/storage.h"
#include "http/retry.h"

int main(int argc, char** argv) {
  using namespace kinetic;
  std::string mode = argc > 1 ? argv[1] : "";
  if (!((mode == "upload" && (argc == 6 || argc == 7)) || (mode == "download" && argc == 6))) {
    std::fprintf(stderr,
                 "usage: gcs_cp upload ENDPOINT FILE BUCKET NAME [CHUNK_KIB]\n"
                 "       gcs_cp download ENDPOINT BUCKET NAME FILE\n");
    return 2;
  }
  try {
    auto transport = http::retried(http::make_curl_transport());
    gcp::StorageClient client(*transport, argv[2]);
    if (mode == "upload") {
      gcp::UploadOptions opt;
      if (argc == 7) {
        opt.chunk_size = std::strtoull(argv[6], nullptr, 10) * 1024;
        opt.single_request_limit = opt.chunk_size;
      }
      auto o = client.upload_file(argv[4], argv[5], argv[3], opt);
      std::printf("%s %llu %s\n", o.name.c_str(), static_cast<unsigned long long>(o.size),
                  o.crc32c.c_str());
    } else {
      auto o = client.download_file(argv[3], argv[4], argv[5]);
      std::printf("%s %llu %s\n", o.name.c_str(), static_cast<unsigned long long>(o.size),
                  o.crc32c.c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gcs_cp: %s\n", e.what());
    return 1;
  }
}
