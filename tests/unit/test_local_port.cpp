// backend/local/local_port.h: the local forward's end, read from the job's status.
#include "backend/local/local_port.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.h"

namespace kinetic {
namespace {

TEST(LocalPortDialer, AJobWhoseRecordWentMeanwhileHasEnded) {
  // Found by `kinetic debug JOB` while the Python API's result() cleaned the ended job up: the
  // status read threw on the forward's thread, and the process was terminated.
  int never[2];
  ASSERT_EQ(::pipe(never), 0);
  const auto dialer = local_port_dialer("job-1a2b3c4d", []() -> JobStatus {
    throw Error(Errc::not_found, "job job-1a2b3c4d has no record in /state/jobs/job-1a2b3c4d");
  });
  EXPECT_EQ(dialer->wait_for_end(never[0]),
            "job-1a2b3c4d ended: job job-1a2b3c4d has no record in /state/jobs/job-1a2b3c4d");
  ::close(never[0]);
  ::close(never[1]);
}

}  // namespace
}  // namespace kinetic
