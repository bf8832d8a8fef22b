#include "render/status_line.h"

#include <cstdio>

#include "core/strings.h"

namespace kinetic {

void StatusLine::update(const std::string& raw, bool transient) {
  // One line, whatever a record's value in it holds (core/strings.h escape_for_terminal).
  const std::string text = escape_for_terminal(raw);
  std::lock_guard lock(mu_);
  if (io_.quiet || text == last_) return;
  if (io_.err_tty) {
    std::fprintf(io_.err, "\r\033[K%s", text.c_str());
    std::fflush(io_.err);
    shown_ = true;
  } else if (!transient) {
    std::fprintf(io_.err, "%s\n", text.c_str());
  }
  last_ = text;
}

void StatusLine::update_ticking(const std::string& text, const std::string& ticking) {
  {
    std::lock_guard lock(mu_);
    if (!io_.err_tty) {
      if (text == last_stable_) return;
      last_stable_ = text;
    }
  }
  update(text + ticking);
}

void StatusLine::clear() {
  std::lock_guard lock(mu_);
  clear_locked();
}

void StatusLine::clear_locked() {
  if (shown_) {
    std::fputs("\r\033[K", io_.err);
    std::fflush(io_.err);
    shown_ = false;
  }
}

void StatusLine::finish(const std::string& text) {
  std::lock_guard lock(mu_);
  clear_locked();
  last_.clear();
  last_stable_.clear();
  io_.info(text);
}

}  // namespace kinetic
