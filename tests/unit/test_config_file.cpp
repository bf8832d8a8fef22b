// The config file: round trips, the built-in local context, and one-line errors with the line.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "config/config_file.h"
#include "core/error.h"

namespace kinetic {
namespace {

class ConfigFileTest : public ::testing::Test {
 protected:
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "kinetic-config-");
  fs::path file = dir / "kinetic" / "config.yaml";
  ~ConfigFileTest() override { remove_all_quiet(dir); }

  std::string load_error(const std::string& text) {
    atomic_write(file, text);
    try {
      ConfigFile::load(file);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::config);
      std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
      return msg;
    }
    ADD_FAILURE() << "no error for: " << text;
    return "";
  }
};

TEST_F(ConfigFileTest, MissingFileGivesTheBuiltInLocalContext) {
  ConfigFile cfg = ConfigFile::load(file);
  EXPECT_EQ(cfg.current_context(), "local");
  ASSERT_EQ(cfg.contexts().size(), 1u);
  EXPECT_EQ(cfg.contexts()[0].backend, "local");
}

TEST_F(ConfigFileTest, SaveAndLoadRoundTripPrivately) {
  ConfigFile cfg = ConfigFile::load(file);
  cfg.set("acme", "backend", "gke");
  cfg.set("acme", "project", "acme-ml");
  cfg.set("acme", "zone", "us-central1-a");
  cfg.set("acme", "namespace", "team");
  cfg.set_current_context("acme");
  cfg.save();
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  ConfigFile again = ConfigFile::load(file);
  EXPECT_EQ(again.current_context(), "acme");
  const Context& c = again.get("acme");
  EXPECT_EQ(c.backend, "gke");
  EXPECT_EQ(c.project, "acme-ml");
  EXPECT_EQ(c.zone, "us-central1-a");
  EXPECT_EQ(c.namespace_, "team");
  EXPECT_EQ(again.contexts()[0].name, "local");
}

TEST_F(ConfigFileTest, ErrorsNameTheLine) {
  EXPECT_NE(load_error("current-context: a\ncontexts: [\n").find("line 3"), std::string::npos);
  EXPECT_NE(load_error("contexts:\n- name: x\n  backend: aws\n").find("unknown backend 'aws'"),
            std::string::npos);
  EXPECT_NE(load_error("contexts:\n- backend: gke\n").find("has no 'name'"), std::string::npos);
  EXPECT_NE(load_error("contexts:\n- name: a\n- name: a\n").find("line 3"), std::string::npos);
  EXPECT_NE(load_error("context: x\n").find("line 1: unknown key 'context'"), std::string::npos);
  EXPECT_NE(load_error("- a\n- b\n").find("mapping"), std::string::npos);
  EXPECT_NE(load_error("contexts:\n- name: a\n  zone: [x]\n").find("'zone' must be a string"),
            std::string::npos);
}

TEST_F(ConfigFileTest, UnknownKeysAndBackendsAreUsageErrors) {
  ConfigFile cfg = ConfigFile::load(file);
  try {
    cfg.set("local", "zoen", "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_NE(std::string(e.what()).find("did you mean zone?"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cfg.set("x", "backend", "azure"), Error);
  EXPECT_THROW(cfg.set_current_context("missing"), Error);
}

TEST_F(ConfigFileTest, EmptyFileIsFine) {
  atomic_write(file, "");
  EXPECT_EQ(ConfigFile::load(file).current_context(), "local");
}

}  // namespace
}  // namespace kinetic
