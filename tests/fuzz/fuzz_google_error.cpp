// Google error bodies (gcp/google_error.h): arbitrary bytes as the body of an error answer, with
// one of the statuses kinetic treats differently (picked by the input's length). The error's
// message is one line; a RetryInfo delay is not negative.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>

#include "gcp/google_error.h"
#include "support.h"

using namespace kinetic;

namespace {

constexpr int kStatuses[] = {400, 401, 403, 404, 409, 412, 429, 500, 503};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body = fuzz::text(data, size);
  const int status = kStatuses[size % std::size(kStatuses)];
  std::string message = gcp::google_error(status, body, "creating cluster kinetic").what();
  fuzz::check(!message.empty() && message.find_first_of("\r\n") == std::string::npos,
              "an error is one line");
  auto delay = gcp::retry_info_delay(body);
  fuzz::check(!delay || delay->count() >= 0, "a retry delay is not negative");
  return 0;
}
