#include "pipeline/pipeline_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "backend/local/local_pipeline_records.h"
#include "backend/prefixed_log_sink.h"
#include "backend/stream_sink.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"
#include "job/spec.h"
#include "pipeline/pipeline_file.h"
#include "pipeline/step_cache.h"
#include "pipeline/step_graph.h"
#include "pipeline/step_key.h"
#include "pipeline/step_schedule.h"
#include "render/printer.h"

namespace kinetic {

namespace {

// What a step runs on, as its key sees it: N slices of an accelerator are not one, but a one-slice
// step's key is what it was before multislice.
std::string step_accelerator(const JobSpec& spec) {
  return spec.slices > 1 ? spec.accelerator + " x" + std::to_string(spec.slices) : spec.accelerator;
}

// How a step's lines are told apart when steps run at once: "[train] ".
std::string step_prefix(const std::string& step) {
  return "[" + step + "] ";
}

// One step of this run: a step the run selected, or a need it takes from an earlier run.
struct StepRun {
  const PipelineStep* step = nullptr;
  bool selected = true;  // false: left out by --only/--from; its latest outputs stand in
  StepState state = StepState::waiting;
  std::string key;
  std::string job;                      // the job that runs it, or whose outputs it reuses
  std::string reused_from;              // the pipeline run that made the reused outputs
  std::string source;                   // where the reused outputs are (PipelineStore)
  fs::path output_dir;                  // ./kinetic-out/PIPELINE-ID/STEP
  std::optional<PreparedJob> prepared;  // a step that runs
  std::optional<int> exit_code;
  int code = 0;           // the exit code the step stands for (failed steps)
  std::string job_state;  // how its job ended (failed, timeout, cancelled, lost)
  std::string error;
  double duration_seconds = 0;
  double started_at = 0;   // when its job was started (0: it was not)
  double finished_at = 0;  // when it ended, or was skipped
};

// What a step's thread hands back.
struct Finished {
  std::string name;
  std::optional<JobStatus> status;  // none: it could not start or be followed
  std::string error;
  int code = 0;
};

// Relative to the working directory when inside it, for messages.
std::string display_path(const fs::path& p, const fs::path& cwd) {
  auto rel = p.lexically_relative(cwd);
  if (!rel.empty() && *rel.begin() != "..") return rel.string();
  return p.string();
}

// Ctrl-C, SIGTERM and SIGHUP while steps run, through a pipe to a thread of the watcher's own
// (the main thread waits on the steps): ON_SIGNAL runs there, once per signal.
int g_signal_pipe[2] = {-1, -1};

void on_signal(int) {
  const int saved = errno;
  const char c = 1;
  [[maybe_unused]] auto n = ::write(g_signal_pipe[1], &c, 1);
  errno = saved;
}

class SignalWatcher {
 public:
  explicit SignalWatcher(std::function<void()> on_signal_cb) : on_signal_(std::move(on_signal_cb)) {
    if (::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
    if (::pipe2(stop_, O_CLOEXEC) != 0) {
      close_pipe(g_signal_pipe);
      return;
    }
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &sa, &old_[s]);
    thread_ = std::thread([this] { watch(); });
  }
  ~SignalWatcher() {
    if (!thread_.joinable()) return;
    for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &old_[s], nullptr);
    const char c = 1;
    [[maybe_unused]] auto n = ::write(stop_[1], &c, 1);
    thread_.join();
    close_pipe(stop_);
    close_pipe(g_signal_pipe);
  }
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  static void close_pipe(int (&fds)[2]) {
    for (int& fd : fds) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
  }
  void watch() {
    for (;;) {
      pollfd p[2] = {{g_signal_pipe[0], POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (::poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (p[1].revents != 0) return;
      if (p[0].revents & POLLIN) {
        char drain[64];
        while (::read(g_signal_pipe[0], drain, sizeof drain) > 0) {
        }
        on_signal_();
      }
    }
  }

  std::function<void()> on_signal_;
  int stop_[2] = {-1, -1};
  struct sigaction old_[NSIG] {};
  std::thread thread_;
};

// All of TEXT to FD (a pipe), however the kernel splits it.
void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// "failed (exit 1): ValueError: bad input", "timeout: timed out after 60s (--timeout)".
std::string failure_text(const JobStatus& st) {
  std::string text = st.state;
  if (st.exit_code && st.state == kFailed) text += " (exit " + std::to_string(*st.exit_code) + ")";
  // "job exited with code N" says no more than "(exit N)".
  const bool bare =
      st.exit_code && st.error == "job exited with code " + std::to_string(*st.exit_code);
  if (!st.error.empty() && !bare && st.error != st.state) text += ": " + st.error;
  return text;
}

// How Ctrl-C reaches a running step's thread: a byte in a pipe that the step's wait polls
// (backend.h Interrupt); each byte is one request to cancel (the second stops it at once).
class WakePipe {
 public:
  WakePipe() {
    if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) fds_[0] = fds_[1] = -1;
  }
  ~WakePipe() {
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
  }
  WakePipe(const WakePipe&) = delete;
  WakePipe& operator=(const WakePipe&) = delete;
  int read_fd() const { return fds_[0]; }
  void ring() {
    const char c = 1;
    if (fds_[1] >= 0) {
      [[maybe_unused]] auto n = ::write(fds_[1], &c, 1);
    }
  }

 private:
  int fds_[2] = {-1, -1};
};

class PipelineRun {
 public:
  PipelineRun(const PipelineRequest& req, const RunEnvironment& env, PipelineRecords& records)
      : req_(req),
        env_(env),
        records_(records),
        file_(load_pipeline_file(req.file, env.cwd)),
        store_(*env.backend->pipeline_store()),
        cache_(store_),
        step_env_{env.settings, env.env,     env.io,      env.state_dir, file_.dir,
                  env.home,     env.backend, env.preview, env.now} {}

  int run() {
    plan();
    return req_.detach ? detach() : execute();
  }

 private:
  // Everything checked and every step prepared before any step runs.
  void plan() {
    const auto order = dependency_order(file_);
    for (const auto& name : req_.force) require_step(file_, name, "--force");
    const auto selected = select_steps(file_, req_.only, req_.from);
    id_ = new_pipeline_id();
    out_root_ = (env_.cwd / "kinetic-out" / id_).lexically_normal();
    started_ = env_.now();
    for (const PipelineStep* step : order) {
      const bool chosen = selected.count(step->name) > 0;
      bool needed = false;
      for (const auto& name : selected) {
        const auto& needs = file_.find(name)->needs;
        needed = needed || std::find(needs.begin(), needs.end(), step->name) != needs.end();
      }
      if (!chosen && !needed) continue;
      StepRun r;
      r.step = step;
      r.selected = chosen;
      r.output_dir = out_root_ / step->name;
      names_.push_back(step->name);
      runs_[step->name] = std::move(r);
    }
    for (const auto& name : names_) {
      StepRun& r = runs_[name];
      if (r.selected)
        prepare(r);
      else
        take_latest(r);
    }
  }

  // A need left out by --only/--from: its latest outputs, from an earlier run of this file.
  void take_latest(StepRun& r) {
    const auto latest = cache_.latest(file_.path, r.step->name);
    if (latest) {
      r.state = StepState::reused;
      r.key = latest->key;
      r.job = latest->job;
      r.reused_from = latest->pipeline;
      r.source = latest->outputs;
      return;
    }
    std::string needed_by;
    for (const auto& [name, other] : runs_) {
      const auto& needs = other.step->needs;
      if (other.selected && std::find(needs.begin(), needs.end(), r.step->name) != needs.end())
        needed_by = name;
    }
    throw Error(Errc::usage, file_.where(*r.step) + ": " + needed_by +
                                 " needs its outputs and none are left from an earlier run; run it "
                                 "too (drop --only or --from)");
  }

  void prepare(StepRun& r) {
    const PipelineStep& s = *r.step;
    RunRequest rr;
    rr.file = s.file;
    rr.args = s.args;
    rr.accelerator = s.accelerator;
    rr.spot = s.spot;
    rr.flex_start = s.flex_start;
    rr.env = s.env;
    rr.capture_env = s.capture_env;
    rr.timeout_seconds = s.timeout_seconds;
    rr.retries = s.retries;
    rr.slices = s.slices;
    rr.priority = s.priority;
    rr.output = r.output_dir.string();
    rr.exclude = {file_.path.string()};
    std::map<std::string, std::string> needs_keys;
    for (const auto& need : s.needs) {
      if (needs_keys.count(need)) continue;
      needs_keys[need] = runs_[need].key;
      rr.inputs.emplace_back(need, store_.outputs_of(runs_[need].job, out_root_ / need));
    }
    try {
      r.prepared = prepare_job(rr, step_env_);
    } catch (const Error& e) {
      throw Error(e.code(), file_.where(s) + ": " + e.what());
    }
    const JobSpec& spec = r.prepared->spec;
    r.key = step_key(step_key_inputs(s, spec.context_sha256, r.prepared->image_tag, spec.file,
                                     spec.workdir, step_accelerator(spec), needs_keys));
    r.job = spec.id;
    const bool forced = std::find(req_.force.begin(), req_.force.end(), s.name) != req_.force.end();
    if (forced) return;
    if (auto hit = cache_.find(r.key)) {
      r.state = StepState::reused;
      r.job = hit->job;
      r.reused_from = hit->pipeline;
      r.source = hit->outputs;
      r.prepared.reset();
    }
  }

  // Reused outputs into this run's folder; the cache then points at the newest copy, so older
  // runs' folders may go.
  void deliver_reused() {
    for (const auto& name : names_) {
      StepRun& r = runs_[name];
      if (r.state != StepState::reused) continue;
      store_.fetch_outputs(r.source, r.output_dir);
      remember(r, r.reused_from);
      r.exit_code = 0;
      env_.io.info("kinetic: step " + name + " reused: outputs of " + r.job +
                   (r.reused_from.empty() ? "" : " (" + r.reused_from + ")") + ", key " +
                   r.key.substr(0, 12));
    }
  }

  // Only a cache: a step it cannot remember runs again next time, which a warning says.
  void remember(const StepRun& r, const std::string& pipeline) {
    const CachedStep entry{r.key, r.step->name, r.job, pipeline,
                           store_.outputs_of(r.job, r.output_dir)};
    try {
      cache_.remember(entry);
      cache_.remember_latest(file_.path, entry);
    } catch (const Error& e) {
      env_.io.warn("kinetic: step " + r.step->name + " will not be reused: " + e.what());
    }
  }

  // --detach: the steps run in a process of its own session (the local counterpart of the runner
  // Job on GKE), stdin /dev/null, its output and its steps' in STATE/pipelines/runs/ID.log. The
  // plan is this process's, so the runner inherits it (and the secrets, which touch no disk);
  // this process returns once the runner has recorded itself.
  int detach() {
    if (env_.backend->capabilities().runs_pipelines_itself) return detach_to_backend();
    const fs::path log = LocalPipelineRecords(env_.state_dir).log_path(id_);
    make_dirs(log.parent_path());
    const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (log_fd < 0)
      throw Error(Errc::internal, "cannot create " + log.string() + ": " + std::strerror(errno));
    int started[2];
    if (::pipe2(started, O_CLOEXEC) != 0) {
      ::close(log_fd);
      throw Error(Errc::internal, std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    std::fflush(nullptr);  // nothing buffered here is written twice
    const pid_t pid = ::fork();
    if (pid == 0) run_detached(log_fd, started[1]);  // never returns
    ::close(log_fd);
    ::close(started[1]);
    if (pid < 0) {
      ::close(started[0]);
      throw Error(Errc::internal,
                  std::string("cannot start the pipeline's runner: ") + std::strerror(errno));
    }
    // Its first record (state running), or nothing when it died before writing one.
    std::string first;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(started[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      first.append(buf, static_cast<size_t>(n));
    }
    ::close(started[0]);
    auto doc = nlohmann::ordered_json::parse(first, nullptr, false);
    if (first.empty() || doc.is_discarded())
      throw Error(Errc::internal,
                  "the pipeline's runner stopped before it started any step; see " + log.string());
    env_.io.info("kinetic: pipeline " + id_ + " runs in the background (runner pid " +
                 std::to_string(pid) + ", its output in " + log.string() + "): `kinetic status " +
                 id_ + "`, `kinetic logs " + id_ + " --step " + names_.front() +
                 " -f`, `kinetic cancel " + id_ + "`");
    if (req_.format == OutputFormat::json || req_.format == OutputFormat::yaml) {
      doc.erase("kind");  // document_of puts them first again
      doc.erase("schema_version");
      print(env_.io, req_.format, {.kind = "PipelineRun", .fields = doc});
    } else {
      std::fprintf(env_.io.out, "%s\n", id_.c_str());
    }
    return 0;
  }

  // --detach where the backend runs the steps itself (gke: a runner Job in the cluster). Every
  // image is made and every step to run staged here (its spec, its Secret: the runner never
  // sees a secret's value), then the plan goes to the backend's runner, which writes the run's
  // record from then on. Nothing of the run stays on this machine; a failure before the runner
  // starts undoes what was staged.
  int detach_to_backend() {
    Backend& backend = *env_.backend;
    remote_ = true;
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    std::vector<const JobSpec*> staged;
    nlohmann::ordered_json runner;
    // Every image first (the long part, a build maybe), so that the Secrets staged next are
    // made in one short stretch.
    for (const auto& name : names_) {
      StepRun& r = runs_[name];
      if (r.state != StepState::waiting) continue;
      PreparedJob& job = *r.prepared;
      job.spec.image = job.recipe ? backend.prepare_image(*job.recipe) : job.image_tag;
    }
    try {
      for (const auto& name : names_) {
        StepRun& r = runs_[name];
        nlohmann::ordered_json step = {{"name", name}, {"needs", r.step->needs}};
        if (r.state == StepState::waiting) {
          PreparedJob& job = *r.prepared;
          job.spec.detached = true;  // no follower: the runner waits for it
          job.spec.follower_timeout_seconds = 0;
          step["launch"] = backend.stage_step(job.spec, job.secrets);
          step["launch"]["outputs"] = store_.outputs_of(r.job, r.output_dir);
          set_deadline(step["launch"], job.spec);
          staged.push_back(&job.spec);
          const CachedStep entry{r.key, name, r.job, id_, store_.outputs_of(r.job, r.output_dir)};
          step["cache"] = {{"uri", store_.location(StepCache::entry_name(r.key))},
                           {"entry", StepCache::entry_json(entry)}};
        }
        steps.push_back(std::move(step));
      }
      const nlohmann::ordered_json plan = {
          {"id", id_},
          {"record", document_of({.kind = "PipelineRun",
                                  .fields = document_fields("running", std::nullopt)})},
          {"latest_uri", store_.location(StepCache::latest_name(file_.path))},
          {"max_parallel", req_.max_parallel},
          {"poll_seconds", seconds_from_env(env_.env, "KINETIC_PIPELINE_POLL_SECONDS", 5)},
          {"steps", steps}};
      runner = backend.start_pipeline_runner(id_, plan);
    } catch (const std::exception& e) {
      // A record the runner will never write again says why.
      try {
        if (records_.load(id_)) {
          ended_at_ = env_.now();
          auto doc = document_of(
              {.kind = "PipelineRun", .fields = document_fields("failed", exit_codes::kinetic)});
          doc["error"] = std::string("its runner did not start: ") + e.what();
          records_.save(id_, doc);
        }
      } catch (const Error&) {
      }
      for (const JobSpec* spec : staged) {
        try {
          backend.clean(*spec);
        } catch (const Error& e) {
          env_.io.warn("kinetic: " + std::string(e.what()));
        }
      }
      throw;
    }
    runner_ = runner;
    env_.io.info("kinetic: pipeline " + id_ + " runs in the cluster (runner Job " +
                 runner.value("job", "") + "): `kinetic status " + id_ + "`, `kinetic logs " + id_ +
                 " --step " + names_.front() + " -f`, `kinetic cancel " + id_ +
                 "`; its outputs stay in the bucket (`kinetic pipeline run` again fetches them)");
    if (req_.format == OutputFormat::json || req_.format == OutputFormat::yaml) {
      print(env_.io, req_.format,
            {.kind = "PipelineRun", .fields = document_fields("running", std::nullopt)});
    } else {
      std::fprintf(env_.io.out, "%s\n", id_.c_str());
    }
    return 0;
  }

  // How long the in-cluster runner waits for a step's workload to finish before it gives up:
  // its --timeout and a grace for the pod to be scheduled and report, else a week
  // (KINETIC_PIPELINE_STEP_DEADLINE_SECONDS): a step whose Secret was deleted, or whose pod can
  // never start, must not hold the pipeline forever (docs/pipelines.md "Detached on GKE").
  void set_deadline(nlohmann::ordered_json& launch, const JobSpec& spec) const {
    constexpr double kGraceSeconds = 600;
    constexpr double kNoTimeoutSeconds = 7 * 24 * 3600;
    if (spec.timeout_seconds) {
      launch["timeout_seconds"] = *spec.timeout_seconds;
      launch["deadline_seconds"] = static_cast<double>(*spec.timeout_seconds) + kGraceSeconds;
    } else {
      launch["deadline_seconds"] =
          seconds_from_env(env_.env, "KINETIC_PIPELINE_STEP_DEADLINE_SECONDS", kNoTimeoutSeconds);
    }
  }

  // The detached runner, in the forked child: a session of its own, stdin /dev/null, stdout and
  // stderr the log, no descriptor of the caller's but the pipe that hears its first record.
  [[noreturn]] void run_detached(int log_fd, int started_fd) {
    constexpr int kStartedFd = 3;
    ::setsid();
    const int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    if (started_fd != kStartedFd) ::dup2(started_fd, kStartedFd);
    ::fcntl(kStartedFd, F_SETFD, FD_CLOEXEC);  // no job holds it open
    ::close_range(kStartedFd + 1, ~0U, 0);
    started_fd_ = kStartedFd;
    env_.io.out_tty = env_.io.err_tty = env_.io.color = false;
    int code = exit_codes::kinetic;
    try {
      code = execute();
    } catch (const Error& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      code = exit_code_for(e.code(), true);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: internal error: %s\n", e.what());
    }
    std::fflush(nullptr);
    ::_exit(code);
  }

  // Whether two steps may print at once: their lines are then prefixed "[STEP] ".
  bool prefixed() const {
    if (req_.max_parallel < 2) return false;
    std::set<std::string> to_run;
    for (const auto& [name, r] : runs_)
      if (r.state == StepState::waiting) to_run.insert(name);
    return may_overlap(file_, to_run);
  }

  int execute() {
    // From the start: `kinetic cancel` (SIGTERM) reaches a runner that recorded itself.
    SignalWatcher signals([this] { interrupt(); });
    runner_ = records_.this_runner();
    // Where a detached runner's output goes ("": the terminal's).
    runner_["log"] =
        req_.detach ? LocalPipelineRecords(env_.state_dir).log_path(id_).string() : std::string();
    make_dirs(out_root_, 0755);
    const std::string first = save_record();
    if (started_fd_ >= 0) {
      // The detached runner's first record, for the command that started it (detach()).
      write_all(started_fd_, first);
      ::close(started_fd_);
      started_fd_ = -1;
    }
    size_t to_run = 0;
    for (const auto& [name, r] : runs_) to_run += r.state == StepState::waiting ? 1 : 0;
    env_.io.info("kinetic: pipeline " + id_ + ": " + std::to_string(names_.size()) +
                 " steps from " + file_.display_name + " (" + std::to_string(to_run) + " to run, " +
                 std::to_string(names_.size() - to_run) + " reused)");
    deliver_reused();

    // The job's output: stdout and stderr as `run` streams them; with -o json|yaml stdout holds
    // the document alone, so the steps' stdout goes to stderr.
    step_io_ = env_.io;
    if (req_.format == OutputFormat::json || req_.format == OutputFormat::yaml)
      step_io_.out = env_.io.err;
    StreamSink terminal(step_io_);
    std::optional<PrefixedLogSink> by_step;
    if (prefixed()) by_step.emplace(terminal);

    std::vector<std::thread> threads;
    {
      int running = 0;
      for (;;) {
        if (!interrupted_ && records_.cancel_requested(id_)) interrupt();
        const ScheduleDecision next = schedule(slots(), req_.max_parallel, interrupted_);
        for (const auto& [name, need] : next.skip) skip(runs_[name], need);
        for (const auto& name : next.start) {
          LogSink& sink =
              by_step ? by_step->prefixed(step_prefix(name)) : static_cast<LogSink&>(terminal);
          threads.emplace_back(launch(runs_[name], sink, by_step ? &*by_step : nullptr));
          ++running;
        }
        if (!next.skip.empty() || !next.start.empty()) save_record();
        if (running == 0) break;
        Finished f;
        {
          std::unique_lock lock(mu_);
          cv_.wait(lock, [this] { return !finished_.empty(); });
          f = std::move(finished_.front());
          finished_.pop_front();
          running_jobs_.erase(runs_[f.name].job);
        }
        --running;
        record(f);
        save_record();
      }
      for (auto& t : threads) t.join();
    }
    return report();
  }

  // Where each step of the run stands, in dependency order, for schedule().
  std::vector<StepSlot> slots() {
    std::vector<StepSlot> out;
    for (const auto& name : names_)
      out.push_back({name, runs_[name].step->needs, runs_[name].state});
    return out;
  }

  // A step that never runs: a need of it failed or was skipped (NEED), or Ctrl-C was pressed.
  void skip(StepRun& r, const std::string& need) {
    r.state = StepState::skipped;
    r.finished_at = env_.now();
    r.error = need.empty() ? "the pipeline was interrupted"
                           : "needs " + need + ", which " + ended(runs_[need]);
    env_.io.info("kinetic: step " + r.step->name + " skipped: " + r.error);
  }

  // How a step that stops others ended: "failed", "was cancelled", "timed out", "was skipped".
  static std::string ended(const StepRun& r) {
    if (r.state == StepState::skipped) return "was skipped";
    if (r.job_state == kCancelled) return "was cancelled";
    if (r.job_state == kTimedOut) return "timed out";
    if (r.job_state == kLost) return "was lost";
    return "failed";
  }

  // Starts R's job on a thread of its own (the backend follows each job from its caller's
  // thread, on a backend of its own when the backend is not to be shared between threads); the
  // main thread hears of its end through finished_. Ctrl-C reaches it through its wake pipe,
  // and its thread asks its backend to cancel the job (as `run` does).
  std::thread launch(StepRun& r, LogSink& sink, PrefixedLogSink* by_step) {
    r.state = StepState::running;
    r.started_at = env_.now();
    auto wake = std::make_shared<WakePipe>();
    {
      std::lock_guard lock(mu_);
      running_jobs_[r.job] = wake;
      // Ctrl-C came while the previous step ended: this one starts cancelled.
      if (interrupted_) wake->ring();
    }
    env_.io.info("kinetic: step " + r.step->name + " (" + r.job + ") started");
    PreparedJob* job = &*r.prepared;
    const std::string name = r.step->name;
    std::shared_ptr<Backend> own = env_.backend->for_another_thread();
    return std::thread([this, job, name, &sink, by_step, wake, own] {
      Finished f;
      f.name = name;
      RunEnvironment env = step_env_;
      if (own) env.backend = own.get();
      Backend* backend = env.backend;
      const std::string id = job->spec.id;
      const Interrupt intr{wake->read_fd(), [backend, id] { backend->request_cancel(id); }};
      try {
        f.status = run_prepared(*job, env, sink, &intr);
        f.code = exit_code_of(*f.status);
      } catch (const Error& e) {
        f.error = e.what();
        f.code = exit_code_for(e.code(), true);
      } catch (const std::exception& e) {
        f.error = std::string("internal error: ") + e.what();
        f.code = exit_codes::kinetic;
      }
      if (by_step) by_step->flush(step_prefix(name));
      {
        std::lock_guard lock(mu_);
        finished_.push_back(std::move(f));
      }
      cv_.notify_one();
    });
  }

  // Ctrl-C: no step starts any more, and the running ones are cancelled (again: at once).
  void interrupt() {
    std::lock_guard lock(mu_);
    if (!interrupted_.exchange(true))
      env_.io.info("kinetic: cancelling the running steps (Ctrl-C again to stop them at once)");
    for (const auto& [job, wake] : running_jobs_) wake->ring();
  }

  void record(const Finished& f) {
    StepRun& r = runs_[f.name];
    const std::string& name = f.name;
    r.finished_at = env_.now();
    if (!f.status) {
      r.state = StepState::failed;
      r.code = f.code;
      r.error = f.error;
      env_.io.info("kinetic: step " + name + " failed: " + f.error);
      return;
    }
    const JobStatus& st = *f.status;
    r.duration_seconds = st.duration_seconds;
    r.exit_code = st.exit_code;
    if (st.state == kSucceeded) {
      r.state = StepState::succeeded;
      remember(r, id_);
      env_.io.info("kinetic: step " + name + " succeeded in " +
                   format_duration(st.duration_seconds));
      return;
    }
    r.state = StepState::failed;
    r.code = f.code;
    r.error = st.error;
    r.job_state = st.state;
    env_.io.info("kinetic: step " + name + " " + failure_text(st));
  }

  // The PipelineRun document: on stdout with -o json|yaml, and kept as the run's record (state
  // running, exit_code null, until the run ends).
  nlohmann::ordered_json document_fields(const std::string& state, std::optional<int> code) const {
    auto when = [](double t) { return t > 0 ? rfc3339(t) : std::string(); };
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    for (const auto& name : names_) {
      const StepRun& r = runs_.at(name);
      const bool has_outputs = r.state == StepState::succeeded || r.state == StepState::reused ||
                               r.state == StepState::failed;
      // A step whose job was cancelled (Ctrl-C, `kinetic cancel`) did not fail of itself.
      const std::string step_state = r.state == StepState::failed && r.job_state == kCancelled
                                         ? std::string(kCancelled)
                                         : std::string(state_name(r.state));
      steps.push_back({
          {"name", name},
          {"state", step_state},
          {"reused", r.state == StepState::reused},
          {"key", r.key},
          // A waiting step's job does not exist yet, a skipped step's never will.
          {"job",
           r.state == StepState::waiting || r.state == StepState::skipped ? std::string() : r.job},
          {"needs", r.step->needs},
          {"exit_code", r.exit_code ? nlohmann::ordered_json(*r.exit_code) : nullptr},
          {"error", r.error},
          {"duration_seconds", r.duration_seconds},
          {"output_dir", has_outputs ? output_of(r) : ""},
          {"started", when(r.started_at)},
          {"finished", when(r.finished_at)},
      });
    }
    return {
        {"id", id_},
        {"file", file_.path.string()},
        {"state", state},
        {"exit_code", code ? nlohmann::ordered_json(*code) : nullptr},
        // A run the backend runs by itself delivers nothing here: its outputs stay where the
        // steps left them.
        {"output_dir", remote_ ? std::string() : out_root_.string()},
        {"created", rfc3339(started_)},
        {"finished", when(ended_at_)},
        {"error", ""},
        {"detached", req_.detach},
        {"runner", runner_},
        {"steps", steps},
    };
  }

  // Where a step's outputs are: its folder here, or where the backend keeps them.
  std::string output_of(const StepRun& r) const {
    if (!remote_) return r.output_dir.string();
    return r.state == StepState::reused ? r.source : store_.outputs_of(r.job, r.output_dir);
  }

  // The run's record, where `status`, `logs` and `cancel` read it and in the run's folder;
  // returns its text.
  std::string save_record(const std::string& state = "running", std::optional<int> code = {}) {
    const Printable p{.kind = "PipelineRun", .fields = document_fields(state, code)};
    const auto doc = document_of(p);
    const std::string text = doc.dump(2) + "\n";
    // The run's folder first: whoever sees the record end finds its copy ended too.
    atomic_write(out_root_ / "pipeline.json", text, 0644);
    records_.save(id_, doc);
    return text;
  }

  int report() {
    int code = 0;
    const StepRun* first_failed = nullptr;
    int reused = 0, skipped = 0, failed = 0;
    for (const auto& name : names_) {
      const StepRun& r = runs_[name];
      reused += r.state == StepState::reused ? 1 : 0;
      skipped += r.state == StepState::skipped ? 1 : 0;
      failed += r.state == StepState::failed ? 1 : 0;
      if (r.state == StepState::failed && !first_failed) {
        first_failed = &r;
        code = r.code;
      }
    }
    if (interrupted_ && code == 0) code = exit_codes::interrupted;
    const std::string state = interrupted_ ? "cancelled" : code == 0 ? "succeeded" : "failed";
    ended_at_ = env_.now();
    save_record(state, code);
    const auto fields = document_fields(state, code);

    const std::string outputs = "outputs in " + display_path(out_root_, env_.cwd) + "/";
    std::string line = "kinetic: pipeline " + id_ + " " + state;
    if (code == 0) {
      line += " in " + format_duration(env_.now() - started_) + ": " +
              std::to_string(names_.size()) + " steps (" + std::to_string(reused) + " reused); " +
              outputs;
    } else if (!first_failed) {
      line += " before its steps ran; " + outputs;
    } else {
      line += ": step " + first_failed->step->name + " " + ended(*first_failed);
      if (failed > 1) line += " (and " + std::to_string(failed - 1) + " more)";
      if (skipped > 0) line += ", " + std::to_string(skipped) + " skipped";
      line += "; " + outputs + "; run it again to resume from the failed steps";
    }
    env_.io.info(line);
    if (req_.format == OutputFormat::json || req_.format == OutputFormat::yaml)
      print(env_.io, req_.format, {.kind = "PipelineRun", .fields = fields});
    return code;
  }

  const PipelineRequest& req_;
  const RunEnvironment& env_;
  PipelineRecords& records_;
  const PipelineFile file_;
  PipelineStore& store_;
  StepCache cache_;
  RunEnvironment step_env_;  // each step's file, and its working directory, are the file's
  IOStreams step_io_;
  std::string id_;
  fs::path out_root_;
  double started_ = 0;
  double ended_at_ = 0;
  nlohmann::ordered_json runner_ = nlohmann::ordered_json::object();  // who runs it (the record's)
  int started_fd_ = -1;             // a detached runner's pipe to the command that started it
  bool remote_ = false;             // the backend runs the steps by itself (detach_to_backend)
  std::vector<std::string> names_;  // the steps of this run, in dependency order
  std::map<std::string, StepRun> runs_;

  // Shared with the steps' threads and the signal watcher.
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Finished> finished_;
  std::map<std::string, std::shared_ptr<WakePipe>> running_jobs_;
  std::atomic<bool> interrupted_{false};
};

}  // namespace

void require_pipeline_backend(const std::string& backend) {
  if (backend == "local" || backend == "gke") return;
  throw Error(Errc::unsupported, "pipelines run on the local and gke backends, not on " + backend +
                                     " (docs/pipelines.md); pass --context local");
}

std::string new_pipeline_id() {
  return "pipe-" + new_job_id().substr(4);
}

int run_pipeline_file(const PipelineRequest& req, const RunEnvironment& env,
                      PipelineRecords& records) {
  if (req.max_parallel < 1)
    throw Error(Errc::usage, "--max-parallel must be at least 1, e.g. --max-parallel 2");
  require_pipeline_backend(env.settings.backend);
  if (!env.backend || !env.backend->pipeline_store())
    throw Error(Errc::internal, "pipeline run: the backend keeps no pipeline store");
  return PipelineRun(req, env, records).run();
}

}  // namespace kinetic
