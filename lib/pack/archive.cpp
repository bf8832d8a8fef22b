#include "pack/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <locale.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>
#include <thread>
#include <unordered_set>

#include "core/error.h"
#include "core/strings.h"
#include "pack/sha256.h"

namespace kinetic {

namespace {

constexpr size_t kBlock = 256 * 1024;  // read size for file contents
constexpr int kZstdLevel = 3;
// Fast: contexts can be large and deflate is single-threaded. Changing it changes every gzip
// context's hash (harmless: a new hash only means one more upload).
constexpr int kGzipLevel = 3;

std::string errno_text(int err) {
  return std::strerror(err);
}

[[noreturn]] void unreadable(const fs::path& path, int err) {
  throw Error(Errc::packaging, "cannot read " + path.string() + ": " + errno_text(err) +
                                   "; add it to .kineticignore to leave it out");
}

[[noreturn]] void changed(const fs::path& path) {
  throw Error(Errc::packaging,
              path.string() + " changed while it was being packaged; try again once it is stable");
}

// ---- pack ---------------------------------------------------------------------------------

enum class Kind { file, dir, link };

struct WalkEntry {
  std::string rel;
  Kind kind;
};

// A symlink the job could never unpack (an absolute target, or one leading out of the context:
// every extractor kinetic's jobs use refuses those) is refused now, before the upload and the
// build, rather than in the pod. The check is lexical, as the extractors' is.
// The target of the symlink FULL, however long (SIZE_HINT: its lstat size).
std::string read_link(const std::string& full, size_t size_hint) {
  std::string target(size_hint + 1, '\0');
  for (;;) {
    ssize_t n = ::readlink(full.c_str(), target.data(), target.size());
    if (n < 0) unreadable(full, errno);
    if (static_cast<size_t>(n) < target.size()) {
      target.resize(static_cast<size_t>(n));
      return target;
    }
    target.resize(target.size() * 2);
  }
}

void check_link(const std::string& root, const std::string& rel) {
  const std::string full = root + "/" + rel;
  const std::string target = read_link(full, 255);
  long depth = static_cast<long>(std::count(rel.begin(), rel.end(), '/'));  // of its directory
  bool escapes = target.empty() || target.front() == '/';
  for (const auto& part : split(target, '/')) {
    if (part == "..") {
      escapes = escapes || --depth < 0;
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
  }
  if (!escapes) return;
  throw Error(Errc::packaging,
              full + " is a symlink to '" + target + "', outside the context directory " + root +
                  ", which the job could never unpack; make it a relative link within the "
                  "context, replace it with what it points to, or list it in .kineticignore");
}

void walk(const std::string& root, const std::string& rel_dir, const IgnoreRules& rules,
          std::vector<WalkEntry>& out) {
  std::string dir = rel_dir.empty() ? root : root + "/" + rel_dir;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) unreadable(dir, errno);
  std::vector<std::string> subdirs;
  std::vector<std::string> links;  // checked once the directory is closed (check_link throws)
  for (;;) {
    errno = 0;
    dirent* de = ::readdir(d);
    if (de == nullptr) {
      int err = errno;
      if (err != 0) {
        ::closedir(d);
        unreadable(dir, err);
      }
      break;
    }
    std::string_view name(de->d_name);
    if (name == "." || name == "..") continue;
    std::string rel = rel_dir.empty() ? std::string(name) : rel_dir + "/" + std::string(name);
    unsigned char type = de->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (::fstatat(::dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;  // removed meanwhile
        int err = errno;
        ::closedir(d);
        unreadable(root + "/" + rel, err);
      }
      type = S_ISREG(st.st_mode)   ? DT_REG
             : S_ISDIR(st.st_mode) ? DT_DIR
             : S_ISLNK(st.st_mode) ? DT_LNK
                                   : DT_UNKNOWN;
    }
    Kind kind;
    if (type == DT_REG) {
      kind = Kind::file;
    } else if (type == DT_DIR) {
      kind = Kind::dir;
    } else if (type == DT_LNK) {
      kind = Kind::link;
    } else {
      continue;  // sockets, fifos, devices: not part of a context
    }
    if (rules.ignored_entry(rel, kind == Kind::dir)) continue;
    if (kind == Kind::link) links.push_back(rel);
    if (kind == Kind::dir) subdirs.push_back(rel);
    out.push_back({std::move(rel), kind});
  }
  ::closedir(d);
  for (const auto& link : links) check_link(root, link);
  for (const auto& sub : subdirs) walk(root, sub, rules, out);
}

// Where the archive bytes go: the temp file, hashed on the way.
struct Sink {
  int fd = -1;
  Sha256 sha;
  uint64_t bytes = 0;
};

la_ssize_t sink_write(struct archive* a, void* client, const void* buf, size_t n) {
  auto* sink = static_cast<Sink*>(client);
  const char* p = static_cast<const char*>(buf);
  size_t left = n;
  while (left > 0) {
    ssize_t w = ::write(sink->fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      archive_set_error(a, errno, "%s", std::strerror(errno));
      return -1;
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  try {
    sink->sha.update(buf, n);
  } catch (const std::exception& e) {
    archive_set_error(a, EIO, "%s", e.what());
    return -1;
  }
  sink->bytes += n;
  return static_cast<la_ssize_t>(n);
}

struct ArchiveWriteFree {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct ArchiveReadFree {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using WriteHandle = std::unique_ptr<struct archive, ArchiveWriteFree>;
using ReadHandle = std::unique_ptr<struct archive, ArchiveReadFree>;
using EntryHandle = std::unique_ptr<archive_entry, EntryFree>;

// Keeps the N largest (path, size), largest first, ties by path.
void note_size(std::vector<std::pair<std::string, uint64_t>>& top, const std::string& rel,
               uint64_t size) {
  constexpr size_t kTop = 5;
  auto before = [](const std::pair<std::string, uint64_t>& x,
                   const std::pair<std::string, uint64_t>& y) {
    return x.second != y.second ? x.second > y.second : x.first < y.first;
  };
  std::pair<std::string, uint64_t> item{rel, size};
  if (top.size() == kTop && !before(item, top.back())) return;
  top.insert(std::upper_bound(top.begin(), top.end(), item, before), std::move(item));
  if (top.size() > kTop) top.pop_back();
}

// libarchive converts names between the locale's charset and UTF-8 (pax "path" records). Running
// it under C.UTF-8 in this thread makes archives independent of the process locale: UTF-8 names
// are stored as UTF-8 (readable by any tar), other bytes as hdrcharset=BINARY, and unpacking
// gives back the same bytes.
class ScopedUtf8Locale {
 public:
  ScopedUtf8Locale() {
    utf8_ = ::newlocale(LC_ALL_MASK, "C.UTF-8", static_cast<locale_t>(0));
    if (utf8_ != static_cast<locale_t>(0)) old_ = ::uselocale(utf8_);
  }
  ~ScopedUtf8Locale() {
    if (utf8_ == static_cast<locale_t>(0)) return;
    ::uselocale(old_);
    ::freelocale(utf8_);
  }
  ScopedUtf8Locale(const ScopedUtf8Locale&) = delete;
  ScopedUtf8Locale& operator=(const ScopedUtf8Locale&) = delete;

 private:
  locale_t utf8_ = static_cast<locale_t>(0);
  locale_t old_ = static_cast<locale_t>(0);
};

unsigned zstd_workers() {
  // zstd's multi-threaded output is the same for any number of workers >= 1 (it only depends on
  // the job size, which derives from the level), so the worker count does not change the bytes.
  unsigned n = std::thread::hardware_concurrency();
  return std::clamp(n, 1u, 4u);  // more workers buy little and cost ~30 MiB each
}

// The entries under ROOT that RULES keep, in path order (the archive's, and the fingerprint's);
// ROOT_STR gets ROOT without trailing slashes.
std::vector<WalkEntry> sorted_walk(const fs::path& root, const IgnoreRules& rules,
                                   std::string& root_str) {
  root_str = root.string();
  while (root_str.size() > 1 && root_str.back() == '/') root_str.pop_back();
  std::vector<WalkEntry> entries;
  walk(root_str, "", rules, entries);
  std::sort(entries.begin(), entries.end(),
            [](const WalkEntry& a, const WalkEntry& b) { return a.rel < b.rel; });
  return entries;
}

}  // namespace

std::string_view archive_extension(Compression compression) {
  return compression == Compression::gzip ? ".tar.gz" : ".tar.zst";
}

PackResult pack_directory(const fs::path& root, const IgnoreRules& rules, const fs::path& out_file,
                          const PackProgress& progress) {
  return pack_directory(root, rules, out_file, Compression::zstd, progress);
}

std::string tree_signature(const fs::path& root, const IgnoreRules& rules, Compression compression,
                           double* newest) {
  std::string root_str;
  const std::vector<WalkEntry> entries = sorted_walk(root, rules, root_str);
  Sha256 sha;
  // The format of the archive is part of what the fingerprint stands for.
  std::string head = "kinetic-tree-v1 " + std::string(archive_extension(compression)) + "\n";
  sha.update(head.data(), head.size());
  *newest = 0;
  for (const auto& e : entries) {
    const std::string path = root_str + "/" + e.rel;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) unreadable(path, errno);
    std::string line = e.rel;
    line += '\0';
    line += std::to_string(st.st_mode) + ' ' + std::to_string(st.st_size) + ' ' +
            std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec) + ' ' +
            std::to_string(st.st_ctim.tv_sec) + '.' + std::to_string(st.st_ctim.tv_nsec) + ' ' +
            std::to_string(st.st_ino);
    if (e.kind == Kind::link) {
      char target[4096];
      ssize_t n = ::readlink(path.c_str(), target, sizeof target);
      if (n > 0) line.append(" -> ").append(target, static_cast<size_t>(n));
    }
    line += '\n';
    sha.update(line.data(), line.size());
    *newest = std::max({*newest, st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9,
                        st.st_ctim.tv_sec + st.st_ctim.tv_nsec / 1e9});
  }
  return sha.hex_digest();
}

namespace {

// The archive is written to a temporary file beside OUT and renamed over it only once whole: no
// reader sees half an archive, and a failure leaves nothing behind.
class TempArchiveFile {
 public:
  explicit TempArchiveFile(const fs::path& out) : out_(out) {
    const fs::path parent = out.parent_path();
    if (!parent.empty()) make_dirs(parent, 0755);
    const std::string pattern = (parent / ("." + out.filename().string() + ".XXXXXX")).string();
    std::string tmpl = pattern;  // mkstemp fills in the X's
    fd_.reset(::mkstemp(tmpl.data()));
    if (fd_.get() < 0) {
      throw Error(Errc::packaging, "cannot create " + pattern + ": " + errno_text(errno) +
                                       "; check that " + parent.string() + " is writable");
    }
    tmp_ = tmpl;
    ::fchmod(fd_.get(), 0644);
  }
  ~TempArchiveFile() {
    fd_.reset();
    if (!committed_) ::unlink(tmp_.c_str());
  }
  TempArchiveFile(const TempArchiveFile&) = delete;
  TempArchiveFile& operator=(const TempArchiveFile&) = delete;

  int fd() const { return fd_.get(); }
  // No fsync here: the store that keeps the archive syncs it (a cached copy is dropped unused).
  void commit() {
    fd_.reset();
    if (::rename(tmp_.c_str(), out_.c_str()) != 0) {
      throw Error(Errc::packaging, "cannot write " + out_.string() + ": " + errno_text(errno) +
                                       "; check that its directory is writable");
    }
    committed_ = true;
  }

 private:
  fs::path out_;
  std::string tmp_;
  UniqueFd fd_;
  bool committed_ = false;
};

Error write_error(struct archive* a, const fs::path& out_file) {
  const char* msg = archive_error_string(a);
  return Error(Errc::packaging, "cannot write " + out_file.string() + ": " +
                                    (msg ? msg : "libarchive error") +
                                    "; check free space and permissions");
}

// A pax writer into SINK, compressed as COMPRESSION, reproducibly: no timestamps, no blocking.
WriteHandle open_writer(Compression compression, Sink* sink, const fs::path& out_file) {
  WriteHandle a(archive_write_new());
  if (!a) throw Error(Errc::internal, "cannot allocate a libarchive writer");
  archive_write_set_format(a.get(), ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
  if (compression == Compression::gzip) {
    if (archive_write_add_filter_gzip(a.get()) != ARCHIVE_OK ||
        archive_write_set_filter_option(a.get(), "gzip", "compression-level",
                                        std::to_string(kGzipLevel).c_str()) != ARCHIVE_OK ||
        // No mtime in the header ("!timestamp"); libarchive never stores a file name by default.
        archive_write_set_filter_option(a.get(), "gzip", "timestamp", nullptr) != ARCHIVE_OK)
      throw write_error(a.get(), out_file);
  } else {
    if (archive_write_add_filter_zstd(a.get()) != ARCHIVE_OK) throw write_error(a.get(), out_file);
    archive_write_set_filter_option(a.get(), "zstd", "compression-level",
                                    std::to_string(kZstdLevel).c_str());
    // Optional: older libarchive has no "threads" option and then compresses single-threaded.
    archive_write_set_filter_option(a.get(), "zstd", "threads",
                                    std::to_string(zstd_workers()).c_str());
  }
  archive_write_set_bytes_per_block(a.get(), 0);  // no tar blocking, no padding after the frame
  if (archive_write_open2(a.get(), sink, nullptr, sink_write, nullptr, nullptr) != ARCHIVE_OK)
    throw write_error(a.get(), out_file);
  return a;
}

// Fills E with ITEM (at FULL) as it is now, owner root and time 0 so that the archive depends on
// the content alone; a regular file is opened into FD and its size put in SIZE. False when the
// entry was removed since the walk; throws when it changed kind or cannot be read.
bool describe_entry(archive_entry* e, const WalkEntry& item, const std::string& full, UniqueFd& fd,
                    uint64_t* size) {
  archive_entry_clear(e);
  archive_entry_copy_pathname(e, item.rel.c_str());
  archive_entry_set_uid(e, 0);
  archive_entry_set_gid(e, 0);
  archive_entry_set_mtime(e, 0, 0);
  *size = 0;
  struct stat st;
  if (item.kind == Kind::file) {
    fd.reset(::open(full.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() < 0) {
      if (errno == ENOENT) return false;
      if (errno == ELOOP) changed(full);
      unreadable(full, errno);
    }
    if (::fstat(fd.get(), &st) != 0) unreadable(full, errno);
    if (!S_ISREG(st.st_mode)) changed(full);
    *size = static_cast<uint64_t>(st.st_size);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_size(e, static_cast<la_int64_t>(*size));
    if (*size > kBlock) ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  } else {
    if (::lstat(full.c_str(), &st) != 0) {
      if (errno == ENOENT) return false;
      unreadable(full, errno);
    }
    if (item.kind == Kind::dir) {
      if (!S_ISDIR(st.st_mode)) changed(full);
      archive_entry_set_filetype(e, AE_IFDIR);
    } else {
      if (!S_ISLNK(st.st_mode)) changed(full);
      const std::string target = read_link(full, static_cast<size_t>(st.st_size));
      archive_entry_set_filetype(e, AE_IFLNK);
      archive_entry_copy_symlink(e, target.c_str());
    }
    archive_entry_set_size(e, 0);
  }
  archive_entry_set_perm(e, st.st_mode & 0777);
  return true;
}

// Copies SIZE bytes of FD (the file FULL) into the archive: exactly the size its header
// promised, or the file changed while it was read.
void copy_contents(struct archive* a, int fd, uint64_t size, const std::string& full,
                   std::vector<char>& buf, const fs::path& out_file) {
  uint64_t left = size;
  while (left > 0) {
    ssize_t n = ::read(fd, buf.data(), std::min<uint64_t>(left, buf.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      unreadable(full, errno);
    }
    if (n == 0) changed(full);  // shrank while we read it
    if (archive_write_data(a, buf.data(), static_cast<size_t>(n)) != n)
      throw write_error(a, out_file);
    left -= static_cast<uint64_t>(n);
  }
}

}  // namespace

PackResult pack_directory(const fs::path& root, const IgnoreRules& rules, const fs::path& out_file,
                          Compression compression, const PackProgress& progress) {
  struct stat root_st;
  if (::stat(root.c_str(), &root_st) != 0 || !S_ISDIR(root_st.st_mode)) {
    throw Error(Errc::packaging, "context directory " + root.string() +
                                     " does not exist or is not a directory; check --context");
  }
  std::string root_str;
  const std::vector<WalkEntry> entries = sorted_walk(root, rules, root_str);

  TempArchiveFile out(out_file);
  Sink sink;
  sink.fd = out.fd();
  ScopedUtf8Locale utf8;  // before the writer exists: it picks its converters up at open
  WriteHandle a = open_writer(compression, &sink, out_file);

  PackResult result;
  std::vector<char> buf(kBlock);
  EntryHandle entry(archive_entry_new());
  for (const auto& item : entries) {
    const std::string full = root_str + "/" + item.rel;
    UniqueFd fd;
    uint64_t size = 0;
    if (!describe_entry(entry.get(), item, full, fd, &size)) continue;  // removed since the walk
    if (archive_write_header(a.get(), entry.get()) < ARCHIVE_WARN)
      throw write_error(a.get(), out_file);
    if (fd.get() >= 0) {
      copy_contents(a.get(), fd.get(), size, full, buf, out_file);
      result.input_bytes += size;
      note_size(result.largest, item.rel, size);
    }
    ++result.files;
    if (progress) progress(result.files, result.input_bytes);
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) throw write_error(a.get(), out_file);
  a.reset();
  out.commit();
  result.sha256 = sink.sha.hex_digest();
  result.archive_bytes = sink.bytes;
  return result;
}

// ---- unpack -------------------------------------------------------------------------------

namespace {

[[noreturn]] void refuse(const fs::path& archive, std::string_view entry, std::string_view why) {
  throw Error(Errc::packaging, "refusing to unpack " + archive.string() + ": entry '" +
                                   std::string(entry) + "' " + std::string(why) +
                                   "; only archives made by kinetic can be unpacked");
}

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view c = path.substr(start, slash - start);
    if (!c.empty() && c != ".") out.push_back(c);
    start = slash + 1;
  }
  return out;
}

bool within(const fs::path& p, const fs::path& base) {
  auto pi = p.begin();
  for (auto bi = base.begin(); bi != base.end(); ++bi, ++pi) {
    if (bi->empty()) continue;  // trailing separator
    if (pi == p.end() || *pi != *bi) return false;
  }
  return true;
}

// Unpacks one archive under DEST, entry by entry, checking each before it is written: names
// stay under DEST, no hard links or special files, nothing written through a symlink, and
// symlinks that lead outside refused (or, with UnsafeLinks::skip, left out and reported).
class Unpacker {
 public:
  Unpacker(const fs::path& archive_path, const fs::path& dest, UnsafeLinks unsafe_links,
           std::vector<std::string>* skipped)
      : archive_path_(archive_path), dest_(dest), unsafe_links_(unsafe_links), skipped_(skipped) {
    make_dirs(dest, 0755);
    std::error_code ec;
    base_ = fs::canonical(dest, ec);
    if (ec) {
      throw Error(Errc::packaging,
                  "cannot use " + dest.string() + " as the unpack directory: " + ec.message());
    }
    base_str_ = base_.string() == "/" ? "" : base_.string();
  }

  void run() {
    ScopedUtf8Locale utf8;
    open();
    for (;;) {
      archive_entry* e = nullptr;
      const int rc = archive_read_next_header(r_.get(), &e);
      if (rc == ARCHIVE_EOF) break;
      if (rc < ARCHIVE_WARN) throw read_error();
      unpack_entry(e);
    }
    if (archive_write_close(w_.get()) != ARCHIVE_OK)
      throw write_error_of("", "finishing failed", "");
    remove_escaping_links();
  }

 private:
  void open() {
    r_.reset(archive_read_new());
    w_.reset(archive_write_disk_new());
    if (!r_ || !w_) throw Error(Errc::internal, "cannot allocate a libarchive reader");
    archive_read_support_filter_zstd(r_.get());
    archive_read_support_filter_gzip(r_.get());
    archive_read_support_filter_none(r_.get());
    archive_read_support_format_tar(r_.get());
    // Our own checks come first (clear messages); libarchive's are a second line. Absolute entry
    // names are refused by us: the names handed to libarchive are absolute (under DEST).
    archive_write_disk_set_options(w_.get(), ARCHIVE_EXTRACT_PERM |
                                                 ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                 ARCHIVE_EXTRACT_SECURE_SYMLINKS);
    if (archive_read_open_filename(r_.get(), archive_path_.c_str(), kBlock) != ARCHIVE_OK)
      throw read_error();
  }

  void unpack_entry(archive_entry* e) {
    const char* raw = archive_entry_pathname(e);
    if (raw == nullptr) raw = archive_entry_pathname_utf8(e);
    const std::string_view name = raw ? raw : "";
    const auto parts = checked_components(e, name);
    if (parts.empty()) {  // "./": the root itself
      archive_read_data_skip(r_.get());
      return;
    }
    const std::string rel = checked_parents(name, parts);
    if (archive_entry_filetype(e) == AE_IFLNK) {
      if (!keep_link(e, name, rel, parts)) {  // left out (UnsafeLinks::skip)
        archive_read_data_skip(r_.get());
        return;
      }
    } else {
      archive_entry_set_perm(e, archive_entry_perm(e) & 0777);
    }
    write_entry(e, name, rel);
  }

  // NAME's components, once it is known to be relative, without '..', and of a kind we unpack.
  std::vector<std::string_view> checked_components(archive_entry* e, std::string_view name) {
    if (name.empty()) refuse(archive_path_, name, "has an empty name");
    if (name.front() == '/') refuse(archive_path_, name, "has an absolute path");
    auto parts = components(name);
    for (auto c : parts)
      if (c == "..") refuse(archive_path_, name, "has a '..' component");
    if (parts.empty()) return parts;
    if (archive_entry_hardlink(e) != nullptr) refuse(archive_path_, name, "is a hard link");
    const auto type = archive_entry_filetype(e);
    if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
      refuse(archive_path_, name, "is a device, fifo or socket");
    return parts;
  }

  // PARTS joined ("./a" is "a"), once every parent is known to be a real directory (or not to
  // exist yet): never write through a symlink.
  std::string checked_parents(std::string_view name, const std::vector<std::string_view>& parts) {
    std::string rel;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) {
        if (!real_dirs_.count(rel)) {
          struct stat st;
          const std::string p = base_str_ + "/" + rel;
          if (::lstat(p.c_str(), &st) == 0) {
            if (S_ISLNK(st.st_mode)) refuse(archive_path_, name, "goes through the symlink " + rel);
            if (S_ISDIR(st.st_mode)) real_dirs_.insert(rel);
          }
        }
        rel += '/';
      }
      rel += parts[i];
    }
    return rel;
  }

  // Whether the symlink entry E (at REL) is safe to write: lexically, its target stays under
  // DEST. An unsafe one is refused, or with UnsafeLinks::skip reported and left out (false).
  bool keep_link(archive_entry* e, std::string_view name, const std::string& rel,
                 const std::vector<std::string_view>& parts) {
    const char* t = archive_entry_symlink(e);
    if (t == nullptr) t = archive_entry_symlink_utf8(e);
    const std::string_view target = t ? t : "";
    if (target.empty()) refuse(archive_path_, name, "is a symlink without a target");
    if (target.front() == '/') {
      unsafe_link(name, rel, target,
                  "is a symlink to an absolute path (" + std::string(target) + ")");
      return false;
    }
    std::vector<std::string_view> stack(parts.begin(), parts.end() - 1);
    for (auto c : components(target)) {
      if (c != "..") {
        stack.push_back(c);
      } else if (stack.empty()) {
        unsafe_link(name, rel, target,
                    "is a symlink pointing outside the destination (" + std::string(target) + ")");
        return false;
      } else {
        stack.pop_back();
      }
    }
    links_.emplace_back(rel, std::string(target));
    real_dirs_.clear();  // it may replace a directory we had checked
    return true;
  }

  // An unsafe symlink: refused, or (UnsafeLinks::skip) left out and reported.
  // NAME as the archive spells it (refusals), REL normalized (reports).
  void unsafe_link(std::string_view name, std::string_view rel, std::string_view target,
                   std::string_view why) {
    if (unsafe_links_ == UnsafeLinks::refuse) refuse(archive_path_, name, why);
    if (skipped_) skipped_->push_back(std::string(rel) + " -> " + std::string(target));
  }

  void write_entry(archive_entry* e, std::string_view name, const std::string& rel) {
    const std::string full = base_str_ + "/" + rel;
    // Whatever was there, a symlink in the final component is replaced, never followed.
    struct stat st;
    if (::lstat(full.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) ::unlink(full.c_str());
    archive_entry_copy_pathname(e, full.c_str());
    if (archive_write_header(w_.get(), e) < ARCHIVE_WARN)
      throw write_error_of(name, "write failed", "; check that " + dest_.string() + " is writable");
    if (archive_entry_filetype(e) == AE_IFREG && archive_entry_size(e) > 0) {
      const void* block;
      size_t size;
      la_int64_t offset;
      for (;;) {
        const int rr = archive_read_data_block(r_.get(), &block, &size, &offset);
        if (rr == ARCHIVE_EOF) break;
        if (rr < ARCHIVE_WARN) throw read_error();
        if (archive_write_data_block(w_.get(), block, size, offset) < ARCHIVE_WARN)
          throw write_error_of(name, "write failed", "; check free space");
      }
    }
    if (archive_write_finish_entry(w_.get()) < ARCHIVE_WARN)
      throw write_error_of(name, "write failed", "");
  }

  // Links checked one by one can still escape together (a -> b/.., b -> .): resolve each one
  // for real now that all exist, and remove any that leads outside. Several may go: all are
  // removed before any is reported.
  void remove_escaping_links() {
    std::vector<std::pair<std::string, std::string>> escaping;
    for (const auto& [rel, target] : links_) {
      std::error_code ec;
      const fs::path resolved = fs::weakly_canonical(base_ / rel, ec);
      if (!ec && !within(resolved, base_)) escaping.emplace_back(rel, target);
    }
    for (const auto& [rel, target] : escaping) ::unlink((base_ / rel).c_str());
    for (const auto& [rel, target] : escaping)
      unsafe_link(rel, rel, target, "is a symlink resolving outside the destination");
  }

  Error read_error() const {
    const char* msg = archive_error_string(r_.get());
    return Error(Errc::packaging, "cannot unpack " + archive_path_.string() + ": " +
                                      (msg ? msg : "not a tar, tar.gz or tar.zst archive") +
                                      "; package the context again");
  }

  // "cannot unpack ARCHIVE: entry 'NAME': libarchive's message (or FALLBACK)HINT"; without NAME,
  // about the archive as a whole.
  Error write_error_of(std::string_view name, const char* fallback, const std::string& hint) const {
    const char* msg = archive_error_string(w_.get());
    const std::string entry = name.empty() ? "" : "entry '" + std::string(name) + "': ";
    return Error(Errc::packaging, "cannot unpack " + archive_path_.string() + ": " + entry +
                                      (msg ? msg : fallback) + hint);
  }

  const fs::path& archive_path_;
  const fs::path& dest_;
  const UnsafeLinks unsafe_links_;
  std::vector<std::string>* const skipped_;
  fs::path base_;
  std::string base_str_;
  ReadHandle r_;
  WriteHandle w_;
  std::unordered_set<std::string> real_dirs_;  // parents already checked not to be symlinks
  std::vector<std::pair<std::string, std::string>> links_;  // (relative path, target)
};

}  // namespace

void unpack_archive(const fs::path& archive_path, const fs::path& dest) {
  unpack_archive(archive_path, dest, UnsafeLinks::refuse, nullptr);
}

void unpack_archive(const fs::path& archive_path, const fs::path& dest, UnsafeLinks unsafe_links,
                    std::vector<std::string>* skipped) {
  Unpacker(archive_path, dest, unsafe_links, skipped).run();
}

}  // namespace kinetic
