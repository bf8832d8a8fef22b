// kinetic auth print-access-token|status: the credentials kinetic uses (Application Default
// Credentials, lib/auth/adc.h). Never prints a secret except the token print-access-token is for.
#include <cstdio>
#include <ctime>

#include "app.h"
#include "auth/adc.h"
#include "render/printer.h"

namespace kinetic::cli {

namespace {

std::string utc_time(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

struct PrintAccessToken : CommandOptions {
  int run(Factory& f) override {
    auto cache = f.credentials();
    std::string token = cache->token();
    std::fprintf(f.io().out, "%s\n", token.c_str());
    std::fflush(f.io().out);
    return 0;
  }
};

struct AuthStatus : PrintingOptions {
  AuthStatus() : PrintingOptions({OutputFormat::table, OutputFormat::json, OutputFormat::yaml}) {}
  int run(Factory& f) override;
};

int AuthStatus::run(Factory& f) {
  auto cache = f.credentials();
  auth::SourceInfo info = cache->source().describe();
  FILE* out = f.io().out;
  if (format == OutputFormat::table) {
    // The source first, so a rejected credential still says which one it was.
    std::fprintf(out, "Source:  %s\nAccount: %s\n", info.source.c_str(), info.account.c_str());
    std::fflush(out);
    auth::AccessToken token = cache->current();
    std::fprintf(out, "Token:   valid, expires %s\n",
                 token.expiry ? utc_time(*token.expiry).c_str() : "at an unknown time");
    return 0;
  }
  auth::AccessToken token = cache->current();
  nlohmann::ordered_json fields = {{"source", info.source}, {"account", info.account}};
  fields["token_expiry"] = token.expiry ? nlohmann::ordered_json(utc_time(*token.expiry)) : nullptr;
  print(f.io(), format, {.kind = "AuthStatus", .fields = fields});
  return 0;
}

}  // namespace

void add_auth(CLI::App& root, Factory&, Action& action) {
  CLI::App* c = root.add_subcommand("auth", "Show the Google credentials kinetic uses");
  c->require_subcommand(0, 1);
  c->footer(
      "Credentials are looked up as Google's libraries do: --access-token-file,\n"
      "CLOUDSDK_AUTH_ACCESS_TOKEN, GOOGLE_APPLICATION_CREDENTIALS, the gcloud ADC file\n"
      "(gcloud auth application-default login), then the metadata server.\n\n"
      "Examples:\n"
      "  kinetic auth status\n"
      "  curl -H \"Authorization: Bearer $(kinetic auth print-access-token)\" ...");
  CLI::App* token = c->add_subcommand("print-access-token",
                                      "Print the access token kinetic would use, as gcloud does");
  on_parse(token, action, std::make_shared<PrintAccessToken>());
  CLI::App* st = c->add_subcommand(
      "status", "Say which credential source is in use and for which account (never the secret)");
  on_parse(st, action, std::make_shared<AuthStatus>());
}

}  // namespace kinetic::cli
