// to_yaml: kubectl-style block YAML that reads back as the same JSON.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <random>
#include <string>
#include <vector>

#include "render/yaml.h"

namespace kinetic {
namespace {

using json = nlohmann::ordered_json;

// A parsed YAML node as JSON. Quoted and block scalars (tag "!") are strings; plain ones are
// resolved the way yaml-cpp resolves them (null, bool, integer, float, else string), so a string
// that was left plain but reads as something else shows up as a mismatch.
json to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(to_json(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        EXPECT_EQ(kv.first.Type(), YAML::NodeType::Scalar);
        out[kv.first.Scalar()] = to_json(kv.second);
      }
      return out;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  if (node.Tag() == "!") return node.Scalar();
  bool b = false;
  if (YAML::convert<bool>::decode(node, b)) return b;
  long long i = 0;
  if (YAML::convert<long long>::decode(node, i)) return i;
  double d = 0;
  if (YAML::convert<double>::decode(node, d)) return d;
  return node.Scalar();
}

void expect_round_trip(const json& doc) {
  const std::string yaml = to_yaml(doc);
  SCOPED_TRACE("doc: " + doc.dump() + "\nyaml:\n" + yaml);
  YAML::Node parsed;
  ASSERT_NO_THROW(parsed = YAML::Load(yaml));
  EXPECT_EQ(to_json(parsed), doc);
}

// Every string a YAML reader would take for something else, or could not read plain.
const std::vector<std::string>& tricky_strings() {
  static const std::vector<std::string> strings = {
      "true",
      "false",
      "True",
      "FALSE",
      "yes",
      "no",
      "Yes",
      "NO",
      "on",
      "off",
      "On",
      "OFF",
      "y",
      "n",
      "Y",
      "N",
      "null",
      "Null",
      "NULL",
      "~",
      "",
      " ",
      "  lead",
      "trail  ",
      "1",
      "0",
      "-1",
      "+1",
      "1.0",
      "1.",
      ".5",
      "-.5",
      "1e3",
      "1E-3",
      "0x1F",
      "0o17",
      "0755",
      "0b101",
      "1_000",
      "1:20",
      "190:20:30.15",
      ".inf",
      "-.inf",
      ".nan",
      ".NaN",
      "2001-12-14",
      "2001-12-14t21:59:43.10-05:00",
      "a: b",
      "a:b",
      "a:",
      "key: value # c",
      "a #b",
      "a#b",
      "#",
      "# comment",
      "- x",
      "-",
      "--",
      "-c",
      "--flag=1",
      "? x",
      "?",
      "?x",
      ":",
      ":x",
      "---",
      "--- x",
      "...",
      "[a]",
      "{a: 1}",
      "a, b",
      "*ref",
      "&anchor",
      "!tag",
      "!!str",
      "|",
      ">",
      "'single'",
      "\"double\"",
      "%TAG",
      "@at",
      "`tick",
      "<<",
      "=",
      "a\tb",
      "tab\t",
      "\ttab",
      "line1\nline2",
      "line1\nline2\n",
      "a\n\n",
      "\n",
      "\nx",
      "x\n\n\ny",
      "  indented\nnext",
      "trailing space \nx",
      "x\n  more indented\nback",
      "carriage\r\nreturn",
      "nul\x01",
      "bell\x07",
      "del\x7f",
      "quote\"and\\backslash",
      "unicode é ü 日本",
      "nel\xC2\x85x",
      "ls\xE2\x80\xA8x",
      "bom\xEF\xBB\xBFx",
      "2x2",
      "4x4",
      "2Gi",
      "google.com/tpu",
      "us-central1-docker.pkg.dev/acme-ml/kinetic/base:tpu-0123456789ab",
      "gs://bucket/prefix/",
      "http://x:80/",
      "echo $HOME && ls",
      "a -b",
      "1 2",
      "- - x",
  };
  return strings;
}

TEST(RenderYaml, KubectlLayout) {
  const json doc = json::parse(R"J({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "x"}},
    "spec": {"containers": [{"name": "main", "command": ["python3", "-c", "print(1)"],
                             "env": [{"name": "A", "value": "1"}],
                             "resources": {"limits": {"google.com/tpu": "4"}}}],
             "tolerations": [], "nodeSelector": {}, "replicas": 3, "ok": true, "none": null}
  })J");
  EXPECT_EQ(to_yaml(doc),
            "apiVersion: v1\n"
            "kind: Pod\n"
            "metadata:\n"
            "  name: p\n"
            "  labels:\n"
            "    app: x\n"
            "spec:\n"
            "  containers:\n"
            "  - name: main\n"
            "    command:\n"
            "    - python3\n"
            "    - -c\n"
            "    - print(1)\n"
            "    env:\n"
            "    - name: A\n"
            "      value: \"1\"\n"
            "    resources:\n"
            "      limits:\n"
            "        google.com/tpu: \"4\"\n"
            "  tolerations: []\n"
            "  nodeSelector: {}\n"
            "  replicas: 3\n"
            "  ok: true\n"
            "  none: null\n");
}

TEST(RenderYaml, QuotesOnlyWhenNeeded) {
  const auto render = [](const std::string& s) { return to_yaml(json{{"k", s}}); };
  // Plain: what kubectl prints plain.
  EXPECT_EQ(render("2x2"), "k: 2x2\n");
  EXPECT_EQ(render("2Gi"), "k: 2Gi\n");
  EXPECT_EQ(render("-c"), "k: -c\n");
  EXPECT_EQ(render("a:b"), "k: a:b\n");
  EXPECT_EQ(render("a#b"), "k: a#b\n");
  EXPECT_EQ(render("unicode é"), "k: unicode é\n");
  // Quoted: would read back as another type, or not at all.
  for (const std::string s :
       {"true",  "no",   "off",  "y",   "null",       "~",  "1",  "1.0", "0x1F", "0755",
        "1_000", "1:20", ".inf", "1e3", "2001-12-14", "<<", "=",  "- x", "a: b", "#",
        " x",    "x ",   "---",  "[a]", "*a",         "!t", "%x", "@x"}) {
    EXPECT_EQ(render(s), "k: \"" + s + "\"\n") << s;
  }
  EXPECT_EQ(render(""), "k: \"\"\n");
  EXPECT_EQ(render("a\tb"), "k: \"a\\tb\"\n");
  EXPECT_EQ(render("q\"b\\"), "k: q\"b\\\n");  // plain: quotes inside are content
  EXPECT_EQ(render("\"q\\"), "k: \"\\\"q\\\\\"\n");
  // go-yaml quotes the YAML 1.1 booleans "y" and "n" as keys too.
  EXPECT_EQ(to_yaml(json{{"y", 1}, {"n", 2}}), "\"y\": 1\n\"n\": 2\n");
  EXPECT_EQ(render("c\x01"), "k: \"c\\x01\"\n");
  EXPECT_EQ(render("ls\xE2\x80\xA8"), "k: \"ls\\u2028\"\n");
  EXPECT_EQ(render("crlf\r\n"), "k: \"crlf\\r\\n\"\n");
}

TEST(RenderYaml, NonStringScalars) {
  EXPECT_EQ(to_yaml(json{{"i", 42},
                         {"neg", -7},
                         {"u", 18446744073709551615ull},
                         {"f", 1.5},
                         {"g", 1.0},
                         {"b", false},
                         {"z", nullptr}}),
            "i: 42\nneg: -7\nu: 18446744073709551615\nf: 1.5\ng: 1.0\nb: false\nz: null\n");
}

TEST(RenderYaml, MultiLineStringsAreLiteralBlocks) {
  EXPECT_EQ(to_yaml(json{{"script", "import os\nprint(os.getcwd())\n"}}),
            "script: |\n  import os\n  print(os.getcwd())\n");
  EXPECT_EQ(to_yaml(json{{"s", "a\n\nb"}}), "s: |-\n  a\n\n  b\n");
  EXPECT_EQ(to_yaml(json{{"s", "a\n\n"}}), "s: |+\n  a\n\n");
  EXPECT_EQ(to_yaml(json{{"c", json::array({"python3", "-c", "x = 1\nprint(x)"})}}),
            "c:\n- python3\n- -c\n- |-\n  x = 1\n  print(x)\n");
  // Where a block would be misread or lose something, double quotes instead.
  EXPECT_EQ(to_yaml(json{{"s", " lead\nx"}}), "s: \" lead\\nx\"\n");
  EXPECT_EQ(to_yaml(json{{"s", "trail \nx"}}), "s: \"trail \\nx\"\n");
  EXPECT_EQ(to_yaml(json{{"s", "\nx"}}), "s: \"\\nx\"\n");
}

TEST(RenderYaml, NestedCollections) {
  const json doc = json::parse(R"J({"a": [[1, 2], [], {}, [{"x": {"w": []}}]], "b": {"c": {}}})J");
  EXPECT_EQ(to_yaml(doc),
            "a:\n"
            "- - 1\n"
            "  - 2\n"
            "- []\n"
            "- {}\n"
            "- - x:\n"
            "      w: []\n"
            "b:\n"
            "  c: {}\n");
  expect_round_trip(doc);
}

TEST(RenderYaml, TopLevelValues) {
  EXPECT_EQ(to_yaml(json::object()), "{}\n");
  EXPECT_EQ(to_yaml(json::array()), "[]\n");
  EXPECT_EQ(to_yaml(json::array({"a", "true"})), "- a\n- \"true\"\n");
  EXPECT_EQ(to_yaml(json("x")), "x\n");
  expect_round_trip(json::array({"a", "true", 1}));
  expect_round_trip(json("multi\nline"));
  expect_round_trip(json("---"));
}

TEST(RenderYaml, RoundTripsTrickyStringsAsValuesKeysAndItems) {
  for (const auto& s : tricky_strings()) {
    expect_round_trip(json{{"value", s}});
    expect_round_trip(json{{s, "key"}, {"next", s}});
    expect_round_trip(json::array({s, json{{"k", s}, {"l", json::array({s})}}}));
    expect_round_trip(json{{"nested", json{{"deeper", json::array({json{{"m", s}, {s, s}}})}}}});
  }
}

TEST(RenderYaml, RoundTripsRandomStrings) {
  // Random mixes of the characters that matter to YAML, deterministic.
  const std::vector<std::string> pieces = {
      "a", "Z", "0", "1", ".", "-", "+", ":", " ", "#", "\n", "\t", "\"", "'", "\\", "[", "]", "{",
      "}", ",", "?", "!", "&", "*", "|", ">", "%", "@", "`",  "~",  "x",  "e", "_",  "é", "\r"};
  std::mt19937 rng(20240611);
  for (int n = 0; n < 3000; ++n) {
    std::string s;
    const int len = static_cast<int>(rng() % 8);
    for (int i = 0; i < len; ++i) s += pieces[rng() % pieces.size()];
    expect_round_trip(json{{"v", s}, {"list", json::array({s, json{{s, s}}})}});
    if (HasFailure()) break;
  }
}

TEST(RenderYaml, RoundTripsAManifestLikeDocument) {
  expect_round_trip(json::parse(R"J({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "kinetic-job-1", "labels": {"app.kubernetes.io/managed-by": "kinetic"},
                 "annotations": {}},
    "spec": {"backoffLimit": 0, "template": {"spec": {
      "nodeSelector": {"cloud.google.com/gke-spot": "true", "topology": "2x2"},
      "containers": [{"name": "main", "command": ["python3", "-c", "import os\nos.exit(0)\n"],
                      "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "s", "key": "E"}}}],
                      "resources": {"limits": {"google.com/tpu": "4"}, "requests": {}}}],
      "volumes": [], "ratio": 0.25, "neg": -3}}}
  })J"));
}

TEST(RenderYaml, StreamSeparatesDocuments) {
  EXPECT_EQ(to_yaml_stream({json{{"a", 1}}, json{{"b", "x"}}}), "a: 1\n---\nb: x\n");
  EXPECT_EQ(to_yaml_stream({}), "");
  const auto docs = YAML::LoadAll(to_yaml_stream({json{{"a", "|\nx"}}, json{{"b", "---"}}}));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(to_json(docs[0]), (json{{"a", "|\nx"}}));
  EXPECT_EQ(to_json(docs[1]), (json{{"b", "---"}}));
}

}  // namespace
}  // namespace kinetic
