// The in-pod bootstrap (job/bootstrap.h) run for real: `python3 -c SOURCE` as a child process with
// the environment a pod gets, against the fake GCS (STORAGE_EMULATOR_HOST) and the fake metadata
// server. Jobs really run; the tests look at what reaches the child's stdout, its exit code and
// what lands in the bucket. Synchronisation is by pipes (the job prints "ready"), never by sleeps.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <fstream>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "core/duration.h"
#include "core/fs.h"
#include "core/socket.h"
#include "fakes/fake_gcs.h"
#include "fakes/fake_loopback_port.h"
#include "fakes/fake_oauth.h"
#include "integration/call_file.h"
#include "integration/command_output.h"
#include "integration/stopped_verdict_case.h"
#include "job/bootstrap.h"
#include "job/data_mount.h"
#include "job/function_call.h"
#include "job/incluster_common.h"
#include "job/spec.h"
#include "pack/archive.h"
#include "pack/ignore.h"
#include "pack/sha256.h"

extern char** environ;

namespace kinetic {
namespace {

constexpr const char* kBucket = "b";

// A running `python3 -c <bootstrap>` with its stdout and stderr on pipes.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    int out[2], err[2];
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    int rc = ::posix_spawnp(&pid_, cargv[0], &fa, nullptr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&fa);
    EXPECT_EQ(rc, 0) << std::strerror(rc);
    ::close(out[1]);
    ::close(err[1]);
    fds_[0] = out[0];
    fds_[1] = err[0];
  }
  ~Child() {
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Reads both pipes until PRED(out) holds or both end. A bound of a minute keeps a broken
  // bootstrap from hanging the suite; it is not a timing assumption.
  bool read_until(const std::function<bool(const std::string&)>& pred) {
    char buf[65536];
    while (!pred(out_)) {
      pollfd p[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};
      if (fds_[0] < 0 && fds_[1] < 0) return false;
      int r = ::poll(p, 2, 60000);
      if (r == 0) {
        ADD_FAILURE() << "no output from the bootstrap for a minute; stdout so far:\n"
                      << out_ << "\nstderr:\n"
                      << err_;
        return false;
      }
      if (r < 0) continue;
      for (int i = 0; i < 2; ++i) {
        if (fds_[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = ::read(fds_[i], buf, sizeof buf);
        if (n > 0) {
          (i == 0 ? out_ : err_).append(buf, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          ::close(fds_[i]);
          fds_[i] = -1;
        }
      }
    }
    return true;
  }
  // Reads everything, reaps the child; its exit code (128 + N when killed by signal N).
  int wait() {
    read_until([](const std::string&) { return false; });
    int status = 0;
    EXPECT_EQ(::waitpid(pid_, &status, 0), pid_);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  void signal(int sig) { ::kill(pid_, sig); }
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int fds_[2] = {-1, -1};
  std::string out_, err_;
};

// Forwards every request to the fake GCS and records the Authorization header each one carried
// (the fake does not check tokens). Stands in for storage.googleapis.com in the token test.
class RecordingProxy {
 public:
  explicit RecordingProxy(int upstream_port) : upstream_(upstream_port) {
    auto fwd = [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mu_);
        auth_.push_back(req.get_header_value("Authorization"));
      }
      httplib::Client cli("127.0.0.1", upstream_);
      cli.set_url_encode(false);
      httplib::Headers headers;
      for (const auto& [k, v] : req.headers) {
        std::string lk = k;
        for (auto& c : lk) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lk != "host" && lk != "content-length" && lk != "content-type" &&
            lk.rfind("remote_", 0) != 0 && lk.rfind("local_", 0) != 0)
          headers.emplace(k, v);
      }
      const std::string type = req.get_header_value("Content-Type");
      httplib::Result r = req.method == "GET"    ? cli.Get(req.target, headers)
                          : req.method == "POST" ? cli.Post(req.target, headers, req.body, type)
                                                 : cli.Put(req.target, headers, req.body, type);
      if (!r) {
        res.status = 502;
        return;
      }
      res.status = r->status;
      for (const auto& [k, v] : r->headers)
        if (k != "Content-Length" && k != "Content-Type" && k != "Transfer-Encoding")
          res.set_header(k, v);
      res.set_content(r->body, r->get_header_value("Content-Type"));
    };
    server_.Get(".*", fwd);
    server_.Post(".*", fwd);
    server_.Put(".*", fwd);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();  // so that stop() cannot miss it
  }
  ~RecordingProxy() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  std::vector<std::string> authorizations() {
    std::lock_guard lock(mu_);
    return auth_;
  }

 private:
  int upstream_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> auth_;
};

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(gen());
  return s;
}

class BootstrapTest : public ::testing::Test {
 protected:
  fakes::FakeGcs gcs;
  fs::path tmp = make_temp_dir(fs::temp_directory_path(), "kinetic-boot-");
  fs::path node_tmp = tmp / "node-tmp";  // the pod's TMPDIR
  std::string job_id = "job-0b00c0de";
  std::string context_uri, context_sha;
  int contexts = 0;

  void SetUp() override {
    gcs.create_bucket(kBucket);
    make_dirs(node_tmp, 0755);
  }
  void TearDown() override { remove_all_quiet(tmp); }

  std::string results_prefix() const { return "jobs/" + job_id + "/"; }
  std::string results_uri() const {
    return "gs://" + std::string(kBucket) + "/" + results_prefix();
  }

  // Packs FILES (path -> {content, mode}) and LINKS (path -> target) and uploads the archive
  // content-addressed.
  void stage_context(const std::map<std::string, std::pair<std::string, unsigned>>& files,
                     Compression compression = Compression::gzip,
                     const std::map<std::string, std::string>& links = {}) {
    fs::path dir = tmp / ("ctx" + std::to_string(contexts++));
    make_dirs(dir, 0755);
    for (const auto& [name, file] : files) {
      atomic_write(dir / name, file.first, file.second);
      ::chmod((dir / name).c_str(), file.second);
    }
    for (const auto& [name, target] : links) fs::create_symlink(target, dir / name);
    fs::path archive = tmp / ("context" + std::string(archive_extension(compression)));
    PackResult r = pack_directory(dir, IgnoreRules(), archive, compression);
    std::string name = "contexts/" + r.sha256 + std::string(archive_extension(compression));
    gcs.put_object(kBucket, name, read_file(archive).value());
    context_uri = "gs://" + std::string(kBucket) + "/" + name;
    context_sha = r.sha256;
  }
  void stage_spec(const std::string& file, JobKind kind, std::vector<std::string> args = {}) {
    JobSpec s;
    s.id = job_id;
    s.file = file;
    s.kind = kind;
    s.args = std::move(args);
    s.backend = "gke";
    s.accelerator = "cpu";
    s.created = rfc3339(now_unix() - submitted_ago);
    s.timeout_seconds = timeout;
    s.timeout_from = timeout_from;
    // Periodic uploads off unless a test asks for them: request counts stay exact.
    s.log_upload_seconds = log_every;
    s.checkpoint_sync_seconds = checkpoint_every;
    s.max_preemptions = max_preemptions;
    s.follower_timeout_seconds = follower_timeout;
    s.data = data;
    s.function = function;
    s.labels = labels;
    s.serve = serve;
    spec_sha = sha256_hex(spec_document(s));
    gcs.put_object(kBucket, results_prefix() + "spec.json", spec_document(s), "application/json");
  }
  std::vector<DataMount> data;           // --data, as the pipeline stages it
  std::optional<FunctionCall> function;  // run --function: what the spec says of the call
  std::vector<std::pair<std::string, std::string>> labels;
  std::optional<ServeSpec> serve;  // a server's pod (`kinetic serve`)
  // A function job's call and runner beside the spec, as GkeBackend::submit stages them.
  void stage_function(const std::string& call) {
    function = FunctionCall{.name = "operator.mul",
                            .sha256 = sha256_hex(call),
                            .bytes = static_cast<long long>(call.size()),
                            .runner_sha256 = function_runner_sha256(),
                            .local_path = ""};
    gcs.put_object(kBucket, results_prefix() + "function.pkl", call);
    gcs.put_object(kBucket, results_prefix() + "function_runner.py",
                   std::string(function_runner_source()));
  }
  std::string spec_sha;  // what the Job's environment says the spec's sha256 is
  double log_every = 3600;
  double checkpoint_every = 3600;
  int max_preemptions = 10;
  double follower_timeout = 0;
  std::optional<long> timeout;  // --timeout (or what --max-cost buys)
  double submitted_ago = 0;     // the spec's `created`, this long before now
  std::string timeout_from;     // --timeout-from ("start"; empty: the submit)

  // Polls until the object exists (a bound against hangs, not a timing assumption).
  bool wait_for_object(const std::string& name) {
    for (int i = 0; i < 3000; ++i) {
      if (gcs.object_data(kBucket, name)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  // A job held at a point until the test releases it: it waits for GO_FILE (python, indented for
  // the top level), which release() creates.
  static constexpr const char* kHold =
      "while not os.path.exists(os.environ['GO_FILE']):\n"
      "    time.sleep(0.01)\n";
  std::unique_ptr<Child> start_held() { return start({{"GO_FILE", go.string()}}); }
  void release() { std::ofstream(go).put('\n'); }
  fs::path go = tmp / "go";

  // Runs a job that prints 40 lines, each its own part (every tenth on stderr), and checks the
  // record it leaves: log/composed holding parts 1-31 and their spans, parts 32-40.
  void print_forty_parts();

  std::string attempt_object(int n, const std::string& rest) {
    return results_prefix() + "attempts/" + std::to_string(n) + "/" + rest;
  }

  // The environment a pod gets: the manifest's bootstrap_env plus where the store is.
  std::vector<std::string> pod_env(const std::vector<std::pair<std::string, std::string>>& extra,
                                   bool emulator = true) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string_view v(*e);
      bool drop = false;
      for (std::string_view p : {"KINETIC_", "STORAGE_EMULATOR_HOST=", "CLOUDSDK_", "GCE_METADATA",
                                 "GOOGLE_", "TMPDIR="})
        drop = drop || v.rfind(p, 0) == 0;
      for (const auto& [k, value] : extra) drop = drop || v.rfind(k + "=", 0) == 0;
      if (!drop) env.emplace_back(v);
    }
    env.push_back("TMPDIR=" + node_tmp.string());
    if (emulator) env.push_back("STORAGE_EMULATOR_HOST=127.0.0.1:" + std::to_string(gcs.port()));
    for (const auto& [k, v] : bootstrap_env({.job_id = job_id,
                              .context_uri = context_uri,
                              .context_sha256 = context_sha,
                              .spec_uri = results_uri() + "spec.json",
                              .spec_sha256 = spec_sha,
                              .results_uri = results_uri()}))
      env.push_back(k + "=" + v);
    for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
    return env;
  }
  // PRELUDE runs first in the same interpreter (to play an older Python).
  std::unique_ptr<Child> start(const std::vector<std::pair<std::string, std::string>>& extra = {},
                               bool emulator = true, const std::string& python = "python3",
                               const std::string& prelude = "") {
    return std::make_unique<Child>(
        std::vector<std::string>{python, "-c", prelude + std::string(bootstrap_source())},
        pod_env(extra, emulator));
  }
  // A hand-made tar.gz context (kinetic never makes such entries) with the right checksum.
  void stage_raw_context(const std::vector<std::pair<std::string, std::string>>& files) {
    fs::path path = tmp / "raw.tar.gz";
    struct archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_add_filter_gzip(a);
    ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
    for (const auto& [name, data] : files) {
      archive_entry* e = archive_entry_new();
      archive_entry_set_pathname(e, name.c_str());
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_perm(e, 0644);
      archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
      EXPECT_GE(archive_write_header(a, e), ARCHIVE_WARN);
      archive_write_data(a, data.data(), data.size());
      archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    context_sha = sha256_file(path);
    gcs.put_object(kBucket, "contexts/raw.tar.gz", read_file(path).value());
    context_uri = "gs://" + std::string(kBucket) + "/contexts/raw.tar.gz";
  }

  // status.json as the CLI reads it back.
  nlohmann::json status_json() {
    auto data = gcs.object_data(kBucket, results_prefix() + "status.json");
    if (!data) {
      ADD_FAILURE() << "no status.json in the bucket";
      return nlohmann::json::object();
    }
    return nlohmann::json::parse(*data);
  }
  // outputs.tar.gz, unpacked with the CLI's own (strict) unpacker.
  fs::path outputs() {
    auto data = gcs.object_data(kBucket, results_prefix() + "outputs.tar.gz");
    if (!data) {
      ADD_FAILURE() << "no outputs.tar.gz in the bucket";
      return tmp / "missing";
    }
    fs::path dir = tmp / "outputs";
    remove_all_quiet(dir);
    atomic_write(tmp / "outputs.tar.gz", *data);
    unpack_archive(tmp / "outputs.tar.gz", dir);
    return dir;
  }
  static std::string slurp(const fs::path& p) { return read_file(p).value_or("<missing>"); }
};

// A Python job that shows what it sees and writes outputs.
constexpr const char* kShowJob = R"PY(import os, sys
out = os.environ["KINETIC_OUTPUT_DIR"]
print("hello from the job", sys.argv[1:])
print("cwd", os.getcwd())
print("data", open("data/input.txt").read().strip())
for k in ("KINETIC_JOB_ID", "KINETIC_CHECKPOINT_DIR", "KINETIC_BACKEND"):
    print(k, os.environ.get(k))
print("oops on stderr", file=sys.stderr)
open(os.path.join(out, "result.txt"), "w").write("42\n")
os.makedirs(os.path.join(out, "sub"))
open(os.path.join(out, "sub", "a.txt"), "w").write("a\n")
os.link(os.path.join(out, "sub", "a.txt"), os.path.join(out, "hard.txt"))
os.symlink("result.txt", os.path.join(out, "latest"))
os.mkfifo(os.path.join(out, "pipe"))
)PY";

TEST_F(BootstrapTest, RunsTheJobStreamsItsOutputAndUploadsResults) {
  stage_context({{"train.py", {kShowJob, 0644}}, {"data/input.txt", {"input data\n", 0644}}});
  stage_spec("train.py", JobKind::python, {"--lr", "0.1 0.2"});
  auto child = start();
  int code = child->wait();
  EXPECT_EQ(code, 0) << child->err();
  const std::string& out = child->out();
  EXPECT_NE(out.find("hello from the job ['--lr', '0.1 0.2']"), std::string::npos) << out;
  EXPECT_NE(out.find("data input data"), std::string::npos) << out;
  EXPECT_NE(out.find("KINETIC_JOB_ID " + job_id), std::string::npos) << out;
  EXPECT_NE(out.find("KINETIC_BACKEND gke"), std::string::npos) << out;
  EXPECT_NE(child->err().find("oops on stderr"), std::string::npos) << child->err();
  // The working area is a fresh directory under TMPDIR, and it is gone afterwards.
  EXPECT_NE(out.find("cwd " + node_tmp.string() + "/kinetic-"), std::string::npos) << out;
  EXPECT_TRUE(fs::is_empty(node_tmp));

  auto st = status_json();
  EXPECT_EQ(st["id"], job_id);
  EXPECT_EQ(st["state"], "succeeded");
  EXPECT_EQ(st["exit_code"], 0);
  EXPECT_EQ(st["error"], "");
  EXPECT_EQ(st["backend"], "gke");
  EXPECT_EQ(st["file"], "train.py");
  EXPECT_EQ(st["args"], (std::vector<std::string>{"--lr", "0.1 0.2"}));
  JobStatus js = job_status_from_json(st);
  EXPECT_TRUE(js.terminal());
  EXPECT_EQ(js.exit_code.value_or(-1), 0);
  EXPECT_FALSE(js.started.empty());
  EXPECT_FALSE(js.finished.empty());
  EXPECT_LE(js.started, js.finished);
  EXPECT_GE(js.duration_seconds, 0.0);
  EXPECT_EQ(js.attempts, 1);

  fs::path o = outputs();
  EXPECT_EQ(slurp(o / "result.txt"), "42\n");
  EXPECT_EQ(slurp(o / "sub" / "a.txt"), "a\n");
  EXPECT_EQ(slurp(o / "hard.txt"), "a\n");  // stored as a file: the CLI refuses hard links
  EXPECT_EQ(fs::read_symlink(o / "latest"), "result.txt");
  EXPECT_FALSE(fs::exists(fs::symlink_status(o / "pipe")));  // not a file: left out
}

TEST_F(BootstrapTest, ExitCodePassesThroughAndResultsAreUploadedOnFailure) {
  stage_context({{"run",
                  {"#!/bin/sh\necho partial > \"$KINETIC_OUTPUT_DIR/partial.txt\"\n"
                   "echo about to fail\nexit 3\n",
                   0755}}});
  stage_spec("run", JobKind::executable);
  auto child = start();
  EXPECT_EQ(child->wait(), 3) << child->err();
  EXPECT_NE(child->out().find("about to fail"), std::string::npos);
  auto st = status_json();
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 3);
  EXPECT_EQ(st["error"], "job exited with code 3");
  EXPECT_EQ(slurp(outputs() / "partial.txt"), "partial\n");
  // The last line of each stream says the log is complete, with the exit code
  // (lib/backend/gke/log_end.h), after the record was uploaded.
  const std::string end = ", exit 3, spec " + spec_sha + "\n";
  EXPECT_TRUE(child->out().ends_with("\nkinetic: end of the log on stdout" + end)) << child->out();
  EXPECT_TRUE(child->err().ends_with("kinetic: end of the log on stderr" + end)) << child->err();
}

TEST_F(BootstrapTest, OtherHostsOfASliceReportUnderTheirOwnPrefix) {
  stage_context({{"run", {"#!/bin/sh\necho host $JOB_COMPLETION_INDEX\nexit 4\n", 0755}}});
  stage_spec("run", JobKind::executable);
  auto child = start({{"JOB_COMPLETION_INDEX", "2"}});
  EXPECT_EQ(child->wait(), 4) << child->err();
  // Host 0 speaks for the job; host 2's status must not overwrite it.
  EXPECT_FALSE(gcs.object_data(kBucket, results_prefix() + "status.json").has_value());
  auto worker = gcs.object_data(kBucket, results_prefix() + "workers/2/status.json");
  ASSERT_TRUE(worker.has_value());
  EXPECT_EQ(nlohmann::json::parse(*worker)["exit_code"], 4);
}

TEST_F(BootstrapTest, AJobKilledBySignalExitsWith128PlusTheSignal) {
  stage_context({{"die.sh", {"echo dying\nkill -KILL $$\n", 0644}}});
  stage_spec("die.sh", JobKind::shell);
  auto child = start();
  EXPECT_EQ(child->wait(), 137) << child->err();
  auto st = status_json();
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 137);
  EXPECT_EQ(st["error"], "job killed by SIGKILL");
}

TEST_F(BootstrapTest, CppJobsAreCompiledThenRun) {
  stage_context({{"src/main.cpp",
                  {"#include <cstdio>\n#include <cstdlib>\nint main(int c, char** v) {\n"
                   "  std::printf(\"compiled %s\\n\", v[1]);\n  return std::atoi(v[2]);\n}\n",
                   0644}}});
  stage_spec("src/main.cpp", JobKind::cpp, {"ok", "5"});
  auto child = start();
  EXPECT_EQ(child->wait(), 5) << child->err();
  EXPECT_NE(child->out().find("compiled ok"), std::string::npos) << child->out();
  EXPECT_EQ(status_json()["exit_code"], 5);
}

TEST_F(BootstrapTest, AFailureQuotesTheJobsOwnLastErrorLine) {
  stage_context({{"train.py",
                  {"def fit(w):\n    return w.size\n\nprint('training')\nfit(object())\n", 0644}}});
  stage_spec("train.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 1) << child->err();
  EXPECT_EQ(status_json()["error"], "AttributeError: 'object' object has no attribute 'size'");
}

TEST_F(BootstrapTest, ACompileErrorQuotesTheCompilersFirstError) {
  stage_context({{"main.cpp", {"int main() { undefined_call(); }\n", 0644}}});
  stage_spec("main.cpp", JobKind::cpp);
  auto child = start();
  EXPECT_EQ(child->wait(), 1) << child->err();
  const std::string error = status_json()["error"];
  EXPECT_EQ(error.rfind("compiling main.cpp failed (g++ exit 1): ", 0), 0u) << error;
  // g++ quotes with ' or with ‘’, as the locale has it.
  EXPECT_NE(error.find("main.cpp:1:14: error: "), std::string::npos) << error;
  EXPECT_NE(error.find("undefined_call"), std::string::npos) << error;
}

// The bootstrap's copy of the rule (failure_cause() in lib/job/bootstrap.py) against the same
// cases as the local backend's (tests/golden/failure_causes.json): its functions, from the
// embedded source, run on their own.
TEST(BootstrapFailureCause, EveryCaseAsTheLocalBackend) {
  const std::string source(bootstrap_source());
  const auto from = source.find("TAIL_BYTES = ");
  const auto to = source.find("def run(command");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  const fs::path dir = fs::temp_directory_path() / ("kinetic-cause-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "rule.py") << source.substr(from, to - from);
  std::ofstream(dir / "check.py")
      << "import json, sys\n"
         "exec(open(sys.argv[1]).read())\n"
         "bad = 0\n"
         "for c in json.load(open(sys.argv[2], encoding='utf-8')):\n"
         "    got = failure_cause(c['stderr'].encode('utf-8'))\n"
         "    if got != c['cause']:\n"
         "        bad += 1\n"
         "        print('%s: got %r, want %r' % (c['name'], got, c['cause']))\n"
         "sys.exit(1 if bad else 0)\n";
  const std::string cmd = "python3 " + (dir / "check.py").string() + " " +
                          (dir / "rule.py").string() +
                          " " KINETIC_SOURCE_DIR "/tests/golden/failure_causes.json 2>&1";
  const auto run = test::command_output(cmd);
  EXPECT_EQ(run.status, 0) << run.out;
  fs::remove_all(dir);
}

// The bootstrap's copy of the --notify payload (lib/job/bootstrap.py notify_payload) against the
// same vectors as kinetic's own (tests/golden/notify_payloads.json; backend/notify.h).
TEST(BootstrapNotifyPayload, EveryCaseAsKinetic) {
  const std::string source(bootstrap_source());
  const auto from = source.find("def format_duration(");
  const auto to = source.find("work = tempfile.mkdtemp(");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  const fs::path dir = fs::temp_directory_path() / ("kinetic-notify-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "payload.py") << "import math\n" << source.substr(from, to - from);
  std::ofstream(dir / "check.py")
      << "import json, sys\n"
         "exec(open(sys.argv[1]).read())\n"
         "bad = 0\n"
         "for c in json.load(open(sys.argv[2], encoding='utf-8')):\n"
         "    got = notify_payload(c['facts'])\n"
         "    if got != c['payload']:\n"
         "        bad += 1\n"
         "        print('%s: got %r, want %r' % (c['name'], got, c['payload']))\n"
         "if redact_url('https://u:p@hooks.example/T/s3cr3t?x=1') != "
         "'https://hooks.example/\\u2026':\n"
         "    bad += 1\n"
         "    print('redact_url: ' + redact_url('https://u:p@hooks.example/T/s3cr3t?x=1'))\n"
         "sys.exit(1 if bad else 0)\n";
  const std::string cmd = "python3 " + (dir / "check.py").string() + " " +
                          (dir / "payload.py").string() +
                          " " KINETIC_SOURCE_DIR "/tests/golden/notify_payloads.json 2>&1";
  const auto run = test::command_output(cmd);
  EXPECT_EQ(run.status, 0) << run.out;
  fs::remove_all(dir);
}

// The bootstrap's verdict of a stopped job (lib/job/bootstrap.py stopped_verdict) against the
// same cases as the local supervisor's (tests/golden/stopped_verdicts.json;
// backend/stopped_verdict.h): its functions, with the exit codes ahead of them, as the pod runs
// them.
TEST(BootstrapStoppedVerdict, EveryCaseAsTheLocalSupervisor) {
  const std::string source(bootstrap_source());
  const auto from = source.find("def format_duration(");
  const auto to = source.find("def redact_url(");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  const fs::path dir =
      fs::temp_directory_path() / ("kinetic-stopped-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "verdict.py") << "import math\n"
                                    << incluster_common_source() << source.substr(from, to - from);
  std::ofstream(dir / "check.py")
      << "import json, sys\n"
         "exec(open(sys.argv[1]).read())\n"
         "bad = 0\n"
         "for c in json.load(open(sys.argv[2], encoding='utf-8')):\n"
         "    want = c['verdict']\n"
         "    got = stopped_verdict(c['stop'], c['spec'])\n"
         "    if got != (want['state'], want['exit_code'], want['error']):\n"
         "        bad += 1\n"
         "        print('%s: got %r, want %r' % (c['name'], got, want))\n"
         "sys.exit(1 if bad else 0)\n";
  const std::string cmd = "python3 " + (dir / "check.py").string() + " " +
                          (dir / "verdict.py").string() +
                          " " KINETIC_SOURCE_DIR "/tests/golden/stopped_verdicts.json 2>&1";
  const auto run = test::command_output(cmd);
  EXPECT_EQ(run.status, 0) << run.out;
  fs::remove_all(dir);
}

// The bootstrap unpacks a pipeline step's inputs (another job's outputs, which that job's code
// wrote) and --data archives with its own checks, as the CLI's unpacker does: chained links, a
// write through a link, absolute or '..' names, devices and hard links out are refused, with or
// without the image's tarfile data filter (issue #28 point 10; check_bootstrap_unpack.py).
TEST(BootstrapUnpack, HostileArchivesAreRefusedWithOrWithoutTheDataFilter) {
  const std::string source(bootstrap_source());
  const auto from = source.find("def extract_safely(");
  const auto to = source.find("def unpack(");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  const fs::path dir = fs::temp_directory_path() / ("kinetic-unpack-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The shared code ahead of it too (its exit codes): as the bootstrap runs it.
  std::ofstream(dir / "extract.py") << "import os\n"
                                    << incluster_common_source() << source.substr(from, to - from);
  const std::string cmd = "python3 " KINETIC_SOURCE_DIR
                          "/tests/integration/check_bootstrap_unpack.py " +
                          (dir / "extract.py").string() + " 2>&1";
  const auto run = test::command_output(cmd);
  EXPECT_EQ(run.status, 0) << run.out;
  fs::remove_all(dir);
}

TEST_F(BootstrapTest, MissingJobFileIs127) {
  stage_context({{"other.py", {"print('x')\n", 0644}}});
  stage_spec("train.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 127);
  auto st = status_json();
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 127);
  EXPECT_NE(st["error"].get<std::string>().find("train.py is not in the context"),
            std::string::npos)
      << st;
}

TEST_F(BootstrapTest, ChecksumMismatchFailsBeforeRunningAnything) {
  stage_context({{"train.py", {"print('SHOULD NOT RUN')\n", 0644}}});
  stage_spec("train.py", JobKind::python);
  const std::string real = context_sha;
  context_sha = std::string(64, 'a');
  auto child = start();
  EXPECT_EQ(child->wait(), 126);
  EXPECT_EQ(child->out().find("SHOULD NOT RUN"), std::string::npos);
  EXPECT_NE(child->err().find("context checksum mismatch"), std::string::npos) << child->err();
  auto st = status_json();
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 126);
  std::string error = st["error"];
  EXPECT_NE(error.find("context checksum mismatch"), std::string::npos) << error;
  EXPECT_NE(error.find(real), std::string::npos) << error;
  EXPECT_NE(error.find(context_uri), std::string::npos) << error;
  EXPECT_TRUE(fs::is_empty(outputs()));  // an empty outputs tarball still lands
}

// --data DIR: its archive, staged like a context, is unpacked at DST (relative to the job's
// working directory, or absolute) before the job starts.
TEST_F(BootstrapTest, DataArchivesAreUnpackedAtTheirTargets) {
  stage_context({{"a.txt", {"alpha\n", 0644}}});
  DataMount relative = parse_data_flag("/home/me/set:in/set");
  relative.staged_uri = context_uri;
  relative.staged_sha256 = context_sha;
  const fs::path absolute_dst = tmp / "abs-data";
  DataMount absolute = parse_data_flag("/home/me/set:" + absolute_dst.string());
  absolute.staged_uri = context_uri;
  absolute.staged_sha256 = context_sha;
  data = {relative, absolute};
  stage_context(
      {{"train.py",
        {"import os\nprint(open('in/set/a.txt').read().strip(), os.path.isdir('in'))\n", 0644}}});
  stage_spec("train.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 0) << child->err();
  EXPECT_NE(child->out().find("alpha True"), std::string::npos) << child->out();
  EXPECT_EQ(read_file(absolute_dst / "a.txt").value_or(""), "alpha\n");
}

// The data archive's sha256 is in the spec, whose own sha256 the Job carries: a data archive
// changed in the bucket never reaches a job.
TEST_F(BootstrapTest, AChangedDataArchiveNeverRuns) {
  stage_context({{"a.txt", {"alpha\n", 0644}}});
  DataMount m = parse_data_flag("/home/me/set:in");
  m.staged_uri = context_uri;
  m.staged_sha256 = std::string(64, 'b');
  data = {m};
  stage_context({{"train.py", {"print('SHOULD NOT RUN')\n", 0644}}});
  stage_spec("train.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 126);
  EXPECT_EQ(child->out().find("SHOULD NOT RUN"), std::string::npos);
  EXPECT_NE(child->err().find("data /home/me/set checksum mismatch"), std::string::npos)
      << child->err();
  EXPECT_EQ(status_json()["exit_code"], 126);
}

// Whoever can write the bucket but not the Job must not change what runs: the spec's sha256
// travels in the Job's environment, like the context's (issue #10 point 6).
TEST_F(BootstrapTest, ASpecChangedInTheBucketNeverRuns) {
  stage_context({{"train.py", {"print('the real job')\n", 0644}},
                 {"evil.py", {"print('SHOULD NOT RUN')\n", 0644}}});
  stage_spec("train.py", JobKind::python);
  const std::string signed_sha = spec_sha;
  stage_spec("evil.py", JobKind::python);  // rewritten in the bucket...
  const std::string changed_sha = spec_sha;
  spec_sha = signed_sha;  // ...while the Job still names the spec kinetic wrote
  auto child = start();
  EXPECT_EQ(child->wait(), 126);
  EXPECT_EQ(child->out().find("SHOULD NOT RUN"), std::string::npos);
  EXPECT_NE(child->err().find("spec checksum mismatch"), std::string::npos) << child->err();
  auto st = status_json();
  EXPECT_EQ(st["exit_code"], 126);
  std::string error = st["error"];
  EXPECT_NE(error.find("spec checksum mismatch"), std::string::npos) << error;
  EXPECT_NE(error.find(changed_sha), std::string::npos) << error;
  EXPECT_NE(error.find(signed_sha), std::string::npos) << error;
}

TEST_F(BootstrapTest, UnsafeContextEntriesAreRefusedWithOrWithoutTheDataFilter) {
  stage_raw_context({{"train.py", "print('SHOULD NOT RUN')\n"}, {"../escape.txt", "pwned"}});
  stage_spec("train.py", JobKind::python);
  // This Python's tarfile "data" filter, then the bootstrap's own checks (older Pythons).
  for (std::string prelude : {"", "import tarfile\ndel tarfile.data_filter\n"}) {
    SCOPED_TRACE(prelude.empty() ? "data filter" : "own checks");
    auto child = start({}, true, "python3", prelude);
    EXPECT_EQ(child->wait(), 126);
    EXPECT_EQ(child->out().find("SHOULD NOT RUN"), std::string::npos);
    auto st = status_json();
    EXPECT_EQ(st["exit_code"], 126);
    std::string error = st["error"];
    EXPECT_NE(error.find("unpack the context"), std::string::npos) << error;
    EXPECT_NE(error.find("escape.txt"), std::string::npos) << error;
    // The bootstrap's own checks (extract_safely) come first, with or without the filter.
    EXPECT_NE(error.find("has an absolute path or a '..' component"), std::string::npos) << error;
    EXPECT_TRUE(fs::is_empty(node_tmp));
  }
}

// A link may climb as long as it stays inside: what packing accepts (pack/archive.h), the pod
// unpacks, with this Python's data filter or the bootstrap's own checks.
TEST_F(BootstrapTest, LinksThatStayInsideUnpackWithOrWithoutTheDataFilter) {
  stage_context({{"train.py", {"print(open('sub/back').read())\n", 0644}},
                 {"data.txt", {"inside the context", 0644}},
                 {"sub/keep.txt", {"", 0644}}},
                Compression::gzip, {{"sub/back", "../data.txt"}});
  stage_spec("train.py", JobKind::python);
  for (std::string prelude : {"", "import tarfile\ndel tarfile.data_filter\n"}) {
    SCOPED_TRACE(prelude.empty() ? "data filter" : "own checks");
    auto child = start({}, true, "python3", prelude);
    EXPECT_EQ(child->wait(), 0) << child->err();
    EXPECT_NE(child->out().find("inside the context"), std::string::npos) << child->out();
  }
}

TEST_F(BootstrapTest, MissingSpecStillUploadsAStatusThatSaysSo) {
  stage_context({{"train.py", {"print('x')\n", 0644}}});
  auto child = start();
  EXPECT_EQ(child->wait(), 126);
  auto st = status_json();
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 126);
  std::string error = st["error"];
  EXPECT_NE(error.find("cannot download " + results_uri() + "spec.json"), std::string::npos)
      << error;
  EXPECT_NE(error.find("404"), std::string::npos) << error;
  // The spec (a 404 is not retried) and the context, fetched at once.
  EXPECT_EQ(gcs.request_count("objects.download"), 2);
}

TEST_F(BootstrapTest, MissingContextStillUploadsAStatusThatSaysSo) {
  context_uri = "gs://b/contexts/nope.tar.gz";
  context_sha = std::string(64, '0');
  stage_spec("train.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 126);
  auto st = status_json();
  EXPECT_EQ(st["exit_code"], 126);
  EXPECT_EQ(st["file"], "train.py");
  EXPECT_NE(st["error"].get<std::string>().find("cannot download gs://b/contexts/nope.tar.gz"),
            std::string::npos)
      << st;
}

TEST_F(BootstrapTest, SigtermIsPassedToTheJobAndResultsAreStillUploaded) {
  stage_context({{"serve.py",
                  {R"PY(import os, signal, sys
def stop(sig, frame):
    open(os.path.join(os.environ["KINETIC_OUTPUT_DIR"], "marker"), "w").write(signal.Signals(sig).name)
    open(os.path.join(os.environ["KINETIC_CHECKPOINT_DIR"], "last.ckpt"), "w").write("saved")
    print("stopping", flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
while True:
    signal.pause()
)PY",
                   0644}}});
  stage_spec("serve.py", JobKind::python);
  auto child = start();
  ASSERT_TRUE(child->read_until([](const std::string& out) {
    return out.find("ready\n") != std::string::npos;
  })) << child->err();
  child->signal(SIGTERM);
  EXPECT_EQ(child->wait(), 143) << child->err();  // the container ends as the signal's
  EXPECT_NE(child->out().find("stopping"), std::string::npos);
  auto st = status_json();
  // The record says the stop's verdict, as the local supervisor's does (the job's own exit 0
  // after the signal is not why it ended).
  EXPECT_EQ(test::verdict_in(st), test::golden_stopped_verdict("SIGTERM")) << st;
  EXPECT_EQ(test::verdict_in(st["attempt_history"].back()), test::golden_stopped_verdict("SIGTERM"))
      << st;
  EXPECT_EQ(slurp(outputs() / "marker"), "SIGTERM");
  EXPECT_EQ(gcs.object_data(kBucket, results_prefix() + "checkpoints/last.ckpt").value_or(""),
            "saved");
}

TEST_F(BootstrapTest, CheckpointsAreRestoredAndOnlyChangesUploaded) {
  // More than one page of objects (GCS lists 1000 at most).
  const std::string ck = results_prefix() + "checkpoints/";
  gcs.put_object(kBucket, ck + "step", "41");
  gcs.put_object(kBucket, ck + "model/weights.bin", random_bytes(3000, 7));
  for (int i = 0; i < 1000; ++i) gcs.put_object(kBucket, ck + "shards/" + std::to_string(i), "s");
  gcs.put_object(kBucket, results_prefix() + "checkpointsX/not-mine", "x");  // prefix lookalike
  // Checkpoints come from an earlier attempt: this one is the second.
  gcs.put_object(kBucket, results_prefix() + "attempts/1/status.json",
                 R"({"attempt": 1, "state": "running", "pod": "p1"})");
  stage_context({{"resume.py",
                  {R"PY(import os
ck = os.environ["KINETIC_CHECKPOINT_DIR"]
step = int(open(os.path.join(ck, "step")).read())
print("resuming from", step)
print("shards", len(os.listdir(os.path.join(ck, "shards"))))
print("weights", os.path.getsize(os.path.join(ck, "model", "weights.bin")))
open(os.path.join(ck, "step"), "w").write(str(step + 1))
os.makedirs(os.path.join(ck, "new"))
open(os.path.join(ck, "new", "opt.bin"), "w").write("adam")
)PY",
                   0644}}});
  stage_spec("resume.py", JobKind::python);
  gcs.reset_counters();
  auto child = start();
  EXPECT_EQ(child->wait(), 0) << child->err();
  EXPECT_NE(child->out().find("resuming from 41"), std::string::npos) << child->out();
  EXPECT_NE(child->out().find("shards 1000"), std::string::npos) << child->out();
  EXPECT_NE(child->out().find("weights 3000"), std::string::npos) << child->out();
  // Two pages of checkpoints, and one list of the earlier attempts.
  EXPECT_EQ(gcs.request_count("objects.list"), 3);
  EXPECT_EQ(gcs.object_data(kBucket, ck + "step").value_or(""), "42");
  EXPECT_EQ(gcs.object_data(kBucket, ck + "new/opt.bin").value_or(""), "adam");
  EXPECT_EQ(gcs.object_data(kBucket, ck + "model/weights.bin").value_or(""), random_bytes(3000, 7));
  // step, new/opt.bin, outputs.tar.gz and status.json, plus the attempt's record (claimed, then
  // final), its one log part and the claim of number 1 that attempt 1 already held (412):
  // unchanged checkpoints are not re-sent.
  EXPECT_EQ(gcs.request_count("upload.media") + gcs.request_count("upload.resumable.start"), 8);
}

TEST_F(BootstrapTest, RetriesTransientErrorsAndResumesADroppedUpload) {
  stage_context({{"big.py",
                  {R"PY(import os
open(os.path.join(os.environ["KINETIC_OUTPUT_DIR"], "big.bin"), "wb").write(os.urandom(3 << 20))
print("wrote big.bin")
)PY",
                   0644}}});
  stage_spec("big.py", JobKind::python);
  gcs.fail_next(1, 503, -1, "GET /storage/v1/b/b/o/jobs");
  gcs.fail_next(1, 429, -1, "GET /storage/v1/b/b/o/jobs");  // rate-limited: retried too
  gcs.drop_connection_after(1 << 20);
  auto child = start();
  EXPECT_EQ(child->wait(), 0) << child->err();
  EXPECT_EQ(gcs.request_count("injected_failures"), 2);
  EXPECT_EQ(gcs.request_count("dropped_connections"), 1);
  EXPECT_EQ(gcs.request_count("upload.resumable.start"), 1);  // resumed, not restarted
  // After the drop the pod asks the session what it kept (bytes */N), then sends only the rest:
  // never the dropped bytes again from their old offset, nor a byte early.
  const auto puts = gcs.resumable_requests();
  ASSERT_EQ(puts.size(), 3u);
  EXPECT_TRUE(puts[0].dropped);
  EXPECT_EQ(puts[1].content_range.rfind("bytes */", 0), 0u) << puts[1].content_range;
  EXPECT_GT(puts[2].persisted_before, 0u);
  EXPECT_EQ(
      puts[2].content_range.rfind("bytes " + std::to_string(puts[2].persisted_before) + "-", 0), 0u)
      << puts[2].content_range;
  EXPECT_EQ(gcs.request_count("resent_bytes"), 0);
  EXPECT_EQ(fs::file_size(outputs() / "big.bin"), 3u << 20);
  EXPECT_EQ(status_json()["state"], "succeeded");
}

TEST_F(BootstrapTest, TwoJobsOnOneNodeDoNotCollide) {
  stage_context({{"w.py",
                  {R"PY(import os, sys
open(os.path.join(os.environ["KINETIC_OUTPUT_DIR"], "who"), "w").write(os.environ["KINETIC_JOB_ID"])
print("cwd", os.getcwd())
)PY",
                   0644}}});
  const std::string a = "job-0000000a", b = "job-0000000b";
  job_id = a;
  stage_spec("w.py", JobKind::python);
  auto first = start();
  job_id = b;
  stage_spec("w.py", JobKind::python);
  auto second = start();
  EXPECT_EQ(first->wait(), 0) << first->err();
  EXPECT_EQ(second->wait(), 0) << second->err();
  EXPECT_NE(first->out(), second->out());
  for (const auto& id : {a, b}) {
    job_id = id;
    EXPECT_EQ(slurp(outputs() / "who"), id);
  }
}

TEST_F(BootstrapTest, ZstdContextsUnpackWithTheZstdTool) {
  stage_context({{"z.py", {"print('from a tar.zst')\n", 0644}}}, Compression::zstd);
  stage_spec("z.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 0) << child->err();
  EXPECT_NE(child->out().find("from a tar.zst"), std::string::npos);
}

TEST_F(BootstrapTest, ZstdContextWithoutTheToolSaysWhatToDo) {
  // A PATH with python3 but no zstd.
  Child probe({"python3", "-c", "import sys; print(sys.executable, sys.version_info >= (3, 14))"},
              pod_env({}));
  ASSERT_EQ(probe.wait(), 0);
  std::string exe = probe.out().substr(0, probe.out().find(' '));
  if (probe.out().find("True") != std::string::npos) GTEST_SKIP() << "Python 3.14 reads zstd";
  fs::path bin = tmp / "bin";
  make_dirs(bin, 0755);
  fs::create_symlink(exe, bin / "python3");
  stage_context({{"z.py", {"print('x')\n", 0644}}}, Compression::zstd);
  stage_spec("z.py", JobKind::python);
  auto child = start({{"PATH", bin.string()}}, true, exe);
  EXPECT_EQ(child->wait(), 126);
  EXPECT_NE(status_json()["error"].get<std::string>().find("zstd"), std::string::npos);
}

TEST_F(BootstrapTest, WithoutTheEmulatorItAuthenticatesWithAMetadataToken) {
  // STORAGE_EMULATOR_HOST means "no auth", as in Google's libraries; a gcloud-style endpoint
  // override (docs/first-design.md "Cloud contract") keeps auth, so the token path runs against a
  // local endpoint. The metadata server's first answer is a 503: retried.
  fakes::FakeOAuth metadata;
  metadata.fail_next(1, 503, "{}");
  RecordingProxy proxy(gcs.port());
  stage_context({{"t.py", {"print('authenticated run')\n", 0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", proxy.url() + "storage/v1/"},
                      {"GCE_METADATA_HOST", metadata.host()}},
                     /*emulator=*/false);
  EXPECT_EQ(child->wait(), 0) << child->err();
  EXPECT_NE(child->out().find("authenticated run"), std::string::npos);
  EXPECT_EQ(metadata.metadata_tokens(), 1);  // fetched once, cached for every call
  auto seen = proxy.authorizations();
  EXPECT_GE(seen.size(), 5u);  // spec, context, list, outputs, status
  for (const auto& a : seen) EXPECT_EQ(a, "Bearer " + metadata.last_access_token());
  EXPECT_EQ(status_json()["state"], "succeeded");
}

TEST_F(BootstrapTest, WithTheEmulatorItSendsNoCredentials) {
  RecordingProxy proxy(gcs.port());
  stage_context({{"t.py", {"print('anonymous run')\n", 0644}}});
  stage_spec("t.py", JobKind::python);
  // The metadata host points nowhere useful: asking it would fail the run.
  auto child = start({{"STORAGE_EMULATOR_HOST", proxy.url()}, {"GCE_METADATA_HOST", "127.0.0.1:9"}},
                     /*emulator=*/false);
  EXPECT_EQ(child->wait(), 0) << child->err();
  auto seen = proxy.authorizations();
  EXPECT_GE(seen.size(), 5u);
  for (const auto& a : seen) EXPECT_EQ(a, "");
}

// ---- the run record (docs/run-record.md) ----------------------------------------------------

TEST_F(BootstrapTest, AttemptsAreNumberedAndTheHistoryRecordsEach) {
  stage_context({{"flaky.py",
                  {"import os, sys\n"
                   "mark = os.path.join(os.environ['KINETIC_CHECKPOINT_DIR'], 'm')\n"
                   "if not os.path.exists(mark):\n"
                   "    open(mark, 'w').write('1')\n"
                   "    sys.exit(3)\n"
                   "print('second time lucky')\n",
                   0644}}});
  stage_spec("flaky.py", JobKind::python);
  EXPECT_EQ(start({{"KINETIC_POD_NAME", "pod-a"}})->wait(), 3);
  auto first = nlohmann::json::parse(
      gcs.object_data(kBucket, attempt_object(1, "status.json")).value_or("{}"));
  EXPECT_EQ(first["state"], "failed") << first.dump();
  EXPECT_EQ(first["exit_code"], 3) << first.dump();
  EXPECT_EQ(first["pod"], "pod-a") << first.dump();
  EXPECT_EQ(start({{"KINETIC_POD_NAME", "pod-b"}})->wait(), 0);
  auto st = status_json();
  EXPECT_EQ(st["attempts"], 2) << st.dump();
  ASSERT_EQ(st["attempt_history"].size(), 2u) << st.dump();
  EXPECT_EQ(st["attempt_history"][0]["exit_code"], 3) << st.dump();
  EXPECT_EQ(st["attempt_history"][0]["preempted"], false) << st.dump();
  EXPECT_EQ(st["attempt_history"][1]["pod"], "pod-b") << st.dump();
  EXPECT_EQ(st["attempt_history"][1]["state"], "succeeded") << st.dump();
}

TEST_F(BootstrapTest, TheLogIsRecordedInPartsWhileTheJobRuns) {
  log_every = 0.05;
  stage_context({{"talk.py",
                  {"import os, sys, time\n"
                   "print('line one')\n"
                   "print('to stderr', file=sys.stderr)\n" +
                       std::string(kHold) +
                       "print('line three')\n"
                       "sys.stdout.write('no newline at the end')\n",
                   0644}}});
  stage_spec("talk.py", JobKind::python);
  auto child = start_held();
  // The first lines are in the bucket before the job goes on: a killed node loses at most the
  // last seconds.
  ASSERT_TRUE(wait_for_object(attempt_object(1, "log/000001")));
  release();
  EXPECT_EQ(child->wait(), 0) << child->err();
  std::string recorded;
  int parts = 0;
  std::string spans;
  for (const auto& o : gcs.object_names(kBucket, attempt_object(1, "log/"))) {
    if (o.ends_with(".err")) {
      spans += gcs.object_data(kBucket, o).value_or("");  // which bytes were stderr
      continue;
    }
    recorded += gcs.object_data(kBucket, o).value_or("");
    ++parts;
  }
  // One span: "to stderr\n" at offset 9, as two big-endian 64-bit numbers.
  EXPECT_EQ(spans, std::string("\0\0\0\0\0\0\0\x09\0\0\0\0\0\0\0\x0a", 16));
  EXPECT_GE(parts, 2);
  for (const char* line : {"line one\n", "to stderr\n", "line three\n", "no newline at the end"})
    EXPECT_NE(recorded.find(line), std::string::npos) << line << " in " << recorded;
  EXPECT_EQ(recorded, "line one\nto stderr\nline three\nno newline at the end");
  EXPECT_NE(child->err().find("to stderr"), std::string::npos) << "stderr stays stderr";
}

// A long job's log stays a few objects: every 31 parts are composed onto log/composed (its
// metadata says how many parts it holds) and deleted. The job prints one line per part: it goes
// on only once the test has seen that line recorded, so every part holds exactly one line.
TEST_F(BootstrapTest, ALongLogIsComposedAsTheJobRuns) {
  print_forty_parts();
}

// A compose that fails leaves the parts as they are, says so, and is done at the next upload,
// with 31 parts as ever (never more than compose's 32 sources with the composite).
TEST_F(BootstrapTest, AFailedComposeIsDoneAgainAtTheNextUpload) {
  gcs.fail_next(1, 412, -1, "POST /storage/v1/b/" + std::string(kBucket) + "/o/");
  print_forty_parts();
  EXPECT_EQ(gcs.pending_faults(), 0);
}

void BootstrapTest::print_forty_parts() {
  log_every = 0.02;
  // Every tenth line goes to stderr: its part has a sidecar of spans, composed alongside.
  stage_context({{"long.py",
                  {"import os, sys, time\n"
                   "for i in range(1, 41):\n"
                   "    print('line %d' % i, flush=True, file=sys.stderr if i % 10 == 0 else "
                   "sys.stdout)\n"
                   "    while not os.path.exists(os.environ['GO_FILE'] + str(i)):\n"
                   "        time.sleep(0.005)\n",
                   0644}}});
  stage_spec("long.py", JobKind::python);
  const double started = now_unix();
  auto child = start_held();
  const std::string composed = attempt_object(1, "log/composed");
  auto recorded = [&](int part) {
    char name[16];
    std::snprintf(name, sizeof name, "log/%06d", part);
    if (gcs.object_data(kBucket, attempt_object(1, name))) return true;
    auto r = gcs.object_resource(kBucket, composed);
    return r && std::stoi((*r)["metadata"].value("parts", "0")) >= part;
  };
  for (int part = 1; part <= 40; ++part) {
    for (int i = 0; i < 3000 && !recorded(part); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(recorded(part)) << "part " << part << "; " << child->err();
    std::ofstream(go.string() + std::to_string(part)).put('\n');
  }
  EXPECT_EQ(child->wait(), 0) << child->err();
  auto resource = gcs.object_resource(kBucket, composed);
  ASSERT_TRUE(resource);
  EXPECT_EQ((*resource)["metadata"]["parts"], "31") << resource->dump();
  EXPECT_EQ((*resource)["componentCount"], 31) << resource->dump();
  EXPECT_EQ((*resource)["contentType"], "text/plain") << resource->dump();
  std::string want, whole = gcs.object_data(kBucket, composed).value_or("");
  auto span = [](uint64_t at, uint64_t length) {
    std::string b;
    for (uint64_t v : {at, length})
      for (int shift = 56; shift >= 0; shift -= 8) b.push_back(static_cast<char>(v >> shift));
    return b;
  };
  std::string err_spans;  // lines 10, 20, 30 (composed) then 40 (a sidecar)
  for (int i = 1; i <= 40; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    if (i % 10 == 0) err_spans += span(want.size(), line.size());
    want += line;
  }
  std::vector<std::string> names = gcs.object_names(kBucket, attempt_object(1, "log/"));
  ASSERT_EQ(names.size(), 12u) << "the composites and parts 32-40 with 40's sidecar";
  EXPECT_EQ(names.front(), attempt_object(1, "log/000032"));
  for (const auto& n : names)
    if (!n.starts_with(composed) && !n.ends_with(".err"))
      whole += gcs.object_data(kBucket, n).value_or("");
  EXPECT_EQ(whole, want) << "the composite, then the parts after it, are the log";
  // composed.err: the spans of lines 10, 20 and 30, and after them an end mark for each part
  // composed (where it ends, 2^63 | the second it was uploaded), for `logs --since`.
  const std::string sidecar = gcs.object_data(kBucket, composed + ".err").value_or("");
  std::string spans_in_it;
  std::vector<uint64_t> mark_ends;
  auto word = [&](size_t at) {
    uint64_t v = 0;
    for (size_t i = 0; i < 8; ++i) v = v << 8 | static_cast<unsigned char>(sidecar[at + i]);
    return v;
  };
  for (size_t at = 0; at + 16 <= sidecar.size(); at += 16) {
    if (word(at + 8) >> 63) {
      mark_ends.push_back(word(at));
      const double second = static_cast<double>(word(at + 8) & ~(uint64_t{1} << 63));
      EXPECT_GE(second, started - 1);
      EXPECT_LE(second, now_unix() + 1);
    } else {
      spans_in_it += sidecar.substr(at, 16);
    }
  }
  EXPECT_EQ(
      spans_in_it + gcs.object_data(kBucket, attempt_object(1, "log/000040.err")).value_or(""),
      err_spans);
  std::vector<uint64_t> want_ends;
  for (uint64_t end = 0, i = 1; i <= 31; ++i)
    want_ends.push_back(end += ("line " + std::to_string(i) + "\n").size());
  EXPECT_EQ(mark_ends, want_ends);
}

TEST_F(BootstrapTest, CheckpointsAreSavedWhileTheJobRuns) {
  checkpoint_every = 0.05;
  stage_context({{"ck.py",
                  {"import os, time\n"
                   "ck = os.environ['KINETIC_CHECKPOINT_DIR']\n"
                   "open(os.path.join(ck, 'epoch'), 'w').write('1')\n" +
                       std::string(kHold),
                   0644}}});
  stage_spec("ck.py", JobKind::python);
  auto child = start_held();
  ASSERT_TRUE(wait_for_object(results_prefix() + "checkpoints/epoch"));
  release();
  EXPECT_EQ(child->wait(), 0) << child->err();
}

TEST_F(BootstrapTest, PastThePreemptionCapTheRunIsOverWithoutRunningTheJob) {
  max_preemptions = 2;
  for (int n = 1; n <= 3; ++n)  // two killed by SIGTERM, one whose node vanished
    gcs.put_object(
        kBucket, attempt_object(n, "status.json"),
        nlohmann::json{{"attempt", n}, {"state", n == 3 ? "running" : "cancelled"}}.dump(),
        "application/json");
  stage_context({{"t.py", {"print('should not run')\n", 0644}}});
  stage_spec("t.py", JobKind::python);
  gcs.put_object(kBucket, results_prefix() + "outputs.tar.gz", "an earlier attempt's outputs");
  auto child = start();
  EXPECT_EQ(child->wait(), 197);
  EXPECT_EQ(gcs.object_data(kBucket, results_prefix() + "outputs.tar.gz").value_or(""),
            "an earlier attempt's outputs")
      << "an attempt that never ran replaced the outputs";
  EXPECT_EQ(child->out().find("should not run"), std::string::npos);
  auto st = status_json();
  EXPECT_EQ(st["error"], "preempted 3 times (--max-preemptions 2)") << st.dump();
  EXPECT_EQ(st["attempts"], 4) << st.dump();
  EXPECT_EQ(st["attempt_history"][2]["preempted"], true) << st.dump();
}

// A server's pods are its Deployment's to restart (docs/serving.md "Servers on gke"): however
// many were deleted before, a new one serves, where a run past its cap is over (exit 197); and
// its end is never the run's verdict (another pod follows).
TEST_F(BootstrapTest, AServerPodStartsHoweverManyPodsWereDeletedBefore) {
  max_preemptions = 2;
  serve = ServeSpec{.port = 8000};
  for (int n = 1; n <= 3; ++n)
    gcs.put_object(kBucket, attempt_object(n, "status.json"),
                   nlohmann::json{{"attempt", n}, {"state", "cancelled"}}.dump(),
                   "application/json");
  stage_context({{"t.py", {"print('serving')\n", 0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 0) << child->err();
  EXPECT_NE(child->out().find("serving"), std::string::npos) << child->out();
  auto st = status_json();
  EXPECT_EQ(st["attempts"], 4) << st.dump();
  EXPECT_EQ(st["final"], false) << st.dump();
}

// A server that listens on PORT and prints "listening"; each connection it accepts it holds
// for HOLD seconds, checking it stays open, then says so and closes it.
std::string server_holding_connections(int port, double hold) {
  return "import socket, time\n"
         "s = socket.socket()\n"
         "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
         "s.bind(('127.0.0.1', " +
         std::to_string(port) +
         "))\n"
         "s.listen()\n"
         "print('listening', flush=True)\n"
         "while True:\n"
         "    c, _ = s.accept()\n"
         "    end = time.time() + " +
         std::to_string(hold) +
         "\n"
         "    while time.time() < end:\n"
         "        time.sleep(0.05)\n"
         "    print('held a connection %.1fs' % " +
         std::to_string(hold) +
         ", flush=True)\n"
         "    c.close()\n";
}

// --idle-stop on gke: the pod's bootstrap sees no connection to the port for D after it first
// listened, stops the server and records the idle-stop verdict (the local supervisor's words),
// final, and leaves the termination message the auto-down controller looks for.
TEST_F(BootstrapTest, AnIdleServerIsStoppedAndSaysSoInItsTerminationMessage) {
  const int port = fakes::unused_loopback_port();
  serve = ServeSpec{.port = port, .idle_stop_seconds = 1};
  stage_context({{"t.py", {server_holding_connections(port, 0), 0644}}});
  stage_spec("t.py", JobKind::python);
  const fs::path message = tmp / "termination-log";
  auto child = start({{"KINETIC_TERMINATION_LOG", message.string()}});
  EXPECT_EQ(child->wait(), 130) << child->err();
  EXPECT_NE(child->out().find("listening"), std::string::npos) << child->out();
  EXPECT_NE(child->err().find("no request for 1.0s; stopping the server"), std::string::npos)
      << child->err();
  auto st = status_json();
  EXPECT_EQ(st["state"], "cancelled") << st.dump();
  EXPECT_EQ(st["exit_code"], 130) << st.dump();
  EXPECT_EQ(st["error"], "stopped after 1.0s without a request (--idle-stop)") << st.dump();
  EXPECT_EQ(st["final"], true) << st.dump();
  EXPECT_EQ(slurp(message), "kinetic: idle-stop");
}

// A connection held open is activity for as long as it is open: the server is stopped only D
// after it closed. The server itself holds the connection for three times D, and says so.
TEST_F(BootstrapTest, AConnectionHeldOpenKeepsAServerUp) {
  const int port = fakes::unused_loopback_port();
  serve = ServeSpec{.port = port, .idle_stop_seconds = 1};
  stage_context({{"t.py", {server_holding_connections(port, 3), 0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start({{"KINETIC_TERMINATION_LOG", (tmp / "termination-log").string()}});
  ASSERT_TRUE(child->read_until(
      [](const std::string& out) { return out.find("listening") != std::string::npos; }));
  const int fd = connect_loopback(port);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(child->wait(), 130) << child->err();
  ::close(fd);
  EXPECT_NE(child->out().find("held a connection 3.0s"), std::string::npos)
      << "stopped while a connection was open:\n"
      << child->out() << child->err();
  EXPECT_EQ(status_json()["error"], "stopped after 1.0s without a request (--idle-stop)");
}

// The container the Deployment starts again after an idle stop finds the verdict in the record:
// it does not start the server, keeps the record as it is and waits until its pod is deleted.
TEST_F(BootstrapTest, AServerStartedAgainAfterAnIdleStopWaitsToBeDeleted) {
  serve = ServeSpec{.port = 8000, .idle_stop_seconds = 60};
  const nlohmann::json stopped = {{"state", "cancelled"},
                                  {"exit_code", 130},
                                  {"error", "stopped after 1m00s without a request (--idle-stop)"},
                                  {"final", true}};
  gcs.put_object(kBucket, results_prefix() + "status.json", stopped.dump(), "application/json");
  gcs.put_object(kBucket, attempt_object(1, "status.json"),
                 nlohmann::json{{"attempt", 1}, {"state", "cancelled"}}.dump(), "application/json");
  stage_context({{"t.py", {"print('serving')\n", 0644}}});
  stage_spec("t.py", JobKind::python);
  const fs::path message = tmp / "termination-log";
  auto child = start({{"KINETIC_TERMINATION_LOG", message.string()}});
  ASSERT_TRUE(child->read_until([&](const std::string&) {
    return child->err().find("waiting to be deleted") != std::string::npos;
  })) << child->err();
  child->signal(SIGTERM);
  EXPECT_EQ(child->wait(), 0) << child->err();
  EXPECT_EQ(child->out().find("serving"), std::string::npos) << child->out();
  EXPECT_EQ(status_json(), stopped);
  EXPECT_FALSE(gcs.object_data(kBucket, attempt_object(2, "status.json")).has_value());
  EXPECT_EQ(slurp(message), "kinetic: idle-stop");
}

// A slice restarted (a retry, a preemption) after the run's deadline: the new attempt finds no
// time left, so it ends the run (197: no other attempt) without running the job, and the record
// says timeout (issue #27). The deadline counts from the submit, not from this attempt.
TEST_F(BootstrapTest, AnAttemptStartingPastTheRunsDeadlineEndsTheRunWithoutRunningTheJob) {
  timeout = 3;  // the golden's --timeout case
  submitted_ago = 90;
  gcs.put_object(kBucket, attempt_object(1, "status.json"),
                 nlohmann::json{{"attempt", 1}, {"state", "failed"}, {"exit_code", 5}}.dump(),
                 "application/json");
  stage_context({{"t.py", {"print('should not run')\n", 0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start({{"JOB_COMPLETION_INDEX", "0"}});  // host 0 of a slice
  EXPECT_EQ(child->wait(), 197) << child->err();
  EXPECT_EQ(child->out().find("should not run"), std::string::npos);
  auto st = status_json();
  EXPECT_EQ(test::verdict_in(st), test::golden_stopped_verdict("deadline")) << st.dump();
  auto attempt = nlohmann::json::parse(
      gcs.object_data(kBucket, attempt_object(2, "status.json")).value_or("{}"));
  EXPECT_EQ(attempt["state"], "timeout") << attempt.dump();
}

// A job that says "working", works up to a minute (never a hang), then says "finished": what a
// deadline stops between the two.
constexpr const char* kWorksUpToAMinute =
    "import time\n"
    "print('working', flush=True)\n"
    "for _ in range(600):\n"
    "    time.sleep(0.05)\n"
    "print('finished', flush=True)\n";

// An attempt started with 3 seconds of the run's time left: the bootstrap stops its job when
// they are over, not when the Job's own (per attempt) deadline would, and ends the run.
TEST_F(BootstrapTest, TheRunsDeadlineStopsTheJobWithOnlyTheTimeLeft) {
  timeout = 60;
  submitted_ago = 57;
  stage_context({{"t.py", {kWorksUpToAMinute, 0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start({{"JOB_COMPLETION_INDEX", "0"}});  // host 0 of a slice
  EXPECT_EQ(child->wait(), 197) << child->err();
  EXPECT_NE(child->out().find("working"), std::string::npos) << child->out();
  EXPECT_EQ(child->out().find("finished"), std::string::npos) << "the job outlived the deadline";
  EXPECT_NE(child->err().find("the run's deadline has passed"), std::string::npos) << child->err();
  auto st = status_json();
  EXPECT_EQ(st["state"], "timeout") << st.dump();
  EXPECT_EQ(st["exit_code"], 124) << st.dump();
  EXPECT_EQ(st["attempt_history"][0]["state"], "timeout") << st.dump();
}

// A single-host Job keeps one activeDeadlineSeconds for all its pods, counted from its start:
// its own deadline is the run's, and the bootstrap leaves it to the cluster (whose
// DeadlineExceeded the CLI reports), even for a pod that starts after the submit's deadline.
TEST_F(BootstrapTest, ASingleHostAttemptLeavesTheDeadlineToItsJob) {
  timeout = 60;
  submitted_ago = 90;
  stage_context({{"t.py", {"print('ran')\n", 0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 0) << child->err();
  EXPECT_EQ(status_json()["state"], "succeeded");
}

// --timeout-from start (docs/capacity.md): a single-host Job has no activeDeadlineSeconds then,
// so the bootstrap keeps the deadline, counted from the job's start, not the submit: a pod that
// waited 90 s for capacity still gets its 2 s, and is stopped when they are over; the run is
// over (197: no retry) and its record says timeout.
TEST_F(BootstrapTest, ADeadlineFromTheStartCountsFromTheAttemptNotTheSubmit) {
  timeout = 2;
  submitted_ago = 90;
  timeout_from = "start";
  stage_context({{"t.py", {kWorksUpToAMinute, 0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start();  // a single-host pod
  EXPECT_EQ(child->wait(), 197) << child->err();
  EXPECT_NE(child->out().find("working"), std::string::npos) << "the wait was counted";
  EXPECT_EQ(child->out().find("finished"), std::string::npos) << "the job outlived the deadline";
  auto st = status_json();
  EXPECT_EQ(st["state"], "timeout") << st.dump();
  EXPECT_EQ(st["exit_code"], 124) << st.dump();
}

// From the start means the run's first start: a retry whose first attempt started 90 s ago has
// no time left of 60, whenever the run was submitted.
TEST_F(BootstrapTest, ADeadlineFromTheStartCountsFromTheFirstAttempt) {
  timeout = 60;
  submitted_ago = 3600;
  timeout_from = "start";
  gcs.put_object(kBucket, attempt_object(1, "status.json"),
                 nlohmann::json{{"attempt", 1},
                                {"state", "failed"},
                                {"exit_code", 5},
                                {"started", rfc3339(now_unix() - 90)}}
                     .dump(),
                 "application/json");
  stage_context({{"t.py", {"print('should not run')\n", 0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 197) << child->err();
  EXPECT_EQ(child->out().find("should not run"), std::string::npos);
  auto st = status_json();
  EXPECT_EQ(st["state"], "timeout") << st.dump();
  EXPECT_EQ(st["error"], "timed out after 60s (--timeout)") << st.dump();
}

// A single-host Job's deadline reaches its pod as a SIGTERM (the cluster's
// activeDeadlineSeconds): one at or past the run's deadline is the deadline's, so the record
// says timeout, as the local supervisor's does, not cancelled.
TEST_F(BootstrapTest, ASignalAtTheRunsDeadlineIsRecordedAsTheDeadlines) {
  timeout = 3;  // the golden's --timeout case
  submitted_ago = 90;
  stage_context({{"t.py",
                  {"import time\n"
                   "print('working', flush=True)\n"
                   "time.sleep(60)\n",
                   0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start();
  ASSERT_TRUE(child->read_until([](const std::string& out) {
    return out.find("working\n") != std::string::npos;
  })) << child->err();
  child->signal(SIGTERM);
  EXPECT_EQ(child->wait(), 143) << child->err();
  auto st = status_json();
  EXPECT_EQ(test::verdict_in(st), test::golden_stopped_verdict("deadline")) << st.dump();
}

TEST_F(BootstrapTest, AJobsOwnExit197DoesNotEndTheRunForKubernetes) {
  stage_context({{"t.py", {"raise SystemExit(197)\n", 0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 1);
  EXPECT_EQ(status_json()["exit_code"], 197);
  // The end lines carry the code the container exits with.
  EXPECT_TRUE(
      child->out().ends_with("kinetic: end of the log on stdout, exit 1, spec " + spec_sha + "\n"))
      << child->out();
}

// 143 is the bootstrap's "stopped from outside" (a Kueue eviction), which a Job's podFailurePolicy
// ignores: a job that ends itself with SIGTERM is a failure Kubernetes must count, not a stop.
TEST_F(BootstrapTest, AJobsOwnSigtermIsAFailureForKubernetes) {
  stage_context({{"t.py", {"import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n", 0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 1) << child->err();
  EXPECT_EQ(status_json()["exit_code"], 143);
  EXPECT_EQ(status_json()["state"], "failed");
  EXPECT_TRUE(
      child->out().ends_with("kinetic: end of the log on stdout, exit 1, spec " + spec_sha + "\n"))
      << child->out();
}

TEST_F(BootstrapTest, UnsafeOutputSymlinksAreLeftOutWithAWarning) {
  stage_context({{"t.py",
                  {"import os\n"
                   "out = os.environ['KINETIC_OUTPUT_DIR']\n"
                   "open(os.path.join(out, 'model.txt'), 'w').write('w')\n"
                   "os.symlink('/etc/passwd', os.path.join(out, 'passwd'))\n"
                   "os.symlink('model.txt', os.path.join(out, 'latest'))\n",
                   0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 0) << child->err();
  EXPECT_NE(child->err().find("left out of the outputs: unsafe symlinks passwd -> /etc/passwd"),
            std::string::npos)
      << child->err();
  EXPECT_EQ(status_json()["state"], "succeeded");
  auto archive = gcs.object_data(kBucket, results_prefix() + "outputs.tar.gz");
  ASSERT_TRUE(archive.has_value());
}

TEST_F(BootstrapTest, AForegroundRunNobodyFollowsIsStoppedAndNotRetried) {
  // The CLI that started it was killed: its follower object (jobs/ID/follower) never comes.
  follower_timeout = 0.3;
  stage_context({{"t.py",
                  {"import time\n"
                   "print('working', flush=True)\n"
                   "while True:\n"
                   "    time.sleep(0.05)\n",
                   0644}}});
  stage_spec("t.py", JobKind::python);
  auto child = start();
  EXPECT_EQ(child->wait(), 197) << child->err();
  EXPECT_NE(child->out().find("working"), std::string::npos);
  EXPECT_NE(child->err().find("nobody has followed this run"), std::string::npos) << child->err();
  auto st = status_json();
  // The golden's verdict; its error names the golden's 300 s where this run waited 0.3 s.
  const auto want = test::golden_stopped_verdict("abandoned");
  EXPECT_EQ(st["state"], want["state"]) << st.dump();
  EXPECT_EQ(st["exit_code"], want["exit_code"]) << st.dump();
  EXPECT_EQ(st["error"].get<std::string>().rfind("abandoned: ", 0), 0u) << st.dump();
}

TEST_F(BootstrapTest, AFollowedRunGoesOn) {
  // A follower object refreshed by the test: the job ends by itself, on a file the test writes
  // once the pod has checked the follower more than once.
  follower_timeout = 2;
  stage_context(
      {{"t.py",
        {"import os, time\n" + std::string(kHold) + "print('finished on its own')\n", 0644}}});
  stage_spec("t.py", JobKind::python);
  const std::string follower = "jobs/" + job_id + "/follower";
  gcs.put_object(kBucket, follower, "{}");
  auto child = start_held();
  // Keep the follower fresh while the pod checks it a few times.
  for (int i = 0; i < 5; ++i) {
    const int before = gcs.request_count("objects.get");
    for (int j = 0; j < 3000 && gcs.request_count("objects.get") == before; ++j)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    gcs.put_object(kBucket, follower, "{}");
  }
  release();
  EXPECT_EQ(child->wait(), 0) << child->err();
  EXPECT_EQ(status_json()["state"], "succeeded");
}

TEST_F(BootstrapTest, TheScriptStaysCompact) {
  // It travels in every Job's spec: well within one argv string (128 KiB) and the 1.5 MB object
  // limit, with comments stripped at build time. (32 KiB until --notify's payload, 33 KiB; 48 KiB
  // until the log's composition, issue #30, took it to 49 KiB; 56 KiB until a server's mode and
  // --idle-stop, issue #31, took it to 57 KiB: a Job's argv string may be 128 KiB, so 60 KiB
  // still leaves the spec more than half of it.)
  EXPECT_LT(bootstrap_source().size(), 60u * 1024);
  EXPECT_EQ(bootstrap_source().find("\n#"), std::string_view::npos) << "comments are stripped";
  EXPECT_EQ(bootstrap_source().find("\n\n"), std::string_view::npos) << "blank lines too";
  EXPECT_EQ(bootstrap_source().find("/tmp/kinetic"), std::string_view::npos);
  EXPECT_EQ(bootstrap_command(),
            (std::vector<std::string>{"python3", "-c", std::string(bootstrap_source())}));
  // RESULTS_URI is a prefix: it always ends with '/'.
  EXPECT_EQ(bootstrap_env({.results_uri = "gs://b/jobs/j"}).back().second, "gs://b/jobs/j/");
  EXPECT_EQ(bootstrap_env({.results_uri = "gs://b/jobs/j/"}).back().second, "gs://b/jobs/j/");
}

std::string call_file(const fs::path& dir, const std::string& expression) {
  const std::string bytes = test::call_file_bytes(dir, "operator.mul", expression);
  EXPECT_FALSE(bytes.empty()) << "could not make a call file of " << expression;
  return bytes;
}

// A function job on a pod: the bootstrap fetches the call and the runner beside the spec, checks
// both against the spec's sha256s, runs the call in the job's directory, and its outcome
// travels in the outputs (.kinetic/result.pkl); the labels reach status.json.
TEST_F(BootstrapTest, AFunctionJobRunsTheCallAndItsResultTravelsInTheOutputs) {
  stage_context({{"lib.py", {"X = 1\n", 0644}}});
  stage_function(call_file(tmp, "(operator.mul, (6, 7), {})"));
  labels = {{"kinetic.dev/group", "grp-0123abcd"}};
  stage_spec("operator.mul", JobKind::function);
  auto child = start();
  ASSERT_EQ(child->wait(), 0) << child->err();
  auto st = status_json();
  EXPECT_EQ(st["state"], "succeeded");
  EXPECT_EQ(st["file"], "operator.mul");
  EXPECT_EQ(st["labels"], (nlohmann::json{{"kinetic.dev/group", "grp-0123abcd"}}));
  const fs::path result = outputs() / ".kinetic" / "result.pkl";
  ASSERT_TRUE(fs::exists(result));
  const auto read = test::command_output(
      "python3 -c 'import pickle, sys; r = pickle.load(open(sys.argv[1], \"rb\")); "
      "print(r[\"ok\"], r[\"value\"])' " +
      result.string());
  EXPECT_EQ(read.out, "True 42\n");
}

TEST_F(BootstrapTest, AFunctionJobsExceptionFailsItWithThePythonLastLine) {
  stage_context({{"lib.py", {"X = 1\n", 0644}}});
  stage_function(call_file(tmp, "(operator.truediv, (1, 0), {})"));
  stage_spec("operator.truediv", JobKind::function);
  auto child = start();
  EXPECT_EQ(child->wait(), 1) << child->err();
  auto st = status_json();
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["error"], "ZeroDivisionError: division by zero") << st.dump();
  EXPECT_TRUE(fs::exists(outputs() / ".kinetic" / "result.pkl"));
}

// Whoever can write the bucket but not the Job cannot swap the call (or the runner) for another.
TEST_F(BootstrapTest, AFunctionCallChangedInTheBucketNeverRuns) {
  stage_context({{"lib.py", {"X = 1\n", 0644}}});
  stage_function(call_file(tmp, "(operator.mul, (6, 7), {})"));
  stage_spec("operator.mul", JobKind::function);
  gcs.put_object(kBucket, results_prefix() + "function.pkl",
                 call_file(tmp, "(exec, ('open(\"/tmp/pwned\", \"w\")',), {})"));
  auto child = start();
  EXPECT_EQ(child->wait(), 126);
  auto st = status_json();
  EXPECT_NE(st["error"].get<std::string>().find("function.pkl checksum mismatch"),
            std::string::npos)
      << st.dump();
  // The runner too.
  stage_function(call_file(tmp, "(operator.mul, (6, 7), {})"));
  stage_spec("operator.mul", JobKind::function);
  gcs.put_object(kBucket, results_prefix() + "function_runner.py", "import os\n");
  auto again = start();
  EXPECT_EQ(again->wait(), 126);
  EXPECT_NE(status_json()["error"].get<std::string>().find("function_runner.py checksum"),
            std::string::npos);
}

}  // namespace
}  // namespace kinetic
