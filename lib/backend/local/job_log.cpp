#include "backend/local/job_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <vector>

#include "backend/tail_sink.h"

namespace kinetic {

JobLogWriter::JobLogWriter(const fs::path& path, int notify_fd, std::function<int64_t()> clock)
    : notify_fd_(notify_fd), clock_(std::move(clock)) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

JobLogWriter::~JobLogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

constexpr unsigned char kTimeMark = 4;  // a record's stream byte: the Unix second that begins

void put_le32(unsigned char* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
}

}  // namespace

void JobLogWriter::write(LogStream stream, std::string_view data) {
  if (fd_ < 0 || data.empty()) return;
  // A new second's first record is preceded by its time mark, in the same writev.
  unsigned char mark[13] = {kTimeMark};
  const int64_t second = clock_ ? clock_() : static_cast<int64_t>(std::time(nullptr));
  const bool marking = second != marked_second_;
  if (marking) {
    put_le32(mark + 1, 8);
    for (int i = 0; i < 8; ++i) mark[5 + i] = static_cast<unsigned char>(second >> (8 * i));
    marked_second_ = second;
  }
  // One writev per record: O_APPEND keeps the record whole even with other writers.
  for (bool first = true; !data.empty(); first = false) {
    uint32_t n = static_cast<uint32_t>(std::min<size_t>(data.size(), 1u << 20));
    unsigned char header[5] = {
        static_cast<unsigned char>(stream), static_cast<unsigned char>(n & 0xff),
        static_cast<unsigned char>((n >> 8) & 0xff), static_cast<unsigned char>((n >> 16) & 0xff),
        static_cast<unsigned char>((n >> 24) & 0xff)};
    const bool with_mark = first && marking;
    iovec iov[3] = {
        {mark, sizeof mark}, {header, sizeof header}, {const_cast<char*>(data.data()), n}};
    ssize_t total = (with_mark ? sizeof mark : 0) + sizeof header + n;
    ssize_t w;
    do {
      w = ::writev(fd_, iov + (with_mark ? 0 : 1), with_mark ? 3 : 2);
    } while (w < 0 && errno == EINTR);
    if (w != total) return;  // disk full: the job goes on, its log is cut
    data.remove_prefix(n);
  }
  if (notify_fd_ >= 0) {
    // Non-blocking: a full pipe already tells the reader there is news.
    char b = 1;
    [[maybe_unused]] ssize_t n = ::write(notify_fd_, &b, 1);
  }
}

JobLogReader::~JobLogReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool JobLogReader::open() {
  if (fd_ < 0) fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  return fd_ >= 0;
}

namespace {

uint32_t record_length(const unsigned char* h) {
  return h[1] | (h[2] << 8) | (h[3] << 16) | (static_cast<uint32_t>(h[4]) << 24);
}

}  // namespace

bool JobLogReader::tail(LogSink& sink, size_t lines) {
  if (!open()) return false;
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return false;
  const auto size = static_cast<uint64_t>(st.st_size);
  struct Record {
    uint64_t at;  // of its header
    uint32_t length;
    LogStream stream;
  };
  std::vector<Record> records;
  uint64_t end = 0;  // after the last complete record
  for (unsigned char h[5]; end + 5 <= size && ::pread(fd_, h, 5, end) == 5;) {
    const uint32_t length = record_length(h);
    if (end + 5 + length > size) break;
    if (h[0] != kTimeMark) records.push_back({end, length, static_cast<LogStream>(h[0])});
    end += 5 + length;
  }
  // Back from the last record until it holds more line ends than lines wanted.
  size_t first = records.size(), newlines = 0;
  std::vector<std::string> payloads;
  while (first > 0 && newlines <= lines) {
    const Record& r = records[--first];
    std::string payload(r.length, '\0');
    if (::pread(fd_, payload.data(), r.length, static_cast<off_t>(r.at + 5)) !=
        static_cast<ssize_t>(r.length))
      return false;
    newlines += static_cast<size_t>(std::count(payload.begin(), payload.end(), '\n'));
    payloads.push_back(std::move(payload));
  }
  TailSink kept(lines);
  for (size_t i = first; i < records.size(); ++i)
    kept.write(records[i].stream, payloads[records.size() - 1 - i]);
  kept.replay(sink);
  pending_.clear();
  ::lseek(fd_, static_cast<off_t>(end), SEEK_SET);
  return true;
}

bool JobLogReader::skip_before(int64_t since) {
  if (!open()) return false;
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return false;
  const auto size = static_cast<uint64_t>(st.st_size);
  uint64_t at = 0;
  for (unsigned char h[13]; at + 5 <= size && ::pread(fd_, h, 5, at) == 5;) {
    const uint32_t length = record_length(h);
    if (at + 5 + length > size) break;
    if (h[0] == kTimeMark && length == 8 && ::pread(fd_, h + 5, 8, at + 5) == 8) {
      int64_t second = 0;
      for (int i = 7; i >= 0; --i) second = second << 8 | h[5 + i];
      if (second >= since) break;
    }
    at += 5 + length;
  }
  pending_.clear();
  ::lseek(fd_, static_cast<off_t>(at), SEEK_SET);
  return true;
}

bool JobLogReader::drain(LogSink& sink) {
  if (!open()) return false;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending_.append(buf, static_cast<size_t>(n));
  }
  size_t pos = 0;
  while (pending_.size() - pos >= 5) {
    const auto* h = reinterpret_cast<const unsigned char*>(pending_.data() + pos);
    uint32_t len = record_length(h);
    if (pending_.size() - pos - 5 < len) break;
    if (h[0] != kTimeMark)
      sink.write(static_cast<LogStream>(h[0]), std::string_view(pending_).substr(pos + 5, len));
    pos += 5 + len;
  }
  pending_.erase(0, pos);
  return true;
}

}  // namespace kinetic
