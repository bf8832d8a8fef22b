#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <clocale>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "pack/archive.h"
#include "pack/sha256.h"

namespace kinetic {
namespace {

void write(const fs::path& p, std::string_view data, unsigned mode = 0644) {
  atomic_write(p, data, mode);
  ::chmod(p.c_str(), mode);  // atomic_write creates parents 0700; make the file's mode exact
}

void mkdir_mode(const fs::path& p, unsigned mode) {
  make_dirs(p, mode);
  ::chmod(p.c_str(), mode);
}

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

unsigned perm_of(const fs::path& p) {
  struct stat st;
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

struct Entry {
  std::string name;
  unsigned type = 0;
  unsigned perm = 0;
  int64_t uid = -1, gid = -1;
  std::string uname, gname;
  int64_t mtime = -1;
  bool atime_set = false, ctime_set = false;
  std::string link;
  std::string data;
};

std::vector<Entry> read_entries(const fs::path& archive) {
  struct archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_all(a);
  EXPECT_EQ(archive_read_open_filename(a, archive.c_str(), 65536), ARCHIVE_OK)
      << archive_error_string(a);
  std::vector<Entry> out;
  archive_entry* e;
  for (int rc; (rc = archive_read_next_header(a, &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN;) {
    Entry x;
    // In the C locale libarchive cannot convert UTF-8 names (a warning): take them as UTF-8.
    const char* name = archive_entry_pathname(e);
    x.name = name ? name : archive_entry_pathname_utf8(e);
    x.type = archive_entry_filetype(e);
    x.perm = archive_entry_perm(e);
    x.uid = archive_entry_uid(e);
    x.gid = archive_entry_gid(e);
    x.uname = archive_entry_uname(e) ? archive_entry_uname(e) : "";
    x.gname = archive_entry_gname(e) ? archive_entry_gname(e) : "";
    x.mtime = archive_entry_mtime(e);
    x.atime_set = archive_entry_atime_is_set(e);
    x.ctime_set = archive_entry_ctime_is_set(e);
    if (archive_entry_symlink(e)) x.link = archive_entry_symlink(e);
    char buf[65536];
    for (;;) {
      la_ssize_t n = archive_read_data(a, buf, sizeof buf);
      if (n <= 0) break;
      x.data.append(buf, static_cast<size_t>(n));
    }
    out.push_back(std::move(x));
  }
  archive_read_free(a);
  return out;
}

std::vector<std::string> names(const std::vector<Entry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.name);
  return out;
}

std::string slurp(const fs::path& p) {
  return read_file(p).value_or("<missing>");
}

// Runs FN in a child process as an unprivileged user (root reads everything, so permission
// errors only show up without it). Returns the child's report: "" on success, else the text.
std::string run_unprivileged(const std::function<std::string()>& fn) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string report;
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      report = "SKIP cannot drop privileges";
    } else {
      try {
        report = fn();
      } catch (const std::exception& e) {
        report = std::string("unexpected exception: ") + e.what();
      }
    }
    if (::write(fds[1], report.data(), report.size()) < 0) _exit(2);
    _exit(0);
  }
  ::close(fds[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) report.append(buf, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return report;
}

class PackArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = make_temp_dir(fs::temp_directory_path(), "kinetic-pack-");
    ::chmod(tmp_.c_str(), 0755);
    ctx_ = tmp_ / "ctx";
    mkdir_mode(ctx_, 0755);
  }
  void TearDown() override {
    // Undo the permission tricks some tests play before removing.
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(tmp_, ec); it != fs::end(it); it.increment(ec))
      if (!it->is_symlink()) ::chmod(it->path().c_str(), 0755);
    remove_all_quiet(tmp_);
  }

  // A small but varied tree.
  void make_tree(const fs::path& root) {
    write(root / "train.py", "print('hi')\n", 0755);
    write(root / "README.md", "# model\n");
    write(root / "secret.env", "TOKEN=1\n", 0600);
    write(root / "data" / "a.csv", "x,y\n1,2\n");
    write(root / "data" / "blob.bin", random_bytes(300 * 1024 + 5, 1));
    write(root / "a-b", "dash sorts before slash\n");
    write(root / "a" / "c.txt", "c\n");
    mkdir_mode(root / "empty", 0750);
    write(root / std::string(120, 'n') / (std::string(110, 'f') + ".txt"), "long names\n");
    write(root / "d\xc3\xa9j\xc3\xa0.txt", "non-ascii name\n");
    fs::create_symlink("data/a.csv", root / "latest.csv");
    fs::create_symlink("data", root / "data-link");
    ::chmod(root.c_str(), 0755);
    for (const auto& d : {root / "data", root / "a", root / std::string(120, 'n')})
      ::chmod(d.c_str(), 0755);
  }

  fs::path tmp_, ctx_;
};

TEST_F(PackArchiveTest, SameTreeTwiceGivesIdenticalBytesAndHash) {
  make_tree(ctx_);
  auto r1 = pack_directory(ctx_, IgnoreRules::defaults(), tmp_ / "one.tar.zst");
  auto r2 = pack_directory(ctx_, IgnoreRules::defaults(), tmp_ / "two.tar.zst");
  EXPECT_EQ(r1.sha256, r2.sha256);
  EXPECT_EQ(slurp(tmp_ / "one.tar.zst"), slurp(tmp_ / "two.tar.zst"));
  EXPECT_EQ(r1.sha256, sha256_file(tmp_ / "one.tar.zst"));
  EXPECT_EQ(r1.archive_bytes, fs::file_size(tmp_ / "one.tar.zst"));
  // zstd frame magic: the archive is tar.zst.
  EXPECT_EQ(slurp(tmp_ / "one.tar.zst").substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4));
}

TEST_F(PackArchiveTest, MtimesAndCreationOrderDoNotChangeTheArchive) {
  make_tree(ctx_);
  auto r1 = pack_directory(ctx_, IgnoreRules::defaults(), tmp_ / "one.tar.zst");

  // Same content, created in another order (so directories list in another order), with other
  // mtimes and atimes.
  fs::path other = tmp_ / "other";
  mkdir_mode(other, 0755);
  fs::create_symlink("data", other / "data-link");
  fs::create_symlink("data/a.csv", other / "latest.csv");
  write(other / "d\xc3\xa9j\xc3\xa0.txt", "non-ascii name\n");
  write(other / std::string(120, 'n') / (std::string(110, 'f') + ".txt"), "long names\n");
  mkdir_mode(other / "empty", 0750);
  write(other / "a" / "c.txt", "c\n");
  write(other / "a-b", "dash sorts before slash\n");
  write(other / "data" / "blob.bin", random_bytes(300 * 1024 + 5, 1));
  write(other / "data" / "a.csv", "x,y\n1,2\n");
  write(other / "secret.env", "TOKEN=1\n", 0600);
  write(other / "README.md", "# model\n");
  write(other / "train.py", "print('hi')\n", 0755);
  for (const auto& d : {other / "data", other / "a", other / std::string(120, 'n')})
    ::chmod(d.c_str(), 0755);
  const struct timespec times[2] = {{1234567, 0}, {987654321, 5}};
  for (auto& e : fs::recursive_directory_iterator(other))
    ::utimensat(AT_FDCWD, e.path().c_str(), times, AT_SYMLINK_NOFOLLOW);

  auto r2 = pack_directory(other, IgnoreRules::defaults(), tmp_ / "two.tar.zst");
  EXPECT_EQ(r1.sha256, r2.sha256);
  EXPECT_EQ(slurp(tmp_ / "one.tar.zst"), slurp(tmp_ / "two.tar.zst"));

  // A one-byte content change does change it.
  write(other / "README.md", "# modeL\n");
  auto r3 = pack_directory(other, IgnoreRules::defaults(), tmp_ / "three.tar.zst");
  EXPECT_NE(r1.sha256, r3.sha256);
  // So does a mode change.
  write(other / "README.md", "# model\n", 0755);
  auto r4 = pack_directory(other, IgnoreRules::defaults(), tmp_ / "four.tar.zst");
  EXPECT_NE(r1.sha256, r4.sha256);
}

TEST_F(PackArchiveTest, EntriesAreSortedAndCarryNoOwnerOrTime) {
  make_tree(ctx_);
  ASSERT_EQ(::mkfifo((ctx_ / "a.fifo").c_str(), 0644), 0);  // skipped: not a file, dir or link
  auto r = pack_directory(ctx_, IgnoreRules::defaults(), tmp_ / "out.tar.zst");
  auto entries = read_entries(tmp_ / "out.tar.zst");
  ASSERT_FALSE(entries.empty());

  std::vector<std::string> got = names(entries);
  for (auto& n : got)
    if (!n.empty() && n.back() == '/') n.pop_back();
  std::vector<std::string> want = {"README.md",
                                   "a",
                                   "a-b",
                                   "a/c.txt",
                                   "data",
                                   "data-link",
                                   "data/a.csv",
                                   "data/blob.bin",
                                   "d\xc3\xa9j\xc3\xa0.txt",
                                   "empty",
                                   "latest.csv",
                                   std::string(120, 'n'),
                                   std::string(120, 'n') + "/" + std::string(110, 'f') + ".txt",
                                   "secret.env",
                                   "train.py"};
  EXPECT_EQ(got, want);
  EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
  EXPECT_EQ(r.files, want.size());

  for (const auto& e : entries) {
    EXPECT_EQ(e.uid, 0) << e.name;
    EXPECT_EQ(e.gid, 0) << e.name;
    EXPECT_EQ(e.uname, "") << e.name;
    EXPECT_EQ(e.gname, "") << e.name;
    EXPECT_EQ(e.mtime, 0) << e.name;
    EXPECT_FALSE(e.atime_set) << e.name;
    EXPECT_FALSE(e.ctime_set) << e.name;
  }
  std::map<std::string, Entry> by_name;
  for (auto& e : entries) {
    std::string n = e.name;
    if (n.back() == '/') n.pop_back();
    by_name[n] = e;
  }
  EXPECT_EQ(by_name["train.py"].perm, 0755u);
  EXPECT_EQ(by_name["secret.env"].perm, 0600u);
  EXPECT_EQ(by_name["README.md"].perm, 0644u);
  EXPECT_EQ(by_name["empty"].type, static_cast<unsigned>(AE_IFDIR));
  EXPECT_EQ(by_name["empty"].perm, 0750u);
  EXPECT_EQ(by_name["latest.csv"].type, static_cast<unsigned>(AE_IFLNK));
  EXPECT_EQ(by_name["latest.csv"].link, "data/a.csv");
  EXPECT_EQ(by_name["data-link"].type, static_cast<unsigned>(AE_IFLNK));
  EXPECT_EQ(by_name["data/blob.bin"].data, random_bytes(300 * 1024 + 5, 1));
  EXPECT_EQ(by_name["train.py"].data, "print('hi')\n");
}

TEST_F(PackArchiveTest, GzipIsDeterministicWithNoTimestampOrNameInTheHeader) {
  make_tree(ctx_);
  auto r1 = pack_directory(ctx_, IgnoreRules::defaults(), tmp_ / "one.tar.gz", Compression::gzip);
  // Other mtimes, and a second later on the clock: the bytes must not move.
  const struct timespec times[2] = {{1234567, 0}, {987654321, 5}};
  for (auto& e : fs::recursive_directory_iterator(ctx_))
    ::utimensat(AT_FDCWD, e.path().c_str(), times, AT_SYMLINK_NOFOLLOW);
  auto r2 = pack_directory(ctx_, IgnoreRules::defaults(), tmp_ / "two.tar.gz", Compression::gzip);
  EXPECT_EQ(r1.sha256, r2.sha256);
  const std::string bytes = slurp(tmp_ / "one.tar.gz");
  EXPECT_EQ(bytes, slurp(tmp_ / "two.tar.gz"));
  EXPECT_EQ(r1.sha256, sha256_file(tmp_ / "one.tar.gz"));
  EXPECT_EQ(r1.archive_bytes, bytes.size());
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 3), std::string("\x1f\x8b\x08", 3));  // gzip, deflate
  EXPECT_EQ(bytes[3], '\0');                                      // no name, comment or extra
  EXPECT_EQ(bytes.substr(4, 4), std::string(4, '\0'));            // MTIME 0
  // Not the zstd bytes, and not the same content address.
  auto z = pack_directory(ctx_, IgnoreRules::defaults(), tmp_ / "one.tar.zst");
  EXPECT_NE(z.sha256, r1.sha256);
  EXPECT_EQ(z.files, r1.files);
  EXPECT_EQ(z.input_bytes, r1.input_bytes);
}

TEST_F(PackArchiveTest, GzipHoldsTheSameEntriesAsZstdAndRoundTrips) {
  make_tree(ctx_);
  auto g = pack_directory(ctx_, IgnoreRules::defaults(), tmp_ / "c.tar.gz", Compression::gzip);
  pack_directory(ctx_, IgnoreRules::defaults(), tmp_ / "c.tar.zst", Compression::zstd);
  auto ge = read_entries(tmp_ / "c.tar.gz");
  auto ze = read_entries(tmp_ / "c.tar.zst");
  ASSERT_EQ(names(ge), names(ze));
  for (size_t i = 0; i < ge.size(); ++i) {
    EXPECT_EQ(ge[i].perm, ze[i].perm) << ge[i].name;
    EXPECT_EQ(ge[i].type, ze[i].type) << ge[i].name;
    EXPECT_EQ(ge[i].link, ze[i].link) << ge[i].name;
    EXPECT_EQ(ge[i].data, ze[i].data) << ge[i].name;
    EXPECT_EQ(ge[i].mtime, 0) << ge[i].name;
  }
  fs::path out = tmp_ / "unpacked";
  unpack_archive(tmp_ / "c.tar.gz", out);
  EXPECT_EQ(perm_of(out / "train.py"), 0755u);
  EXPECT_EQ(perm_of(out / "secret.env"), 0600u);
  EXPECT_EQ(slurp(out / "data" / "blob.bin"), random_bytes(300 * 1024 + 5, 1));
  EXPECT_EQ(fs::read_symlink(out / "latest.csv"), "data/a.csv");
  auto again =
      pack_directory(out, IgnoreRules::defaults(), tmp_ / "again.tar.gz", Compression::gzip);
  EXPECT_EQ(again.sha256, g.sha256);
}

TEST_F(PackArchiveTest, ExtensionsNameTheCompression) {
  EXPECT_EQ(archive_extension(Compression::zstd), ".tar.zst");
  EXPECT_EQ(archive_extension(Compression::gzip), ".tar.gz");
  // The default stays zstd (the local backend's format).
  write(ctx_ / "a.py", "x");
  pack_directory(ctx_, IgnoreRules(), tmp_ / "d");
  EXPECT_EQ(slurp(tmp_ / "d").substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4));
}

TEST_F(PackArchiveTest, PlainNamesNeedNoPaxRecords) {
  // Short ASCII names fit ustar headers: no extended records that older tars warn about.
  write(ctx_ / "train.py", "x");
  write(ctx_ / "pkg" / "m.py", "y");
  pack_directory(ctx_, IgnoreRules(), tmp_ / "o.tar.zst");
  struct archive* a = archive_read_new();
  archive_read_support_filter_zstd(a);
  archive_read_support_format_raw(a);
  ASSERT_EQ(archive_read_open_filename(a, (tmp_ / "o.tar.zst").c_str(), 65536), ARCHIVE_OK);
  archive_entry* e;
  ASSERT_EQ(archive_read_next_header(a, &e), ARCHIVE_OK);
  std::string tar;
  char buf[65536];
  for (la_ssize_t n; (n = archive_read_data(a, buf, sizeof buf)) > 0;) tar.append(buf, n);
  archive_read_free(a);
  EXPECT_EQ(tar.size() % 512, 0u);
  EXPECT_EQ(tar.find("PaxHeader"), std::string::npos);
  EXPECT_EQ(tar.find("hdrcharset"), std::string::npos);
  EXPECT_NE(tar.find("ustar"), std::string::npos);
}

TEST_F(PackArchiveTest, NamesAreBytesWhateverTheLocale) {
  const std::string utf8 = "caf\xc3\xa9.txt", latin1 = "na\xefve-\xff.txt";
  write(ctx_ / utf8, "u");
  write(ctx_ / latin1, "l");
  const std::string before = ::setlocale(LC_ALL, nullptr);
  auto r1 = pack_directory(ctx_, IgnoreRules(), tmp_ / "c.tar.zst");
  ASSERT_NE(::setlocale(LC_ALL, "C.UTF-8"), nullptr);
  auto r2 = pack_directory(ctx_, IgnoreRules(), tmp_ / "u.tar.zst");
  ::setlocale(LC_ALL, before.c_str());
  EXPECT_EQ(r1.sha256, r2.sha256);
  unpack_archive(tmp_ / "c.tar.zst", tmp_ / "x");
  EXPECT_EQ(slurp(tmp_ / "x" / utf8), "u");
  EXPECT_EQ(slurp(tmp_ / "x" / latin1), "l");
}

TEST_F(PackArchiveTest, ResultCountsBytesAndLargestFiles) {
  write(ctx_ / "s1", std::string(10, 'a'));
  write(ctx_ / "s2", std::string(20, 'a'));
  write(ctx_ / "sub" / "big", std::string(5000, 'a'));
  write(ctx_ / "sub" / "mid", std::string(700, 'a'));
  write(ctx_ / "t1", std::string(700, 'b'));  // ties sort by path
  write(ctx_ / "t2", std::string(30, 'a'));
  write(ctx_ / "zero", "");
  fs::create_symlink("s1", ctx_ / "link");
  auto r = pack_directory(ctx_, IgnoreRules(), tmp_ / "o.tar.zst");
  EXPECT_EQ(r.files, 9u);  // 7 files, 1 directory, 1 symlink
  EXPECT_EQ(r.input_bytes, 10u + 20 + 5000 + 700 + 700 + 30);
  std::vector<std::pair<std::string, uint64_t>> want = {
      {"sub/big", 5000}, {"sub/mid", 700}, {"t1", 700}, {"t2", 30}, {"s2", 20}};
  EXPECT_EQ(r.largest, want);
  EXPECT_GT(r.archive_bytes, 0u);
}

TEST_F(PackArchiveTest, ModesContentAndSymlinksSurviveUnpack) {
  make_tree(ctx_);
  mkdir_mode(ctx_ / "private", 0700);
  write(ctx_ / "private" / "key", "k", 0600);
  ::chmod((ctx_ / "private").c_str(), 0700);
  fs::create_symlink("does-not-exist", ctx_ / "dangling");
  auto r = pack_directory(ctx_, IgnoreRules::defaults(), tmp_ / "c.tar.zst");
  fs::path out = tmp_ / "unpacked";
  unpack_archive(tmp_ / "c.tar.zst", out);

  EXPECT_EQ(perm_of(out / "train.py"), 0755u);
  EXPECT_EQ(perm_of(out / "secret.env"), 0600u);
  EXPECT_EQ(perm_of(out / "README.md"), 0644u);
  EXPECT_EQ(perm_of(out / "empty"), 0750u);
  EXPECT_EQ(perm_of(out / "private"), 0700u);
  EXPECT_EQ(slurp(out / "data" / "blob.bin"), random_bytes(300 * 1024 + 5, 1));
  EXPECT_EQ(slurp(out / "d\xc3\xa9j\xc3\xa0.txt"), "non-ascii name\n");
  EXPECT_EQ(slurp(out / std::string(120, 'n') / (std::string(110, 'f') + ".txt")), "long names\n");
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(out / "empty")));
  ASSERT_TRUE(fs::is_symlink(out / "latest.csv"));
  EXPECT_EQ(fs::read_symlink(out / "latest.csv"), "data/a.csv");
  EXPECT_EQ(slurp(out / "latest.csv"), "x,y\n1,2\n");
  ASSERT_TRUE(fs::is_symlink(out / "data-link"));
  ASSERT_TRUE(fs::is_symlink(out / "dangling"));
  EXPECT_EQ(fs::read_symlink(out / "dangling"), "does-not-exist");

  // Packing the unpacked tree gives the same archive: nothing was lost or added.
  auto again = pack_directory(out, IgnoreRules::defaults(), tmp_ / "again.tar.zst");
  EXPECT_EQ(again.sha256, r.sha256);
}

TEST_F(PackArchiveTest, SymlinksAreNeverFollowed) {
  write(ctx_ / "main.py", "x");
  write(ctx_ / "sub" / "data.txt", "d");
  fs::create_symlink("../main.py", ctx_ / "sub" / "up");  // climbs, and stays inside
  fs::create_symlink("sub", ctx_ / "subdir");
  auto r = pack_directory(ctx_, IgnoreRules(), tmp_ / "o.tar.zst");
  auto entries = read_entries(tmp_ / "o.tar.zst");
  EXPECT_EQ(names(entries),
            (std::vector<std::string>{"main.py", "sub/", "sub/data.txt", "sub/up", "subdir"}));
  for (const auto& e : entries) {
    if (e.name != "sub/up" && e.name != "subdir") continue;
    EXPECT_EQ(e.type, static_cast<unsigned>(AE_IFLNK));
    EXPECT_TRUE(e.data.empty());
  }
  EXPECT_EQ(r.input_bytes, 2u);
}

// A link out of the context could never be unpacked by the job (every extractor refuses it):
// refused at packing time, before any upload or build (issue #10 point 7).
TEST_F(PackArchiveTest, ASymlinkLeadingOutOfTheContextIsRefusedWhenPacking) {
  fs::path outside = tmp_ / "outside";
  write(outside / "big-secret.bin", "SECRET CONTENT");
  write(ctx_ / "main.py", "x");
  make_dirs(ctx_ / "sub");
  const std::vector<std::pair<std::string, fs::path>> links = {
      {"outdir", outside},
      {"inside-but-absolute", ctx_ / "main.py"},
      {"sub/climbs-out", "../../outside/big-secret.bin"},
      {"sub/down-then-out", "x/../../../y"}};
  for (const auto& [name, target] : links) {
    fs::create_symlink(target, ctx_ / name);
    try {
      pack_directory(ctx_, IgnoreRules(), tmp_ / "o.tar.zst");
      ADD_FAILURE() << name << " was packed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::packaging);
      EXPECT_NE(std::string(e.what()).find((ctx_ / name).string() + " is a symlink to '" +
                                           target.string() + "'"),
                std::string::npos)
          << e.what();
    }
    fs::remove(ctx_ / name);
  }
}

TEST_F(PackArchiveTest, DefaultsAndKineticignoreLeaveFilesOut) {
  write(ctx_ / "train.py", "x");
  write(ctx_ / ".git" / "HEAD", "ref");
  write(ctx_ / "pkg" / "__pycache__" / "m.cpython-311.pyc", "pyc");
  write(ctx_ / "pkg" / "m.py", "m");
  write(ctx_ / "web" / "node_modules" / "x" / "index.js", "js");
  write(ctx_ / "kinetic-out" / "job1" / "status.json", "{}");
  write(ctx_ / ".venv" / "bin" / "python", "py");
  write(ctx_ / "data" / "e1.ckpt", "c1");
  write(ctx_ / "data" / "best.ckpt", "c2");
  write(ctx_ / "data" / "train.csv", "csv");
  write(ctx_ / "scratch" / "tmp.txt", "t");
  write(ctx_ / "src" / "scratch" / "kept.txt", "k");
  write(ctx_ / ".kineticignore", "# mine\n*.ckpt\n!best.ckpt\n/scratch/\n");
  auto rules = IgnoreRules::defaults();
  rules.add_file(ctx_ / ".kineticignore");
  pack_directory(ctx_, rules, tmp_ / "o.tar.zst");
  std::vector<std::string> got = names(read_entries(tmp_ / "o.tar.zst"));
  for (auto& n : got)
    if (n.back() == '/') n.pop_back();
  EXPECT_EQ(got, (std::vector<std::string>{
                     ".kineticignore", "data", "data/best.ckpt", "data/train.csv", "pkg",
                     "pkg/m.py", "src", "src/scratch", "src/scratch/kept.txt", "train.py", "web"}));
}

TEST_F(PackArchiveTest, UnreadableFileIsAnErrorNamingItAndTheFix) {
  write(ctx_ / "ok.py", "x");
  write(ctx_ / "locked.bin", "secret", 0000);
  fs::path out = tmp_ / "outdir";
  mkdir_mode(out, 0777);
  std::string report = run_unprivileged([&]() -> std::string {
    try {
      pack_directory(ctx_, IgnoreRules(), out / "o.tar.zst");
      return "no error";
    } catch (const Error& e) {
      std::string m = e.what();
      if (e.code() != Errc::packaging) return "wrong code: " + m;
      if (m.find((ctx_ / "locked.bin").string()) == std::string::npos) return "no path: " + m;
      if (m.find(".kineticignore") == std::string::npos) return "no fix: " + m;
      if (m.find('\n') != std::string::npos) return "not one line: " + m;
      return "";
    }
  });
  if (report.rfind("SKIP", 0) == 0) GTEST_SKIP() << report;
  EXPECT_EQ(report, "");
  // The failed run left neither the archive nor its temp file behind.
  EXPECT_TRUE(fs::is_empty(out));
}

TEST_F(PackArchiveTest, IgnoredDirectoriesAreNotEvenOpened) {
  write(ctx_ / "ok.py", "x");
  write(ctx_ / "cache" / "x", "x");
  ::chmod((ctx_ / "cache").c_str(), 0000);  // unreadable, but ignored: never opened
  fs::path out = tmp_ / "outdir";
  mkdir_mode(out, 0777);
  IgnoreRules rules;
  rules.add_line("cache/");
  std::string report = run_unprivileged([&]() -> std::string {
    auto r = pack_directory(ctx_, rules, out / "o.tar.zst");
    return r.files == 1 ? "" : "files = " + std::to_string(r.files);
  });
  if (report.rfind("SKIP", 0) == 0) GTEST_SKIP() << report;
  EXPECT_EQ(report, "");
}

TEST_F(PackArchiveTest, WritesAtomicallyIntoNewDirectoriesAndLeavesNoTempFiles) {
  write(ctx_ / "a.py", "x");
  fs::path out = tmp_ / "deep" / "er" / "ctx.tar.zst";
  pack_directory(ctx_, IgnoreRules(), out);
  ASSERT_TRUE(fs::exists(out));
  std::vector<std::string> left;
  for (auto& e : fs::directory_iterator(out.parent_path())) left.push_back(e.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"ctx.tar.zst"});
  // Replacing an existing archive works too.
  write(ctx_ / "b.py", "y");
  auto r = pack_directory(ctx_, IgnoreRules(), out);
  EXPECT_EQ(r.sha256, sha256_file(out));
}

TEST_F(PackArchiveTest, MissingContextIsAPackagingError) {
  try {
    pack_directory(tmp_ / "nope", IgnoreRules(), tmp_ / "o.tar.zst");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::packaging);
    EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(tmp_ / "o.tar.zst"));
}

TEST_F(PackArchiveTest, EmptyContextPacksAndUnpacks) {
  auto r = pack_directory(ctx_, IgnoreRules(), tmp_ / "e.tar.zst");
  EXPECT_EQ(r.files, 0u);
  EXPECT_TRUE(r.largest.empty());
  unpack_archive(tmp_ / "e.tar.zst", tmp_ / "e");
  EXPECT_TRUE(fs::is_empty(tmp_ / "e"));
}

// ---- unpacking archives that were not made by us ------------------------------------------

struct Raw {
  std::string name;
  unsigned type = AE_IFREG;
  std::string data;
  std::string link;  // symlink target, or hard link source
  bool hard = false;
  unsigned perm = 0644;
};

void write_tar(const fs::path& path, const std::vector<Raw>& entries,
               int filter = ARCHIVE_FILTER_NONE) {
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (filter == ARCHIVE_FILTER_GZIP) archive_write_add_filter_gzip(a);
  if (filter == ARCHIVE_FILTER_ZSTD) archive_write_add_filter_zstd(a);
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
  for (const auto& r : entries) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, r.name.c_str());
    archive_entry_set_perm(e, r.perm);
    if (r.hard) {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_hardlink(e, r.link.c_str());
      archive_entry_set_size(e, 0);
    } else {
      archive_entry_set_filetype(e, r.type);
      if (r.type == AE_IFLNK) archive_entry_set_symlink(e, r.link.c_str());
      if (r.type == AE_IFCHR) archive_entry_set_rdev(e, ::makedev(1, 3));
      archive_entry_set_size(e, r.type == AE_IFREG ? static_cast<la_int64_t>(r.data.size()) : 0);
    }
    EXPECT_GE(archive_write_header(a, e), ARCHIVE_WARN) << archive_error_string(a);
    if (!r.data.empty()) archive_write_data(a, r.data.data(), r.data.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

class UnpackArchiveTest : public PackArchiveTest {
 protected:
  // Expects unpacking ENTRIES to be refused with a message naming the archive and ENTRY.
  void expect_refused(const std::vector<Raw>& entries, const std::string& entry,
                      const std::string& why) {
    fs::path archive = tmp_ / "evil.tar";
    write_tar(archive, entries);
    try {
      unpack_archive(archive, dest_);
      ADD_FAILURE() << "unpacking was not refused (entry " << entry << ")";
    } catch (const Error& e) {
      std::string m = e.what();
      EXPECT_EQ(e.code(), Errc::packaging);
      EXPECT_NE(m.find(archive.string()), std::string::npos) << m;
      EXPECT_NE(m.find("'" + entry + "'"), std::string::npos) << m;
      EXPECT_NE(m.find(why), std::string::npos) << m;
    }
  }
  fs::path dest_ = fs::path("/nonexistent");
  void SetUp() override {
    PackArchiveTest::SetUp();
    dest_ = tmp_ / "dest";
    outside_ = tmp_ / "outside";
    make_dirs(outside_);
  }
  fs::path outside_;
};

TEST_F(UnpackArchiveTest, RefusesAbsolutePaths) {
  fs::path target = outside_ / "abs.txt";
  expect_refused({{"ok.txt", AE_IFREG, "fine"}, {target.string(), AE_IFREG, "pwned"}},
                 target.string(), "absolute path");
  EXPECT_FALSE(fs::exists(target));
}

TEST_F(UnpackArchiveTest, RefusesDotDotComponents) {
  expect_refused({{"../outside/dotdot.txt", AE_IFREG, "pwned"}}, "../outside/dotdot.txt", "'..'");
  expect_refused({{"a/../../outside/dotdot.txt", AE_IFREG, "pwned"}}, "a/../../outside/dotdot.txt",
                 "'..'");
  expect_refused({{"a/..", AE_IFDIR}}, "a/../", "'..'");  // libarchive adds the '/'
  expect_refused({{"..", AE_IFLNK, "", "x"}}, "..", "'..'");
  EXPECT_FALSE(fs::exists(outside_ / "dotdot.txt"));
}

TEST_F(UnpackArchiveTest, RefusesSymlinksPointingOutside) {
  expect_refused({{"up", AE_IFLNK, "", "../outside"}}, "up", "outside the destination");
  expect_refused({{"deep/up", AE_IFLNK, "", "../../outside"}}, "deep/up",
                 "outside the destination");
  expect_refused({{"abs", AE_IFLNK, "", outside_.string()}}, "abs", "absolute");
  expect_refused({{"etc", AE_IFLNK, "", "/etc/passwd"}}, "etc", "absolute");
  EXPECT_FALSE(fs::exists(fs::symlink_status(dest_ / "up")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dest_ / "abs")));
}

TEST_F(UnpackArchiveTest, RefusesLinksThatEscapeTogether) {
  // Each looks harmless alone; "b" -> "." makes "a" -> "b/.." the destination's parent.
  expect_refused({{"a", AE_IFLNK, "", "b/.."}, {"b", AE_IFLNK, "", "."}}, "a",
                 "outside the destination");
  EXPECT_FALSE(fs::exists(fs::symlink_status(dest_ / "a")));
}

TEST_F(UnpackArchiveTest, SkipModeLeavesUnsafeSymlinksOutAndReportsThem) {
  // A job's outputs: the bad links are left out, everything else lands.
  write_tar(tmp_ / "out.tar", {{"model.txt", AE_IFREG, "weights"},
                               {"a", AE_IFLNK, "", "/etc/passwd"},
                               {"./d", AE_IFLNK, "", "/etc/hosts"},
                               {"deep/up", AE_IFLNK, "", "../../outside"},
                               {"c", AE_IFLNK, "", "b/.."},
                               {"b", AE_IFLNK, "", "."},
                               {"good", AE_IFLNK, "", "model.txt"},
                               {"z.txt", AE_IFREG, "last"}});
  std::vector<std::string> skipped;
  unpack_archive(tmp_ / "out.tar", dest_, UnsafeLinks::skip, &skipped);
  EXPECT_EQ(skipped, (std::vector<std::string>{"a -> /etc/passwd", "d -> /etc/hosts",
                                               "deep/up -> ../../outside", "c -> b/.."}));
  EXPECT_EQ(slurp(dest_ / "model.txt"), "weights");
  EXPECT_EQ(slurp(dest_ / "z.txt"), "last");
  EXPECT_EQ(slurp(dest_ / "good"), "weights");
  for (const char* gone : {"a", "d", "deep/up", "c"})
    EXPECT_FALSE(fs::exists(fs::symlink_status(dest_ / gone))) << gone;
  // The refusing mode (contexts) is unchanged.
  EXPECT_THROW(unpack_archive(tmp_ / "out.tar", tmp_ / "ctx"), Error);
  EXPECT_THROW(unpack_archive(tmp_ / "out.tar", tmp_ / "ctx2", UnsafeLinks::refuse, &skipped),
               Error);
}

TEST_F(UnpackArchiveTest, KeepsSymlinksThatStayInside) {
  write_tar(tmp_ / "ok.tar", {{"data", AE_IFDIR, "", "", false, 0755},
                              {"data/v1.csv", AE_IFREG, "v1"},
                              {"sub/latest", AE_IFLNK, "", "../data/v1.csv"},
                              {"self", AE_IFLNK, "", "."}});
  unpack_archive(tmp_ / "ok.tar", dest_);
  EXPECT_EQ(slurp(dest_ / "sub" / "latest"), "v1");
  EXPECT_EQ(fs::read_symlink(dest_ / "self"), ".");
}

TEST_F(UnpackArchiveTest, NeverWritesThroughASymlinkInTheArchive) {
  // The link itself stays inside, but an entry below it would be written through it.
  expect_refused({{"sub", AE_IFDIR, "", "", false, 0755},
                  {"link", AE_IFLNK, "", "sub"},
                  {"link/x.txt", AE_IFREG, "via link"}},
                 "link/x.txt", "symlink");
  EXPECT_FALSE(fs::exists(dest_ / "sub" / "x.txt"));
}

TEST_F(UnpackArchiveTest, NeverWritesThroughASymlinkAlreadyInTheDestination) {
  make_dirs(dest_);
  fs::create_symlink(outside_, dest_ / "pre");
  expect_refused({{"pre/planted.txt", AE_IFREG, "pwned"}}, "pre/planted.txt", "symlink");
  EXPECT_FALSE(fs::exists(outside_ / "planted.txt"));
}

TEST_F(UnpackArchiveTest, ReplacesRatherThanFollowsAnExistingSymlinkFile) {
  make_dirs(dest_);
  write(outside_ / "victim.txt", "original");
  fs::create_symlink(outside_ / "victim.txt", dest_ / "config.txt");
  write_tar(tmp_ / "ok.tar", {{"config.txt", AE_IFREG, "new"}});
  unpack_archive(tmp_ / "ok.tar", dest_);
  EXPECT_EQ(slurp(outside_ / "victim.txt"), "original");
  EXPECT_FALSE(fs::is_symlink(dest_ / "config.txt"));
  EXPECT_EQ(slurp(dest_ / "config.txt"), "new");
}

TEST_F(UnpackArchiveTest, RefusesHardLinksAndSpecialFiles) {
  write(outside_ / "passwd", "root:x");
  expect_refused({{"hl", AE_IFREG, "", (outside_ / "passwd").string(), true}}, "hl", "hard link");
  expect_refused({{"f.txt", AE_IFREG, "x"}, {"hl2", AE_IFREG, "", "f.txt", true}}, "hl2",
                 "hard link");
  expect_refused({{"null", AE_IFCHR}}, "null", "device");
  expect_refused({{"pipe", AE_IFIFO}}, "pipe", "fifo");
  EXPECT_FALSE(fs::exists(fs::symlink_status(dest_ / "null")));
}

TEST_F(UnpackArchiveTest, ReadsGzipAndPlainTarWithDotSlashNames) {
  std::vector<Raw> entries = {{"./", AE_IFDIR, "", "", false, 0755},
                              {"./run.sh", AE_IFREG, "#!/bin/sh\n", "", false, 0755},
                              {"./lib//m.py", AE_IFREG, "m"}};
  for (int filter : {ARCHIVE_FILTER_NONE, ARCHIVE_FILTER_GZIP, ARCHIVE_FILTER_ZSTD}) {
    fs::path d = tmp_ / ("d" + std::to_string(filter));
    write_tar(tmp_ / "x.tar", entries, filter);
    unpack_archive(tmp_ / "x.tar", d);
    EXPECT_EQ(slurp(d / "run.sh"), "#!/bin/sh\n") << filter;
    EXPECT_EQ(perm_of(d / "run.sh"), 0755u) << filter;
    EXPECT_EQ(slurp(d / "lib" / "m.py"), "m") << filter;
  }
}

TEST_F(UnpackArchiveTest, SetuidBitsAreDropped) {
  write_tar(tmp_ / "s.tar", {{"tool", AE_IFREG, "x", "", false, 04755}});
  unpack_archive(tmp_ / "s.tar", dest_);
  EXPECT_EQ(perm_of(dest_ / "tool"), 0755u);
}

TEST_F(UnpackArchiveTest, GarbageIsAPackagingErrorNamingTheArchive) {
  write(tmp_ / "junk.tar.zst", std::string("\x28\xb5\x2f\xfd", 4) + random_bytes(5000, 3));
  try {
    unpack_archive(tmp_ / "junk.tar.zst", dest_);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::packaging);
    EXPECT_NE(std::string(e.what()).find("junk.tar.zst"), std::string::npos) << e.what();
  }
  EXPECT_THROW(unpack_archive(tmp_ / "missing.tar.zst", dest_), Error);
}

}  // namespace
}  // namespace kinetic
