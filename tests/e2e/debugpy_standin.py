# A stand-in for debugpy, which this machine does not have, for the `run --debug` tests
# (tests/e2e/test_debug.cpp, test_gke_debug.cpp, python/tests/test_e2e.py): each test ships it in
# its project folder as debugpy/__init__.py, as a user may ship a package, so no fake lends it.
#
# debugpy's face as kinetic's launcher uses it (listen, wait_for_client, breakpoint): listen()
# serves one client on a thread; wait_for_client() returns once that client went through the start
# of the Debug Adapter Protocol as VS Code's attach does it, each message Content-Length framed
# JSON: `initialize` (answered, then the `initialized` event), `attach` (its arguments kept in
# attach_arguments, which the tests' jobs print), `configurationDone`. listened_on is the address
# listen() was given.
import json, socket, threading
attach_arguments = {}
_configured = threading.Event()
def _read(f):
    length = None
    while True:
        line = f.readline()
        if not line:
            return None
        if line in (b'\r\n', b'\n'):
            break
        name, _, value = line.decode().partition(':')
        if name.strip().lower() == 'content-length':
            length = int(value)
    return json.loads(f.read(length))
def _serve(conn):
    f, seq = conn.makefile('rb'), [0]
    def send(message):
        seq[0] += 1
        body = json.dumps(dict(message, seq=seq[0])).encode()
        conn.sendall(b'Content-Length: %d\r\n\r\n' % len(body) + body)
    while True:
        request = _read(f)
        if request is None:
            return
        command = request.get('command')
        send({'type': 'response', 'request_seq': request['seq'], 'success': True,
              'command': command, 'body': {}})
        if command == 'initialize':
            send({'type': 'event', 'event': 'initialized'})
        elif command == 'attach':
            attach_arguments.update(request.get('arguments', {}))
        elif command == 'configurationDone':
            _configured.set()
listened_on = None
def listen(address):
    global listened_on
    listened_on = tuple(address)
    server = socket.create_server(listened_on)
    threading.Thread(target=lambda: _serve(server.accept()[0]), daemon=True).start()
    return address
def wait_for_client():
    _configured.wait()
def is_client_connected():
    return _configured.is_set()
def breakpoint():
    pass
