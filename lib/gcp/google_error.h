// Google API error responses turned into one-line, actionable kinetic::Error messages.
// Understands google.rpc.Status ({"error":{code,message,status,details:[ErrorInfo, RetryInfo,
// QuotaFailure, Help, ...]}}), GCS's older {"error":{code,message,errors:[{reason,...}]}}, a
// Kubernetes Status ({"kind":"Status",message,reason,code}) and non-JSON bodies.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kinetic::gcp {

struct QuotaViolation {
  std::string subject;
  std::string description;
};

// What an error body says, whatever its shape. Fields are empty when absent.
struct GoogleErrorBody {
  int http_status = 0;
  std::string status;   // "PERMISSION_DENIED", or a Kubernetes reason such as "AlreadyExists"
  std::string message;  // one line
  std::string reason;   // ErrorInfo.reason, or errors[0].reason for GCS
  std::string domain;
  std::map<std::string, std::string> metadata;  // ErrorInfo.metadata
  std::vector<QuotaViolation> quota_violations;
  std::optional<std::chrono::milliseconds> retry_delay;  // RetryInfo.retryDelay
  std::vector<std::string> help_urls;
  bool json = false;  // whether the body was a recognised JSON error
};

GoogleErrorBody parse_google_error(int http_status, std::string_view body);

// The error to throw for a non-2xx answer. WHAT, when given, says what was being done
// ("creating cluster kinetic") and prefixes the message. Errc: auth for 401 and 403 (but api for
// a disabled API or an exhausted quota, which no credential fixes), not_found for 404, api
// otherwise.
Error google_error(int http_status, std::string_view body, std::string_view what = {});

// RetryInfo.retryDelay ("4s", "1.5s") from an error body, if any.
std::optional<std::chrono::milliseconds> retry_info_delay(std::string_view body);

}  // namespace kinetic::gcp
