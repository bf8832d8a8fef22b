#include "render/printer.h"

namespace kinetic {

nlohmann::ordered_json document_of(const Printable& p) {
  nlohmann::ordered_json doc = {{"kind", p.kind}, {"schema_version", kSchemaVersion}};
  for (const auto& [key, value] : p.fields.items()) doc[key] = value;
  return doc;
}

void print(const IOStreams& io, OutputFormat format, const Printable& p) {
  switch (format) {
    case OutputFormat::json:
    case OutputFormat::yaml:
      print_document(io.out, format, document_of(p));
      return;
    case OutputFormat::name:
      for (const auto& n : p.names) std::fprintf(io.out, "%s\n", n.c_str());
      return;
    case OutputFormat::table:
    case OutputFormat::wide: {
      if (!p.table) return;
      Table t = p.table(format == OutputFormat::wide);
      if (t.empty() && !p.print_empty_table) return;
      std::string text = t.render(io.out_tty);
      std::fwrite(text.data(), 1, text.size(), io.out);
      return;
    }
  }
}

}  // namespace kinetic
