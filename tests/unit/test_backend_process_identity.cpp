// What proves a recorded process group is still the job's (backend/process_identity.h).
#include "backend/process_identity.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "backend/backend.h"

namespace kinetic {
namespace {

// A `sleep` leading its own process group, ended and reaped when the test ends.
class Group {
 public:
  Group() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::execlp("sleep", "sleep", "1000", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);
  }
  ~Group() {
    if (reaped_) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  // Whether it is still running: not yet ended by any signal.
  bool running() const { return ::kill(pid_, 0) == 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }
  // Waits for it to end; true when a SIGKILL ended it.
  bool ended_by_sigkill() {
    int wstatus = 0;
    if (::waitpid(pid_, &wstatus, 0) != pid_) return false;
    reaped_ = true;
    return WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

TEST(ProcessIdentity, SessionZeroIsARealSessionAndAMissingOneIsUnknown) {
  // A job run from a process whose ancestors never called setsid() is in session 0.
  JobStatus st;
  st.pgid = 42;
  st.pgid_start = 7;
  st.pgid_session = 0;
  st.boot_id = "b";
  auto back = job_status_from_json(to_json(st));
  EXPECT_EQ(back.pgid_session, 0);
  // An older record without the field is unknown, and is never acted on.
  auto j = to_json(st);
  j.erase("pgid_session");
  EXPECT_EQ(job_status_from_json(j).pgid_session, -1);
}

TEST(ProcessIdentity, TheRecordedGroupIsKilled) {
  Group g;
  auto record = record_process_group(g.pid());
  ASSERT_GE(record.session, 0);
  ASSERT_GT(record.leader_start, 0);
  ASSERT_TRUE(kill_recorded_group(record));
  EXPECT_TRUE(g.ended_by_sigkill());
}

TEST(ProcessIdentity, ALeaderThatStartedAtAnotherTickIsAStranger) {
  Group g;
  auto record = record_process_group(g.pid());
  // The job's leader started earlier; the process now holding its id is a later one.
  record.leader_start -= 1;
  EXPECT_FALSE(kill_recorded_group(record));
  EXPECT_TRUE(g.running());
}

TEST(ProcessIdentity, AnIncompleteRecordIsNeverActedOn) {
  Group g;
  auto full = record_process_group(g.pid());
  auto no_session = full;
  no_session.session = -1;
  auto no_boot = full;
  no_boot.boot_id.clear();
  auto other_boot = full;
  other_boot.boot_id = "00000000-0000-0000-0000-000000000000";
  auto other_session = full;
  other_session.session = full.session + 1;
  for (const auto& r : {no_session, no_boot, other_boot, other_session}) {
    EXPECT_FALSE(kill_recorded_group(r));
  }
  EXPECT_TRUE(g.running());
}

// A pipeline's runner is found again by its record {pid, start_time, boot_id}: a pid another
// process took since, or one of another boot, is not the runner, and a cancel never signals it.
TEST(ProcessIdentity, ARunnerRecordNamesItsProcessOnlyAtItsStartTimeAndBoot) {
  Group g;
  const nlohmann::ordered_json runner = {{"pid", g.pid()},
                                         {"start_time", process_start_time(g.pid())},
                                         {"boot_id", current_boot_id()}};
  ASSERT_FALSE(runner["start_time"].get<std::string>().empty());
  EXPECT_TRUE(process_runner_alive(runner));
  auto reused = runner;  // the runner started a tick earlier: this process took its pid since
  reused["start_time"] = std::to_string(std::stoll(runner["start_time"].get<std::string>()) - 1);
  auto other_boot = runner;
  other_boot["boot_id"] = "00000000-0000-0000-0000-000000000000";
  for (const auto& r : {reused, other_boot}) {
    EXPECT_FALSE(process_runner_alive(r)) << r.dump();
    EXPECT_FALSE(wake_process_runner(r)) << r.dump();
  }
  EXPECT_TRUE(g.running());
}

}  // namespace
}  // namespace kinetic
