#include "pipeline/step_graph.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "core/strings.h"

namespace kinetic {

namespace {

std::vector<std::string> step_names(const PipelineFile& file) {
  std::vector<std::string> names;
  for (const auto& s : file.steps) names.push_back(s.name);
  return names;
}

// A need that names no step.
void check_needs_exist(const PipelineFile& file) {
  const auto names = step_names(file);
  for (const auto& step : file.steps) {
    for (const auto& need : step.needs) {
      if (file.find(need)) continue;
      const auto near = closest_matches(need, names, 1);
      throw Error(Errc::usage, file.where(step) + ": needs '" + need + "', which is not a step" +
                                   (near.empty() ? "; the steps are " + join_or(names)
                                                 : "; did you mean " + near[0] + "?"));
    }
  }
}

// Depth-first search for a cycle; throws naming it ("a -> b -> a") at its first step's line.
class CycleFinder {
 public:
  explicit CycleFinder(const PipelineFile& file) : file_(file) {}
  void check() {
    for (const auto& step : file_.steps) visit(step);
  }

 private:
  enum class Mark { unvisited, on_path, done };

  void visit(const PipelineStep& step) {
    Mark& mark = marks_[step.name];
    if (mark == Mark::done) return;
    if (mark == Mark::on_path) fail(step.name);
    mark = Mark::on_path;
    path_.push_back(step.name);
    for (const auto& need : step.needs) visit(*file_.find(need));
    path_.pop_back();
    marks_[step.name] = Mark::done;
  }

  [[noreturn]] void fail(const std::string& again) const {
    auto first = std::find(path_.begin(), path_.end(), again);
    std::vector<std::string> cycle(first, path_.end());
    // Named from the step the file defines first, so the message does not depend on where the
    // search started.
    size_t start = 0;
    for (size_t i = 0; i < cycle.size(); ++i)
      if (file_.find(cycle[i])->line < file_.find(cycle[start])->line) start = i;
    std::rotate(cycle.begin(), cycle.begin() + static_cast<long>(start), cycle.end());
    // path_ runs from a step to what it needs: "a needs b needs a".
    std::string text;
    for (const auto& name : cycle) text += name + " needs ";
    text += cycle.front();
    throw Error(Errc::usage, file_.where(*file_.find(cycle.front())) + ": a cycle (" + text +
                                 "); remove one of these needs");
  }

  const PipelineFile& file_;
  std::map<std::string, Mark> marks_;
  std::vector<std::string> path_;
};

}  // namespace

void require_step(const PipelineFile& file, const std::string& name, const std::string& flag) {
  if (file.find(name)) return;
  const auto names = step_names(file);
  const auto near = closest_matches(name, names, 1);
  throw Error(Errc::usage, flag + " " + name + ": " + file.display_name + " has no step " + name +
                               (near.empty() ? "; its steps are " + join_or(names)
                                             : "; did you mean " + near[0] + "?"));
}

std::vector<const PipelineStep*> dependency_order(const PipelineFile& file) {
  check_needs_exist(file);
  CycleFinder(file).check();
  std::vector<const PipelineStep*> order;
  std::set<std::string> placed;
  while (order.size() < file.steps.size()) {
    // The first step in the file's order whose needs are all placed: no cycle, so one exists.
    for (const auto& step : file.steps) {
      if (placed.count(step.name)) continue;
      const bool ready = std::all_of(step.needs.begin(), step.needs.end(),
                                     [&](const std::string& n) { return placed.count(n) > 0; });
      if (!ready) continue;
      order.push_back(&step);
      placed.insert(step.name);
      break;
    }
  }
  return order;
}

std::set<std::string> dependents_of(const PipelineFile& file, const std::string& step) {
  std::set<std::string> found;
  bool grew = true;
  while (grew) {
    grew = false;
    for (const auto& s : file.steps) {
      if (found.count(s.name)) continue;
      for (const auto& need : s.needs) {
        if (need == step || found.count(need)) {
          found.insert(s.name);
          grew = true;
          break;
        }
      }
    }
  }
  found.erase(step);
  return found;
}

std::set<std::string> select_steps(const PipelineFile& file, const std::vector<std::string>& only,
                                   const std::string& from) {
  std::set<std::string> selected;
  if (!only.empty() && !from.empty())
    throw Error(Errc::usage, "--only and --from choose steps two ways; pass one of them");
  for (const auto& name : only) {
    require_step(file, name, "--only");
    selected.insert(name);
  }
  if (!from.empty()) {
    require_step(file, from, "--from");
    selected = dependents_of(file, from);
    selected.insert(from);
  }
  if (only.empty() && from.empty())
    for (const auto& s : file.steps) selected.insert(s.name);
  return selected;
}

bool may_overlap(const PipelineFile& file, const std::set<std::string>& steps) {
  for (const auto& a : steps) {
    const auto after_a = dependents_of(file, a);
    for (const auto& b : steps) {
      if (a >= b) continue;
      if (!after_a.count(b) && !dependents_of(file, b).count(a)) return true;
    }
  }
  return false;
}

}  // namespace kinetic
