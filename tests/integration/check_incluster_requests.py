# The shared request code of the in-cluster scripts (lib/job/incluster_common.py, as embedded:
# its source is argv[1]) against a scripted HTTP server on 127.0.0.1: what is tried again and how
# long it waits (kinetic's back-off curve, a Retry-After), a 401 that stays a 401 is raised (not
# taken for an empty answer), a 404 is data for Storage, a 412 for a write only-if-absent, and an
# error's message is found in Google's and Kubernetes' bodies. Run by test_incluster_common.cpp;
# prints each case that went wrong and exits 1 if any did.
import http.server
import io
import sys
import threading
import urllib.error

shared = {"__name__": "incluster_common"}
with open(sys.argv[1]) as source:
    exec(source.read(), shared)

# The waits the code asks for, instead of waiting.
waits = []
shared["time"].sleep = waits.append


class Script:
    # The answers to give, in order: (code, headers, body); the last one repeats.
    answers = [(200, {}, b"")]
    seen = []


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        Script.seen.append((self.command, self.path, self.rfile.read(length)))
        code, headers, body = Script.answers[min(len(Script.seen), len(Script.answers)) - 1]
        self.send_response(code)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = answer

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
base = "http://127.0.0.1:%d" % server.server_address[1]
storage = shared["Storage"]({"STORAGE_EMULATOR_HOST": base})
bad = []


def case(name, answers, run, check):
    Script.answers, Script.seen = answers, []
    del waits[:]
    try:
        result = run()
    except Exception as e:
        result = e
    problem = check(result)
    if problem:
        bad.append("%s: %s (result %r, requests %r, waits %r)"
                   % (name, problem, result, Script.seen, waits))


def opened(tries, refresh=None):
    def run():
        build = lambda: shared["urllib"].request.Request(base + "/x")
        with shared["open_retried"](build, tries, 10, refresh=refresh) as answer:
            return answer.status, answer.read()
    return run


case("transient failures are tried again along the curve, jittered over its upper half",
     [(503, {}, b""), (500, {}, b""), (200, {}, b"ok")], opened(8),
     lambda r: "" if r == (200, b"ok") and len(Script.seen) == 3 and 0.5 <= waits[0] <= 1
     and 1 <= waits[1] <= 2 and len(waits) == 2 else "not 3 tries with waits of 0.5-1 s, 1-2 s")

case("a Retry-After longer than the curve's wait wins",
     [(429, {"Retry-After": "7"}, b""), (200, {}, b"ok")], opened(8),
     lambda r: "" if r == (200, b"ok") and waits == [7] else "did not wait 7 s")

case("the last try's failure is raised",
     [(503, {}, b"")], opened(3),
     lambda r: "" if isinstance(r, urllib.error.HTTPError) and r.code == 503
     and len(Script.seen) == 3 else "not a 503 after 3 tries")

case("a code that is not transient is raised at once",
     [(403, {}, b"")], opened(8),
     lambda r: "" if isinstance(r, urllib.error.HTTPError) and r.code == 403
     and len(Script.seen) == 1 and not waits else "not a 403 after 1 try")

refreshes = []
case("a 401 drops the token and is tried again; a 401 to the last is raised",
     [(401, {}, b"")], opened(3, lambda: refreshes.append(1)),
     lambda r: "" if isinstance(r, urllib.error.HTTPError) and r.code == 401
     and len(Script.seen) == 3 and len(refreshes) == 2 else "not a 401 after 3 tries, 2 refreshes")

case("a dropped connection is tried again",
     [(200, {}, b"ok")],
     lambda: (server.shutdown(), server.server_close(), opened(2)())[2],
     lambda r: "" if isinstance(r, OSError) and len(waits) == 1 else "not raised after 2 tries")
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
storage.base = base = "http://127.0.0.1:%d" % server.server_address[1]

case("Storage reads an object's bytes, and None when there is none",
     [(200, {}, b"data"), (404, {}, b"")],
     lambda: (storage.read("gs://b/a/b c"), storage.read("gs://b/none")),
     lambda r: "" if r == (b"data", None)
     and Script.seen[0][1] == "/storage/v1/b/b/o/a%2Fb%20c?alt=media" else "not (data, None)")

case("Storage writes text as UTF-8; only-if-absent meets 412 as False",
     [(200, {}, b"{}"), (412, {}, b"")],
     lambda: (storage.write("gs://b/o", "\u00e9"),
              storage.write("gs://b/o", b"x", "application/json", only_if_absent=True)),
     lambda r: "" if r == (True, False) and Script.seen[0][2] == "\u00e9".encode()
     and Script.seen[1][1].endswith("&ifGenerationMatch=0") else "not (True, False)")


case("Storage deletes an object, and says False when there was none",
     [(204, {}, b""), (404, {}, b"")],
     lambda: (storage.delete("gs://b/a/1"), storage.delete("gs://b/a/2")),
     lambda r: "" if r == (True, False) and Script.seen[0][0] == "DELETE"
     and Script.seen[0][1] == "/storage/v1/b/b/o/a%2F1" else "not (True, False)")

case("Storage composes onto a generation, a pinned source first",
     [(200, {}, b'{"generation": "7"}')],
     lambda: storage.compose("gs://b/log/composed", [("log/composed", 5), "log/000032"], 5,
                             dict(metadata=dict(parts="32"))),
     lambda r: "" if r == {"generation": "7"} and Script.seen[0][0] == "POST"
     and Script.seen[0][1] == "/storage/v1/b/b/o/log%2Fcomposed/compose?ifGenerationMatch=5"
     and shared["json"].loads(Script.seen[0][2]) == dict(
         sourceObjects=[dict(name="log/composed", generation=5), dict(name="log/000032")],
         destination=dict(metadata=dict(parts="32"))) else "not the compose request")

def error_of(body, reason="Forbidden"):
    return shared["error_answer"](urllib.error.HTTPError("u", 403, reason, {}, io.BytesIO(body)))


for name, body, want in (
        ("Google's error", b'{"error": {"code": 403, "message": "no access"}}', "no access"),
        ("a Kubernetes Status", b'{"kind": "Status", "message": "jobs is forbidden"}',
         "jobs is forbidden"),
        ("a body that is not JSON", b"<html>", "Forbidden"),
        ("a JSON body that is no object", b"[1]", "Forbidden")):
    got = error_of(body)["message"]
    if got != want:
        bad.append("error_answer of %s: %r, want %r" % (name, got, want))

for line in bad:
    print(line)
sys.exit(1 if bad else 0)
