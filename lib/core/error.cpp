#include "core/error.h"

namespace kinetic {

int exit_code_for(Errc code, bool is_run_command) {
  switch (code) {
    case Errc::usage:
    case Errc::refused:
      return exit_codes::usage;
    default:
      break;
  }
  if (!is_run_command) return exit_codes::failed;
  switch (code) {
    case Errc::job_file_missing:
      return exit_codes::not_found;
    case Errc::job_start:
      return exit_codes::not_run;
    case Errc::timeout:
      return exit_codes::timeout;
    case Errc::interrupted:
      return exit_codes::interrupted;
    default:
      return exit_codes::kinetic;
  }
}

}  // namespace kinetic
