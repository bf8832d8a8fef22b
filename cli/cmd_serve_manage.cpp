// kinetic serve ls | status SERVER | logs SERVER | stop SERVER...: the servers `kinetic serve`
// started (run/serve.h), with what each costs an hour.
#include <algorithm>
#include <cstdio>

#include "app.h"
#include "backend/stream_sink.h"
#include "core/duration.h"
#include "job/pricing.h"
#include "job_lookup.h"
#include "render/printer.h"
#include "run/serve.h"

namespace kinetic::cli {

namespace {

using ojson = nlohmann::ordered_json;

// SERVER, which must be one: "no job" with "did you mean" as every job command, and a job that
// is not a server named as such (it is stopped with `kinetic cancel`).
JobStatus require_server(JobStore& store, const std::string& id) {
  JobStatus st = require_job(store, id);
  if (!is_server(st))
    throw Error(Errc::usage, id +
                                 " is a job, not a server (`kinetic serve ls` lists servers); "
                                 "`kinetic cancel " +
                                 id + "` stops a job");
  return st;
}

std::string per_hour_text(const JobStatus& st, double per_hour) {
  if (st.backend != "gke") return "-";
  return format_usd(per_hour) + "/h";
}

// How long server ST has been up (a running job's duration_seconds is only written at its end).
double up_seconds(const JobStatus& st) {
  if (st.terminal() || st.started.empty()) return st.duration_seconds;
  return std::max(0.0, now_unix() - parse_rfc3339(st.started));
}

ojson server_fields(const JobStatus& st, double per_hour) {
  return {{"id", st.id},
          {"state", st.state},
          {"port", server_port(st)},
          {"accelerator", st.accelerator},
          {"backend", st.backend},
          {"created", st.created},
          {"started", st.started},
          {"cost_per_hour", per_hour},
          {"cost", per_hour * up_seconds(st) / 3600.0},
          {"file", st.file}};
}

std::vector<std::string> server_row(const JobStatus& st, double per_hour) {
  return {st.id,          st.state,           std::to_string(server_port(st)),
          st.accelerator, age_of(st.created), per_hour_text(st, per_hour),
          st.file};
}

const std::vector<std::string> kServerColumns = {"SERVER", "STATE",  "PORT", "ACCELERATOR",
                                                 "AGE",    "COST/H", "FILE"};

PriceBook prices_of(Factory& f) {
  return price_book_setting(f.settings().prices.value, f.settings().prices.source);
}

struct ServeList : PrintingOptions {
  ServeList() : PrintingOptions({OutputFormat::table, OutputFormat::json, OutputFormat::name}) {}

  int run(Factory& f) override {
    Backend& b = f.backend("serve ls");
    const PriceBook prices = prices_of(f);
    std::vector<JobStatus> servers;
    for (auto& st : b.list())
      if (is_server(st)) servers.push_back(std::move(st));
    ojson items = ojson::array();
    std::vector<std::string> names;
    for (const auto& st : servers) {
      items.push_back(server_fields(st, server_price_per_hour(st, prices)));
      names.push_back(st.id);
    }
    Printable p{.kind = "ServerList", .fields = {{"servers", items}}, .names = names};
    p.table = [&servers, &prices](bool) {
      Table t(kServerColumns);
      for (const auto& st : servers) t.add_row(server_row(st, server_price_per_hour(st, prices)));
      return t;
    };
    print(f.io(), format, p);
    return 0;
  }
};

struct ServeStatus : PrintingOptions {
  std::string id;
  ServeStatus() : PrintingOptions({OutputFormat::table, OutputFormat::json}) {}
  void validate() const override { require_job_id(id); }

  int run(Factory& f) override {
    Backend& b = f.backend("serve status");
    const JobStatus st = require_server(b, id);
    const double per_hour = server_price_per_hour(st, prices_of(f));
    Printable p{.kind = "Server", .fields = server_fields(st, per_hour)};
    p.table = [&st, per_hour](bool) {
      Table t(kServerColumns);
      t.add_row(server_row(st, per_hour));
      return t;
    };
    print(f.io(), format, p);
    if (!st.error.empty()) f.io().info("kinetic: " + st.id + ": " + st.error);
    return 0;
  }
};

struct ServeLogs : CommandOptions {
  std::string id;
  bool follow = false;
  long tail = -1;
  void validate() const override {
    require_job_id(id);
    if (tail < -1) throw Error(Errc::usage, "--tail must be 0 or more lines, e.g. --tail 100");
  }
  int run(Factory& f) override {
    Backend& b = f.backend("serve logs");
    require_server(b, id);
    StreamSink sink(f.io());
    b.stream_logs(id, {.follow = follow, .tail = tail}, sink, nullptr);
    return 0;
  }
};

struct ServeStop : CommandOptions {
  std::vector<std::string> ids;
  void validate() const override {
    for (const auto& id : ids) require_job_id(id);
  }
  int run(Factory& f) override {
    Backend& b = f.backend("serve stop");
    for (const auto& id : ids) require_server(b, id);
    for (const auto& id : ids) {
      stop_server(b, id);
      std::fprintf(f.io().out, "%s stopped\n", id.c_str());
    }
    return 0;
  }
};

}  // namespace

void add_serve_manage(CLI::App& serve, Action& action) {
  CLI::App* ls = serve.add_subcommand("ls", "List the servers, with what each costs an hour");
  on_parse(ls, action, std::make_shared<ServeList>());

  auto status = std::make_shared<ServeStatus>();
  CLI::App* st = serve.add_subcommand("status", "One server: its state, port and cost per hour");
  st->add_option("server", status->id, "Server id (see `kinetic serve ls`)")->required();
  on_parse(st, action, status);

  auto logs = std::make_shared<ServeLogs>();
  CLI::App* lg = serve.add_subcommand("logs", "A server's log");
  lg->add_option("server", logs->id, "Server id (see `kinetic serve ls`)")->required();
  lg->add_flag("-f,--follow", logs->follow, "Keep streaming until the server stops");
  lg->add_option("--tail", logs->tail, "Only the last N lines (then, with -f, what comes after)");
  on_parse(lg, action, logs);

  auto stop = std::make_shared<ServeStop>();
  CLI::App* sp = serve.add_subcommand(
      "stop", "Stop servers and remove everything kinetic made for them, their records too");
  sp->add_option("servers", stop->ids, "Server ids (see `kinetic serve ls`)")->required();
  on_parse(sp, action, stop);
}

}  // namespace kinetic::cli
