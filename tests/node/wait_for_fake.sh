# Sourced by the fidelity scripts: wait_for_fake PORT_FILE PID LOG waits until the fake started
# as PID has written its port to PORT_FILE, and fails with its LOG when it never does. 60 s is a
# bound against a fake that never starts (a loaded machine starts it late), not a timing.
wait_for_fake() {
  _i=0
  while [ ! -s "$1" ] && [ $_i -lt 1200 ]; do
    kill -0 "$2" 2>/dev/null || break
    sleep 0.05
    _i=$((_i + 1))
  done
  [ -s "$1" ] || { echo "the fake did not start:"; cat "$3"; exit 1; }
}
