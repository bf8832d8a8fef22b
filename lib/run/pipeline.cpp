#include "run/pipeline.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "backend/notify.h"
#include "backend/stream_sink.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/signal_pipe.h"
#include "core/strings.h"
#include "job/bootstrap.h"
#include "job/budget.h"
#include "job/catalog.h"
#include "job/function_call.h"
#include "job/image_recipe.h"
#include "job/job_env.h"
#include "job/manifest.h"
#include "job/pricing.h"
#include "pack/archive.h"
#include "pack/context_dir.h"
#include "pack/pack_cache.h"
#include "pack/requirements.h"
#include "render/printer.h"
#include "render/status_line.h"
#include "render/yaml.h"
#include "run/debug_attach.h"

namespace kinetic {

namespace {

// Step 1's findings: what runs, from where, on what.
struct Resolved {
  Accelerator accel;
  fs::path file;          // absolute; empty for a function
  fs::path anchor_dir;    // where requirements are looked for first: FILE's folder, else cwd
  fs::path context_root;  // absolute
  std::string file_rel;
  std::string workdir_rel;
  JobKind kind = JobKind::python;
  std::optional<Requirements> requirements;
  std::optional<ImageRecipe> recipe;  // kinetic's own image; empty with --image
  std::string custom_image;           // --image
  JobEnv job_env;
  std::vector<std::string> notify;  // webhook URLs: secret, they travel as KINETIC_NOTIFY
  std::optional<Budget> budget;     // --max-cost, on a backend that bills
  bool negotiated_price = false;    // accel's price is the prices setting's
  std::vector<DataMount> data;      // --data, local sources made absolute
  // Context paths a --data directory replaces ("./data:data"): left out of the context.
  std::vector<fs::path> data_excludes;
  std::optional<FunctionCall> function;  // --function
  // What the later steps need of the request, read once by resolve: none of them sees it.
  struct Options {
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> labels;
    fs::path output;  // --output made absolute; empty: ./kinetic-out/JOB
    std::vector<std::string> exclude;
    std::vector<std::pair<std::string, std::string>> inputs;
    std::optional<long> timeout_seconds;
    std::string timeout_from;  // "start", or empty: from the submit
    int retries = 0;
    int max_preemptions = 10;
    std::optional<long> checkpoint_interval_seconds;
    long hold_on_failure_seconds = 0;
    std::string priority;
    bool keep = false;
    bool detach = false;
    bool grant = false;
    bool debug = false;
    int debug_port = kDebugPort;
    // What the local backend does not use, said once rather than silently ignored.
    bool with = false;
    std::string python;
    bool max_cost = false;
  } options;
};

// --notify, else the context's notify setting (comma-separated); each checked.
std::vector<std::string> notify_urls(const RunRequest& req, const Settings& settings) {
  std::vector<std::string> urls;
  for (const auto& url : req.notify) {
    require_notify_url(url, "--notify");
    urls.push_back(url);
  }
  if (!urls.empty() || settings.notify.value.empty()) return urls;
  for (const auto& part : split(settings.notify.value, ',')) {
    const std::string url(trim(part));
    if (url.empty()) continue;
    require_notify_url(url, "the notify setting (" + settings.notify.source + ")");
    urls.push_back(url);
  }
  return urls;
}

// The values of the job's Secret: its --env values, and the notify URLs for its runner.
std::map<std::string, std::string> secret_values(const Resolved& r) {
  std::map<std::string, std::string> values = r.job_env.values;
  if (r.notify.empty()) return values;
  std::string joined;
  for (const auto& url : r.notify) joined += (joined.empty() ? "" : "\n") + url;
  values[kNotifyVariable] = joined;
  return values;
}

std::string fmt_join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::vector<std::string> redacted_urls(const std::vector<std::string>& urls) {
  std::vector<std::string> out;
  for (const auto& url : urls) out.push_back(redact_url(url));
  return out;
}

// Relative to the working directory when inside it, for messages.
std::string display_path(const fs::path& p, const fs::path& cwd) {
  auto rel = p.lexically_relative(cwd);
  if (!rel.empty() && *rel.begin() != "..") return rel.string();
  return p.string();
}

bool is_within(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

// The job's record (spec.json, status.json) is JSON, which holds UTF-8 text only: a name or
// argument that is not is refused here, before anything is packed or uploaded, rather than
// failing halfway. Environment values may be any bytes (they travel apart from the record).
void require_recordable(const RunRequest& req, const Resolved& r, const RunEnvironment& env) {
  const std::string why = " is not valid UTF-8, which kinetic's job record (JSON) cannot hold; ";
  if (!is_utf8(req.image)) {
    throw Error(Errc::usage, "--image '" + escape_non_utf8(req.image) + "'" + why +
                                 "expected e.g. us-docker.pkg.dev/PROJECT/REPO/IMAGE:TAG");
  }
  if (!is_utf8(r.file_rel)) {
    throw Error(Errc::usage,
                "the job file name '" + escape_non_utf8(r.file_rel) + "'" + why + "rename it");
  }
  for (size_t i = 0; i < req.args.size(); ++i) {
    if (!is_utf8(req.args[i])) {
      throw Error(Errc::usage, "argument " + std::to_string(i + 1) + " ('" +
                                   escape_non_utf8(req.args[i]) + "')" + why +
                                   "pass it in a file or an environment variable (--env NAME)");
    }
  }
  if (!is_utf8(r.workdir_rel)) {
    throw Error(Errc::usage, "the working directory '" + escape_non_utf8(r.workdir_rel) + "'" +
                                 why + "run kinetic from a directory whose path is UTF-8");
  }
  const std::string output = req.output.empty() ? (env.cwd / "kinetic-out").string() : req.output;
  if (!is_utf8(output)) {
    throw Error(Errc::usage, "the output directory '" + escape_non_utf8(output) + "'" + why +
                                 "pass --output DIR with a UTF-8 path");
  }
}

// The context root: --context-dir, else the nearest project folder above ANCHOR (a file in the
// folder to start from), never the home directory or / whole.
fs::path resolve_context_root(const RunRequest& req, const RunEnvironment& env,
                              const fs::path& anchor) {
  std::error_code ec;
  fs::path root;
  if (!req.context_dir.empty()) {
    fs::path c = fs::path(req.context_dir).is_absolute() ? fs::path(req.context_dir)
                                                         : env.cwd / req.context_dir;
    c = c.lexically_normal();
    if (!fs::is_directory(c, ec))
      throw Error(Errc::usage, "--context-dir " + req.context_dir + ": not a directory");
    root = c;
  } else {
    root = find_context_dir(anchor, env.home).lexically_normal();
    fs::path home = env.home.lexically_normal();
    if (root == home || root == home.parent_path() / home.filename() || root == "/")
      throw Error(Errc::usage, "the job's folder is " + root.string() +
                                   ", which kinetic will not ship whole; move the job into a "
                                   "project folder or pass --context-dir DIR");
  }
  if (root.filename().empty()) root = root.parent_path();
  return root;
}

// The job's working directory in the context: the current directory's place in it, else its root.
std::string workdir_in_context(const RunEnvironment& env, const fs::path& context_root) {
  if (!is_within(env.cwd / "x", context_root)) return "";
  std::string rel = env.cwd.lexically_relative(context_root).generic_string();
  return rel == "." ? "" : rel;
}

// What the host needs to start the job; the cloud image brings its own.
void require_host_tool(const RunEnvironment& env, const char* prog, const char* what) {
  if (!find_executable(prog, env.env.get("PATH").value_or("/usr/local/bin:/usr/bin:/bin")))
    throw Error(Errc::job_file_missing, std::string(prog) + " not found on PATH; it runs " + what +
                                            " jobs (install it, e.g. apt-get install " +
                                            (std::string(prog) == "g++" ? "g++" : prog) + ")");
}

// FILE: what it is, where its context is, and that this host can start it (local).
void resolve_job_file(const RunRequest& req, const RunEnvironment& env, Resolved& r, bool local) {
  if (req.file.empty()) throw Error(Errc::usage, "no job file given; usage: kinetic run FILE");
  fs::path file = fs::path(req.file).is_absolute() ? fs::path(req.file) : env.cwd / req.file;
  file = file.lexically_normal();
  std::error_code ec;
  auto st = fs::status(file, ec);
  if (ec || !fs::exists(st))
    throw Error(Errc::job_file_missing,
                "job file '" + req.file + "' not found (looked in " + env.cwd.string() + ")");
  if (fs::is_directory(st))
    throw Error(Errc::job_file_missing, "'" + req.file +
                                            "' is a directory; pass the file to run, e.g. " +
                                            (fs::path(req.file) / "train.py").string());
  r.file = file;
  r.anchor_dir = file.parent_path();
  r.kind = job_kind_for(file.filename().string());
  r.context_root = resolve_context_root(req, env, file);
  if (!is_within(file, r.context_root))
    throw Error(Errc::usage, "job file " + req.file + " is outside the context directory " +
                                 r.context_root.string() +
                                 "; pass --context-dir with a directory that contains it");
  r.file_rel = file.lexically_relative(r.context_root).generic_string();
  r.workdir_rel = workdir_in_context(env, r.context_root);
  if (!local) return;
  if (r.kind == JobKind::python) require_host_tool(env, "python3", ".py");
  if (r.kind == JobKind::shell) require_host_tool(env, "bash", ".sh");
  if (r.kind == JobKind::cpp) require_host_tool(env, "g++", ".cpp");
  if (r.kind == JobKind::executable && ::access(file.c_str(), X_OK) != 0)
    throw Error(Errc::job_start,
                "'" + req.file +
                    "' is not executable; kinetic runs .py, .sh and .cpp files by their "
                    "extension and anything else directly (chmod +x " +
                    req.file + ")");
}

// --function CALL: the call file's header read and hashed; the context is the current
// directory's project folder (or --context-dir), the job runs where the caller is in it.
void resolve_function(const RunRequest& req, const RunEnvironment& env, Resolved& r, bool local) {
  if (!req.file.empty()) throw Error(Errc::usage, "pass a job FILE or --function CALL, not both");
  if (!req.args.empty())
    throw Error(Errc::usage,
                "--function takes no arguments after --: the call file holds the function's");
  const fs::path call =
      (fs::path(req.function).is_absolute() ? fs::path(req.function) : env.cwd / req.function)
          .lexically_normal();
  r.function = read_function_call(call, "--function");
  r.kind = JobKind::function;
  r.anchor_dir = env.cwd;
  r.context_root = resolve_context_root(req, env, env.cwd / "x");
  r.file_rel = r.function->name.empty() ? "function" : r.function->name;
  r.workdir_rel = workdir_in_context(env, r.context_root);
  if (local) require_host_tool(env, "python3", "function");
}

Resolved::Options options_of(const RunRequest& req, const RunEnvironment& env) {
  Resolved::Options o;
  o.args = req.args;
  o.labels = req.labels;
  if (!req.output.empty())
    o.output = fs::path(req.output).is_absolute() ? fs::path(req.output) : env.cwd / req.output;
  o.exclude = req.exclude;
  o.inputs = req.inputs;
  o.timeout_seconds = req.timeout_seconds;
  if (req.timeout_from == "start") o.timeout_from = "start";
  o.retries = req.retries;
  o.max_preemptions = req.max_preemptions;
  o.checkpoint_interval_seconds = req.checkpoint_interval_seconds;
  o.hold_on_failure_seconds = req.hold_on_failure_seconds;
  o.priority = req.priority;
  o.keep = req.keep;
  o.detach = req.detach;
  o.grant = req.grant;
  o.debug = req.debug;
  o.debug_port = req.debug_port;
  o.with = !req.with.empty();
  o.python = req.python;
  o.max_cost = req.max_cost_usd.has_value();
  return o;
}

// Spot and flex-start are two ways of buying the same VMs, and a node is one or the other (GKE's
// flex-start pools take no Spot: docs/capacity.md); flex-start is GKE's, so local runs refuse it.
void require_capacity_choice(const Accelerator& a, bool local) {
  if (!a.flex_start) return;
  if (a.spot)
    throw Error(Errc::usage,
                "--spot and --flex-start are two kinds of capacity and a node has one; pick one");
  if (local)
    throw Error(Errc::usage,
                "--flex-start asks GKE's Dynamic Workload Scheduler for capacity, and this "
                "context runs jobs on this machine; drop it, or use a gke context");
  require_flex_start(a);
}

constexpr int kMostSlices = 64;

// --slices N: multislice joins N slices of one multi-host TPU over the data center network; GKE
// supports it only on multi-host TPU slice node pools ("Deploy TPU Multislices in GKE").
void require_slices(int slices, const Accelerator& a) {
  if (slices < 1 || slices > kMostSlices)
    throw Error(Errc::usage, "--slices must be between 1 and " + std::to_string(kMostSlices) +
                                 " (got " + std::to_string(slices) + ")");
  if (slices == 1 || (a.family == AcceleratorFamily::tpu && a.hosts > 1)) return;
  throw Error(Errc::usage,
              "--slices " + std::to_string(slices) + " joins slices of a multi-host TPU, and " +
                  a.name + " is " +
                  (a.family == AcceleratorFamily::tpu ? "a single-host TPU" : "not a TPU") +
                  "; use a multi-host one (e.g. -a v5litepod-16, see `kinetic accelerators`) "
                  "or drop --slices");
}

// --debug starts the job's Python under debugpy: a shell script, a C++ file or a binary has none.
void require_debuggable(const RunRequest& req, const Resolved& r) {
  if (r.kind != JobKind::python && r.kind != JobKind::function)
    throw Error(Errc::usage, "--debug runs a Python job under debugpy, and " + r.file_rel +
                                 " is a " + std::string(job_kind_name(r.kind)) +
                                 " job; debug its Python, or run it without --debug (`kinetic "
                                 "exec JOB -it -- bash` gives a shell in a running job)");
  if (req.debug_port < 1 || req.debug_port > 65535)
    throw Error(Errc::usage, "--debug-port must be 1 to 65535 (default " +
                                 std::to_string(kDebugPort) + ", debugpy's own)");
}

// kinetic's own image gets debugpy for --debug, unless the project pins its own.
void add_debugpy(std::vector<std::string>& requirements) {
  const bool listed = std::any_of(requirements.begin(), requirements.end(), [](const auto& line) {
    return requirement_project(line) == "debugpy";
  });
  if (!listed) add_requirements(requirements, {std::string(kDebugpyRequirement)}, "--debug");
}

Resolved resolve(const RunRequest& req, const RunEnvironment& env, bool local) {
  Resolved r;
  std::string accel = req.accelerator.empty() ? "cpu" : req.accelerator;
  r.accel = resolve_accelerator(accel);
  if (req.spot) r.accel.spot = true;
  if (req.flex_start) r.accel.flex_start = true;
  require_capacity_choice(r.accel, local);
  require_slices(req.slices, r.accel);
  r.accel.slices = req.slices;  // every price of the run is its N slices'

  if (r.accel.spot && r.accel.family == AcceleratorFamily::cpu && !local)
    throw Error(Errc::usage, "--spot needs an accelerator; pass --accelerator too");
  // A slice's hosts fail together (the JobSet restarts or fails them all): one held host would
  // keep the JobSet from its verdict.
  if (req.hold_on_failure_seconds > 0 && r.accel.hosts > 1)
    throw Error(Errc::usage, "--hold-on-failure holds a single-host job; " + r.accel.name +
                                 " is a slice of " + std::to_string(r.accel.hosts) +
                                 " hosts: run without it, or on a single-host accelerator");
  // Negotiated prices replace the list price wherever a price decides or shows something (not
  // on local, which bills nothing: a bad setting does not stop a local run).
  const PriceBook prices =
      local ? PriceBook{}
            : price_book_setting(env.settings.prices.value, env.settings.prices.source);
  r.negotiated_price = negotiated(r.accel, prices);
  // Both at the catalog's price of one slice, times the run's slices; from here on the run's
  // accelerator carries the run's price (every slice's).
  if (req.max_cost_usd && !local) r.budget = budget_for(*req.max_cost_usd, r.accel, prices);
  r.accel.price_per_hour = accelerator_price(r.accel, prices);

  if (req.function.empty()) {
    resolve_job_file(req, env, r, local);
  } else {
    resolve_function(req, env, r, local);
  }
  if (req.debug) require_debuggable(req, r);
  std::error_code ec;
  std::optional<fs::path> explicit_reqs;
  if (!req.requirements.empty()) {
    fs::path p = fs::path(req.requirements).is_absolute() ? fs::path(req.requirements)
                                                          : env.cwd / req.requirements;
    if (!fs::is_regular_file(p, ec))
      throw Error(Errc::usage, "--requirements " + req.requirements + ": no such file");
    explicit_reqs = p;
  }
  // Only kinetic's own image build installs them (not the local backend, not --image).
  r.requirements =
      find_requirements(r.anchor_dir, r.context_root, explicit_reqs, !local && req.image.empty());
  if (!req.image.empty()) {
    if (!req.python.empty())
      throw Error(Errc::usage, "--python picks the Python of kinetic's own image; with --image " +
                                   req.image + " the image's python3 runs; drop one of them");
    if (!req.with.empty())
      throw Error(Errc::usage, "--with adds to kinetic's own image; with --image " + req.image +
                                   " install " + req.with.front() + " in that image instead");
    if (req.image.find_first_of(" \t\n") != std::string::npos || req.image.front() == '-')
      throw Error(Errc::usage, "--image '" + req.image +
                                   "' is not an image reference; expected e.g. "
                                   "us-docker.pkg.dev/PROJECT/REPO/IMAGE:TAG");
    r.custom_image = req.image;
  } else {
    RecipeInput in;
    in.family = r.accel.family;
    if (r.requirements) in.requirements = r.requirements->lines;
    add_requirements(in.requirements, req.with, "--with");
    if (req.debug) add_debugpy(in.requirements);
    in.python = req.python;
    in.requires_python = find_requires_python(r.anchor_dir, r.context_root);
    if (!in.requires_python.empty()) in.requires_python_source = "pyproject.toml";
    in.base_image = env.settings.base_image.value;
    r.recipe = make_image_recipe(in);
  }
  r.job_env = build_job_env(req.env, req.capture_env, env.env);
  r.notify = notify_urls(req, env.settings);
  require_recordable(req, r, env);
  r.options = options_of(req, env);
  return r;
}

struct Packaged {
  PackResult result;
  fs::path archive;
  TempDir temp_dir;  // holds the archive until it is staged; removed however the run ends
};

// A gitignore line matching exactly REL (relative to the context root), specials escaped; a
// directory's ends with '/'.
std::string anchored_pattern(const fs::path& rel, bool dir) {
  std::string out = "/";
  for (char c : rel.generic_string()) {
    if (c == '*' || c == '?' || c == '[' || c == '\\' || c == '!' || c == '#') out += '\\';
    out += c;
  }
  return dir ? out + "/" : out;
}

// What the context leaves out: the defaults, .kineticignore, and kinetic's own directories.
// (--output inside the context is left out of it; ./kinetic-out is a default exclude.)
IgnoreRules context_rules(const Resolved& r, const RunEnvironment& env) {
  const fs::path& output_dir = r.options.output;
  IgnoreRules rules = IgnoreRules::defaults();
  rules.add_file(r.context_root / ".kineticignore");
  // kinetic's own state and the outputs directory never ship, wherever they are: a state dir
  // inside the context would otherwise grow with every run (each packing the last).
  for (const fs::path& own : {env.state_dir.lexically_normal(), output_dir.lexically_normal()}) {
    if (!own.empty() && is_within(own, r.context_root))
      rules.add_line(anchored_pattern(own.lexically_relative(r.context_root), true));
  }
  std::vector<std::string> excluded = r.options.exclude;
  // A call file written inside the context travels as the call, not as part of the context.
  if (r.function) excluded.push_back(r.function->local_path);
  for (const auto& file : excluded) {
    const fs::path p = fs::path(file).lexically_normal();
    if (is_within(p, r.context_root))
      rules.add_line(anchored_pattern(p.lexically_relative(r.context_root), false));
  }
  for (const fs::path& rel : r.data_excludes) rules.add_line(anchored_pattern(rel, true));
  return rules;
}

// --data, checked against the files (what validate could not see): a local SRC is a directory,
// DST does not hide what the context ships, and the backend can make DST.
void resolve_data(const RunRequest& req, const RunEnvironment& env, Resolved& r, bool local) {
  if (req.data.empty()) return;
  const IgnoreRules rules = context_rules(r, env);
  for (DataMount m : req.data) {
    const std::string flag =
        "--data '" + m.source + ":" + m.target + (m.writable ? ":rw" : "") + "'";
    if (!is_utf8(m.source) || !is_utf8(m.target))
      throw Error(Errc::usage, flag +
                                   " is not valid UTF-8, which the job's record (JSON) cannot "
                                   "hold; rename the directory");
    std::error_code ec;
    const std::string given = m.source;
    fs::path source;
    if (!m.is_gcs()) {
      source = (fs::path(m.source).is_absolute() ? fs::path(m.source) : env.cwd / m.source)
                   .lexically_normal();
      if (source.filename().empty()) source = source.parent_path();
      const auto st = fs::status(source, ec);
      if (ec || !fs::exists(st))
        throw Error(Errc::usage,
                    flag + ": " + m.source + " not found (looked in " + env.cwd.string() + ")");
      if (!fs::is_directory(st))
        throw Error(Errc::usage, flag + ": " + m.source +
                                     " is not a directory; mount the directory that holds it, or "
                                     "put the file in the context");
      m.source = source.string();
    }
    if (local && m.is_gcs() && m.writable)
      throw Error(Errc::usage,
                  flag +
                      ": the local backend reads gs:// data from a downloaded copy, so "
                      "the job's writes could not reach the bucket; drop :rw to run here, or "
                      "run on a gke context");
    if (m.absolute_target()) {
      // The local job runs as you: it can have DST only where SRC already is.
      if (local && (m.is_gcs() || source != fs::path(m.target)))
        throw Error(Errc::usage, flag + ": the local backend cannot make " + m.target +
                                     " (the job runs as you); give DST relative to the job's "
                                     "working directory, e.g. --data " +
                                     given + ":" + fs::path(m.target).filename().string());
      r.data.push_back(m);
      continue;
    }
    // A relative DST lands in the unpacked context: it must not hide a shipped file or folder
    // (or go through one), unless it is SRC itself, which is then left out of the context.
    const fs::path rel = (fs::path(r.workdir_rel) / m.target).lexically_normal();
    fs::path walked;
    for (const auto& part : rel) {
      walked /= part;
      const fs::path here = r.context_root / walked;
      const auto st = fs::symlink_status(here, ec);
      if (ec || !fs::exists(st)) break;
      const bool whole = walked == rel;
      if (rules.ignored(walked.generic_string(), fs::is_directory(st))) break;
      if (whole && !m.is_gcs() && fs::is_directory(st) && here == source) {
        r.data_excludes.push_back(rel);
        break;
      }
      if (whole || !fs::is_directory(st) || fs::is_symlink(st))
        throw Error(Errc::usage, flag + ": " + display_path(here, env.cwd) +
                                     " is part of the job's context, which DST would hide; pick "
                                     "another DST, or leave it out with .kineticignore");
    }
    r.data.push_back(m);
  }
}

Packaged package(const Resolved& r, const RunEnvironment& env, const IgnoreRules& rules,
                 Compression compression) {
  Packaged p;
  p.temp_dir = TempDir(env.state_dir / "tmp", "pack-");
  p.archive = p.temp_dir / ("context" + std::string(archive_extension(compression)));
  // On a terminal, a context that takes a while to pack shows how far it got (the line goes
  // when packing ends, or fails).
  StatusLine line(env.io);
  PackProgress progress;
  if (env.io.err_tty && !env.io.quiet) {
    const double start = now_unix();
    progress = [&line, &r, start, last = 0.0](uint64_t entries, uint64_t bytes) mutable {
      const double now = now_unix();
      if (now - start < 0.3 || now - last < 0.1) return;
      last = now;
      line.update("packaging " + r.context_root.string() + ": " + std::to_string(entries) +
                      " files, " + format_bytes(bytes),
                  /*transient=*/true);
    };
  }
  p.result = pack_directory(r.context_root, rules, p.archive, compression, progress);
  line.clear();
  constexpr uint64_t kWarnBytes = 100ull << 20;
  if (p.result.input_bytes > kWarnBytes) {
    std::string largest;
    for (const auto& [name, size] : p.result.largest)
      largest += (largest.empty() ? "" : ", ") + name + " (" + format_bytes(size) + ")";
    env.io.warn("the context " + r.context_root.string() + " holds " +
                format_bytes(p.result.input_bytes) + "; largest files: " + largest +
                ". Leave data out with .kineticignore");
  }
  return p;
}

std::string accelerator_summary(const Accelerator& a) {
  if (a.family == AcceleratorFamily::cpu) return a.name;
  std::string s = qualified_name(a) + " (" + std::string(family_name(a.family)) + ", " +
                  std::to_string(a.chips) +
                  (a.family == AcceleratorFamily::tpu ? " chips" : " GPUs");
  if (a.hosts > 1) s += " on " + std::to_string(a.hosts) + " hosts";
  s += ", " + a.machine_type + ")";
  // Multislice: N such slices, each on a node pool of its own (docs/multihost.md).
  if (a.slices > 1) s = std::to_string(a.slices) + " slices of " + s + ", one node pool each";
  return s;
}

// How long a foreground run may go unfollowed before its pod stops it: long enough for a laptop
// to ride out a network change, short enough not to bill for hours.
double follower_timeout(const Env& env) {
  const double seconds = seconds_from_env(env, "KINETIC_FOLLOWER_TIMEOUT_SECONDS", 300);
  if (seconds <= 0)
    throw Error(
        Errc::config,
        "KINETIC_FOLLOWER_TIMEOUT_SECONDS must be more than 0; unset it for the default 300");
  return seconds;
}

// How the pod keeps the run record (docs/run-record.md).
void apply_record_options(const Resolved::Options& o, JobSpec& spec) {
  spec.max_preemptions = o.max_preemptions;
  if (o.checkpoint_interval_seconds)
    spec.checkpoint_sync_seconds = static_cast<double>(*o.checkpoint_interval_seconds);
}

// The job's spec, as submit receives it and as --dry-run shows it.
JobSpec job_spec(const RunEnvironment& env, const Resolved& r, const std::string& id,
                 const std::string& context_sha256, const std::string& context_uri,
                 const std::string& image) {
  const Resolved::Options& o = r.options;
  JobSpec spec;
  spec.id = id;
  spec.file = r.file_rel;
  spec.kind = r.kind;
  spec.args = o.args;
  spec.workdir = r.workdir_rel;
  spec.accelerator = qualified_name(r.accel);
  spec.slices = r.accel.slices;
  spec.backend = env.settings.backend;
  spec.context_sha256 = context_sha256;
  spec.context_uri = context_uri;
  spec.image = image;
  spec.secret_env = r.job_env.names;
  spec.data = r.data;
  if (!r.notify.empty()) spec.secret_env.push_back(kNotifyVariable);
  if (spec.backend == "gke") spec.price_per_hour = r.accel.price_per_hour;
  spec.timeout_seconds = o.timeout_seconds;
  if (r.budget) {
    spec.max_cost_usd = r.budget->max_cost_usd;
    spec.budget_seconds = r.budget->seconds;
    if (!spec.timeout_seconds || r.budget->seconds < *spec.timeout_seconds)
      spec.timeout_seconds = r.budget->seconds;
  }
  if (spec.timeout_seconds) spec.timeout_from = o.timeout_from;
  spec.retries = o.retries;
  spec.hold_on_failure_seconds = o.hold_on_failure_seconds;
  spec.priority = o.priority;
  apply_record_options(o, spec);
  spec.keep = o.keep;
  spec.detached = o.detach;
  if (!o.detach) spec.follower_timeout_seconds = follower_timeout(env.env);
  spec.inputs = o.inputs;
  spec.function = r.function;
  spec.labels = o.labels;
  if (o.debug)
    spec.debug = DebugSpec{.port = o.debug_port,
                           .wait_seconds = kDebugWaitSeconds,
                           .remote_root = debug_remote_root(id),
                           .local_root = r.context_root.string(),
                           .launcher_sha256 = debug_launcher_sha256()};
  return spec;
}

nlohmann::ordered_json data_plan(const std::vector<DataMount>& mounts) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& m : mounts)
    out.push_back({{"source", m.source}, {"target", m.target}, {"mode", m.writable ? "rw" : "ro"}});
  return out;
}

// --dry-run: what would happen, or with -o yaml|json on a backend that creates API objects, the
// manifests run would submit.
// The plan a dry run prints with -o json/yaml (the RunPlan document, docs/schemas.md).
nlohmann::ordered_json plan_document(const RunEnvironment& env, const Resolved& r,
                                     const PackResult& pack, const std::string& job_id,
                                     const std::string& image) {
  const Resolved::Options& o = r.options;
  const Settings& s = env.settings;
  nlohmann::ordered_json plan = {
      {"dry_run", true},
      {"job", job_id},
      {"context", s.context.value},
      {"backend", s.backend},
      {"file", r.file_rel},
      {"job_kind", job_kind_name(r.kind)},
      {"args", o.args},
      {"context_dir", r.context_root.string()},
      {"context_files", pack.files},
      {"context_bytes", pack.input_bytes},
      {"context_archive_bytes", pack.archive_bytes},
      {"context_sha256", pack.sha256},
      {"requirements", r.requirements ? r.requirements->source.string() : ""},
      {"image_tag", r.recipe ? r.recipe->tag : ""},
      {"image_recipe", r.recipe ? r.recipe->summary() : "--image " + r.custom_image},
      {"accelerator", r.accel.name},
      {"spot", r.accel.spot},
      {"price_per_hour", r.accel.price_per_hour},
      {"env", r.job_env.names},
      {"notify", redacted_urls(r.notify)},
      {"data", data_plan(r.data)},
      {"timeout_seconds", o.timeout_seconds ? nlohmann::ordered_json(*o.timeout_seconds) : nullptr},
      {"max_cost_usd", r.budget ? nlohmann::ordered_json(r.budget->max_cost_usd) : nullptr},
      {"budget_seconds", r.budget ? nlohmann::ordered_json(r.budget->seconds) : nullptr},
      {"retries", o.retries},
      {"max_preemptions", o.max_preemptions},
  };
  if (s.backend == "gke") plan["image"] = image;
  if (r.accel.slices > 1) plan["slices"] = r.accel.slices;  // absent for one: the shape holds
  return plan;
}

// ARGS as a shell would need them typed: an argument with a space or a quote in '...'.
std::string shell_quoted(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) {
    const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (out.empty() ? "" : " ") + (plain ? a : quoted + "'");
  }
  return out;
}

// The plan a dry run prints as text: a line a step of the journey.
std::string plan_text(const RunEnvironment& env, const Resolved& r, const PackResult& pack,
                      const std::string& job_id, const std::string& image) {
  const Settings& s = env.settings;
  const bool gke = s.backend == "gke";
  std::string text;
  auto line = [&](const std::string& k, const std::string& v) {
    text += k + std::string(14 - std::min<size_t>(13, k.size()), ' ') + v + "\n";
  };
  line("job:", job_id + " (dry run: nothing submitted)");
  line("context:", s.context.value + " (backend " + s.backend + ")");
  line("file:", r.file_rel + " (" + std::string(job_kind_name(r.kind)) + ")");
  if (!r.options.args.empty()) line("args:", shell_quoted(r.options.args));
  line("package:", r.context_root.string() + ": " + std::to_string(pack.files) + " entries, " +
                       format_bytes(pack.input_bytes) + " -> " + format_bytes(pack.archive_bytes) +
                       ", sha256 " + pack.sha256.substr(0, 12));
  line("requirements:", r.requirements
                            ? display_path(r.requirements->source, env.cwd) + " (" +
                                  std::to_string(r.requirements->lines.size()) + " lines)"
                            : "none");
  if (r.recipe)
    line("image:", (gke ? image : r.recipe->tag + " (local: the host's own tools)") + "\n" +
                       std::string(14, ' ') + r.recipe->summary());
  else
    line("image:", r.custom_image + (gke ? " (--image, used as is)" : " (local: not used)"));
  line("accelerator:", accelerator_summary(r.accel));
  if (r.accel.price_per_hour > 0 && gke)
    line("price:",
         format_usd(r.accel.price_per_hour) + "/h " +
             (r.accel.slices > 1 ? "for its " + std::to_string(r.accel.slices) + " slices, "
                                 : std::string()) +
             (r.negotiated_price
                  ? std::string("(your price, from the prices setting)")
                  : "on-demand list price as of " + std::string(catalog_price_date()) +
                        (r.accel.spot ? " (Spot costs less)" : "")));
  if (r.budget) line("budget:", budget_line(*r.budget, r.accel));
  if (!r.job_env.names.empty()) line("env:", fmt_join(r.job_env.names));
  for (const auto& m : r.data)
    line("data:", m.source + " at " + m.target +
                      (!gke && !m.is_gcs() ? " (the directory itself)"
                       : m.writable        ? " (read-write)"
                                           : " (read-only)"));
  if (!r.notify.empty()) line("notify:", fmt_join(redacted_urls(r.notify)) + " (when it ends)");
  if (gke) text += "\nrun with -o yaml to print the Kubernetes manifests\n";
  return text;
}

int dry_run(OutputFormat format, const RunEnvironment& env, const Resolved& r,
            const PackResult& pack, Compression compression) {
  const SubmissionPreview& preview = *env.preview;
  const std::string job_id = new_job_id();
  const std::string image = preview.image(r.recipe ? &*r.recipe : nullptr, r.custom_image);
  if (format == OutputFormat::yaml || format == OutputFormat::json) {
    auto docs = preview.manifests(job_spec(env, r, job_id, pack.sha256,
                                           preview.context_uri(pack.sha256, compression), image));
    if (!docs.empty() && format == OutputFormat::yaml) {
      std::string y = to_yaml_stream(docs);
      std::fwrite(y.data(), 1, y.size(), env.io.out);
      return 0;
    }
    if (!docs.empty()) {
      nlohmann::ordered_json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", docs}};
      print_document(env.io.out, OutputFormat::json, list);
      return 0;
    }
    print(env.io, format,
          {.kind = "RunPlan", .fields = plan_document(env, r, pack, job_id, image)});
    return 0;
  }
  const std::string text = plan_text(env, r, pack, job_id, image);
  std::fwrite(text.data(), 1, text.size(), env.io.out);
  return 0;
}

// Wall time per pipeline step, shown with -v 2 (bench/ reads it to break a run down).
class StepClock {
 public:
  explicit StepClock(const IOStreams& io) : io_(io), last_(std::chrono::steady_clock::now()) {}
  void mark(const char* step) {
    auto now = std::chrono::steady_clock::now();
    text_ += std::string(text_.empty() ? "" : ", ") + step + " " +
             format_ms(std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }
  ~StepClock() {
    if (io_.verbosity >= 2 && !text_.empty()) io_.info("kinetic: steps: " + text_);
  }

 private:
  static std::string format_ms(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f ms", ms);
    return buf;
  }
  const IOStreams& io_;
  std::chrono::steady_clock::time_point last_;
  std::string text_;
};

// Step 2's result: the context archive, packed now (in TEMP until staged) or found already
// staged at URI (CACHED) by the fingerprint of an unchanged tree.
struct StagedContext {
  Packaged pkg;
  Compression compression = Compression::zstd;
  bool cached = false;
  std::string uri;
  std::string signature;  // the tree's fingerprint (pack_cache.h); empty on a dry run
  double newest = 0;      // its latest change
};

// How archives for R's runner are compressed: zstd, unless the backend's runner may lack the tool
// to unpack it, in a prebuilt image (--image): python3's tarfile reads only gzip before 3.14.
// Kinetic's own images carry zstd (job/image_recipe.cpp).
Compression archive_compression(bool dry_run, const RunEnvironment& env, const Resolved& r) {
  const bool gzip_if_prebuilt = dry_run ? env.preview->gzip_for_prebuilt_images()
                                        : env.backend->capabilities().gzip_for_prebuilt_images;
  return gzip_if_prebuilt && !r.recipe ? Compression::gzip : Compression::zstd;
}

// 2 package. An unchanged tree whose archive the backend already holds is neither packed nor
// staged again: its fingerprint (stat calls only) names the archive it packed into last time.
StagedContext package_context(bool dry_run, const RunEnvironment& env, const Resolved& r) {
  const Compression compression = archive_compression(dry_run, env, r);
  const IgnoreRules rules = context_rules(r, env);
  StagedContext c;
  c.compression = compression;
  if (!dry_run) {
    c.signature = tree_signature(r.context_root, rules, compression, &c.newest);
    if (auto hit = pack_cache_lookup(env.state_dir, c.signature)) {
      if (auto uri = env.backend->staged_context(hit->sha256, compression)) {
        c.pkg.result = *hit;
        c.cached = true;
        c.uri = *uri;
        return c;
      }
    }
  }
  c.pkg = package(r, env, rules, compression);
  return c;
}

// What the local backend leaves out of a run, said once rather than silently ignored.
void note_what_local_ignores(const RunEnvironment& env, const Resolved& r) {
  if (r.requirements && env.io.verbosity > 0)
    env.io.info("kinetic: local backend: " + display_path(r.requirements->source, env.cwd) +
                " is not installed; the job uses the host's python3");
  if (!r.custom_image.empty())
    env.io.info("kinetic: local backend: --image " + r.custom_image +
                " is not used; the job runs with this machine's tools");
  if (r.options.with && env.io.verbosity > 0)
    env.io.info(
        "kinetic: local backend: --with is not installed; the job uses the host's "
        "python3");
  if (!r.options.python.empty())
    env.io.info("kinetic: local backend: --python " + r.options.python +
                " is not used; the job runs with this machine's python3");
  if (r.options.max_cost)
    env.io.info(
        "kinetic: local backend: --max-cost is not used; this machine bills nothing "
        "(--timeout still applies)");
}

// 3 image: the local backend runs on the host's own tools, so there is nothing to build.
std::string prepare_image(const RunEnvironment& env, const Resolved& r, bool local) {
  if (local) note_what_local_ignores(env, r);
  if (!local && r.recipe && env.io.verbosity > 0)
    for (const auto& note : r.recipe->notes) env.io.info("kinetic: image: " + note);
  return r.recipe ? env.backend->prepare_image(*r.recipe) : r.custom_image;
}

// 4 stage: the archive goes to the backend's store, and the tree's fingerprint is remembered.
// Returns whether bytes were uploaded (false: the store had it, or the tree was unchanged).
bool stage_context(const RunEnvironment& env, StagedContext& c) {
  if (c.cached) return false;
  bool uploaded = false;
  c.uri = env.backend->stage_context(c.pkg.archive, c.pkg.result.sha256, c.compression, &uploaded);
  c.pkg.temp_dir.reset();
  pack_cache_remember(env.state_dir, c.signature, c.pkg.result, c.newest, env.now());
  return uploaded;
}

// 4 stage, --data: each mount where the runner will find it. A local directory that the backend
// copies is packed and staged like a context: content-addressed, and an unchanged directory is
// neither packed nor uploaded again.
void stage_data(const RunEnvironment& env, const Resolved& r, std::vector<DataMount>& mounts) {
  const Compression compression = archive_compression(false, env, r);
  for (DataMount& m : mounts) {
    if (m.is_gcs() || !env.backend->capabilities().copies_data_dirs) {
      m = env.backend->stage_data(m, r.options.grant);
      continue;
    }
    const fs::path root(m.source);
    const IgnoreRules rules;  // data ships whole: the context's ignore rules are not its
    double newest = 0;
    const std::string signature = tree_signature(root, rules, compression, &newest);
    if (auto hit = pack_cache_lookup(env.state_dir, signature)) {
      if (auto uri = env.backend->staged_context(hit->sha256, compression)) {
        m.staged_uri = *uri;
        m.staged_sha256 = hit->sha256;
        continue;
      }
    }
    TempDir temp(env.state_dir / "tmp", "data-");
    const fs::path archive = temp / ("data" + std::string(archive_extension(compression)));
    const PackResult packed = pack_directory(root, rules, archive, compression);
    bool uploaded = false;
    m.staged_uri = env.backend->stage_context(archive, packed.sha256, compression, &uploaded);
    m.staged_sha256 = packed.sha256;
    pack_cache_remember(env.state_dir, signature, packed, newest, env.now());
    if (env.io.err_tty && !env.io.quiet)
      env.io.info("kinetic: data " + m.source + ": " + std::to_string(packed.files) + " files, " +
                  format_bytes(packed.input_bytes) +
                  (uploaded ? ", uploaded" : ", already staged"));
  }
}

// --detach: submitted; the id on stdout (or a SubmittedJob document), and how to follow it.
int report_detached(OutputFormat format, const RunEnvironment& env, const JobSpec& spec) {
  if (format == OutputFormat::json || format == OutputFormat::yaml) {
    print(env.io, format,
          {.kind = "SubmittedJob",
           .fields = {{"id", spec.id}, {"state", "running"}, {"output_dir", spec.output_dir}}});
  } else {
    std::fprintf(env.io.out, "%s\n", spec.id.c_str());
  }
  env.io.info("kinetic: " + spec.id + " is running; follow it with `kinetic logs -f " + spec.id +
              "`");
  if (spec.debug)
    env.io.info("kinetic: it waits up to " +
                format_duration(static_cast<double>(spec.debug->wait_seconds)) +
                " for a debugger: `kinetic debug " + spec.id + "` forwards a port to it");
  return 0;
}

// 9 clean: the job has ended and its record (status, logs, outputs) stays in the backend, so a
// clean-up that fails costs the user nothing but a warning; the job's exit code stands, and
// `kinetic cleanup` removes what is left.
void clean_or_warn(const RunEnvironment& env, const JobSpec& spec) {
  try {
    env.backend->clean(spec);
  } catch (const Error& e) {
    env.io.warn("kinetic: could not clean up " + spec.id + " (" + e.what() +
                "); `kinetic cleanup` removes what is left");
  }
}

// 5-9 of a job whose image is known, followed in the foreground: submit, the job's output into
// SINK until it ends (REQUEST and INTERRUPT as Backend::stream_logs), collect, clean. The one
// copy of the journey's end, for `run` and for a pipeline's steps. CLOCK (or null) marks each
// step.
JobStatus execute(const RunEnvironment& env, const JobSpec& spec,
                  const std::map<std::string, std::string>& secrets, const LogRequest& request,
                  LogSink& sink, const Interrupt* interrupt, StepClock* clock,
                  const std::function<void()>& submitted = {}) {
  JobRunner& backend = *env.backend;
  auto mark = [clock](const char* step) {
    if (clock) clock->mark(step);
  };
  backend.submit(spec, secrets);
  mark("submit");
  if (submitted) submitted();
  try {
    backend.stream_logs(spec.id, request, sink, interrupt);
  } catch (const Error& e) {
    // A job that could not start was stopped by the backend, and its error says why.
    if (e.code() == Errc::job_start) throw;
    // Otherwise the job was submitted and may still be running (a cut stream says nothing of
    // the job): it is neither collected nor cleaned here, and the user is told how to get back
    // to it.
    throw Error(e.code(), std::string(e.what()) + "; " + spec.id +
                              " may still be running: follow it with `kinetic logs -f " + spec.id +
                              "`, stop it with `kinetic cancel " + spec.id + "`");
  }
  mark("watch+stream");
  JobStatus st;
  try {
    st = backend.collect(spec);
  } catch (const Error&) {
    // The job has ended: its Job, pods and Secret go even when its outputs could not be fetched
    // (they stay in its record; the error says where).
    clean_or_warn(env, spec);
    throw;
  }
  mark("collect");
  clean_or_warn(env, spec);
  mark("clean");
  return st;
}

}  // namespace

// The run's last line: how it ended, after how many attempts, why (the job's own last error
// line when it failed: backend/failure_cause.h), and where its outputs are.
//   kinetic: job-5c7cbd62 succeeded in 3m02s; outputs in kinetic-out/job-5c7cbd62/
//   kinetic: job-5c7cbd62 failed (exit 1) after 3m02s: AttributeError: ...; outputs in ...
std::string verdict_line(const JobStatus& st, const std::string& id) {
  const bool failed = st.state == kFailed;
  std::string verdict = id + " " + st.state;
  if (failed && st.exit_code) verdict += " (exit " + std::to_string(*st.exit_code) + ")";
  verdict += (failed ? " after " : " in ") + format_duration(st.duration_seconds);
  if (st.attempts > 1) {
    int preempted = 0;
    for (const auto& a : st.attempt_history) preempted += a.preempted ? 1 : 0;
    verdict +=
        std::string(failed ? " and " : " after ") + std::to_string(st.attempts) + " attempts";
    if (preempted > 0) verdict += " (" + std::to_string(preempted) + " preempted)";
  }
  // "job exited with code N" says no more than "(exit N)", nor "cancelled" than the state.
  const bool bare =
      st.exit_code && st.error == "job exited with code " + std::to_string(*st.exit_code);
  if (st.state != kSucceeded && !st.error.empty() && !bare && st.error != st.state)
    verdict += ": " + st.error;
  return verdict;
}

std::string summary_line(const JobStatus& st, const JobSpec& spec, const fs::path& cwd) {
  return "kinetic: " + verdict_line(st, spec.id) + "; outputs in " +
         display_path(spec.output_dir, cwd) + "/";
}

namespace {

// Where the job's outputs go: --output, else ./kinetic-out/JOB.
std::string output_dir_for(const Resolved& r, const RunEnvironment& env, const JobSpec& spec) {
  const fs::path& explicit_output = r.options.output;
  const fs::path out_dir =
      explicit_output.empty() ? env.cwd / "kinetic-out" / spec.id : explicit_output;
  return out_dir.lexically_normal().string();
}

}  // namespace

int exit_code_of(const JobStatus& st) {
  if (st.state == kSucceeded) return exit_codes::ok;
  if (st.state == kTimedOut) return exit_codes::timeout;
  if (st.state == kCancelled) return exit_codes::interrupted;
  if (st.state == kLost) return exit_codes::kinetic;
  // A failed job that reported no code, or 0, still failed.
  const int code = st.exit_code.value_or(exit_codes::kinetic);
  return code == 0 ? exit_codes::kinetic : code;
}

PreparedJob prepare_job(const RunRequest& req, const RunEnvironment& env) {
  if (req.dry_run || req.detach) throw Error(Errc::internal, "prepare_job: a foreground run only");
  if (!env.backend) throw Error(Errc::internal, "prepare_job: no backend");
  const bool local = env.settings.backend == "local";
  Resolved r = resolve(req, env, local);
  for (const auto& w : r.job_env.warnings) env.io.warn(w);
  StagedContext context = package_context(req.dry_run, env, r);
  stage_context(env, context);
  PreparedJob job;
  job.recipe = r.recipe;
  job.image_tag = r.recipe ? r.recipe->tag : r.custom_image;
  job.secrets = secret_values(r);
  job.spec = job_spec(env, r, new_job_id(), context.pkg.result.sha256, context.uri, "");
  job.spec.output_dir = output_dir_for(r, env, job.spec);
  job.spec.created = rfc3339(env.now());
  return job;
}

JobStatus run_prepared(PreparedJob& job, const RunEnvironment& env, LogSink& sink,
                       const Interrupt* interrupt) {
  job.spec.image = job.recipe ? env.backend->prepare_image(*job.recipe) : job.image_tag;
  return execute(env, job.spec, job.secrets, {.follow = true}, sink, interrupt, nullptr);
}

int run_pipeline(const RunRequest& req, const RunEnvironment& env) {
  const bool local = env.settings.backend == "local";
  StepClock clock(env.io);
  // 1 resolve
  Resolved r = resolve(req, env, local);
  resolve_data(req, env, r, local);
  clock.mark("resolve");
  for (const auto& w : r.job_env.warnings) env.io.warn(w);
  // A dry run asks the preview, a run the backend (cli/cmd_run.cpp).
  if (req.dry_run ? !env.preview : !env.backend) throw Error(Errc::internal, "run: no backend");

  // 2 package
  StagedContext context = package_context(req.dry_run, env, r);
  clock.mark("package");
  if (req.dry_run) {
    context.pkg.temp_dir.reset();
    return dry_run(req.format, env, r, context.pkg.result, context.compression);
  }

  // 3 image, 4 stage
  const std::string image = prepare_image(env, r, local);
  clock.mark("image");
  const bool uploaded = stage_context(env, context);
  stage_data(env, r, r.data);
  clock.mark("stage");

  // the job to submit (--detach: submitted here, and followed no further)
  JobSpec spec = job_spec(env, r, new_job_id(), context.pkg.result.sha256, context.uri, image);
  spec.output_dir = output_dir_for(r, env, spec);
  spec.created = rfc3339(env.now());
  if (env.io.err_tty && !env.io.quiet)
    env.io.info("kinetic: " + spec.id + ": " + r.file_rel + " on " + accelerator_summary(r.accel) +
                " via " + env.settings.context.value + " (" +
                std::to_string(context.pkg.result.files) + " files, " +
                format_bytes(context.pkg.result.input_bytes) +
                (uploaded ? "" : ", context cached") + ")");
  if (r.budget && !env.io.quiet) env.io.info("kinetic: " + budget_line(*r.budget, r.accel));
  if (req.detach) {
    env.backend->submit(spec, secret_values(r));
    clock.mark("submit");
    return report_detached(req.format, env, spec);
  }

  // 5 submit, 6-7 watch and stream (Ctrl-C cancels the job), 8 collect, 9 clean
  SignalPipe signals;  // Ctrl-C cancels the job
  bool interrupted = false;
  Interrupt intr{
      signals.fd(), [&] {
        if (!interrupted)
          env.io.info("kinetic: cancelling " + spec.id + " (Ctrl-C again to stop it at once)");
        interrupted = true;
        env.backend->request_cancel(spec.id);
      }};
  StreamSink sink(env.io);
  // --debug: the debugger's port forwarded while the job runs (run/debug_attach.h).
  std::optional<DebugForward> debugger;
  const JobStatus st =
      execute(env, spec, secret_values(r), {.follow = true, .all_hosts = req.all_hosts}, sink,
              &intr, &clock, [&] {
                if (spec.debug) debugger.emplace(*env.backend, spec, env.io);
              });
  debugger.reset();
  env.io.info(summary_line(st, spec, env.cwd));
  return exit_code_of(st);
}

}  // namespace kinetic
