// The engine's side of function jobs (docs/python.md): the call file's header, the spec's
// `function` and `labels`, --label parsing.
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "core/fs.h"
#include "job/function_call.h"
#include "job/spec.h"
#include "pack/sha256.h"

namespace kinetic {
namespace {

class FunctionCallTest : public ::testing::Test {
 protected:
  TempDir dir{fs::temp_directory_path(), "fncall-"};

  fs::path write(const std::string& name, const std::string& bytes) {
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

  std::string refusal(const fs::path& p) {
    try {
      read_function_call(p, "--function");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage) << e.what();
      return e.what();
    }
    ADD_FAILURE() << p << " was accepted";
    return "";
  }
};

TEST_F(FunctionCallTest, ReadsTheHeaderAndHashesTheWholeFile) {
  const std::string bytes = std::string("{\"kinetic_call\": 1, \"name\": \"train.fit\"}\n") +
                            std::string("\x80\x05\n\0x", 5);
  const fs::path p = write("call.pkl", bytes);
  const FunctionCall call = read_function_call(p, "--function");
  EXPECT_EQ(call.name, "train.fit");
  EXPECT_EQ(call.sha256, sha256_hex(bytes));
  EXPECT_EQ(call.bytes, static_cast<long long>(bytes.size()));
  EXPECT_EQ(call.runner_sha256, sha256_hex(function_runner_source()));
  EXPECT_EQ(call.local_path, p.string());
}

TEST_F(FunctionCallTest, RefusesWhatIsNotACallFile) {
  EXPECT_NE(refusal(dir / "missing.pkl").find("no such file"), std::string::npos);
  EXPECT_NE(refusal(dir.path()).find("not a regular file"), std::string::npos);
  EXPECT_NE(refusal(write("a", "no newline at all")).find("no header line"), std::string::npos);
  EXPECT_NE(refusal(write("b", "\x80\x05pickle\n")).find("not JSON"), std::string::npos);
  EXPECT_NE(refusal(write("c", "{\"name\": \"f\"}\n")).find("no kinetic_call"), std::string::npos);
  EXPECT_NE(refusal(write("d", "{\"kinetic_call\": 2}\n")).find("format 2"), std::string::npos);
  EXPECT_NE(refusal(write("e", "{\"kinetic_call\": 1, \"name\": 3}\n")).find("name"),
            std::string::npos);
  // A header line longer than any call writes is no header.
  EXPECT_NE(refusal(write("f", std::string(70000, ' ') + "\n")).find("no header line"),
            std::string::npos);
}

TEST_F(FunctionCallTest, TheRunnerIsEmbeddedWithoutComments) {
  const std::string_view source = function_runner_source();
  ASSERT_FALSE(source.empty());
  EXPECT_EQ(source.find("\n#"), std::string_view::npos);
  EXPECT_NE(source.find("KINETIC_OUTPUT_DIR"), std::string_view::npos);
}

TEST(JobSpecFunctionTest, FunctionAndLabelsRoundTripAndStayAbsentWhenUnset) {
  JobSpec spec;
  spec.id = "job-0123abcd";
  EXPECT_FALSE(to_json(spec).contains("function"));
  EXPECT_FALSE(to_json(spec).contains("labels"));
  spec.kind = JobKind::function;
  spec.function = FunctionCall{.name = "m.f",
                               .sha256 = "ab",
                               .bytes = 7,
                               .runner_sha256 = "cd",
                               .local_path = "/tmp/call.pkl"};
  spec.labels = {{"kinetic.dev/group", "grp-1"}, {"i", "0"}};
  const nlohmann::json j = to_json(spec);
  EXPECT_EQ(j["kind"], "function");
  EXPECT_EQ(
      j["function"],
      (nlohmann::json{{"name", "m.f"}, {"sha256", "ab"}, {"bytes", 7}, {"runner_sha256", "cd"}}))
      << "the local path is this machine's, not the record's";
  const JobSpec back = job_spec_from_json(j);
  EXPECT_EQ(back.kind, JobKind::function);
  ASSERT_TRUE(back.function);
  EXPECT_EQ(back.function->name, "m.f");
  EXPECT_EQ(back.function->bytes, 7);
  EXPECT_EQ(back.function->runner_sha256, "cd");
  EXPECT_TRUE(back.function->local_path.empty());
  EXPECT_EQ(back.labels.size(), 2u);
  EXPECT_EQ(labels_json(back.labels), labels_json(spec.labels));
}

TEST(LabelTest, ParsesKeyEqualsValue) {
  EXPECT_EQ(parse_label("team=vision", "--label"),
            (std::pair<std::string, std::string>{"team", "vision"}));
  EXPECT_EQ(parse_label("kinetic.dev/group=grp-1=2", "--label").second, "grp-1=2");
  EXPECT_EQ(parse_label("k=", "--label").second, "");
}

TEST(LabelTest, RefusesBadKeysAndValues) {
  for (const std::string& bad :
       std::vector<std::string>{"novalue", "=v", "-k=v", "a b=c", std::string(64, 'k') + "=v",
                                "k=line\nbreak", "k=" + std::string(257, 'v'), "k=\xff"}) {
    try {
      parse_label(bad, "--label");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_NE(std::string(e.what()).find("--label"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace kinetic
