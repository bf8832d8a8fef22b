// libarchive's functions kinetic calls (packing and unpacking contexts and outputs), forwarded
// to libarchive.so.13 loaded on first use (lazy_library.h says why). A function kinetic starts
// to use must be added here, or the kinetic binary fails to link.
#include <archive.h>
#include <archive_entry.h>

#include <cstdarg>
#include <cstdio>

#include "lazy/lazy_library.h"

// libarchive 3.x has the soname libarchive.so.13.
static_assert(ARCHIVE_VERSION_NUMBER >= 3000000 && ARCHIVE_VERSION_NUMBER < 4000000);

namespace {
kinetic::lazy::LazyLibrary archive_library("libarchive.so.13", "libarchive13");
}  // namespace

#define KINETIC_ARCHIVE(RET, NAME, PARAMS, ARGS) \
  KINETIC_LAZY_FUNCTION(archive_library, RET, NAME, PARAMS, ARGS)

using Archive = struct archive;
using Entry = struct archive_entry;

// Reading.
KINETIC_ARCHIVE(Archive*, archive_read_new, (void), ())
KINETIC_ARCHIVE(int, archive_read_free, (Archive * a), (a))
KINETIC_ARCHIVE(int, archive_read_support_filter_gzip, (Archive * a), (a))
KINETIC_ARCHIVE(int, archive_read_support_filter_none, (Archive * a), (a))
KINETIC_ARCHIVE(int, archive_read_support_filter_zstd, (Archive * a), (a))
KINETIC_ARCHIVE(int, archive_read_support_format_tar, (Archive * a), (a))
KINETIC_ARCHIVE(int, archive_read_open_filename, (Archive * a, const char* name, size_t block),
                (a, name, block))
KINETIC_ARCHIVE(int, archive_read_next_header, (Archive * a, Entry** entry), (a, entry))
KINETIC_ARCHIVE(int, archive_read_data_block,
                (Archive * a, const void** buff, size_t* size, la_int64_t* offset),
                (a, buff, size, offset))
KINETIC_ARCHIVE(int, archive_read_data_skip, (Archive * a), (a))

// Writing, to a file, a callback or the disk.
KINETIC_ARCHIVE(Archive*, archive_write_new, (void), ())
KINETIC_ARCHIVE(Archive*, archive_write_disk_new, (void), ())
KINETIC_ARCHIVE(int, archive_write_free, (Archive * a), (a))
KINETIC_ARCHIVE(int, archive_write_close, (Archive * a), (a))
KINETIC_ARCHIVE(int, archive_write_add_filter_gzip, (Archive * a), (a))
KINETIC_ARCHIVE(int, archive_write_add_filter_zstd, (Archive * a), (a))
KINETIC_ARCHIVE(int, archive_write_set_filter_option,
                (Archive * a, const char* m, const char* o, const char* v), (a, m, o, v))
KINETIC_ARCHIVE(int, archive_write_set_format, (Archive * a, int code), (a, code))
KINETIC_ARCHIVE(int, archive_write_set_format_pax_restricted, (Archive * a), (a))
KINETIC_ARCHIVE(int, archive_write_set_bytes_per_block, (Archive * a, int bytes), (a, bytes))
KINETIC_ARCHIVE(int, archive_write_disk_set_options, (Archive * a, int flags), (a, flags))
KINETIC_ARCHIVE(int, archive_write_open_filename, (Archive * a, const char* file), (a, file))
KINETIC_ARCHIVE(int, archive_write_open2,
                (Archive * a, void* data, archive_open_callback* open,
                 archive_write_callback* write, archive_close_callback* close,
                 archive_free_callback* free),
                (a, data, open, write, close, free))
KINETIC_ARCHIVE(int, archive_write_header, (Archive * a, Entry* entry), (a, entry))
KINETIC_ARCHIVE(la_ssize_t, archive_write_data, (Archive * a, const void* buff, size_t size),
                (a, buff, size))
KINETIC_ARCHIVE(la_ssize_t, archive_write_data_block,
                (Archive * a, const void* buff, size_t size, la_int64_t offset),
                (a, buff, size, offset))
KINETIC_ARCHIVE(int, archive_write_finish_entry, (Archive * a), (a))
KINETIC_ARCHIVE(const char*, archive_error_string, (Archive * a), (a))

// Entries.
KINETIC_ARCHIVE(Entry*, archive_entry_new, (void), ())
KINETIC_ARCHIVE(void, archive_entry_free, (Entry * e), (e))
KINETIC_ARCHIVE(Entry*, archive_entry_clear, (Entry * e), (e))
KINETIC_ARCHIVE(const char*, archive_entry_pathname, (Entry * e), (e))
KINETIC_ARCHIVE(const char*, archive_entry_pathname_utf8, (Entry * e), (e))
KINETIC_ARCHIVE(const char*, archive_entry_symlink, (Entry * e), (e))
KINETIC_ARCHIVE(const char*, archive_entry_symlink_utf8, (Entry * e), (e))
KINETIC_ARCHIVE(const char*, archive_entry_hardlink, (Entry * e), (e))
KINETIC_ARCHIVE(mode_t, archive_entry_filetype, (Entry * e), (e))
KINETIC_ARCHIVE(mode_t, archive_entry_perm, (Entry * e), (e))
KINETIC_ARCHIVE(la_int64_t, archive_entry_size, (Entry * e), (e))
KINETIC_ARCHIVE(void, archive_entry_copy_pathname, (Entry * e, const char* p), (e, p))
KINETIC_ARCHIVE(void, archive_entry_copy_symlink, (Entry * e, const char* p), (e, p))
KINETIC_ARCHIVE(void, archive_entry_set_pathname, (Entry * e, const char* p), (e, p))
KINETIC_ARCHIVE(void, archive_entry_set_filetype, (Entry * e, unsigned int type), (e, type))
KINETIC_ARCHIVE(void, archive_entry_set_perm, (Entry * e, mode_t perm), (e, perm))
KINETIC_ARCHIVE(void, archive_entry_set_size, (Entry * e, la_int64_t size), (e, size))
KINETIC_ARCHIVE(void, archive_entry_set_uid, (Entry * e, la_int64_t uid), (e, uid))
KINETIC_ARCHIVE(void, archive_entry_set_gid, (Entry * e, la_int64_t gid), (e, gid))
KINETIC_ARCHIVE(void, archive_entry_set_mtime, (Entry * e, time_t sec, long nsec), (e, sec, nsec))

// Variadic: formatted here, passed on as one string.
extern "C" void archive_set_error(Archive* a, int err, const char* fmt, ...) {
  static const auto real =
      kinetic::lazy::resolve<decltype(&archive_set_error)>(archive_library, "archive_set_error");
  char message[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  real(a, err, "%s", message);
}
