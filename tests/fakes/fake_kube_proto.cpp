// Protobuf request bodies for the fake Kubernetes API server. kubectl's typed commands (`create
// serviceaccount`, `create role`, `create job --from`, `create token`, `create namespace`...) send
// their object as application/vnd.kubernetes.protobuf: the bytes "k8s\0", then a runtime.Unknown
// {typeMeta{apiVersion, kind}, raw} whose raw is the object's message. The object is turned into
// the JSON the API server would have read, from a table of the Go types' struct tags
// (fake_kube_proto_table.inc, made by gen_kube_proto_table.py); a kind or a field the table lacks
// is refused (415), never skipped.
#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "fakes/fake_encoding.h"
#include "fakes/fake_kube_internal.h"

namespace kinetic::fakes::kube {

namespace {

enum class K {
  String,
  Bytes,
  Bool,
  Int,
  Message,
  MapString,
  MapBytes,
  MapQuantity,
  Quantity,
  IntOrString,
  Time,
  Raw,
  Ignore,
  Unsupported
};

struct Field {
  const char* message;
  int number;
  const char* json;
  K kind;
  const char* type;  // the message of a K::Message field
  bool repeated;
  bool keep_zero;  // a Go pointer, or a field without omitempty: a zero value stays in the JSON
  bool inlined;    // `json:",inline"`: its fields are the parent's
};

const Field kFields[] = {
#include "fakes/fake_kube_proto_table.inc"
};

const std::map<std::string, std::map<int, const Field*>>& schema() {
  static const auto* index = [] {
    auto* m = new std::map<std::string, std::map<int, const Field*>>;
    for (const auto& f : kFields) (*m)[f.message][f.number] = &f;
    return m;
  }();
  return *index;
}

ApiError undecodable(const std::string& what) {
  return {415, "UnsupportedMediaType",
          "kinetic fake Kubernetes API: cannot read " + what +
              " in a protobuf body (send it as application/json)"};
}

struct Reader {
  std::string_view data;
  std::size_t pos = 0;

  bool done() const { return pos >= data.size(); }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= data.size()) throw bad_request("truncated protobuf varint");
      auto b = static_cast<unsigned char>(data[pos++]);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw bad_request("malformed protobuf varint");
  }
  std::string_view bytes() {
    auto n = varint();
    if (n > data.size() - pos) throw bad_request("truncated protobuf field");
    auto out = data.substr(pos, n);
    pos += n;
    return out;
  }
  void skip(int wire) {
    switch (wire) {
      case 0:
        varint();
        break;
      case 1:
        pos += 8;
        break;
      case 2:
        bytes();
        break;
      case 5:
        pos += 4;
        break;
      default:
        throw bad_request("unsupported protobuf wire type " + std::to_string(wire));
    }
    if (pos > data.size()) throw bad_request("truncated protobuf field");
  }
};

// Calls FN(number, wire type, reader positioned at the value) for each field of MSG.
template <typename Fn>
void for_each_field(std::string_view msg, Fn fn) {
  Reader r{msg};
  while (!r.done()) {
    auto tag = r.varint();
    fn(static_cast<int>(tag >> 3), static_cast<int>(tag & 7), r);
  }
}

json decode_message(const std::string& type, std::string_view bytes);

json decode_time(std::string_view bytes) {
  std::optional<std::int64_t> seconds;
  for_each_field(bytes, [&](int n, int wire, Reader& r) {
    if (n == 1 && wire == 0)
      seconds = static_cast<std::int64_t>(r.varint());
    else
      r.skip(wire);  // nanos: the API serves seconds
  });
  // Go's zero time.Time is sent as an empty message (or as its own seconds)
  if (!seconds || *seconds == -62135596800LL) return nullptr;
  return rfc3339(SysClock::from_time_t(static_cast<std::time_t>(*seconds)));
}

std::string decode_quantity(std::string_view bytes) {
  std::string out;
  for_each_field(bytes, [&](int n, int wire, Reader& r) {
    if (n == 1 && wire == 2)
      out = std::string(r.bytes());
    else
      r.skip(wire);
  });
  return out;
}

json decode_int_or_string(std::string_view bytes) {
  std::int64_t type = 0, int_val = 0;
  std::string str_val;
  for_each_field(bytes, [&](int n, int wire, Reader& r) {
    if (n == 1 && wire == 0)
      type = static_cast<std::int64_t>(r.varint());
    else if (n == 2 && wire == 0)
      int_val = static_cast<std::int32_t>(r.varint());
    else if (n == 3 && wire == 2)
      str_val = std::string(r.bytes());
    else
      r.skip(wire);
  });
  return type == 1 ? json(str_val) : json(int_val);
}

json decode_raw(std::string_view bytes) {
  std::string raw;
  for_each_field(bytes, [&](int n, int wire, Reader& r) {
    if (n == 1 && wire == 2)
      raw = std::string(r.bytes());
    else
      r.skip(wire);
  });
  if (raw.empty()) return nullptr;
  json j = json::parse(raw, nullptr, false);
  if (j.is_discarded()) throw undecodable("a RawExtension that is not JSON");
  return j;
}

json scalar(const Field& f, int wire, Reader& r, const std::string& where) {
  switch (f.kind) {
    case K::String:
      return std::string(r.bytes());
    case K::Bytes:
      return base64_encode(r.bytes());
    case K::Bool:
      return r.varint() != 0;
    case K::Int:
      return static_cast<std::int64_t>(r.varint());
    case K::Message:
      return decode_message(f.type, r.bytes());
    case K::Quantity:
      return decode_quantity(r.bytes());
    case K::IntOrString:
      return decode_int_or_string(r.bytes());
    case K::Time:
      return decode_time(r.bytes());
    case K::Raw:
      return decode_raw(r.bytes());
    default:
      (void)wire;
      throw undecodable(where);
  }
}

bool zero(const json& v) {
  return (v.is_string() && v.get_ref<const std::string&>().empty()) ||
         (v.is_number_integer() && v.get<std::int64_t>() == 0) ||
         (v.is_boolean() && !v.get<bool>()) || v.is_null();
}

json decode_message(const std::string& type, std::string_view bytes) {
  auto it = schema().find(type);
  if (it == schema().end()) throw undecodable("message " + type);
  const auto& fields = it->second;
  json obj = json::object();
  std::map<std::string, const Field*> seen;
  for_each_field(bytes, [&](int n, int wire, Reader& r) {
    auto f = fields.find(n);
    const std::string where = "field " + std::to_string(n) + " of " + type;
    if (f == fields.end()) throw undecodable(where);
    const Field& field = *f->second;
    if (field.kind == K::Ignore) return r.skip(wire);
    if (field.kind == K::Unsupported) throw undecodable(std::string(field.json) + " of " + type);
    if (field.kind == K::MapString || field.kind == K::MapBytes || field.kind == K::MapQuantity) {
      if (wire != 2)
        throw bad_request("protobuf wire type " + std::to_string(wire) + " for " + where);
      std::string key;
      json value = "";
      for_each_field(r.bytes(), [&](int en, int ew, Reader& er) {
        if (en == 1 && ew == 2) {
          key = std::string(er.bytes());
        } else if (en == 2 && ew == 2) {
          auto v = er.bytes();
          value = field.kind == K::MapString  ? json(std::string(v))
                  : field.kind == K::MapBytes ? json(base64_encode(v))
                                              : json(decode_quantity(v));
        } else {
          er.skip(ew);
        }
      });
      obj[field.json][key] = value;
      return;
    }
    if (field.repeated && field.kind == K::Int && wire == 2) {  // packed
      Reader packed{r.bytes()};
      while (!packed.done()) obj[field.json].push_back(static_cast<std::int64_t>(packed.varint()));
      return;
    }
    if (wire != (field.kind == K::Bool || field.kind == K::Int ? 0 : 2))
      throw bad_request("protobuf wire type " + std::to_string(wire) + " for " + where);
    json v = scalar(field, wire, r, where);
    if (field.inlined && v.is_object()) {
      for (auto& [k, x] : v.items()) obj[k] = x;
    } else if (field.repeated) {
      obj[field.json].push_back(std::move(v));
    } else {
      obj[field.json] = std::move(v);
      seen[field.json] = &field;
    }
  });
  // encoding/json's omitempty: a zero scalar that is not a pointer is left out.
  for (auto& [name, field] : seen)
    if (!field->keep_zero && zero(obj[name])) obj.erase(name);
  for (auto& [name, field] : seen)
    if (field->kind == K::Time && obj.contains(name) && obj[name].is_null()) obj.erase(name);
  return obj;
}

// The table's package of an apiVersion.
std::string package_of(const std::string& api_version) {
  if (api_version == "v1") return "core";
  if (api_version == "batch/v1") return "batch";
  if (api_version == "rbac.authorization.k8s.io/v1") return "rbac";
  if (api_version == "authentication.k8s.io/v1") return "authentication";
  return {};
}

}  // namespace

json decode_protobuf(const std::string& body) {
  static const std::string magic("k8s\0", 4);
  if (body.compare(0, magic.size(), magic) != 0)
    throw bad_request("protobuf body without the \"k8s\\x00\" prefix");
  std::string api_version, kind, content_encoding;
  std::string_view raw;
  for_each_field(std::string_view(body).substr(magic.size()), [&](int n, int wire, Reader& r) {
    if (n == 1 && wire == 2) {
      for_each_field(r.bytes(), [&](int tn, int tw, Reader& tr) {
        if (tn == 1 && tw == 2)
          api_version = std::string(tr.bytes());
        else if (tn == 2 && tw == 2)
          kind = std::string(tr.bytes());
        else
          tr.skip(tw);
      });
    } else if (n == 2 && wire == 2) {
      raw = r.bytes();
    } else if (n == 3 && wire == 2) {
      content_encoding = std::string(r.bytes());
    } else {
      r.skip(wire);
    }
  });
  if (!content_encoding.empty()) throw undecodable("contentEncoding " + content_encoding);
  std::string pkg = kind == "DeleteOptions" ? "meta" : package_of(api_version);
  if (pkg.empty() || !schema().count(pkg + "." + kind))
    throw undecodable("kind " + kind + " of " + api_version);
  json obj = decode_message(pkg + "." + kind, raw);
  obj["apiVersion"] = api_version;
  obj["kind"] = kind;
  return obj;
}

}  // namespace kinetic::fakes::kube
