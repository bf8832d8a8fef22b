// Requirements (pack/requirements.h): requirements.txt text through normalize_requirements, and
// the same bytes as a pyproject.toml, read alone and as the requirements of an image build (whose
// lines are checked for local paths and credentials). Only Error(Errc::packaging) may come out of
// the TOML reader and those checks. (Not as a requirements.txt file: its "-r FILE" lines would
// read whatever file they name.)
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "core/error.h"
#include "pack/requirements.h"
#include "support.h"

using namespace kinetic;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::text(data, size);
  (void)normalize_requirements(text);
  try {
    (void)pyproject_dependencies(text);
    (void)pyproject_requires_python(text);
  } catch (const Error& e) {
    fuzz::check(e.code() == Errc::packaging, "the TOML reader throws only Errc::packaging");
  }

  const fs::path dir = fuzz::scratch_dir();
  const fs::path file = dir / "pyproject.toml";
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  try {
    (void)find_requirements(dir, dir, file, /*for_image_build=*/true);
  } catch (const Error& e) {
    fuzz::check(e.code() == Errc::packaging, "find_requirements throws only Errc::packaging");
  }
  return 0;
}
