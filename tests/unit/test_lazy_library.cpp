// Libraries loaded on first use (lib/lazy/lazy_library.h): a missing library or function is a
// one-line error that names it and the package to install.
#include "lazy/lazy_library.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace kinetic::lazy {
namespace {

std::string error_of(LazyLibrary& library, const char* name) {
  try {
    library.symbol(name);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::internal);
    return e.what();
  }
  return "";
}

TEST(LazyLibrary, LoadsOnFirstUseAndFindsAFunction) {
  LazyLibrary z("libz.so.1", "zlib1g");
  EXPECT_FALSE(z.loaded());
  using Version = const char* (*)();
  auto version = resolve<Version>(z, "zlibVersion");
  ASSERT_NE(version, nullptr);
  EXPECT_TRUE(z.loaded());
  EXPECT_EQ(std::string(version()).substr(0, 2), "1.");
}

TEST(LazyLibrary, AMissingLibraryNamesThePackageToInstall) {
  LazyLibrary missing("libkinetic-test-missing.so.7", "kinetic-test-missing");
  std::string message = error_of(missing, "anything");
  EXPECT_NE(message.find("this command needs libkinetic-test-missing.so.7"), std::string::npos)
      << message;
  EXPECT_NE(message.find("apt-get install kinetic-test-missing"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line";
  EXPECT_FALSE(missing.loaded());
}

TEST(LazyLibrary, AMissingFunctionSaysTheLibraryIsTooOld) {
  LazyLibrary z("libz.so.1", "zlib1g");
  std::string message = error_of(z, "zlibNoSuchFunction");
  EXPECT_NE(message.find("libz.so.1 has no zlibNoSuchFunction"), std::string::npos) << message;
  EXPECT_NE(message.find("apt-get install zlib1g"), std::string::npos) << message;
}

}  // namespace
}  // namespace kinetic::lazy
