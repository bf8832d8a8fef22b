#include "backend/gke/image_source.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

#include "core/error.h"

namespace kinetic::gke {

namespace {

struct WriteFree {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

void add_file(struct archive* a, const std::string& name, const std::string& data) {
  std::unique_ptr<archive_entry, EntryFree> e(archive_entry_new());
  archive_entry_set_pathname(e.get(), name.c_str());
  archive_entry_set_filetype(e.get(), AE_IFREG);
  archive_entry_set_perm(e.get(), 0644);
  archive_entry_set_size(e.get(), static_cast<la_int64_t>(data.size()));
  archive_entry_set_mtime(e.get(), 0, 0);
  if (archive_write_header(a, e.get()) != ARCHIVE_OK ||
      archive_write_data(a, data.data(), data.size()) != static_cast<la_ssize_t>(data.size()))
    throw Error(Errc::packaging,
                "cannot write the image build source: " + std::string(archive_error_string(a)));
}

}  // namespace

void write_build_source(const fs::path& out,
                        const std::vector<std::pair<std::string, std::string>>& files) {
  std::unique_ptr<struct archive, WriteFree> a(archive_write_new());
  archive_write_set_format_pax_restricted(a.get());
  archive_write_add_filter_gzip(a.get());
  // No name or time in the gzip header: the same inputs give the same bytes.
  archive_write_set_filter_option(a.get(), "gzip", "timestamp", nullptr);
  if (archive_write_open_filename(a.get(), out.c_str()) != ARCHIVE_OK)
    throw Error(Errc::packaging,
                "cannot write " + out.string() + ": " + std::string(archive_error_string(a.get())));
  for (const auto& [name, text] : files) add_file(a.get(), name, text);
  if (archive_write_close(a.get()) != ARCHIVE_OK)
    throw Error(Errc::packaging,
                "cannot write " + out.string() + ": " + std::string(archive_error_string(a.get())));
}

}  // namespace kinetic::gke
