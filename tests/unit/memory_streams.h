// IOStreams on memory, for tests that run commands or the pipeline in-process and read back
// what they printed.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "render/output.h"

namespace kinetic::test {

// A FILE* that writes to memory and gives back what was written.
class MemoryStream {
 public:
  MemoryStream() : file_(::open_memstream(&buf_, &len_)) {}
  ~MemoryStream() {
    std::fclose(file_);
    std::free(buf_);
  }
  MemoryStream(const MemoryStream&) = delete;
  MemoryStream& operator=(const MemoryStream&) = delete;
  FILE* file() const { return file_; }
  std::string text() {
    std::fflush(file_);
    return flushed();
  }
  // What its writer has flushed so far (memory streams publish nothing before a flush).
  std::string flushed() const { return {buf_, len_}; }

 private:
  char* buf_ = nullptr;
  size_t len_ = 0;
  FILE* file_;
};

// IOStreams whose stdout and stderr are memory streams (not terminals, not quiet).
struct CapturedIO {
  CapturedIO() {
    io.out = out_stream.file();
    io.err = err_stream.file();
  }
  std::string out() { return out_stream.text(); }
  std::string err() { return err_stream.text(); }

  MemoryStream out_stream;
  MemoryStream err_stream;
  IOStreams io;
};

}  // namespace kinetic::test
