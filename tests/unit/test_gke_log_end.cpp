// The bootstrap's end-of-log lines (lib/backend/gke/log_end.h): only this job's pair, with one
// exit code, completes a log; anything else is the job's output.
#include "backend/gke/log_end.h"

#include <gtest/gtest.h>

#include <string>

namespace kinetic::gke {
namespace {

const std::string kSha(64, 'a');

std::string end_line(const std::string& stream, int code, const std::string& sha = kSha) {
  return "kinetic: end of the log on " + stream + ", exit " + std::to_string(code) + ", spec " +
         sha + "\n";
}

TEST(LogEnd, BothLinesOfThisJobCompleteTheLogWithTheirExitCode) {
  LogEnd end(kSha);
  EXPECT_FALSE(end.complete());
  EXPECT_TRUE(end.take(end_line("stderr", 3)));
  EXPECT_FALSE(end.complete());
  EXPECT_EQ(end.exit_code(), std::nullopt);  // one stream may still have lines to come
  EXPECT_FALSE(end.take("hello\n"));
  // Without its newline (a last line) it counts the same.
  std::string out = end_line("stdout", 3);
  out.pop_back();
  EXPECT_TRUE(end.take(out));
  EXPECT_TRUE(end.complete());
  EXPECT_EQ(end.exit_code(), 3);
}

TEST(LogEnd, AnotherJobsOrAMalformedLineIsOutput) {
  LogEnd end(kSha);
  for (const std::string& line :
       {end_line("stdout", 0, std::string(64, 'b')),   // another job's (a log it cats)
        end_line("stdout", 0, kSha.substr(1)),         // a prefix of the sha
        end_line("stdin", 0), end_line("stdouts", 0),  // no such stream
        "kinetic: end of the log on stdout, exit , spec " + kSha + "\n",
        "kinetic: end of the log on stdout, exit 0x1, spec " + kSha + "\n",
        "kinetic: end of the log on stdout, exit 0, spec " + kSha + " trailing\n",
        " " + end_line("stdout", 0)}) {
    EXPECT_FALSE(end.take(line)) << line;
  }
  EXPECT_FALSE(end.complete());
}

TEST(LogEnd, DifferingExitCodesDoNotComplete) {
  LogEnd end(kSha);
  EXPECT_TRUE(end.take(end_line("stdout", 0)));
  EXPECT_FALSE(end.take(end_line("stderr", 1)));
  EXPECT_FALSE(end.complete());
}

std::string held_line(const std::string& stream, int code) {
  return "kinetic: end of the log on " + stream + ", exit " + std::to_string(code) +
         ", held, spec " + kSha + "\n";
}

TEST(LogEnd, AHeldPodSaysSoOnBothLines) {
  LogEnd end(kSha);
  EXPECT_TRUE(end.take(held_line("stdout", 1)));
  EXPECT_FALSE(end.held());  // not before both lines
  EXPECT_TRUE(end.take(held_line("stderr", 1)));
  EXPECT_TRUE(end.complete());
  EXPECT_TRUE(end.held());
  EXPECT_EQ(end.exit_code(), 1);

  LogEnd plain(kSha);
  EXPECT_TRUE(plain.take(end_line("stdout", 1)));
  EXPECT_TRUE(plain.take(end_line("stderr", 1)));
  EXPECT_FALSE(plain.held());
}

TEST(LogEnd, APairThatDisagreesOnTheHoldDoesNotComplete) {
  LogEnd end(kSha);
  EXPECT_TRUE(end.take(held_line("stdout", 1)));
  EXPECT_FALSE(end.take(end_line("stderr", 1)));
  EXPECT_FALSE(end.complete());
  EXPECT_FALSE(end.take("kinetic: end of the log on stderr, exit 1, held , spec " + kSha + "\n"));
}

TEST(LogEnd, WithoutASpecNoLineIsAnEnd) {
  LogEnd end("");
  EXPECT_FALSE(end.take(end_line("stdout", 0, "")));
  EXPECT_FALSE(end.take("kinetic: end of the log on stdout, exit 0, spec \n"));
  EXPECT_FALSE(end.complete());
}

}  // namespace
}  // namespace kinetic::gke
