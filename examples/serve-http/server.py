"""A small HTTP server for `kinetic serve` that runs everywhere (standard library only).

    kinetic serve examples/serve-http/server.py --port 8000

GET / answers a JSON greeting with the request count; GET /files lists what
`--from JOB` brought (the outputs of a job, at $KINETIC_INPUT_DIR/JOB/);
GET /healthz answers "ok". It listens on $KINETIC_SERVE_PORT, which kinetic
sets from --port.
"""

import json
import os
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    requests_served = 0

    def do_GET(self):
        Handler.requests_served += 1
        if self.path == "/healthz":
            self.answer(200, "text/plain", b"ok\n")
        elif self.path == "/files":
            self.answer(200, "application/json", json.dumps(input_files()).encode() + b"\n")
        elif self.path == "/":
            body = {
                "message": "hello from kinetic serve",
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "requests": Handler.requests_served,
            }
            self.answer(200, "application/json", json.dumps(body).encode() + b"\n")
        else:
            self.answer(404, "text/plain", b"not found\n")

    def answer(self, code, content_type, body):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        # One line per request on stdout, which `kinetic serve logs` shows.
        print("%s %s" % (self.address_string(), fmt % args), flush=True)


def input_files():
    """Every file under $KINETIC_INPUT_DIR (the outputs --from passed on), relative."""
    root = os.environ.get("KINETIC_INPUT_DIR", "")
    found = []
    if root:
        for folder, _, names in os.walk(root):
            for name in names:
                found.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted(found)


def main():
    port = int(os.environ.get("KINETIC_SERVE_PORT", sys.argv[1] if len(sys.argv) > 1 else "8000"))
    server = ThreadingHTTPServer(("0.0.0.0", port), Handler)
    print("serving on port %d" % port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
