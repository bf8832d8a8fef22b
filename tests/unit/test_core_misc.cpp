// Durations, "did you mean", job environment, exit codes.
#include <gtest/gtest.h>

#include <map>

#include "core/backoff.h"
#include "core/checksum.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/strings.h"
#include "job/job_env.h"
#include "job/spec.h"

namespace kinetic {
namespace {

TEST(Duration, ParsesWhatUsersType) {
  EXPECT_EQ(parse_duration("90", "--timeout"), 90);
  EXPECT_EQ(parse_duration("90s", "--timeout"), 90);
  EXPECT_EQ(parse_duration("5m", "--timeout"), 300);
  EXPECT_EQ(parse_duration("2h", "--timeout"), 7200);
  EXPECT_EQ(parse_duration("1d", "--timeout"), 86400);
  EXPECT_EQ(parse_duration("1h30m", "--timeout"), 5400);
  for (const char* bad : {"", "m", "1x", "1h30", "-5s", "1.5h", "soon"}) {
    try {
      parse_duration(bad, "--timeout");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_NE(std::string(e.what()).find("--timeout"), std::string::npos);
    }
  }
}

TEST(Duration, FormatsForPeople) {
  EXPECT_EQ(format_duration(1.23), "1.2s");
  EXPECT_EQ(format_duration(184), "3m04s");
  EXPECT_EQ(format_duration(7500), "2h05m");
  EXPECT_EQ(format_duration(3 * 86400 + 4 * 3600), "3d4h");
}

TEST(ClosestMatches, FindsTyposAndPrefixes) {
  std::vector<std::string> cmds = {"run", "logs", "status", "cancel", "cleanup", "config"};
  EXPECT_EQ(closest_matches("runn", cmds), std::vector<std::string>{"run"});
  EXPECT_EQ(closest_matches("stauts", cmds).front(), "status");
  EXPECT_EQ(closest_matches("clean", cmds).front(), "cleanup");
  EXPECT_TRUE(closest_matches("xyzzy", cmds).empty());
  EXPECT_EQ(join_or({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(edit_distance("v5ltiepod", "v5litepod"), 1u);
}

TEST(ExitCodes, RunHasItsOwnTable) {
  EXPECT_EQ(exit_code_for(Errc::usage, true), 2);
  EXPECT_EQ(exit_code_for(Errc::usage, false), 2);
  EXPECT_EQ(exit_code_for(Errc::refused, false), 2);
  EXPECT_EQ(exit_code_for(Errc::job_file_missing, true), 127);
  EXPECT_EQ(exit_code_for(Errc::job_start, true), 126);
  EXPECT_EQ(exit_code_for(Errc::timeout, true), 124);
  EXPECT_EQ(exit_code_for(Errc::interrupted, true), 130);
  EXPECT_EQ(exit_code_for(Errc::config, true), 125);
  EXPECT_EQ(exit_code_for(Errc::config, false), 1);
  EXPECT_EQ(exit_code_for(Errc::not_found, false), 1);
}

TEST(JobEnv, ExplicitValuesCallerValuesAndGlobs) {
  Env caller = Env::from_map({{"KAGGLE_USER", "me"},
                              {"KAGGLE_KEY", "k"},
                              {"HOME", "/root"},
                              {"PATH", "/bin"},
                              {"TOKEN", "t"}});
  JobEnv e = build_job_env({"A=1", "TOKEN", "B=x=y"}, {"KAGGLE_*", "*PATH*"}, caller);
  EXPECT_EQ(e.names, (std::vector<std::string>{"KAGGLE_KEY", "KAGGLE_USER", "A", "TOKEN", "B"}));
  EXPECT_EQ(e.values.at("B"), "x=y");
  EXPECT_EQ(e.values.at("TOKEN"), "t");
  EXPECT_EQ(e.values.count("PATH"), 0u) << "wildcards never take host variables";
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_NE(e.warnings[0].find("*PATH*"), std::string::npos);
  // Named exactly, a host variable is taken.
  EXPECT_EQ(build_job_env({}, {"PATH"}, caller).values.at("PATH"), "/bin");
}

// In the pod these would redirect or re-credential the bootstrap (issue #10 point 5).
TEST(JobEnv, AWildcardNeverTakesControlVariables) {
  Env caller = Env::from_map({{"CLOUDSDK_CORE_PROJECT", "p"},
                              {"CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", "http://127.0.0.1:1/"},
                              {"STORAGE_EMULATOR_HOST", "127.0.0.1:2"},
                              {"GCE_METADATA_HOST", "127.0.0.1:3"},
                              {"GOOGLE_APPLICATION_CREDENTIALS", "/k.json"},
                              {"GOOGLE_CLOUD_PROJECT", "p"},
                              {"KINETIC_CONTEXT", "gke"},
                              {"WANDB_API_KEY", "w"}});
  JobEnv all = build_job_env({}, {"*"}, caller);
  EXPECT_EQ(all.names, (std::vector<std::string>{"GOOGLE_CLOUD_PROJECT", "WANDB_API_KEY"}));
  ASSERT_EQ(all.warnings.size(), 1u);
  EXPECT_NE(all.warnings[0].find("left out CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE, "
                                 "CLOUDSDK_CORE_PROJECT, GCE_METADATA_HOST, "
                                 "GOOGLE_APPLICATION_CREDENTIALS, KINETIC_CONTEXT, "
                                 "STORAGE_EMULATOR_HOST"),
            std::string::npos)
      << all.warnings[0];
  JobEnv google = build_job_env({}, {"GOOGLE_*", "CLOUDSDK_*"}, caller);
  EXPECT_EQ(google.names, (std::vector<std::string>{"GOOGLE_CLOUD_PROJECT"}));
  EXPECT_EQ(google.warnings.size(), 2u);
  // Named exactly, one passes, said aloud.
  JobEnv named = build_job_env({"STORAGE_EMULATOR_HOST", "CLOUDSDK_CORE_PROJECT=q"},
                               {"GCE_METADATA_HOST"}, caller);
  EXPECT_EQ(named.values.at("STORAGE_EMULATOR_HOST"), "127.0.0.1:2");
  EXPECT_EQ(named.values.at("CLOUDSDK_CORE_PROJECT"), "q");
  EXPECT_EQ(named.values.at("GCE_METADATA_HOST"), "127.0.0.1:3");
  ASSERT_EQ(named.warnings.size(), 3u);
  EXPECT_NE(named.warnings[0].find("--capture-env GCE_METADATA_HOST"), std::string::npos);
  EXPECT_NE(named.warnings[1].find("--env STORAGE_EMULATOR_HOST"), std::string::npos);
  EXPECT_EQ(build_job_env({"A=1"}, {}, caller).warnings.size(), 0u);
}

// A laptop's proxy and CA bundle would carry (or break) the bootstrap's metadata-token request
// and its bucket traffic, and its PYTHONHOME the image's python3 (issue #28 point 11).
TEST(JobEnv, AWildcardNeverTakesProxyCaOrPythonHomeVariables) {
  const std::vector<std::string> network = {
      "ALL_PROXY",  "CURL_CA_BUNDLE",     "HTTPS_PROXY",  "HTTP_PROXY",    "NO_PROXY",
      "PYTHONHOME", "REQUESTS_CA_BUNDLE", "SSL_CERT_DIR", "SSL_CERT_FILE", "all_proxy",
      "http_proxy", "https_proxy",        "no_proxy"};
  std::map<std::string, std::string> vars = {{"WANDB_API_KEY", "w"}};
  for (const auto& n : network) vars[n] = "http://proxy.corp:3128";
  const Env caller = Env::from_map(vars);
  JobEnv all = build_job_env({}, {"*"}, caller);
  EXPECT_EQ(all.names, (std::vector<std::string>{"WANDB_API_KEY"}));
  ASSERT_EQ(all.warnings.size(), 1u);
  for (const auto& n : network)
    EXPECT_NE(all.warnings[0].find(n), std::string::npos) << n << ": " << all.warnings[0];
  EXPECT_EQ(build_job_env({}, {"*_PROXY"}, caller).names.size(), 0u);
  // Named exactly, one passes (a proxy the cluster does reach), said aloud.
  JobEnv named = build_job_env({"HTTPS_PROXY"}, {"SSL_CERT_FILE"}, caller);
  EXPECT_EQ(named.values.at("HTTPS_PROXY"), "http://proxy.corp:3128");
  EXPECT_EQ(named.values.count("SSL_CERT_FILE"), 1u);
  ASSERT_EQ(named.warnings.size(), 2u);
  EXPECT_NE(named.warnings[1].find("--env HTTPS_PROXY: passing a variable that decides how the "
                                   "job's pod reaches the network"),
            std::string::npos)
      << named.warnings[1];
}

TEST(JobEnv, RefusesBadNamesAndKineticsOwn) {
  Env caller = Env::from_map({});
  EXPECT_THROW(build_job_env({"1A=x"}, {}, caller), Error);
  EXPECT_THROW(build_job_env({"A-B=x"}, {}, caller), Error);
  EXPECT_THROW(build_job_env({"KINETIC_JOB_ID=x"}, {}, caller), Error);
  EXPECT_THROW(build_job_env({"UNSET"}, {}, caller), Error);
}

TEST(JobSpec, RoundTripsThroughJson) {
  JobSpec s;
  s.id = new_job_id();
  s.file = "src/train.py";
  s.kind = job_kind_for(s.file);
  s.args = {"--epochs", "3"};
  s.secret_env = {"TOKEN"};
  s.timeout_seconds = 60;
  s.retries = 2;
  JobSpec t = job_spec_from_json(to_json(s));
  EXPECT_EQ(t.id, s.id);
  EXPECT_EQ(t.kind, JobKind::python);
  EXPECT_EQ(t.args, s.args);
  EXPECT_EQ(t.secret_env, s.secret_env);
  EXPECT_EQ(t.timeout_seconds, 60);
  EXPECT_EQ(t.retries, 2);
  EXPECT_TRUE(looks_like_job_id(s.id));
  EXPECT_FALSE(looks_like_job_id("job-XYZ"));
  EXPECT_NE(new_job_id(), new_job_id());
  EXPECT_EQ(job_kind_for("a.CC"), JobKind::cpp);
  EXPECT_EQ(job_kind_for("run.sh"), JobKind::shell);
  EXPECT_EQ(job_kind_for("tool"), JobKind::executable);
  EXPECT_EQ(rfc3339(0), "1970-01-01T00:00:00.000Z");
}

TEST(JobSpec, OnlyAServersRecordHasServe) {
  JobSpec s;
  s.id = "job-1a2b3c4d";
  EXPECT_FALSE(to_json(s).contains("serve"));
  EXPECT_FALSE(job_spec_from_json(to_json(s)).serve);
  s.serve = ServeSpec{.port = 8000, .idle_stop_seconds = 1800};
  EXPECT_EQ(to_json(s)["serve"], (nlohmann::json{{"port", 8000}, {"idle_stop_seconds", 1800}}));
  const JobSpec t = job_spec_from_json(to_json(s));
  ASSERT_TRUE(t.serve);
  EXPECT_EQ(t.serve->port, 8000);
  EXPECT_EQ(t.serve->idle_stop_seconds, 1800);
}

TEST(Strings, PercentEncodingRoundTripsAPathSegment) {
  EXPECT_EQ(percent_encode("jobs/job-1 a~b.c_d"), "jobs%2Fjob-1%20a~b.c_d");
  EXPECT_EQ(percent_decode("jobs%2Fjob-1%20a"), "jobs/job-1 a");
  EXPECT_EQ(percent_decode("100%"), "100%") << "a stray % is kept";
}

TEST(Strings, OneLineAndTrimPeriod) {
  EXPECT_EQ(one_line("  quota\n  exceeded\tin  zone "), "quota exceeded in zone");
  EXPECT_EQ(one_line("abcdef", 3), "abc...");
  EXPECT_EQ(trim_period("Not found. "), "Not found");
}

TEST(Checksum, Base64DecodeAcceptsBothAlphabetsAndRejectsJunk) {
  EXPECT_EQ(base64_decode(base64_encode("kinetic\xff\xfe")), "kinetic\xff\xfe");
  EXPECT_EQ(base64_decode("-_8="), base64_decode("+/8="));
  EXPECT_EQ(base64_decode("aGk=\n"), "hi");
  EXPECT_FALSE(base64_decode("a*b").has_value());
  EXPECT_EQ(format_elapsed(42.9), "42s");
  EXPECT_EQ(format_elapsed(185), "3m5s");
}

TEST(Utf8, WellFormedOnly) {
  EXPECT_TRUE(is_utf8(""));
  EXPECT_TRUE(is_utf8("plain ascii"));
  EXPECT_TRUE(is_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_FALSE(is_utf8("\xff"));
  EXPECT_FALSE(is_utf8("\xc3"));              // cut short
  EXPECT_FALSE(is_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_utf8("\xe0\x80\xaf"));      // overlong '/'
  EXPECT_FALSE(is_utf8("\xed\xa0\x80"));      // a UTF-16 surrogate
  EXPECT_FALSE(is_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_EQ(escape_non_utf8("tr\xfc.py"), "tr\\xFC.py");
  EXPECT_EQ(escape_non_utf8("caf\xc3\xa9\xc3"), "caf\xc3\xa9\\xC3");
}

// A pod writes its job's status.json: its error text reaches tables and summary lines, where a
// control would act on the user's terminal (issue #28 point 8).
TEST(Strings, EscapeForTerminalShowsWhatATerminalWouldActOn) {
  // An OSC that retitles the window, ended by BEL, and a CR that rewinds the line.
  EXPECT_EQ(escape_for_terminal("oops\033]0;x\a\rdone"), "oops\\x1B]0;x\\x07\\rdone");
  EXPECT_EQ(escape_for_terminal("a\nb\tc\x7f"), "a\\nb\\tc\\x7F");
  EXPECT_EQ(escape_for_terminal("a\nb\tc\rd", true), "a\nb\tc\\rd");
  // C1 controls (CSI, U+009B) and the bidi overrides and isolates.
  EXPECT_EQ(escape_for_terminal("\xc2\x9b"
                                "2J"),
            "\\u009B2J");
  EXPECT_EQ(escape_for_terminal("abc\xe2\x80\xae"
                                "cba\xe2\x81\xa6"),
            "abc\\u202Ecba\\u2066");
  // Text that is neither stays, UTF-8 included; bytes that are not UTF-8 show as \xNN.
  EXPECT_EQ(escape_for_terminal("caf\xc3\xa9 \xe2\x9c\x93 ok"), "caf\xc3\xa9 \xe2\x9c\x93 ok");
  EXPECT_EQ(escape_for_terminal("tr\xfc.py"), "tr\\xFC.py");
}

TEST(JobId, CheckedBeforeItReachesAPath) {
  EXPECT_NO_THROW(require_job_id("job-1a2b3c4d"));
  for (const char* bad : {"../../x", "job-1a2b3c4d/../x", "job-1A2B3C4D", "", "job-", "1a2b3c4d"}) {
    try {
      require_job_id(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
    }
  }
  try {
    require_job_id("1A2B3C4D");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean job-1a2b3c4d?"), std::string::npos);
  }
}

}  // namespace
}  // namespace kinetic

namespace kinetic {
namespace {

TEST(TempDir, IsRemovedWithItsFilesOnSuccessErrorAndMove) {
  TempDir parent(fs::temp_directory_path(), "kinetic-tempdir-test-");
  fs::path kept;
  {
    TempDir dir(parent.path(), "a-");
    kept = dir.path();
    make_dirs(dir / "inner");
    atomic_write(dir / "inner" / "f", "x");
    EXPECT_TRUE(fs::exists(kept / "inner" / "f"));
  }
  EXPECT_FALSE(fs::exists(kept)) << "left behind at the end of its scope";

  try {
    TempDir dir(parent.path(), "b-");
    kept = dir.path();
    throw Error(Errc::internal, "a step failed");
  } catch (const Error&) {
  }
  EXPECT_FALSE(fs::exists(kept)) << "left behind by an exception";

  TempDir moved_to;
  {
    TempDir dir(parent.path(), "c-");
    kept = dir.path();
    moved_to = std::move(dir);
  }
  EXPECT_TRUE(fs::exists(kept)) << "the moved-from object removed what it no longer owns";
  moved_to.reset();
  EXPECT_FALSE(fs::exists(kept));
  EXPECT_TRUE(moved_to.path().empty());
}

}  // namespace
}  // namespace kinetic

namespace kinetic {
namespace {

TEST(BackoffCurve, GrowsByTheFactorFromInitialUpToMax) {
  using std::chrono::milliseconds;
  const BackoffCurve curve{milliseconds(250), milliseconds(5000), 2.0};
  std::vector<long long> waits;
  for (int attempt = 0; attempt <= 7; ++attempt) waits.push_back(curve.delay(attempt).count());
  // Attempt 0 counts as 1; then 250 * 2^(n-1), capped at 5 s.
  EXPECT_EQ(waits, (std::vector<long long>{250, 250, 500, 1000, 2000, 4000, 5000, 5000}));
  // A factor below 1 never shrinks the wait; a max below initial never cuts initial.
  EXPECT_EQ((BackoffCurve{milliseconds(100), milliseconds(1000), 0.5}).delay(3).count(), 100);
  EXPECT_EQ((BackoffCurve{milliseconds(100), milliseconds(10), 2.0}).delay(3).count(), 100);
  // Full jitter: a fraction of the wait, clamped.
  EXPECT_EQ(curve.jittered(3, 0.5).count(), 500);
  EXPECT_EQ(curve.jittered(3, 7.0).count(), 1000);
  EXPECT_EQ(curve.jittered(3, -1.0).count(), 0);
}

}  // namespace
}  // namespace kinetic
