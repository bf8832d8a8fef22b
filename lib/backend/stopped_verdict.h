// The verdict of a job that was stopped rather than ending of itself, as both runners record it
// (docs/decisions.md "One runner's phases", the verdict phase): the local backend's supervisor
// and the in-pod bootstrap (lib/job/bootstrap.py, stopped_verdict()), and the gke backend when
// it composes the verdict of a Job past its deadline. tests/golden/stopped_verdicts.json holds
// each to the same cases.
//
// What the stopped job itself exited with is the stop's echo (killed by the signal, or its
// handler's exit), not why it ended: the verdict is the stop's, its exit code the one `kinetic
// wait` and `run` exit with for it (tests/golden/exit_codes.json), and the job's own words stay
// in its log.
#pragma once

#include <string>

#include "job/spec.h"

namespace kinetic {

struct StoppedVerdict {
  std::string state;  // backend.h kCancelled or kTimedOut
  int exit_code = 0;
  std::string error;
};

// A cancel: the runner got a SIGTERM (`kinetic cancel`, Ctrl-C passed on; in a pod also its Job
// deleted or its node drained), a SIGINT or a SIGHUP. "cancelled", exit 130: which signal it was
// says nothing of who sent it, and an error that is the state is what the run's last line and a
// pipeline's step line know has nothing to add.
StoppedVerdict cancelled_verdict();

// The run's deadline passed: --timeout ("timed out after 60s (--timeout)"), or the budget
// --max-cost buys when that is the sooner ("stopped at the $5.00 budget (...)"); exit 124.
StoppedVerdict deadline_verdict(const JobSpec& spec);

}  // namespace kinetic
