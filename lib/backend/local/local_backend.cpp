#include "backend/local/local_backend.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "backend/local/gcs_cache.h"
#include "backend/local/job_log.h"
#include "backend/local/local_exec.h"
#include "backend/local/local_pipeline_records.h"
#include "backend/local/local_port.h"
#include "backend/local/supervisor.h"
#include "backend/process_identity.h"
#include "core/copy_tree.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"
#include "job/function_call.h"
#include "render/output.h"

namespace kinetic {

namespace {

std::optional<nlohmann::json> read_json(const fs::path& p) {
  std::optional<std::string> text;
  try {
    text = read_file(p);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

double mtime_age_seconds(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return 0;
  return now_unix() - static_cast<double>(st.st_mtim.tv_sec);
}

uint64_t tree_bytes(const fs::path& p) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> local_job_base_env(
    const std::vector<std::pair<std::string, std::string>>& caller_env) {
  static const std::vector<std::string> keep = {"PATH", "HOME", "USER",   "LOGNAME", "SHELL",
                                                "LANG", "TZ",   "TMPDIR", "TERM"};
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : caller_env) {
    if (std::find(keep.begin(), keep.end(), k) != keep.end() || starts_with(k, "LC_"))
      out.emplace_back(k, v);
  }
  return out;
}

std::unique_ptr<PipelineRecords> LocalBackend::pipeline_records() {
  return std::make_unique<LocalPipelineRecords>(state_dir_);
}

LocalBackend::LocalBackend(fs::path state_dir,
                           std::vector<std::pair<std::string, std::string>> base_env,
                           int kill_grace_seconds)
    : state_dir_(std::move(state_dir)),
      base_env_(std::move(base_env)),
      kill_grace_seconds_(kill_grace_seconds) {}

std::optional<std::string> LocalBackend::staged_context(const std::string& sha256,
                                                        Compression compression) {
  fs::path dest = local_context_path(state_dir_, sha256, compression);
  if (::utimensat(AT_FDCWD, dest.c_str(), nullptr, 0) != 0) return std::nullopt;  // "last used"
  return "file://" + dest.string();
}

fs::path local_context_path(const fs::path& state_dir, const std::string& sha256,
                            Compression compression) {
  return state_dir / "store" / "contexts" / (sha256 + std::string(archive_extension(compression)));
}

namespace {

class LocalSubmissionPreview : public SubmissionPreview {
 public:
  explicit LocalSubmissionPreview(fs::path state_dir) : state_dir_(std::move(state_dir)) {}
  bool gzip_for_prebuilt_images() const override { return false; }
  std::string image(const ImageRecipe* recipe, const std::string& custom) const override {
    return recipe ? recipe->tag : custom;
  }
  std::string context_uri(const std::string& sha256, Compression compression) const override {
    return "file://" + local_context_path(state_dir_, sha256, compression).string();
  }
  std::vector<nlohmann::ordered_json> manifests(const JobSpec&) const override { return {}; }

 private:
  fs::path state_dir_;
};

}  // namespace

std::unique_ptr<SubmissionPreview> make_local_submission_preview(fs::path state_dir) {
  return std::make_unique<LocalSubmissionPreview>(std::move(state_dir));
}

std::string LocalBackend::stage_context(const fs::path& archive, const std::string& sha256,
                                        Compression compression, bool* uploaded) {
  fs::path dest = local_context_path(state_dir_, sha256, compression);
  make_dirs(dest.parent_path());
  std::error_code ec;
  if (fs::exists(dest, ec)) {
    *uploaded = false;
    fs::remove(archive, ec);
    ::utimensat(AT_FDCWD, dest.c_str(), nullptr, 0);  // "last used", for cleanup
  } else {
    // Kept for later runs, so made durable first. Same filesystem (the archive was written under
    // STATE/tmp): an atomic rename. A concurrent run staging the same content renames identical
    // bytes over it, which is harmless.
    int fd = ::open(archive.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) {
      if (fd >= 0) ::close(fd);
      throw Error(Errc::internal, "cannot stage context " + archive.string() + ": " +
                                      std::strerror(errno) + "; check free space");
    }
    ::close(fd);
    fs::rename(archive, dest, ec);
    if (ec)
      throw Error(Errc::internal, "cannot stage context to " + dest.string() + ": " + ec.message());
    *uploaded = true;
  }
  return "file://" + dest.string();
}

DataMount LocalBackend::stage_data(const DataMount& mount, bool grant) {
  // Your own credentials read the bucket here: there is nothing to grant.
  if (!mount.is_gcs()) return Backend::stage_data(mount, grant);
  if (!storage_)
    throw Error(Errc::unsupported, "--data " + mount.source + ": this kinetic cannot read gs://");
  auto say = [&](const GcsCacheResult& what) {
    if (notes_)
      notes_("kinetic: downloading " + mount.source + "/ (" + std::to_string(what.objects) +
             " objects, " + format_bytes(what.bytes) + ") into " + what.dir.parent_path().string() +
             "/, once");
  };
  const GcsCacheResult copy =
      fetch_gcs_prefix(storage_(), state_dir_, mount.bucket(), mount.prefix(), say);
  DataMount staged = mount;
  staged.staged_uri = "file://" + copy.dir.string();
  return staged;
}

void LocalBackend::submit(const JobSpec& spec, const std::map<std::string, std::string>& secrets) {
  fs::path dir = job_dir(spec.id);
  make_dirs(dir.parent_path());
  if (::mkdir(dir.c_str(), 0700) != 0) {
    if (errno == EEXIST) throw Error(Errc::internal, "job id " + spec.id + " is already taken");
    throw Error(Errc::internal, "cannot create " + dir.string() + ": " + std::strerror(errno));
  }
  atomic_write(spec_path(dir), to_json(spec).dump(2) + "\n", 0600, Durability::unsynced);
  if (spec.function) stage_function_call(*spec.function, dir);
  if (spec.debug) stage_debug_launcher(dir);
  SupervisorSetup setup;
  setup.job_dir = dir;
  std::string uri = spec.context_uri;
  setup.context_archive = starts_with(uri, "file://") ? fs::path(uri.substr(7)) : fs::path(uri);
  setup.spec = spec;
  setup.secrets = secrets;
  setup.base_env = base_env_;
  setup.kill_grace_seconds = kill_grace_seconds_;
  int notify[2];
  if (::pipe2(notify, O_CLOEXEC | O_NONBLOCK) == 0) {
    setup.notify_fd = notify[1];
  } else {
    notify[0] = notify[1] = -1;  // followers fall back to inotify
  }
  Child child;
  try {
    child.pid = start_supervisor(setup);
  } catch (...) {
    for (int fd : notify)
      if (fd >= 0) ::close(fd);
    throw;
  }
  if (notify[1] >= 0) ::close(notify[1]);
  child.notify_read = notify[0];
  std::lock_guard lock(children_mu_);
  children_[spec.id] = child;
}

std::optional<LocalBackend::Child> LocalBackend::take_child(const std::string& id) {
  std::lock_guard lock(children_mu_);
  auto it = children_.find(id);
  if (it == children_.end()) return std::nullopt;
  Child child = it->second;
  children_.erase(it);
  return child;
}

JobStatus LocalBackend::read_status(const std::string& id) {
  fs::path dir = job_dir(id);
  auto j = read_json(status_path(dir));
  JobStatus st;
  if (j) {
    st = job_status_from_json(*j);
  } else {
    auto spec = read_json(spec_path(dir));
    if (!spec) throw Error(Errc::not_found, "job " + id + " has no record in " + dir.string());
    st = initial_status(job_spec_from_json(*spec));
  }
  if (!st.terminal() && !supervisor_alive(dir)) {
    // The runner may have written its final word just before exiting: read once more.
    if (auto again = read_json(status_path(dir))) st = job_status_from_json(*again);
    if (!st.terminal()) {
      // The runner was killed or the machine restarted: say so, and stop what is left.
      // Only the job's own group: after a reboot or pid reuse the id names a stranger's.
      kill_recorded_group({st.pgid, st.pgid_start, st.pgid_session, st.boot_id});
      st.state = std::string(kLost);
      st.error = "the job's runner stopped unexpectedly (killed, or the machine restarted)";
      st.finished = rfc3339(now_unix());
      try {
        atomic_write(status_path(dir), to_json(st).dump(2) + "\n", 0600, Durability::unsynced);
      } catch (const Error&) {
      }
    }
  }
  return st;
}

JobStatus LocalBackend::follow_child(const std::string& id, Child child, LogSink& out,
                                     const Interrupt* interrupt) {
  JobLogReader reader(log_path(job_dir(id)));
  for (;;) {
    pollfd p[2] = {{child.notify_read, POLLIN, 0}, {interrupt ? interrupt->fd : -1, POLLIN, 0}};
    int r = ::poll(p, 2, -1);
    if (r < 0 && errno != EINTR) break;
    bool closed = false;
    if (p[0].revents & (POLLIN | POLLHUP)) {
      char buf[4096];
      ssize_t n;
      while ((n = ::read(child.notify_read, buf, sizeof buf)) > 0) {
      }
      closed = n == 0;
    }
    reader.drain(out);
    if (closed) break;  // the runner exited: its final status is written
    if (interrupt && (p[1].revents & POLLIN)) {
      char drain[64];
      while (::read(interrupt->fd, drain, sizeof drain) > 0) {
      }
      interrupt->on_interrupt();
    }
  }
  ::close(child.notify_read);
  JobStatus st = read_status(id);
  reap_runner(child.pid, st);
  reader.drain(out);
  return st;
}

void LocalBackend::reap_runner(pid_t runner, const JobStatus& st) {
  // A held job's runner lives on through the hold (--hold-on-failure): not waited for.
  ::waitpid(runner, nullptr, is_held(st, rfc3339(now_unix())) ? WNOHANG : 0);
}

namespace {

// Positions READER where REQUEST's log starts (the last lines, or a time) and prints up to there.
void start_reading(JobLogReader& reader, const LogRequest& request, LogSink& sink) {
  if (request.tail >= 0)
    reader.tail(sink, static_cast<size_t>(request.tail));
  else if (request.since)
    reader.skip_before(*request.since);
}

}  // namespace

JobStatus LocalBackend::follow(const std::string& id, LogSink* sink, const Interrupt* interrupt,
                               const LogRequest& from) {
  fs::path dir = job_dir(id);
  struct NullSink : LogSink {
    void write(LogStream, std::string_view) override {}
  } null_sink;
  LogSink& out = sink ? *sink : null_sink;
  const std::optional<Child> child = take_child(id);
  if (child && child->notify_read >= 0) return follow_child(id, *child, out, interrupt);

  // A finished job needs no watching (and an inotify instance costs milliseconds to close).
  JobStatus first = read_status(id);
  if (first.terminal()) {
    JobLogReader reader(log_path(dir));
    start_reading(reader, from, out);
    reader.drain(out);
    if (child) reap_runner(child->pid, first);
    return first;
  }
  JobLogReader reader(log_path(dir));
  start_reading(reader, from, out);
  int ino = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (ino >= 0) ::inotify_add_watch(ino, dir.c_str(), IN_MODIFY | IN_MOVED_TO | IN_CLOSE_WRITE);

  JobStatus st = read_status(id);
  bool check_status = false;
  for (;;) {
    reader.drain(out);
    if (check_status) st = read_status(id);
    if (st.terminal()) {
      reader.drain(out);  // the runner wrote its last record before its final status
      break;
    }
    pollfd p[2] = {{ino, POLLIN, 0}, {interrupt ? interrupt->fd : -1, POLLIN, 0}};
    int r = ::poll(p, 2, 1000);
    check_status = (r == 0);  // a quiet second: look at the runner (it may have died)
    if (r > 0 && (p[0].revents & POLLIN)) {
      alignas(inotify_event) char buf[4096];
      ssize_t n;
      while ((n = ::read(ino, buf, sizeof buf)) > 0) {
        for (char* ptr = buf; ptr < buf + n;) {
          auto* ev = reinterpret_cast<inotify_event*>(ptr);
          if (ev->len > 0 && std::strcmp(ev->name, "status.json") == 0) check_status = true;
          ptr += sizeof(inotify_event) + ev->len;
        }
      }
    }
    if (r > 0 && interrupt && (p[1].revents & POLLIN)) {
      char drain[64];
      while (::read(interrupt->fd, drain, sizeof drain) > 0) {
      }
      interrupt->on_interrupt();
    }
  }
  if (ino >= 0) ::close(ino);
  // The runner exits right after its final status, unless it holds the job.
  if (child) reap_runner(child->pid, st);
  return st;
}

void LocalBackend::stream_logs(const std::string& id, const LogRequest& request, LogSink& sink,
                               const Interrupt* interrupt) {
  // One host here: --all-hosts has nothing more to show.
  fs::path dir = job_dir(id);
  if (!fs::exists(spec_path(dir))) throw Error(Errc::not_found, "no job " + id);
  if (request.follow) {
    follow(id, &sink, interrupt, request);
    return;
  }
  JobLogReader reader(log_path(dir));
  start_reading(reader, request, sink);
  if (request.tail < 0) reader.drain(sink);
}

JobStatus LocalBackend::collect(const JobSpec& spec) {
  // The runner shares this machine's filesystem and has already delivered the outputs and
  // status.json to the output_dir it was given; wait for its final word.
  JobStatus st = follow(spec.id, nullptr, nullptr);
  // Collected again, elsewhere (`kinetic collect --output DIR`): a copy of what it delivered.
  const std::optional<JobSpec> recorded = get_spec(spec.id);
  if (!recorded || spec.output_dir.empty()) return st;
  const fs::path delivered = fs::path(recorded->output_dir).lexically_normal();
  const fs::path wanted = fs::path(spec.output_dir).lexically_normal();
  if (delivered == wanted) return st;
  std::error_code ec;
  if (!fs::is_directory(delivered, ec))
    throw Error(Errc::not_found, "the outputs of " + spec.id + " were delivered to " +
                                     delivered.string() + " and are no longer there");
  copy_tree(delivered, wanted, "the outputs");
  return st;
}

void LocalBackend::clean(const JobSpec& /*spec*/) {
  // Done by the runner: it removes the work directory unless --keep. The job record stays for
  // `logs` and `status` until `cleanup`.
}

JobStatus LocalBackend::cancel(const std::string& id) {
  JobStatus st = read_status(id);
  fs::path dir = job_dir(id);
  if (is_held(st, rfc3339(now_unix()))) {
    // Releases the hold: the runner kills the stand-in, removes the work directory and
    // rewrites status.json without held_until, then exits.
    if (signal_supervisor(dir, SIGTERM)) {
      for (int i = 0; i < 1000 && supervisor_alive(dir); ++i) ::poll(nullptr, 0, 10);
    }
    return read_status(id);
  }
  if (st.terminal()) return st;
  if (!signal_supervisor(dir, SIGTERM)) {
    st = read_status(id);  // marks it lost and kills its process group
    return st;
  }
  return follow(id, nullptr, nullptr);
}

int LocalBackend::exec(const ExecRequest& request) {
  if (!fs::exists(spec_path(job_dir(request.job))))
    throw Error(Errc::not_found, "no job '" + request.job + "' in the local backend");
  const JobStatus st = read_status(request.job);
  if (st.terminal() && !is_held(st, rfc3339(now_unix())))
    throw Error(Errc::not_found, request.job + " is not running (" + st.state +
                                     "): exec needs a running job; see `kinetic logs " +
                                     request.job + "`");
  return exec_beside_job(st, request);
}

std::unique_ptr<PortDialer> LocalBackend::port_dialer(const std::string& job, int host) {
  if (!fs::exists(spec_path(job_dir(job))))
    throw Error(Errc::not_found, "no job '" + job + "' in the local backend");
  if (host != 0)
    throw Error(Errc::usage, "--host " + std::to_string(host) +
                                 ": the local backend runs a job on one host, host 0");
  const JobStatus st = read_status(job);
  if (st.terminal())
    throw Error(Errc::not_found, job + " is not running (" + st.state +
                                     "): port-forward needs a running job; see `kinetic logs " +
                                     job + "`");
  return local_port_dialer(job, [this, job] { return read_status(job); });
}

void LocalBackend::request_cancel(const std::string& id) {
  signal_supervisor(job_dir(id), SIGTERM);
}

std::optional<JobStatus> LocalBackend::get(const std::string& id) {
  if (!fs::exists(spec_path(job_dir(id)))) return std::nullopt;
  return read_status(id);
}

std::optional<JobSpec> LocalBackend::get_spec(const std::string& id) {
  auto j = read_json(spec_path(job_dir(id)));
  if (!j) return std::nullopt;
  return job_spec_from_json(*j);
}

std::vector<JobStatus> LocalBackend::list() {
  std::vector<JobStatus> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(state_dir_ / "jobs", ec)) {
    std::string id = e.path().filename().string();
    if (!looks_like_job_id(id) || !fs::exists(spec_path(e.path()))) continue;
    try {
      out.push_back(read_status(id));
    } catch (const Error&) {
    }
  }
  std::sort(out.begin(), out.end(), [](const JobStatus& a, const JobStatus& b) {
    return a.created != b.created ? a.created > b.created : a.id < b.id;
  });
  return out;
}

// The job directories list() reads, measured without reading their status again.
std::map<std::string, uint64_t> LocalBackend::record_bytes() {
  std::map<std::string, uint64_t> sizes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(state_dir_ / "jobs", ec)) {
    const std::string id = e.path().filename().string();
    if (looks_like_job_id(id) && fs::exists(spec_path(e.path()))) sizes[id] = tree_bytes(e.path());
  }
  return sizes;
}

std::vector<CleanupItem> LocalBackend::cleanup(const CleanupPolicy& policy, bool dry_run) {
  const long older_than_seconds = policy.older_than_seconds;
  std::vector<CleanupItem> items;
  std::vector<std::string> in_use;  // contexts of jobs still running
  const double now = now_unix();
  const std::string held_now = rfc3339(now);
  std::vector<JobStatus> finished;
  std::vector<FinishedRecord> records;
  for (auto& st : list()) {
    if (!st.terminal() || is_held(st, held_now)) {
      if (auto spec = get_spec(st.id)) {
        in_use.push_back(spec->context_sha256);
        for (const auto& m : spec->data) in_use.push_back(fs::path(m.staged_uri).filename());
      }
      continue;
    }
    // Finished when its status last changed: the runner's final write.
    records.push_back({st.id, now - mtime_age_seconds(status_path(job_dir(st.id)))});
    finished.push_back(std::move(st));
  }
  const std::set<std::string> doomed = records_to_remove(records, policy, now);
  for (const auto& st : finished) {
    if (!doomed.count(st.id)) continue;
    const fs::path dir = job_dir(st.id);
    items.push_back({"job", st.id, tree_bytes(dir), st.state + ", " + st.file});
    if (!dry_run) remove_all_quiet(dir);
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(state_dir_ / "store" / "contexts", ec)) {
    std::string name = e.path().filename().string();
    std::string sha = name.substr(0, name.find('.'));
    bool temp = starts_with(name, ".");
    if (!temp && std::find(in_use.begin(), in_use.end(), sha) != in_use.end()) continue;
    if (mtime_age_seconds(e.path()) < static_cast<double>(older_than_seconds)) continue;
    items.push_back({temp ? "temp" : "context", name, e.file_size(ec), "staged context"});
    if (!dry_run) remove_all_quiet(e.path());
  }
  // --data gs:// copies, by their last use (gcs_cache.h marks each use).
  for (const auto& e : fs::directory_iterator(gcs_cache_root(state_dir_), ec)) {
    const std::string name = e.path().filename().string();
    if (std::find(in_use.begin(), in_use.end(), name) != in_use.end()) continue;
    if (mtime_age_seconds(e.path()) < static_cast<double>(older_than_seconds)) continue;
    items.push_back({"data", name, tree_bytes(e.path()), "downloaded --data gs:// copy"});
    if (!dry_run) remove_all_quiet(e.path());
  }
  for (const auto& e : fs::directory_iterator(tmp_dir(), ec)) {
    // Leftovers of runs that were killed while packaging. A minute's grace spares a run that is
    // packaging right now.
    if (mtime_age_seconds(e.path()) < std::max<double>(60, older_than_seconds)) continue;
    items.push_back({"temp", e.path().filename().string(), tree_bytes(e.path()), "temporary"});
    if (!dry_run) remove_all_quiet(e.path());
  }
  return items;
}

std::vector<CleanupItem> LocalBackend::remove_job(const std::string& id, bool dry_run) {
  const fs::path dir = job_dir(id);
  if (!fs::exists(spec_path(dir)))
    throw Error(Errc::not_found, "no job '" + id + "' in the local backend");
  const JobStatus st = read_status(id);
  require_ended_for_removal(st);
  std::vector<CleanupItem> items{{"job", id, tree_bytes(dir), st.state + ", " + st.file}};
  if (!dry_run) remove_all_quiet(dir);
  return items;
}

}  // namespace kinetic
