// CronJobs in the fake Kubernetes API server: the schedule's validation (robfig/cron's
// ParseStandard, which the API server uses, with its error words) and the CronJob controller. The
// controller keeps each CronJob's status in step with its Jobs on every pass, but fires only when
// a test calls FakeKube::trigger_cronjob: never on the clock (docs/fakes.md).
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <string>
#include <vector>

#include "fakes/fake_kube_internal.h"

namespace kinetic::fakes {

using json = nlohmann::json;
using namespace kube;

namespace {

std::vector<std::string> split(const std::string& s, char sep, bool keep_empty) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (keep_empty || !cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (keep_empty || !cur.empty()) out.push_back(cur);
  return out;
}

std::vector<std::string> fields_of(const std::string& s) {  // strings.Fields
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

struct Bounds {
  long min, max;
  std::map<std::string, long> names;
};

// strconv.Atoi, then robfig's mustParseInt.
long must_parse_int(const std::string& expr, std::string& err) {
  std::size_t i = 0;
  bool negative = false;
  if (i < expr.size() && (expr[i] == '+' || expr[i] == '-')) negative = expr[i++] == '-';
  bool digits = i < expr.size();
  long long v = 0;
  bool overflow = false;
  for (; i < expr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(expr[i]))) {
      digits = false;
      break;
    }
    if (v > (LLONG_MAX - (expr[i] - '0')) / 10) overflow = true;
    if (!overflow) v = v * 10 + (expr[i] - '0');
  }
  if (!digits) {
    err = "failed to parse int from " + expr + ": strconv.Atoi: parsing \"" + expr +
          "\": invalid syntax";
    return 0;
  }
  if (overflow) {
    err = "failed to parse int from " + expr + ": strconv.Atoi: parsing \"" + expr +
          "\": value out of range";
    return 0;
  }
  if (negative && v != 0) {
    err = "negative number (-" + std::to_string(v) + ") not allowed: " + expr;
    return 0;
  }
  return static_cast<long>(v);
}

long parse_int_or_name(const std::string& expr, const Bounds& b, std::string& err) {
  std::string lower;
  for (char c : expr) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (auto it = b.names.find(lower); it != b.names.end()) return it->second;
  return must_parse_int(expr, err);
}

// robfig/cron's getRange: "" when EXPR is a valid range of B.
std::string range_error(const std::string& expr, const Bounds& b) {
  auto range_and_step = split(expr, '/', true);
  auto low_and_high = split(range_and_step[0], '-', true);
  const bool single = low_and_high.size() == 1;
  std::string err;
  long start = 0, end = 0, step = 1;
  if (low_and_high[0] == "*" || low_and_high[0] == "?") {
    start = b.min;
    end = b.max;
  } else {
    start = parse_int_or_name(low_and_high[0], b, err);
    if (!err.empty()) return err;
    if (low_and_high.size() == 1) {
      end = start;
    } else if (low_and_high.size() == 2) {
      end = parse_int_or_name(low_and_high[1], b, err);
      if (!err.empty()) return err;
    } else {
      return "too many hyphens: " + expr;
    }
  }
  if (range_and_step.size() == 2) {
    step = must_parse_int(range_and_step[1], err);
    if (!err.empty()) return err;
    if (single) end = b.max;  // "N/step" means "N-max/step"
  } else if (range_and_step.size() > 2) {
    return "too many slashes: " + expr;
  }
  if (start < b.min)
    return "beginning of range (" + std::to_string(start) + ") below minimum (" +
           std::to_string(b.min) + "): " + expr;
  if (end > b.max)
    return "end of range (" + std::to_string(end) + ") above maximum (" + std::to_string(b.max) +
           "): " + expr;
  if (start > end)
    return "beginning of range (" + std::to_string(start) + ") beyond end of range (" +
           std::to_string(end) + "): " + expr;
  if (step == 0) return "step of range should be a positive number: " + expr;
  return {};
}

// Go's time.ParseDuration, as far as "@every" needs it.
bool go_duration(const std::string& s) {
  if (s == "0") return true;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i >= s.size()) return false;
  static const char* units[] = {"ns", "us", "\u00b5s", "ms", "s", "m", "h"};
  while (i < s.size()) {
    std::size_t start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == start) return false;
    bool unit = false;
    for (const char* u : units) {
      std::string_view uv(u);
      if (s.compare(i, uv.size(), uv) == 0 &&
          (i + uv.size() == s.size() ||
           std::isdigit(static_cast<unsigned char>(s[i + uv.size()])) || s[i + uv.size()] == '.')) {
        i += uv.size();
        unit = true;
        break;
      }
    }
    if (!unit) return false;
  }
  return true;
}

bool known_zone(const std::string& name) {
  if (name == "UTC" || name == "Local" || name.empty()) return true;
  if (name.find("..") != std::string::npos) return false;
  struct stat st {};
  return ::stat(("/usr/share/zoneinfo/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::string kube::cron_schedule_error(const std::string& schedule_in) {
  std::string spec = schedule_in;
  if (spec.empty()) return "empty spec string";
  if (spec.rfind("TZ=", 0) == 0 || spec.rfind("CRON_TZ=", 0) == 0) {
    auto space = spec.find(' ');
    auto eq = spec.find('=');
    auto zone =
        spec.substr(eq + 1, space == std::string::npos ? std::string::npos : space - eq - 1);
    if (space == std::string::npos || !known_zone(zone))
      return "provided bad location " + zone + ": unknown time zone " + zone;
    spec = spec.substr(space);
    auto b = spec.find_first_not_of(" \t");
    spec = b == std::string::npos ? std::string() : spec.substr(b);
  }
  if (spec.rfind("@", 0) == 0) {
    for (const char* d :
         {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
      if (spec == d) return {};
    const std::string every = "@every ";
    if (spec.rfind(every, 0) == 0) {
      auto d = spec.substr(every.size());
      if (go_duration(d)) return {};
      return "failed to parse duration " + spec + ": time: invalid duration \"" + d + "\"";
    }
    return "unrecognized descriptor: " + spec;
  }
  auto fields = fields_of(spec);
  if (fields.size() != 5) {
    std::string list;
    for (std::size_t i = 0; i < fields.size(); ++i) list += (i ? " " : "") + fields[i];
    return "expected exactly 5 fields, found " + std::to_string(fields.size()) + ": [" + list + "]";
  }
  static const Bounds bounds[] = {
      {0, 59, {}},
      {0, 23, {}},
      {1, 31, {}},
      {1,
       12,
       {{"jan", 1},
        {"feb", 2},
        {"mar", 3},
        {"apr", 4},
        {"may", 5},
        {"jun", 6},
        {"jul", 7},
        {"aug", 8},
        {"sep", 9},
        {"oct", 10},
        {"nov", 11},
        {"dec", 12}}},
      {0, 6, {{"sun", 0}, {"mon", 1}, {"tue", 2}, {"wed", 3}, {"thu", 4}, {"fri", 5}, {"sat", 6}}},
  };
  for (int f = 0; f < 5; ++f)
    for (const auto& expr : split(fields[static_cast<std::size_t>(f)], ',', false))
      if (auto err = range_error(expr, bounds[f]); !err.empty()) return err;
  return {};
}

// ---- the CronJob controller ------------------------------------------------------------------

namespace {

const ResourceType& cron_jobs_t() {
  static const ResourceType* t = find_type("batch", "v1", "jobs");
  return *t;
}
const ResourceType& cronjobs_t() {
  static const ResourceType* t = find_type("batch", "v1", "cronjobs");
  return *t;
}

constexpr const char* kController = "cronjob-controller";

// "Complete" or "Failed" when the Job has finished, else "".
std::string finished(const json& job) {
  for (const auto& c : job.value("status", json::object()).value("conditions", json::array()))
    if ((c.value("type", "") == "Complete" || c.value("type", "") == "Failed") &&
        c.value("status", "") == "True")
      return c.value("type", std::string());
  return {};
}

bool controlled_by(const json& job, const std::string& uid) {
  for (const auto& ref : job["metadata"].value("ownerReferences", json::array()))
    if (ref.value("uid", "") == uid && ref.value("controller", false)) return true;
  return false;
}

json remove_ref(const json& active, const std::string& uid) {
  json out = json::array();
  for (const auto& r : active)
    if (r.value("uid", "") != uid) out.push_back(r);
  return out;
}

}  // namespace

void FakeKube::Impl::reconcile_cronjobs() {
  for (json* cj : list(cronjobs_t(), "")) sync_cronjob(*cj);
}

void FakeKube::Impl::sync_cronjob(json& cj) {
  const auto uid = cj["metadata"]["uid"].get<std::string>();
  const auto ns = cj["metadata"]["namespace"].get<std::string>();
  json status = cj["status"].is_object() ? cj["status"] : json::object();
  json active = status.value("active", json::array());
  std::set<std::string> children;
  std::vector<std::pair<std::string, const json*>> succeeded, failed;  // for the history limits
  for (json* j : list(cron_jobs_t(), ns)) {
    const json& job = *j;
    if (!controlled_by(job, uid)) continue;
    const auto juid = job["metadata"].value("uid", std::string());
    const auto jname = job["metadata"].value("name", std::string());
    children.insert(juid);
    bool in_active = std::any_of(active.begin(), active.end(),
                                 [&](const json& r) { return r.value("uid", "") == juid; });
    auto done = finished(job);
    if (done.empty()) {
      // A Job it owns but did not start (kubectl create job --from=cronjob/NAME, or a Job whose
      // status update it missed).
      if (!in_active && unexpected_jobs.insert(juid).second)
        new_event(cj, "Warning", "UnexpectedJob",
                  "Saw a job that the controller did not create or forgot: " + jname, kController);
      continue;
    }
    if (in_active) {
      active = remove_ref(active, juid);
      new_event(cj, "Normal", "SawCompletedJob",
                "Saw completed job: " + jname + ", condition: " + done, kController);
    }
    const json jstatus = job.value("status", json::object());
    if (done == "Complete") {
      auto completed = jstatus.value("completionTime", std::string());
      auto last = status.value("lastSuccessfulTime", std::string());
      auto c = parse_rfc3339(completed), l = parse_rfc3339(last);
      if (c && (!l || *c > *l)) status["lastSuccessfulTime"] = completed;
    }
    (done == "Complete" ? succeeded : failed)
        .emplace_back(jstatus.value("startTime", std::string()) + " " + jname, j);
  }
  for (const auto& ref : json(active)) {
    const auto ruid = ref.value("uid", std::string());
    if (children.count(ruid)) continue;
    new_event(cj, "Normal", "MissingJob",
              "Active job went missing: " + ref.value("name", std::string()), kController);
    active = remove_ref(active, ruid);
  }
  // The oldest finished Jobs beyond the history limits go, with their pods (byJobStartTime:
  // startTime, then name).
  std::vector<std::string> doomed;
  for (auto [jobs_of, limit_key] : {std::pair{&succeeded, "successfulJobsHistoryLimit"},
                                    std::pair{&failed, "failedJobsHistoryLimit"}}) {
    const json spec = cj.value("spec", json::object());
    if (!spec.contains(limit_key) || !spec[limit_key].is_number()) continue;
    auto limit = static_cast<std::size_t>(std::max(0L, spec[limit_key].get<long>()));
    std::sort(jobs_of->begin(), jobs_of->end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i + limit < jobs_of->size(); ++i)
      doomed.push_back((*jobs_of)[i].second->at("metadata").value("name", std::string()));
  }
  for (const auto& name : doomed) {
    if (!find(cron_jobs_t(), ns, name)) continue;
    delete_object(cron_jobs_t(), ns, name, "Background", std::nullopt, nullptr);
    new_event(cj, "Normal", "SuccessfulDelete", "Deleted job " + name, kController);
  }
  if (active.empty())
    status.erase("active");
  else
    status["active"] = active;
  if (status != cj["status"]) {
    cj["status"] = status;
    update(cronjobs_t(), cj);
  }
}

std::string FakeKube::Impl::trigger_cronjob(const std::string& ns, const std::string& name) {
  json* cjp = find(cronjobs_t(), ns, name);
  if (!cjp) return {};
  json& cj = *cjp;
  sync_cronjob(cj);  // Jobs that finished leave status.active first
  const json spec = cj.value("spec", json::object());
  if (spec.value("suspend", false)) return {};
  const auto uid = cj["metadata"]["uid"].get<std::string>();
  json status = cj["status"].is_object() ? cj["status"] : json::object();
  json active = status.value("active", json::array());
  const auto policy = spec.value("concurrencyPolicy", std::string("Allow"));
  if (policy == "Forbid" && !active.empty()) {
    new_event(cj, "Normal", "JobAlreadyActive",
              "Not starting job because prior execution is running and concurrency policy is "
              "Forbid",
              kController);
    return {};
  }
  if (policy == "Replace") {
    for (const auto& ref : json(active)) {
      const auto jname = ref.value("name", std::string());
      if (find(cron_jobs_t(), ns, jname))
        delete_object(cron_jobs_t(), ns, jname, "Background", std::nullopt, nullptr);
      active = remove_ref(active, ref.value("uid", std::string()));
      new_event(cj, "Normal", "SuccessfulDelete", "Deleted job " + jname, kController);
    }
  }
  // The scheduled time: this minute, or the one after the last scheduled time (and past any Job
  // of that name), so that each trigger makes its own Job.
  auto minutes = SysClock::to_time_t(SysClock::now()) / 60;
  if (auto last = parse_rfc3339(status.value("lastScheduleTime", std::string())))
    minutes = std::max<std::time_t>(minutes, SysClock::to_time_t(*last) / 60 + 1);
  while (find(cron_jobs_t(), ns, name + "-" + std::to_string(minutes))) ++minutes;
  const auto scheduled = SysClock::from_time_t(minutes * 60);
  const auto job_name = name + "-" + std::to_string(minutes);

  const json tmpl = spec.value("jobTemplate", json::object());
  const json tmd = tmpl.value("metadata", json::object());
  json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"}};
  job["metadata"] = {{"name", job_name}};
  if (tmd.contains("labels") && tmd["labels"].is_object() && !tmd["labels"].empty())
    job["metadata"]["labels"] = tmd["labels"];
  json annotations = tmd.contains("annotations") && tmd["annotations"].is_object()
                         ? tmd["annotations"]
                         : json::object();
  annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"] = rfc3339(scheduled);
  job["metadata"]["annotations"] = annotations;
  job["metadata"]["ownerReferences"] = {{{"apiVersion", "batch/v1"},
                                         {"kind", "CronJob"},
                                         {"name", name},
                                         {"uid", uid},
                                         {"controller", true},
                                         {"blockOwnerDeletion", true}}};
  job["spec"] = tmpl.value("spec", json::object());
  json created;
  try {
    created = create(cron_jobs_t(), ns, std::move(job), false);
  } catch (const ApiError& e) {
    new_event(cj, "Warning", "FailedCreate", "Error creating job: " + e.message, kController);
    return {};
  }
  new_event(cj, "Normal", "SuccessfulCreate", "Created job " + job_name, kController);
  active.push_back({{"kind", "Job"},
                    {"namespace", ns},
                    {"name", job_name},
                    {"uid", created["metadata"]["uid"]},
                    {"apiVersion", "batch/v1"},
                    {"resourceVersion", created["metadata"]["resourceVersion"]}});
  status["active"] = active;
  status["lastScheduleTime"] = rfc3339(scheduled);
  cj["status"] = status;
  update(cronjobs_t(), cj);
  return job_name;
}

}  // namespace kinetic::fakes
