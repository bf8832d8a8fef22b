#include "backend/pipeline_document.h"

#include <initializer_list>

#include "core/error.h"

namespace kinetic {

namespace {

using Json = nlohmann::ordered_json;

// The record's field KEY in DOC has the type IS says, or is absent; WHAT names it for the error.
template <typename Check>
void require_field(const Json& doc, const char* key, Check is, const std::string& what,
                   const char* type, const std::string& where) {
  const auto it = doc.find(key);
  if (it == doc.end() || is(*it)) return;
  throw Error(Errc::api, where + " is not a pipeline record kinetic wrote: " + what + key +
                             " is not " + type +
                             "; a job may have overwritten it (`kinetic status` lists the others)");
}

void require_strings(const Json& doc, std::initializer_list<const char*> keys,
                     const std::string& what, const std::string& where) {
  for (const char* key : keys)
    require_field(
        doc, key, [](const Json& v) { return v.is_string(); }, what, "a string", where);
}

bool integer_or_null(const Json& v) {
  return v.is_null() || v.is_number_integer();
}

void require_step(const Json& step, const std::string& what, const std::string& where) {
  if (!step.is_object())
    throw Error(Errc::api, where + " is not a pipeline record kinetic wrote: " + what +
                               " is not an object; a job may have overwritten it");
  require_strings(step,
                  {"name", "state", "key", "job", "error", "output_dir", "started", "finished"},
                  what + ".", where);
  require_field(
      step, "reused", [](const Json& v) { return v.is_boolean(); }, what + ".", "a boolean", where);
  require_field(step, "exit_code", integer_or_null, what + ".", "an integer or null", where);
  require_field(
      step, "duration_seconds", [](const Json& v) { return v.is_number(); }, what + ".", "a number",
      where);
  require_field(
      step, "needs",
      [](const Json& v) {
        if (!v.is_array()) return false;
        for (const auto& n : v)
          if (!n.is_string()) return false;
        return true;
      },
      what + ".", "an array of strings", where);
}

}  // namespace

PipelineDocument read_pipeline_document(std::string_view text, const std::string& where) {
  auto doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    throw Error(Errc::api, where +
                               " is not a pipeline record (not a JSON object); a job may have "
                               "overwritten it (`kinetic status` lists the others)");
  require_strings(doc,
                  {"kind", "id", "file", "state", "output_dir", "created", "finished", "error"}, "",
                  where);
  require_field(doc, "exit_code", integer_or_null, "", "an integer or null", where);
  require_field(
      doc, "detached", [](const Json& v) { return v.is_boolean(); }, "", "a boolean", where);
  require_field(
      doc, "runner", [](const Json& v) { return v.is_object(); }, "", "an object", where);
  require_field(
      doc, "steps", [](const Json& v) { return v.is_array(); }, "", "an array", where);
  if (doc.contains("runner")) {
    require_strings(doc["runner"], {"job", "namespace", "boot_id", "log", "start_time"}, "runner.",
                    where);
    // A process to signal: never 0 or a negative number (a process group, or every process).
    require_field(
        doc["runner"], "pid", [](const Json& v) { return v.is_number_integer() && v > 0; },
        "runner.", "a positive integer", where);
  }
  size_t i = 0;
  for (const auto& step : doc.value("steps", Json::array()))
    require_step(step, "steps[" + std::to_string(i++) + "]", where);
  return doc;
}

}  // namespace kinetic
