// The in-pod bootstrap (DESIGN.md "The in-pod bootstrap"): the container command of every GKE
// job. Self-contained given python3 (standard library only) on the image, so nothing
// kinetic-specific is baked into images and upgrading kinetic never rebuilds one.
//
// Contract (tests/integration/test_bootstrap.cpp runs it for real against the fake GCS):
//
// Environment in
//   KINETIC_JOB_ID, KINETIC_SPEC_URI (gs://B/jobs/ID/spec.json, a JobSpec as job/spec.h writes
//   it), KINETIC_CONTEXT_URI (gs://B/contexts/SHA.tar.gz), KINETIC_CONTEXT_SHA256 (of the
//   archive bytes), KINETIC_RESULTS_URI (gs://B/jobs/ID/, '/'-terminated) — see bootstrap_env().
//   On the hosts of a multi-host slice other than the first (JOB_COMPLETION_INDEX set and not
//   0), RESULTS_URI becomes RESULTS_URI + "workers/INDEX/": every host keeps its own
//   checkpoints, and the job's outputs and status are host 0's.
//   Storage endpoint, as lib/gcp/endpoints.h resolves it: CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE
//   (authenticated), else STORAGE_EMULATOR_HOST (no credentials at all, as Google's libraries do),
//   else https://storage.googleapis.com. Authenticated calls carry a metadata-server token
//   (GCE_METADATA_HOST, default metadata.google.internal; Metadata-Flavor: Google), cached until
//   225 s before it expires and dropped on a 401. TMPDIR: where the working area goes.
//   KINETIC_OUTPUT_DIR / KINETIC_CHECKPOINT_DIR, when already set, are used as they are.
//
// What it does
//   1. Makes a fresh working area (mkdtemp "kinetic-*" under TMPDIR: pods sharing a node never
//      collide) and removes it at the end.
//   2. Downloads the spec and the context, checks the context's sha256, unpacks it (tar.gz via
//      tarfile; tar.zst through the `zstd` tool when the image has it, or Python 3.14+) with the
//      tarfile "data" filter, or, on Pythons without it, refusing absolute names, '..', links
//      leaving the tree and special files.
//   3. Downloads every object under RESULTS_URI + "checkpoints/" (listed page by page) into
//      KINETIC_CHECKPOINT_DIR, each with its object's update time as mtime.
//   4. Runs the job in its own process group, cwd = context root / spec.workdir, stdin
//      /dev/null, stdout and stderr inherited (so `kubectl logs` streams them live), with
//      KINETIC_JOB_ID, KINETIC_OUTPUT_DIR, KINETIC_CHECKPOINT_DIR, KINETIC_BACKEND=gke and
//      PYTHONUNBUFFERED=1 set, plus spec.env where the container has no such variable:
//      python: python3 -u FILE ARGS; shell: bash FILE ARGS; cpp: g++ -O2 -std=c++20, then the
//      binary; executable: FILE ARGS. When the job's main process ends, what it left in its group
//      is killed.
//   5. Uploads, whatever happened before (failed job, missing spec or context, bad checksum):
//      RESULTS_URI + "checkpoints/REL" for each regular file that is new or changed (size or
//      mtime; only when the job started; nothing is ever deleted), RESULTS_URI +
//      "outputs.tar.gz" (KINETIC_OUTPUT_DIR: files, directories and symlinks; hard links stored
//      as files), and last RESULTS_URI + "status.json" (read back with job_status_from_json):
//      {id, state, exit_code, error, file, args, accelerator, created, started, finished,
//      duration_seconds, attempts: 1, backend: "gke"}. An upload failure is reported on stderr
//      and, when nothing else went wrong, in status.json's error.
//
// Exit code (the container's; also status.json's exit_code)
//   the job's own code; 128+N when the job was killed by signal N ("failed", "job killed by
//   SIGKILL"); 126 the job could not start (spec or context cannot be fetched, checksum mismatch,
//   unpacking failed, checkpoints cannot be fetched, a file that cannot be executed); 127 the
//   job file or the working directory is not in the context, or the interpreter (python3, bash,
//   g++) is not on PATH; a failed C++ compile gives g++'s code.
//
// Cancellation: SIGTERM or SIGINT to the bootstrap (Kubernetes deleting the pod, preemption,
//   activeDeadlineSeconds) is passed on to the job's process group (a second one sends SIGKILL);
//   the bootstrap waits for the job, uploads as above and records state "cancelled" with
//   exit_code 128+signal (143 for SIGTERM, 130 for SIGINT) whatever the job then exited with —
//   so a job that traps SIGTERM and exits 0 still fails the pod and Kubernetes retries it, and a
//   retry resumes from the uploaded checkpoints. error says which signal and how the job ended.
//   A signal before the job started stops the downloads; after it ended, it is ignored so that
//   the uploads finish. The bootstrap does not enforce --timeout itself: Kubernetes does
//   (activeDeadlineSeconds), and the CLI reports "timeout" from the Job's condition.
//
// Storage calls retry 408, 429, 5xx and dropped connections (8 tries, exponential backoff capped
// at 30 s with jitter, honouring Retry-After); files under 1 MiB are sent in one request, larger
// ones stream through a resumable session that resumes where the server says it stopped.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kinetic {

// The Python source of the bootstrap.
std::string_view bootstrap_source();

// ["python3", "-c", SOURCE]
std::vector<std::string> bootstrap_command();

// The plain environment the bootstrap reads: where the context, spec and results live.
// RESULTS_URI gets a trailing '/' if it has none.
std::vector<std::pair<std::string, std::string>> bootstrap_env(const std::string& job_id,
                                                               const std::string& context_uri,
                                                               const std::string& context_sha256,
                                                               const std::string& spec_uri,
                                                               const std::string& results_uri);

}  // namespace kinetic
