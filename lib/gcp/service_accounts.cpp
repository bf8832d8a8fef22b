// Service accounts client. Creating is a POST that a replay after a lost answer turns into 409
// ALREADY_EXISTS, which is success here: the account is matched by its id, never by what else
// it says, so an account made by hand under kinetic's id is reused as it is.
#include "gcp/service_accounts.h"

#include <nlohmann/json.hpp>

#include "gcp/google_error.h"
#include "gcp/json_fields.h"

namespace kinetic::gcp {

std::string service_account_email(const std::string& project, const std::string& account_id) {
  return account_id + "@" + project + ".iam.gserviceaccount.com";
}

ServiceAccountsClient::ServiceAccountsClient(http::Transport& transport, std::string iam)
    : transport_(transport), iam_(std::move(iam)) {
  while (!iam_.empty() && iam_.back() == '/') iam_.pop_back();
}

bool ServiceAccountsClient::ensure(const std::string& project, const std::string& account_id,
                                   const std::string& display_name,
                                   const std::string& description) {
  http::Request req;
  req.method = "POST";
  req.url = iam_ + "/v1/projects/" + project + "/serviceAccounts";
  req.headers = {{"Content-Type", "application/json"}};
  req.body = nlohmann::json{{"accountId", account_id},
                            {"serviceAccount",
                             {{"displayName", display_name}, {"description", description}}}}
                 .dump();
  req.idempotent = true;  // a replay is a 409, taken as success below
  auto r = transport_.send(req);
  if (ok(r.status)) return true;
  if (r.status == 409) return false;
  throw google_error(r.status, r.body,
                     "creating the service account " + service_account_email(project, account_id));
}

bool ServiceAccountsClient::remove(const std::string& project, const std::string& email) {
  http::Request req;
  req.method = "DELETE";
  req.url = iam_ + "/v1/projects/" + project + "/serviceAccounts/" + email;
  req.idempotent = true;
  auto r = transport_.send(req);
  if (ok(r.status)) return true;
  if (r.status == 404) return false;
  throw google_error(r.status, r.body, "deleting the service account " + email);
}

}  // namespace kinetic::gcp
