#include "backend/local/job_log.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

namespace kinetic {

JobLogWriter::JobLogWriter(const fs::path& path, int notify_fd) : notify_fd_(notify_fd) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

JobLogWriter::~JobLogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JobLogWriter::write(LogStream stream, std::string_view data) {
  if (fd_ < 0 || data.empty()) return;
  // One writev per record: O_APPEND keeps the record whole even with other writers.
  while (!data.empty()) {
    uint32_t n = static_cast<uint32_t>(std::min<size_t>(data.size(), 1u << 20));
    unsigned char header[5] = {
        static_cast<unsigned char>(stream), static_cast<unsigned char>(n & 0xff),
        static_cast<unsigned char>((n >> 8) & 0xff), static_cast<unsigned char>((n >> 16) & 0xff),
        static_cast<unsigned char>((n >> 24) & 0xff)};
    iovec iov[2] = {{header, sizeof header}, {const_cast<char*>(data.data()), n}};
    ssize_t total = sizeof header + n;
    ssize_t w;
    do {
      w = ::writev(fd_, iov, 2);
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

bool JobLogReader::drain(LogSink& sink) {
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return false;
  }
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
    uint32_t len = h[1] | (h[2] << 8) | (h[3] << 16) | (static_cast<uint32_t>(h[4]) << 24);
    if (pending_.size() - pos - 5 < len) break;
    auto stream = static_cast<LogStream>(h[0]);
    sink.write(stream, std::string_view(pending_).substr(pos + 5, len));
    pos += 5 + len;
  }
  pending_.erase(0, pos);
  return true;
}

}  // namespace kinetic
