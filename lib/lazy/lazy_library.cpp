#include "lazy/lazy_library.h"

#include <dlfcn.h>

#include <string>

#include "core/error.h"

namespace kinetic::lazy {

void* LazyLibrary::handle() {
  std::lock_guard lock(mu_);
  if (handle_) return handle_;
  // RTLD_LOCAL: the library's symbols stay out of the global scope, so it never binds to the
  // forwarding functions of the same names in this binary (nor they to it by accident).
  // RTLD_LAZY: its calls bind on first use, as they did when it was linked.
  handle_ = ::dlopen(soname_, RTLD_LAZY | RTLD_LOCAL);
  if (!handle_) {
    const char* why = ::dlerror();
    throw Error(Errc::internal, std::string("this command needs ") + soname_ +
                                    ", which could not be loaded (" + (why ? why : "unknown") +
                                    "); install it with: apt-get install " + package_);
  }
  return handle_;
}

void* LazyLibrary::symbol(const char* name) {
  void* lib = handle();
  ::dlerror();
  void* address = ::dlsym(lib, name);
  if (!address) {
    throw Error(Errc::internal, std::string(soname_) + " has no " + name +
                                    ": it is older than the one kinetic was built against; "
                                    "upgrade it with: apt-get install " +
                                    package_);
  }
  return address;
}

bool LazyLibrary::loaded() const {
  std::lock_guard lock(mu_);
  return handle_ != nullptr;
}

}  // namespace kinetic::lazy
