// render/output.h: what a table or a message line prints from a record (a job's error, which
// its pod writes to status.json) is escaped; -o json stays exact (issue #28 point 8).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "render/output.h"
#include "render/printer.h"
#include "render/status_line.h"
#include "unit/memory_streams.h"

namespace kinetic {
namespace {

const std::string kHostile = "boom\033]0;x\a\rfaked";

TEST(TableOutput, ACellCanNeitherDriveTheTerminalNorBreakTheRows) {
  Table t({"JOB", "ERROR"});
  t.add_row({"job-1", kHostile + "\nrow\tcell"});
  for (bool aligned : {true, false}) {
    const std::string text = t.render(aligned);
    EXPECT_EQ(text.find_first_of("\033\a\r"), std::string::npos) << text;
    EXPECT_NE(text.find("boom\\x1B]0;x\\x07\\rfaked\\nrow\\tcell"), std::string::npos) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  }
}

TEST(TableOutput, JsonStaysExact) {
  test::CapturedIO captured;
  Printable p{.kind = "Job", .fields = {{"error", kHostile}}};
  p.table = [](bool) {
    Table t({"ERROR"});
    t.add_row({kHostile});
    return t;
  };
  print(captured.io, OutputFormat::json, p);
  EXPECT_EQ(nlohmann::json::parse(captured.out())["error"], kHostile);
}

TEST(MessageLines, InfoWarnAndTheStatusLineEscapeControls) {
  test::CapturedIO captured;
  captured.io.info("kinetic: job-1 failed: " + kHostile + "\nnext line");
  captured.io.warn(kHostile);
  {
    StatusLine line(captured.io);
    line.update("step a: " + kHostile);
    line.finish("step a: " + kHostile);
  }
  const std::string err = captured.err();
  EXPECT_EQ(err.find_first_of("\033\a\r"), std::string::npos) << err;
  EXPECT_NE(err.find("failed: boom\\x1B]0;x\\x07\\rfaked\nnext line\n"), std::string::npos) << err;
  EXPECT_NE(err.find("warning: boom\\x1B]0;x\\x07\\rfaked\n"), std::string::npos) << err;
}

// A wait polled every second must not print a line a second into a CI log: the ticking part
// rides along only when the reason itself changes.
TEST(StatusLineTicking, WithoutATerminalALineIsPrintedOnlyWhenTheReasonChanges) {
  test::CapturedIO captured;
  {
    StatusLine line(captured.io);
    line.update_ticking("waiting for a node", " (1s)");
    line.update_ticking("waiting for a node", " (2s)");
    line.update_ticking("waiting for a node", " (3s)");
    line.update_ticking("pulling the image", " (4s)");
    line.update_ticking("waiting for a node", " (5s)");
  }
  EXPECT_EQ(captured.err(),
            "waiting for a node (1s)\npulling the image (4s)\nwaiting for a node (5s)\n");
}

TEST(StatusLineTicking, OnATerminalTheTickingPartIsRewrittenInPlace) {
  test::CapturedIO captured;
  captured.io.err_tty = true;
  {
    StatusLine line(captured.io);
    line.update_ticking("waiting for a node", " (1s)");
    line.update_ticking("waiting for a node", " (2s)");
  }
  const std::string err = captured.err();
  EXPECT_NE(err.find("\r\033[Kwaiting for a node (1s)\r\033[Kwaiting for a node (2s)"),
            std::string::npos)
      << err;
}

TEST(StatusLineTicking, QuietPrintsNothing) {
  test::CapturedIO captured;
  captured.io.quiet = true;
  {
    StatusLine line(captured.io);
    line.update_ticking("waiting for a node", " (1s)");
  }
  EXPECT_EQ(captured.err(), "");
}

}  // namespace
}  // namespace kinetic
