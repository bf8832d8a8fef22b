#include "pipeline/pipeline_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"

namespace kinetic {

namespace {

// Where a mistake is: "FILE:LINE: step NAME: ..." (the step only when known).
class Locator {
 public:
  explicit Locator(std::string file) : file_(std::move(file)) {}
  [[noreturn]] void fail(int line, const std::string& step, const std::string& what) const {
    std::string where = file_ + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": ";
    if (!step.empty()) where += "step " + step + ": ";
    throw Error(Errc::usage, where + what);
  }

 private:
  std::string file_;
};

// 1-based; yaml-cpp marks an absent node (a key without a value) -1, and FALLBACK is then used.
int line_of(const YAML::Node& node, int fallback) {
  const int line = node.Mark().line;
  return line >= 0 ? line + 1 : fallback;
}

// "unknown field 'acelerator' (did you mean accelerator?); a step has file, args, ..."
std::string unknown_field(const std::string& key, const std::vector<std::string>& known) {
  const auto near = closest_matches(key, known, 1);
  std::string message = "unknown field '" + key + "'";
  if (!near.empty()) return message + "; did you mean " + near[0] + "?";
  return message + "; the fields are " + join_or(known);
}

bool valid_step_name(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  if (!std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

class StepParser {
 public:
  StepParser(const Locator& at, PipelineStep& step) : at_(at), step_(step) {}

  void field(const std::string& key, const YAML::Node& value, int line) {
    line_ = line;
    key_ = key;
    if (key == "file") {
      step_.file = scalar(value);
      if (step_.file.empty()) fail("file is empty; name the step's script, e.g. file: train.py");
    } else if (key == "args") {
      step_.args = list(value, "args: [\"--epochs\", \"3\"]");
    } else if (key == "accelerator") {
      step_.accelerator = scalar(value);
    } else if (key == "spot") {
      step_.spot = boolean(value);
    } else if (key == "flex-start") {
      step_.flex_start = boolean(value);
    } else if (key == "env") {
      step_.env = list(value, "env: [WANDB_API_KEY, MODE=fast]");
    } else if (key == "capture-env") {
      step_.capture_env = list(value, "capture-env: [\"KAGGLE_*\"]");
    } else if (key == "timeout") {
      const std::string text = scalar(value);
      try {
        step_.timeout_seconds = parse_duration(text, "timeout");
      } catch (const Error& e) {
        fail(e.what());
      }
      if (*step_.timeout_seconds <= 0) fail("timeout must be positive, e.g. timeout: 30m");
    } else if (key == "retries") {
      const std::string text = scalar(value);
      const bool digits =
          !text.empty() && text.size() <= 3 && std::all_of(text.begin(), text.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
          });
      if (!digits || std::stoi(text) > 100)
        fail("retries must be a number between 0 and 100, not '" + text + "'");
      step_.retries = std::stoi(text);
    } else if (key == "slices") {
      const std::string text = scalar(value);
      const bool digits =
          !text.empty() && text.size() <= 2 && std::all_of(text.begin(), text.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
          });
      if (!digits || std::stoi(text) < 1)
        fail("slices must be a number of slices, 1 or more, not '" + text + "'");
      step_.slices = std::stoi(text);  // run checks the accelerator takes them (--slices)
    } else if (key == "priority") {
      const std::string text = scalar(value);
      if (text != "low" && text != "normal" && text != "high")
        fail("priority must be low, normal or high, not '" + text + "'");
      step_.priority = text;
    } else if (key == "needs") {
      step_.needs = list(value, "needs: [prep]");
    } else if (key == "data") {
      // Not yet: a step's key would have to cover the data's content (a local directory is
      // linked, not hashed, on the local backend), or a changed dataset would reuse old outputs.
      fail(
          "data in a pipeline step is not supported yet (`kinetic run --data` is); put the data "
          "in the project folder, or fetch it from the step");
    } else {
      fail(unknown_field(key, pipeline_step_fields()));
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { at_.fail(line_, step_.name, what); }

  std::string scalar(const YAML::Node& value) const {
    if (!value.IsScalar())
      fail(key_ + " must be a single value, not " + (value.IsSequence() ? "a list" : "a map"));
    return value.Scalar();
  }

  bool boolean(const YAML::Node& value) const {
    const std::string text = to_lower(scalar(value));
    if (text == "true" || text == "yes") return true;
    if (text == "false" || text == "no") return false;
    fail(key_ + " must be true or false, not '" + value.Scalar() + "'");
  }

  std::vector<std::string> list(const YAML::Node& value, const std::string& example) const {
    if (value.IsNull()) return {};
    if (!value.IsSequence()) fail(key_ + " must be a list, e.g. " + example);
    std::vector<std::string> items;
    for (const auto& item : value) {
      if (!item.IsScalar()) {
        line_ = line_of(item, line_);
        fail("each item of " + key_ + " must be a single value, e.g. " + example);
      }
      items.push_back(item.Scalar());
    }
    return items;
  }

  const Locator& at_;
  PipelineStep& step_;
  mutable int line_ = 0;
  std::string key_;
};

PipelineStep parse_step(const Locator& at, const std::string& name, const YAML::Node& body,
                        int line) {
  PipelineStep step;
  step.name = name;
  step.line = line;
  if (!valid_step_name(name))
    at.fail(line, "",
            "'" + name +
                "' is not a step name; use letters, digits, '-' and '_' (at most 63, starting "
                "with a letter or digit)");
  if (body.IsNull()) at.fail(line, name, "no file; give it one, e.g. {file: " + name + ".py}");
  if (!body.IsMap())
    at.fail(line_of(body, line), name, "a step is a map of fields, e.g. {file: " + name + ".py}");
  StepParser parser(at, step);
  for (const auto& kv : body) {
    const int key_line = line_of(kv.first, line);
    if (!kv.first.IsScalar()) at.fail(key_line, name, "a field name must be a single word");
    parser.field(kv.first.Scalar(), kv.second, key_line);
  }
  if (step.file.empty()) at.fail(line, name, "no file; give it one, e.g. file: " + name + ".py");
  return step;
}

}  // namespace

const std::vector<std::string>& pipeline_step_fields() {
  static const std::vector<std::string> fields = {
      "file",        "args",    "accelerator", "spot",     "flex-start", "slices", "env",
      "capture-env", "timeout", "retries",     "priority", "data",       "needs"};
  return fields;
}

const PipelineStep* PipelineFile::find(std::string_view name) const {
  for (const auto& s : steps)
    if (s.name == name) return &s;
  return nullptr;
}

std::string PipelineFile::where(const PipelineStep& step) const {
  return display_name + ":" + std::to_string(step.line) + ": step " + step.name;
}

PipelineFile parse_pipeline(std::string_view text, const std::string& display_name,
                            const fs::path& dir) {
  const Locator at(display_name);
  PipelineFile file;
  file.display_name = display_name;
  file.dir = dir;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    at.fail(e.mark.line + 1, "", "not valid YAML: " + e.msg);
  }
  const std::string example = "; e.g. steps: {prep: {file: prep.py}}";
  if (root.IsNull()) at.fail(0, "", "the file is empty; a pipeline has steps" + example);
  if (!root.IsMap()) at.fail(line_of(root, 1), "", "expected a map with steps" + example);
  YAML::Node steps;
  for (const auto& kv : root) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (key == "steps") {
      steps = kv.second;
      if (steps.IsNull()) at.fail(line_of(kv.first, 1), "", "steps is empty" + example);
      if (!steps.IsMap())
        at.fail(line_of(kv.second, line_of(kv.first, 1)), "",
                "steps must be a map of named steps" + example);
    } else {
      at.fail(line_of(kv.first, 1), "", unknown_field(key, {"steps"}));
    }
  }
  if (!steps.IsDefined() || steps.IsNull()) at.fail(0, "", "no steps" + example);
  std::map<std::string, int> seen;
  for (const auto& kv : steps) {
    const int line = line_of(kv.first, 1);
    if (!kv.first.IsScalar()) at.fail(line, "", "a step's name must be a single word");
    const std::string name = kv.first.Scalar();
    if (auto it = seen.find(name); it != seen.end())
      at.fail(line, name,
              "defined twice (first on line " + std::to_string(it->second) + "); rename one");
    seen[name] = line;
    file.steps.push_back(parse_step(at, name, kv.second, line));
  }
  return file;
}

PipelineFile load_pipeline_file(const std::string& path, const fs::path& cwd) {
  const fs::path full =
      (fs::path(path).is_absolute() ? fs::path(path) : cwd / path).lexically_normal();
  std::error_code ec;
  if (fs::is_directory(full, ec))
    throw Error(Errc::usage, path + " is a directory; pass the pipeline file, e.g. -f " +
                                 (fs::path(path) / "kinetic.yaml").string());
  std::optional<std::string> text;
  try {
    text = read_file(full);
  } catch (const Error& e) {
    throw Error(Errc::usage, "cannot read " + path + ": " + e.what());
  }
  if (!text)
    throw Error(Errc::usage, "no pipeline file " + path + " (looked in " + cwd.string() +
                                 "); write one (docs/pipelines.md) or pass -f FILE");
  PipelineFile file = parse_pipeline(*text, path, full.parent_path());
  file.path = full;
  return file;
}

}  // namespace kinetic
