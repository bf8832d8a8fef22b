#include <gtest/gtest.h>

#include "http/trace.h"

using kinetic::http::redact;
using kinetic::http::Request;
using kinetic::http::Response;
using kinetic::http::Transport;

TEST(TraceRedact, Table) {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"Authorization: Bearer ya29.secret", "Authorization: Bearer REDACTED"},
      {"> authorization: Basic dXNlcjpwYXNz\n> Accept: */*",
       "> authorization: Basic REDACTED\n> Accept: */*"},
      {"Proxy-Authorization: abc", "Proxy-Authorization: REDACTED"},
      {R"({"access_token": "ya29.x", "expires_in": 3599})",
       R"({"access_token": "REDACTED", "expires_in": 3599})"},
      {R"({"refresh_token":"1//r","id_token" : "eyJ"})",
       R"({"refresh_token":"REDACTED","id_token" : "REDACTED"})"},
      {R"({"private_key":"-----BEGIN PRIVATE KEY-----\nMIIE\"x\n-----END PRIVATE KEY-----\n","client_email":"a@b"})",
       R"({"private_key":"REDACTED","client_email":"a@b"})"},
      {R"({"client_secret":"s","password":"p","assertion":"a"})",
       R"({"client_secret":"REDACTED","password":"REDACTED","assertion":"REDACTED"})"},
      {"grant_type=urn%3Aietf&assertion=eyJhbGc.x.y", "grant_type=urn%3Aietf&assertion=REDACTED"},
      {"client_id=c&client_secret=s&refresh_token=r&grant_type=refresh_token",
       "client_id=c&client_secret=REDACTED&refresh_token=REDACTED&grant_type=refresh_token"},
      {"https://h/o?alt=media&access_token=abc", "https://h/o?alt=media&access_token=REDACTED"},
      {"https://h/o?key=AIza&x=1", "https://h/o?key=REDACTED&x=1"},
      {"https://h/o?X-Goog-Algorithm=GOOG4&X-Goog-Credential=sa%2F2024&X-Goog-Signature=abcd",
       "https://h/o?X-Goog-Algorithm=GOOG4&X-Goog-Credential=REDACTED&X-Goog-Signature=REDACTED"},
      {"https://h/o?sig=1&signature=2&token=3",
       "https://h/o?sig=REDACTED&signature=REDACTED&token=REDACTED"},
      {"https://h/o?monkey=1&pageToken=2", "https://h/o?monkey=1&pageToken=2"},
      {R"({"name":"projects/p","keyName":"k"})", R"({"name":"projects/p","keyName":"k"})"},
      {"nothing secret here", "nothing secret here"},
  };
  for (const auto& c : cases) EXPECT_EQ(redact(c.in), c.out) << c.in;
}

TEST(TraceRedact, Headers) {
  kinetic::http::Headers in = {{"Authorization", "Bearer ya29.t"},
                               {"Cookie", "a=b; c=d"},
                               {"Location", "https://h/u?upload_id=1&X-Goog-Signature=s"},
                               {"Content-Type", "application/json"}};
  auto out = kinetic::http::redact_headers(in);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].second, "Bearer REDACTED");
  EXPECT_EQ(out[1].second, "REDACTED");
  EXPECT_EQ(out[2].second, "https://h/u?upload_id=REDACTED&X-Goog-Signature=REDACTED");
  EXPECT_EQ(out[3].second, "application/json");
}

namespace {

struct Canned : Transport {
  Response response;
  Response send(const Request& request) override {
    if (request.body_source) {
      char buf[100];
      while (request.body_source(buf, sizeof buf) > 0) {
      }
    }
    if (request.on_body) {
      request.on_body(std::string(5000, 'x'));
      return Response{200, response.headers, ""};
    }
    return response;
  }
};

std::vector<std::string> run(int verbosity, const Request& request, Response response) {
  auto inner = std::make_unique<Canned>();
  inner->response = std::move(response);
  std::vector<std::string> lines;
  auto t = kinetic::http::traced(std::move(inner), verbosity,
                                 [&lines](std::string_view line) { lines.emplace_back(line); });
  t->send(request);
  return lines;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

Request secret_request() {
  Request r;
  r.method = "POST";
  r.url = "https://oauth2.googleapis.com/token?key=AIzaSECRET";
  r.headers = {{"Authorization", "Bearer ya29.SECRET"},
               {"Content-Type", "application/x-www-form-urlencoded"}};
  r.body = "grant_type=refresh_token&refresh_token=1//SECRET&client_secret=SECRET";
  return r;
}

Response secret_response() {
  return Response{200,
                  {{"Content-Type", "application/json"}},
                  R"({"access_token":"ya29.SECRET","expires_in":3599})"};
}

}  // namespace

TEST(TraceTransport, QuietBelowSix) {
  EXPECT_TRUE(run(5, secret_request(), secret_response()).empty());
}

TEST(TraceTransport, OneLineAtSix) {
  auto lines = run(6, secret_request(), secret_response());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].starts_with("POST https://oauth2.googleapis.com/token?key=REDACTED 200 in "))
      << lines[0];
  EXPECT_TRUE(lines[0].ends_with(" ms"));
  EXPECT_EQ(joined(lines).find("SECRET"), std::string::npos);
}

TEST(TraceTransport, HeadersAndBodiesAtEightWithoutSecrets) {
  auto lines = run(8, secret_request(), secret_response());
  std::string all = joined(lines);
  EXPECT_NE(all.find("> Authorization: Bearer REDACTED"), std::string::npos) << all;
  EXPECT_NE(all.find("> Content-Type: application/x-www-form-urlencoded"), std::string::npos);
  EXPECT_NE(all.find("refresh_token=REDACTED"), std::string::npos);
  EXPECT_NE(all.find(R"("access_token":"REDACTED")"), std::string::npos);
  EXPECT_NE(all.find("< Content-Type: application/json"), std::string::npos);
  EXPECT_EQ(all.find("SECRET"), std::string::npos) << all;
}

// A job's --env values travel in a Secret: never in a trace, whichever way they go (issue #10).
TEST(TraceTransport, SecretValuesAreNeverTraced) {
  Request create;
  create.method = "POST";
  create.url = "https://k/api/v1/namespaces/default/secrets";
  create.body = R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"kinetic-job-1"},)"
                R"("stringData":{"API_TOKEN":"t0k3n-SECRET"},"type":"Opaque"})";
  Response reply{201,
                 {{"Content-Type", "application/json"}},
                 R"({"kind":"Secret","metadata":{"name":"kinetic-job-1"},)"
                 R"("data":{"API_TOKEN":"dDBrM24tU0VDUkVU"}})"};
  std::string all = joined(run(8, create, reply));
  EXPECT_EQ(all.find("t0k3n-SECRET"), std::string::npos) << all;
  EXPECT_EQ(all.find("dDBrM24tU0VDUkVU"), std::string::npos) << all;
  EXPECT_NE(all.find(R"("API_TOKEN":"REDACTED")"), std::string::npos) << all;
  EXPECT_NE(all.find("kinetic-job-1"), std::string::npos) << "the rest stays readable";

  Request list;
  list.url = "https://k/api/v1/namespaces/default/secrets?labelSelector=x";
  // Past the shown 4 KiB, too: the whole body is redacted before it is cut.
  Response many{200,
                {},
                R"({"kind":"SecretList","items":[)" +
                    std::string(R"({"metadata":{"name":"pad","labels":{"p":")") +
                    std::string(5000, 'p') + R"("}}},)" +
                    R"({"metadata":{"name":"s"},"data":{"K":"dDBrM24tU0VDUkVU"}}]})"};
  all = joined(run(8, list, many));
  EXPECT_EQ(all.find("dDBrM24tU0VDUkVU"), std::string::npos) << all;

  Request event;
  event.url = "https://k/api/v1/secrets?watch=1";
  Response watched{
      200, {}, R"({"type":"ADDED","object":{"kind":"Secret","data":{"K":"c2VjcmV0"}}})"};
  all = joined(run(8, event, watched));
  EXPECT_EQ(all.find("c2VjcmV0"), std::string::npos) << all;
}

// A watch stream is one JSON event a line, not one document: each event is redacted on its own,
// and a line that is not JSON (a cut event) is withheld, never printed as it came.
TEST(TraceTransport, SecretValuesInAWatchStreamOfSeveralEventsAreNeverTraced) {
  Request watch;
  watch.url = "https://k/api/v1/namespaces/default/secrets?watch=1";
  Response stream{
      200,
      {{"Content-Type", "application/json"}},
      R"({"type":"ADDED","object":{"kind":"Secret","metadata":{"name":"a"},)"
      R"("data":{"K":"Zmlyc3Qtc2VjcmV0"}}})"
      "\n"
      R"({"type":"MODIFIED","object":{"kind":"Secret","metadata":{"name":"b"},)"
      R"("stringData":{"K":"second-secret"}}})"
      "\n"
      R"({"type":"BOOKMARK","object":{"kind":"Secret","metadata":{"resourceVersion":"7"}}})"
      "\n"
      R"({"type":"DELETED","object":{"kind":"Secret","metadata":{"name":"c"},)"
      R"("data":{"K":"dGhpcmQtc2VjcmV0"}}})"
      "\n"
      R"({"type":"ADDED","object":{"kind":"Secret","data":{"K":"Y3V0LXNlY3JldA)"};
  std::string all = joined(run(8, watch, stream));
  for (const char* value :
       {"Zmlyc3Qtc2VjcmV0", "second-secret", "dGhpcmQtc2VjcmV0", "Y3V0LXNlY3JldA"})
    EXPECT_EQ(all.find(value), std::string::npos) << value << " leaked in:\n" << all;
  EXPECT_NE(all.find(R"("name":"a")"), std::string::npos) << "the events stay readable: " << all;
  EXPECT_NE(all.find(R"("resourceVersion":"7")"), std::string::npos) << all;
  EXPECT_NE(all.find("bytes withheld: not JSON, may hold a Secret"), std::string::npos) << all;
}

TEST(TraceTransport, LongAndStreamedBodies) {
  Request upload;
  upload.method = "PUT";
  upload.url = "https://storage.googleapis.com/upload/x";
  size_t left = 1000;
  upload.body_source = [&left](char* buf, size_t size) {
    size_t n = std::min(size, left);
    std::fill(buf, buf + n, 'a');
    left -= n;
    return n;
  };
  upload.body_size = 1000;
  auto all = joined(run(8, upload, Response{200, {}, std::string(10000, 'y')}));
  EXPECT_NE(all.find("> <streamed 1000 bytes>"), std::string::npos) << all;
  EXPECT_NE(all.find("... (10000 bytes)"), std::string::npos);
  EXPECT_EQ(all.find(std::string(4097, 'y')), std::string::npos);

  Request download;
  download.url = "https://storage.googleapis.com/o";
  download.on_body = [](std::string_view) { return true; };
  all = joined(run(8, download, Response{}));
  EXPECT_NE(all.find("< <streamed 5000 bytes>"), std::string::npos) << all;
}

TEST(TraceTransport, TransportFailureIsTraced) {
  struct Failing : Transport {
    Response send(const Request&) override {
      // libcurl's error text may quote the URL, token and all.
      throw kinetic::http::TransportError(
          "cannot reach https://h/x?access_token=SECRET: Connection refused", true);
    }
  };
  std::vector<std::string> lines;
  auto t = kinetic::http::traced(std::make_unique<Failing>(), 6,
                                 [&lines](std::string_view l) { lines.emplace_back(l); });
  Request r;
  r.url = "https://h/x?access_token=SECRET";
  EXPECT_THROW(t->send(r), kinetic::http::TransportError);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].starts_with("GET https://h/x?access_token=REDACTED failed in ")) << lines[0];
  EXPECT_NE(lines[0].find(" ms: cannot reach https://h/x?access_token=REDACTED"), std::string::npos)
      << lines[0];
  EXPECT_EQ(lines[0].find("SECRET"), std::string::npos) << lines[0];
}

TEST(TraceTransport, AStreamTheCallerEndedIsNoFailure) {
  // The caller had what it wanted (a log's end) and stopped reading: the transport reports an
  // abort, the trace says who ended it.
  struct Streaming : Transport {
    Response send(const Request& request) override {
      if (!request.on_body("12345"))
        throw kinetic::http::TransportError("cannot reach https://h/log: aborted", false);
      return Response{};
    }
  };
  std::vector<std::string> lines;
  auto t = kinetic::http::traced(std::make_unique<Streaming>(), 6,
                                 [&lines](std::string_view l) { lines.emplace_back(l); });
  Request r;
  r.url = "https://h/log";
  r.on_body = [](std::string_view) { return false; };
  EXPECT_THROW(t->send(r), kinetic::http::TransportError);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].starts_with("GET https://h/log ended by kinetic after ")) << lines[0];
  EXPECT_TRUE(lines[0].ends_with(" ms (5 bytes read)")) << lines[0];
}
