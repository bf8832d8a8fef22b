#include "core/error.h"

namespace kinetic {

int exit_code_for(Errc code, bool is_run_command) {
  switch (code) {
    case Errc::usage:
    case Errc::refused:
      return 2;
    default:
      break;
  }
  if (!is_run_command) return 1;
  switch (code) {
    case Errc::job_file_missing:
      return 127;
    case Errc::job_start:
      return 126;
    case Errc::timeout:
      return 124;
    case Errc::interrupted:
      return 130;
    default:
      return 125;
  }
}

}  // namespace kinetic
