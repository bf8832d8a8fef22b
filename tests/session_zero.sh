#!/bin/sh
# The local backend's process-group rules where the job's session is 0, as on a machine whose
# init never calls setsid() (the CI machines here): in a new pid namespace the outer session
# leader is not visible, so every process there reads session 0 in /proc/PID/stat.
# Usage: session_zero.sh UNIT_TESTS E2E_TESTS. Exits 125 (skipped) where unshare is refused.
unshare --pid --fork --mount-proc true 2>/dev/null || exit 125
exec unshare --pid --fork --mount-proc sh -c '
  [ "$(cut -d" " -f6 /proc/self/stat)" = 0 ] || { echo "not in session 0"; exit 1; }
  "$0" --gtest_filter="ProcessIdentity.*" &&
  "$1" --gtest_filter="JobsTest.AStaleProcessGroupIsNeverKilled"' "$1" "$2"
