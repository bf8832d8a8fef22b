#include "auth/adc.h"

#include <fstream>
#include <sstream>

#include "auth/sources.h"
#include "config/paths.h"
#include "core/error.h"

namespace kinetic::auth {

namespace {

std::string trim_ws(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(s.find_last_not_of(ws) + 1);
  s.erase(0, s.find_first_not_of(ws));
  return s;
}

std::string read_token_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw Error(Errc::auth, "access token file " + path.string() + ": does not exist");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Errc::auth, "access token file " + path.string() + ": cannot be read");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string token = trim_ws(ss.str());
  if (token.empty()) throw Error(Errc::auth, "access token file " + path.string() + ": is empty");
  if (token.find_first_of(" \t\r\n") != std::string::npos) {
    throw Error(Errc::auth,
                "access token file " + path.string() + ": holds more than one line or word");
  }
  return token;
}

std::unique_ptr<CredentialSource> from_file(const fs::path& path, const std::string& label,
                                            std::shared_ptr<http::Transport> http,
                                            const AdcOptions& options) {
  CredentialFile file = load_credential_file(path);
  if (auto* key = std::get_if<ServiceAccountKey>(&file)) {
    return service_account_source(std::move(*key), path, std::move(http), options.scope,
                                  options.now);
  }
  auto& user = std::get<AuthorizedUser>(file);
  return authorized_user_source(std::move(user),
                                "authorized user (" + label + " " + path.string() + ")",
                                std::move(http), options.now);
}

}  // namespace

fs::path gcloud_adc_path(const Env& env) {
  fs::path dir;
  if (auto c = env.get_nonempty("CLOUDSDK_CONFIG")) {
    dir = *c;
  } else {
    dir = home_dir(env) / ".config" / "gcloud";
  }
  return dir / "application_default_credentials.json";
}

std::unique_ptr<CredentialSource> find_credentials(const Env& env,
                                                   std::shared_ptr<http::Transport> http,
                                                   const AdcOptions& options) {
  if (options.access_token_file) {
    return fixed_token_source(
        read_token_file(*options.access_token_file),
        "access token from --access-token-file " + options.access_token_file->string());
  }
  if (auto t = env.get_nonempty("CLOUDSDK_AUTH_ACCESS_TOKEN")) {
    return fixed_token_source(trim_ws(*t), "access token from CLOUDSDK_AUTH_ACCESS_TOKEN");
  }
  if (auto p = env.get_nonempty("GOOGLE_APPLICATION_CREDENTIALS")) {
    return from_file(*p, "GOOGLE_APPLICATION_CREDENTIALS", std::move(http), options);
  }
  fs::path adc = gcloud_adc_path(env);
  std::error_code ec;
  if (fs::exists(adc, ec)) return from_file(adc, "gcloud ADC file", std::move(http), options);

  std::chrono::milliseconds timeout = options.metadata_probe_timeout;
  if (auto t = env.get_nonempty("GCE_METADATA_TIMEOUT")) {
    try {
      timeout = std::chrono::milliseconds(static_cast<int64_t>(std::stod(*t) * 1000));
    } catch (const std::exception&) {
    }
  }
  std::string probe_host = "169.254.169.254";
  std::string token_host = "metadata.google.internal";
  if (auto h = env.get_nonempty("GCE_METADATA_HOST")) {
    probe_host = token_host = *h;
  } else {
    if (auto ip = env.get_nonempty("GCE_METADATA_IP")) probe_host = *ip;
    if (auto root = env.get_nonempty("GCE_METADATA_ROOT")) token_host = *root;
  }
  if (http && metadata_server_present(*http, probe_host, timeout)) {
    return metadata_source(token_host, std::move(http), options.now);
  }
  throw Error(Errc::auth, kNoCredentialsMessage);
}

}  // namespace kinetic::auth
