// libcurl's functions kinetic calls, forwarded to libcurl.so.4 loaded on first use
// (lazy_library.h says why). A function kinetic starts to use must be added here, or the
// kinetic binary fails to link.
#include <curl/curl.h>

#include <cstdarg>

#include "lazy/lazy_library.h"

// libcurl 7.x and 8.x both have the soname libcurl.so.4.
static_assert(LIBCURL_VERSION_MAJOR == 7 || LIBCURL_VERSION_MAJOR == 8);

namespace {
kinetic::lazy::LazyLibrary curl_library("libcurl.so.4", "libcurl4");
}  // namespace

KINETIC_LAZY_FUNCTION(curl_library, CURLcode, curl_global_init, (long flags), (flags))
KINETIC_LAZY_FUNCTION(curl_library, CURL*, curl_easy_init, (void), ())
KINETIC_LAZY_FUNCTION(curl_library, void, curl_easy_cleanup, (CURL * curl), (curl))
KINETIC_LAZY_FUNCTION(curl_library, void, curl_easy_reset, (CURL * curl), (curl))
KINETIC_LAZY_FUNCTION(curl_library, CURLcode, curl_easy_perform, (CURL * curl), (curl))
KINETIC_LAZY_FUNCTION(curl_library, const char*, curl_easy_strerror, (CURLcode code), (code))
KINETIC_LAZY_FUNCTION(curl_library, curl_slist*, curl_slist_append,
                      (curl_slist * list, const char* data), (list, data))
KINETIC_LAZY_FUNCTION(curl_library, void, curl_slist_free_all, (curl_slist * list), (list))
// A CONNECT_ONLY connection's bytes (http/upgrade.cpp: `kinetic exec`'s WebSocket).
KINETIC_LAZY_FUNCTION(curl_library, CURLcode, curl_easy_send,
                      (CURL * curl, const void* buffer, size_t length, size_t* sent),
                      (curl, buffer, length, sent))
KINETIC_LAZY_FUNCTION(curl_library, CURLcode, curl_easy_recv,
                      (CURL * curl, void* buffer, size_t length, size_t* received),
                      (curl, buffer, length, received))

// The two variadic functions take exactly one argument after the option, whose type the
// option's number gives (curl.h's CURLOPTTYPE_* and CURLINFO_* bands), so each is read with
// its own type and passed on as such.
extern "C" CURLcode curl_easy_setopt(CURL* curl, CURLoption option, ...) {
  static const auto real =
      kinetic::lazy::resolve<decltype(&curl_easy_setopt)>(curl_library, "curl_easy_setopt");
  va_list args;
  va_start(args, option);
  CURLcode result;
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    result = real(curl, option, va_arg(args, long));
  } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
    result = real(curl, option, va_arg(args, void*));
  } else if (option < CURLOPTTYPE_OFF_T) {
    using Callback = void (*)(void);
    result = real(curl, option, va_arg(args, Callback));
  } else if (option < CURLOPTTYPE_BLOB) {
    result = real(curl, option, va_arg(args, curl_off_t));
  } else {
    result = real(curl, option, va_arg(args, void*));
  }
  va_end(args);
  return result;
}

extern "C" CURLcode curl_easy_getinfo(CURL* curl, CURLINFO info, ...) {
  static const auto real =
      kinetic::lazy::resolve<decltype(&curl_easy_getinfo)>(curl_library, "curl_easy_getinfo");
  // Every CURLINFO_* takes a pointer to where the answer goes.
  va_list args;
  va_start(args, info);
  void* out = va_arg(args, void*);
  va_end(args);
  return real(curl, info, out);
}
