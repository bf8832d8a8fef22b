// kinetic_gcs_bench: drives kinetic's GCS client (gcp::StorageClient over
// retried(curl)) for bench/gcs_bench.sh, which times it against Google's Node client and gcloud.
//
//   kinetic_gcs_bench --endpoint URL [--threads N] upload FILE BUCKET NAME
//   kinetic_gcs_bench --endpoint URL [--threads N] download BUCKET NAME FILE
//   kinetic_gcs_bench --endpoint URL [--threads N] upload-many DIR BUCKET PREFIX
//   kinetic_gcs_bench --endpoint URL [--threads N] download-many BUCKET PREFIX DIR
//   kinetic_gcs_bench jwt [ITERATIONS]
//   kinetic_gcs_bench --endpoint URL overhead BUCKET NAME [ITERATIONS]
//
// The endpoint may also come from $KINETIC_GCS_ENDPOINT. upload-many sends every regular file
// directly in DIR as PREFIX/<file name>; download-many lists PREFIX and writes each object to
// DIR/<name without PREFIX>. With --threads N (default 1) the files are shared among N threads,
// each with its own transport and StorageClient (neither is thread-safe).
// Prints one summary line on stdout; the wall time is measured by the caller.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "auth/authed.h"
#include "auth/jwt.h"
#include "auth/key_file.h"
#include "auth/sources.h"
#include "auth/token_cache.h"
#include "core/fs.h"
#include "gcp/storage.h"
#include "http/retry.h"
#include "http/transport.h"

namespace {

using namespace kinetic;
using Clock = std::chrono::steady_clock;

int usage() {
  std::cerr << "usage: kinetic_gcs_bench [--endpoint URL] [--threads N] COMMAND ARGS...\n"
               "  upload FILE BUCKET NAME | download BUCKET NAME FILE\n"
               "  upload-many DIR BUCKET PREFIX | download-many BUCKET PREFIX DIR\n"
               "  jwt [ITERATIONS] | overhead BUCKET NAME [ITERATIONS]\n";
  return 2;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The transfer stack of the task: retries over libcurl, no auth (the fake ignores it).
std::unique_ptr<http::Transport> plain_stack() {
  return http::retried(http::make_curl_transport());
}

// Runs JOB(client, index) for index in [0, count) on THREADS threads, each with its own client.
template <class Job>
void parallel_for(const std::string& endpoint, int threads, std::size_t count, Job job) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mu;
  auto worker = [&] {
    try {
      auto transport = plain_stack();
      gcp::StorageClient client(*transport, endpoint);
      for (std::size_t i; !failed && (i = next++) < count;) job(client, i);
    } catch (...) {
      std::lock_guard lock(error_mu);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

std::string generate_rsa_pem() {
  EVP_PKEY* pkey = EVP_RSA_gen(2048);
  if (!pkey) throw std::runtime_error("RSA key generation failed");
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, pkey, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<std::size_t>(len));
  BIO_free(bio);
  EVP_PKEY_free(pkey);
  return pem;
}

int run_jwt(int iterations) {
  auth::ServiceAccountKey key;
  key.client_email = "bench@fake-project.iam.gserviceaccount.com";
  key.private_key = generate_rsa_pem();
  key.private_key_id = "0123456789abcdef";
  key.token_uri = auth::kGoogleTokenUri;
  key.project_id = "fake-project";
  auto now = std::chrono::system_clock::now();
  std::size_t sink = 0;
  for (int i = 0; i < 20; ++i)
    sink += auth::make_jwt_assertion(key, auth::kCloudPlatformScope, now).size();
  std::vector<double> us;
  us.reserve(iterations);
  for (int i = 0; i < iterations; ++i) {
    auto t0 = Clock::now();
    sink += auth::make_jwt_assertion(key, auth::kCloudPlatformScope, now + std::chrono::seconds(i))
                .size();
    us.push_back(seconds_since(t0) * 1e6);
  }
  std::printf("jwt: RS256 2048-bit, median %.1f us, min %.1f us over %d (sink %zu)\n", median(us),
              *std::min_element(us.begin(), us.end()), iterations, sink);
  return 0;
}

int run_overhead(const std::string& endpoint, const std::string& bucket, const std::string& name,
                 int iterations) {
  auto measure = [&](http::Transport& transport) {
    gcp::StorageClient client(transport, endpoint);
    for (int i = 0; i < 50; ++i) client.get_object(bucket, name);  // warm the connection
    std::vector<double> us;
    us.reserve(iterations);
    for (int i = 0; i < iterations; ++i) {
      auto t0 = Clock::now();
      auto o = client.get_object(bucket, name);
      us.push_back(seconds_since(t0) * 1e6);
      if (!o) throw std::runtime_error("object gs://" + bucket + "/" + name + " not found");
    }
    return us;
  };
  auto tokens = std::make_shared<auth::TokenCache>(
      auth::fixed_token_source("bench-token-0123456789", "bench"));
  auto authed = http::retried(auth::authed(http::make_curl_transport(), tokens));
  auto with_auth = measure(*authed);
  auto plain = plain_stack();
  auto without = measure(*plain);
  std::printf(
      "overhead: objects.get metadata, median %.1f us (min %.1f) with retried(authed(curl)) and a "
      "cached token; %.1f us (min %.1f) with retried(curl); over %d\n",
      median(with_auth), *std::min_element(with_auth.begin(), with_auth.end()), median(without),
      *std::min_element(without.begin(), without.end()), iterations);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string endpoint;
  if (const char* e = std::getenv("KINETIC_GCS_ENDPOINT")) endpoint = e;
  int threads = 1;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--endpoint" && i + 1 < argc)
      endpoint = argv[++i];
    else if (a == "--threads" && i + 1 < argc)
      threads = std::max(1, std::atoi(argv[++i]));
    else if (a == "-h" || a == "--help")
      return usage() - 2;
    else
      args.push_back(a);
  }
  if (args.empty()) return usage();
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  const std::string& cmd = args[0];
  auto need = [&](std::size_t n) {
    if (args.size() < n + 1) std::exit(usage());
    if (cmd != "jwt" && endpoint.empty()) {
      std::cerr << "kinetic_gcs_bench: --endpoint URL (or $KINETIC_GCS_ENDPOINT) is required\n";
      std::exit(2);
    }
  };
  try {
    auto t0 = Clock::now();
    if (cmd == "upload") {
      need(3);
      auto transport = plain_stack();
      gcp::StorageClient client(*transport, endpoint);
      auto o = client.upload_file(args[2], args[3], args[1]);
      std::printf("upload: %llu bytes in %.3f s, crc32c %s\n",
                  static_cast<unsigned long long>(o.size), seconds_since(t0), o.crc32c.c_str());
    } else if (cmd == "download") {
      need(3);
      auto transport = plain_stack();
      gcp::StorageClient client(*transport, endpoint);
      auto o = client.download_file(args[1], args[2], args[3]);
      std::printf("download: %llu bytes in %.3f s, crc32c %s\n",
                  static_cast<unsigned long long>(o.size), seconds_since(t0), o.crc32c.c_str());
    } else if (cmd == "upload-many") {
      need(3);
      std::vector<fs::path> files;
      for (auto& entry : fs::directory_iterator(args[1]))
        if (entry.is_regular_file()) files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      std::atomic<uint64_t> bytes{0};
      parallel_for(endpoint, threads, files.size(), [&](gcp::StorageClient& c, std::size_t i) {
        bytes += c.upload_file(args[2], args[3] + files[i].filename().string(), files[i]).size;
      });
      std::printf("upload-many: %zu files, %llu bytes in %.3f s on %d threads\n", files.size(),
                  static_cast<unsigned long long>(bytes.load()), seconds_since(t0), threads);
    } else if (cmd == "download-many") {
      need(3);
      auto transport = plain_stack();
      gcp::StorageClient lister(*transport, endpoint);
      auto listing = lister.list(args[1], args[2]);
      fs::create_directories(args[3]);
      std::atomic<uint64_t> bytes{0};
      parallel_for(endpoint, threads, listing.objects.size(),
                   [&](gcp::StorageClient& c, std::size_t i) {
                     const auto& name = listing.objects[i].name;
                     fs::path out = fs::path(args[3]) / name.substr(args[2].size());
                     bytes += c.download_file(args[1], name, out).size;
                   });
      std::printf("download-many: %zu files, %llu bytes in %.3f s on %d threads\n",
                  listing.objects.size(), static_cast<unsigned long long>(bytes.load()),
                  seconds_since(t0), threads);
    } else if (cmd == "jwt") {
      return run_jwt(args.size() > 1 ? std::atoi(args[1].c_str()) : 1000);
    } else if (cmd == "overhead") {
      need(2);
      return run_overhead(endpoint, args[1], args[2],
                          args.size() > 3 ? std::atoi(args[3].c_str()) : 2000);
    } else {
      return usage();
    }
  } catch (const std::exception& e) {
    std::cerr << "kinetic_gcs_bench: " << cmd << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
