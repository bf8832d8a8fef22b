// Configuration precedence, layer by layer: flag > environment > context > gcloud > default.
#include <gtest/gtest.h>

#include <functional>

#include "config/config_file.h"
#include "config/settings.h"
#include "core/error.h"

namespace kinetic {
namespace {

class SettingsTest : public ::testing::Test {
 protected:
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "kinetic-settings-");
  ~SettingsTest() override { remove_all_quiet(dir); }

  ConfigFile config_with_gke() {
    ConfigFile cfg = ConfigFile::load(dir / "config.yaml");
    cfg.set("acme", "backend", "gke");
    cfg.set("acme", "project", "ctx-project");
    cfg.set("acme", "zone", "us-east5-b");
    cfg.set_current_context("acme");
    return cfg;
  }
};

TEST_F(SettingsTest, EachLayerOverridesTheOneBelow) {
  ConfigFile cfg = config_with_gke();
  GcloudConfig gcloud{"gcloud-project", "europe-west4-a", ""};
  GlobalFlags none;
  Env empty = Env::from_map({});

  Settings s = resolve_settings(none, empty, cfg, gcloud);
  EXPECT_EQ(s.project.value, "ctx-project");
  EXPECT_EQ(s.project.source, "context acme");
  EXPECT_EQ(s.zone.value, "us-east5-b");
  EXPECT_EQ(s.region.value, "us-east5");
  EXPECT_EQ(s.region.source, "zone us-east5-b");
  EXPECT_EQ(s.cluster.value, "kinetic");
  EXPECT_EQ(s.cluster.source, "default");

  Env env = Env::from_map({{"KINETIC_PROJECT", "env-project"}, {"KINETIC_CLUSTER", "env-c"}});
  s = resolve_settings(none, env, cfg, gcloud);
  EXPECT_EQ(s.project.value, "env-project");
  EXPECT_EQ(s.project.source, "env KINETIC_PROJECT");
  EXPECT_EQ(s.cluster.value, "env-c");

  GlobalFlags flags;
  flags.project = "flag-project";
  s = resolve_settings(flags, env, cfg, gcloud);
  EXPECT_EQ(s.project.value, "flag-project");
  EXPECT_EQ(s.project.source, "flag --project");
}

TEST_F(SettingsTest, GcloudFillsWhatTheContextLeavesOpen) {
  ConfigFile cfg = ConfigFile::load(dir / "config.yaml");
  cfg.set("bare", "backend", "gke");
  cfg.set_current_context("bare");
  Settings s =
      resolve_settings({}, Env::from_map({}), cfg, GcloudConfig{"g-proj", "asia-east1-c", ""});
  EXPECT_EQ(s.project.value, "g-proj");
  EXPECT_EQ(s.project.source, "gcloud config");
  EXPECT_EQ(s.region.value, "asia-east1");
}

TEST_F(SettingsTest, LocalContextNeverReadsGcloudsProject) {
  ConfigFile cfg = ConfigFile::load(dir / "config.yaml");
  Settings s = resolve_settings({}, Env::from_map({}), cfg, GcloudConfig{"g", "us-west1-a", ""});
  EXPECT_EQ(s.context.value, "local");
  EXPECT_EQ(s.backend, "local");
  EXPECT_FALSE(s.project.set());
  EXPECT_FALSE(s.zone.set());
}

TEST_F(SettingsTest, ContextSelectionFollowsTheSamePrecedence) {
  ConfigFile cfg = config_with_gke();
  EXPECT_EQ(resolve_settings({}, Env::from_map({}), cfg, {}).context.value, "acme");
  Env env = Env::from_map({{"KINETIC_CONTEXT", "local"}});
  EXPECT_EQ(resolve_settings({}, env, cfg, {}).backend, "local");
  GlobalFlags flags;
  flags.context = "acme";
  EXPECT_EQ(resolve_settings(flags, env, cfg, {}).backend, "gke");
  flags.context = "acne";
  try {
    resolve_settings(flags, env, cfg, {});
    FAIL() << "an unknown context must be an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_NE(std::string(e.what()).find("did you mean acme?"), std::string::npos) << e.what();
  }
}

TEST_F(SettingsTest, EmptyEnvironmentValuesDoNotCount) {
  ConfigFile cfg = config_with_gke();
  Settings s = resolve_settings({}, Env::from_map({{"KINETIC_PROJECT", ""}}), cfg, {});
  EXPECT_EQ(s.project.value, "ctx-project");
}

// Cloud settings end up in URLs and object paths (issue #10 point 7).
TEST_F(SettingsTest, CloudSettingsOfTheWrongShapeAreUsageErrors) {
  ConfigFile cfg = config_with_gke();
  Env empty = Env::from_map({});
  auto with = [&](auto set) {
    GlobalFlags flags;
    set(flags);
    return resolve_settings(flags, empty, cfg, {});
  };
  for (auto set : std::vector<std::function<void(GlobalFlags&)>>{
           [](GlobalFlags& f) { f.namespace_ = "a/../b"; },
           [](GlobalFlags& f) { f.namespace_ = "Team"; },
           [](GlobalFlags& f) { f.namespace_ = std::string(64, 'a'); },
           [](GlobalFlags& f) { f.project = "../p"; },
           [](GlobalFlags& f) { f.project = "p?alt=media"; },
           [](GlobalFlags& f) { f.zone = "us-central1-a/x"; },
           [](GlobalFlags& f) { f.cluster = "1cluster"; },
           [](GlobalFlags& f) { f.cluster = "c%2F"; }}) {
    try {
      with(set);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_NE(std::string(e.what()).find("(from flag --"), std::string::npos) << e.what();
    }
  }
  auto ok = with([](GlobalFlags& f) {
    f.namespace_ = "team-a1";
    f.project = "example.com:acme-ml";
    f.cluster = "kinetic-2";
  });
  EXPECT_EQ(ok.namespace_.value, "team-a1");
  // The local context ignores cloud settings, and so does not judge them.
  cfg.set_current_context("local");
  EXPECT_NO_THROW(with([](GlobalFlags& f) { f.namespace_ = "a/../b"; }));
}

TEST(RegionOfZone, StripsTheZoneLetterOnly) {
  EXPECT_EQ(region_of_zone("us-central1-a"), "us-central1");
  EXPECT_EQ(region_of_zone("europe-west4"), "europe-west4");
  EXPECT_EQ(region_of_zone("northamerica-northeast1-c"), "northamerica-northeast1");
}

TEST(GcloudConfig, ReadsTheActiveConfiguration) {
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "kinetic-gcloud-");
  atomic_write(dir / "active_config", "work\n");
  atomic_write(dir / "configurations" / "config_work",
               "[core]\naccount = me@example.com\nproject = work-proj\n\n[compute]\n"
               "zone = us-west4-a\nregion = us-west4\n");
  atomic_write(dir / "configurations" / "config_default", "[core]\nproject = other\n");
  GcloudConfig g = read_gcloud_config(Env::from_map({{"CLOUDSDK_CONFIG", dir.string()}}));
  EXPECT_EQ(g.project, "work-proj");
  EXPECT_EQ(g.zone, "us-west4-a");
  EXPECT_EQ(g.region, "us-west4");
  g = read_gcloud_config(Env::from_map(
      {{"CLOUDSDK_CONFIG", dir.string()}, {"CLOUDSDK_ACTIVE_CONFIG_NAME", "default"}}));
  EXPECT_EQ(g.project, "other");
  remove_all_quiet(dir);
}

}  // namespace
}  // namespace kinetic
