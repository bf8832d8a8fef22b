// Shared libraries loaded on first use. `kinetic version`, `help`, `config` and the local
// backend's `status` and `logs` need no HTTP client, no archive code and no crypto, yet linking
// libcurl, libarchive and libcrypto made every start map ~40 libraries (libcurl's and
// libarchive's trees: GnuTLS, Kerberos, LDAP, ICU, libxml2...). The kinetic binary links none
// of them: it defines their functions itself (curl.cpp, archive.cpp, crypto.cpp), and each
// forwards to the real library, dlopen'ed by its soname the first time any of its functions is
// called. Test binaries link the real libraries instead (docs/architecture.md "Start-up").
#pragma once

#include <mutex>

namespace kinetic::lazy {

class LazyLibrary {
 public:
  // SONAME as the dynamic linker finds it; PACKAGE the Debian package that ships it, for the
  // message when it is missing.
  constexpr LazyLibrary(const char* soname, const char* package)
      : soname_(soname), package_(package) {}

  // The address of NAME in the library, loading it first. Throws kinetic::Error (internal)
  // naming the library and the package to install when either cannot be found.
  void* symbol(const char* name);

  // True once loaded: start-up tests check what a command pulled in.
  bool loaded() const;

 private:
  void* handle();

  const char* soname_;
  const char* package_;
  mutable std::mutex mu_;
  void* handle_ = nullptr;
};

// The address of NAME, typed as the function F it names.
template <typename F>
F resolve(LazyLibrary& library, const char* name) {
  return reinterpret_cast<F>(library.symbol(name));
}

}  // namespace kinetic::lazy

// Defines the C function NAME, with return type RET, parameters PARAMS and the argument list
// ARGS that forwards them, as a call into LIBRARY's own NAME (resolved once).
#define KINETIC_LAZY_FUNCTION(LIBRARY, RET, NAME, PARAMS, ARGS)                         \
  extern "C" RET NAME PARAMS {                                                          \
    static const auto real = ::kinetic::lazy::resolve<decltype(&NAME)>(LIBRARY, #NAME); \
    return real ARGS;                                                                   \
  }
