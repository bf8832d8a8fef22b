// IAM v1 projects.serviceAccounts: the Google service account `kinetic up` makes for the
// cluster's nodes (docs/security.md) and `kinetic down` deletes.
#pragma once

#include <string>

#include "http/transport.h"

namespace kinetic::gcp {

// "ID@PROJECT.iam.gserviceaccount.com": the email IAM gives account ID of PROJECT.
std::string service_account_email(const std::string& project, const std::string& account_id);

class ServiceAccountsClient {
 public:
  // IAM: the IAM endpoint (gcp/endpoints.h).
  ServiceAccountsClient(http::Transport& transport, std::string iam);

  // Creates ACCOUNT_ID in PROJECT; false when it exists already (409), which is taken as it is.
  bool ensure(const std::string& project, const std::string& account_id,
              const std::string& display_name, const std::string& description);
  // Deletes EMAIL; false when there was no such account.
  bool remove(const std::string& project, const std::string& email);

 private:
  http::Transport& transport_;
  std::string iam_;
};

}  // namespace kinetic::gcp
