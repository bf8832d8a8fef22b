// What each image of the fake cloud holds, so a pod runs with only that (issue #15, docs/fakes.md
// "Images"). The fake kubelet runs pods as local processes; without this store it would lend
// every pod this machine's tools, and a job needing g++ in an image without one would pass here
// and fail on a paid node.
//
// An image is a list of programs on its PATH, its ENV, the files COPY put in it, its Python (a
// version, pip or not, PEP 668 or not) and the Python packages pip installed. Public base images
// come from a table (python:3.X-slim, debian:12-slim, the CUDA runtime images, ...); the fake
// Cloud Build derives every other image by interpreting its Dockerfile with build(): apt and pip
// from tables, `sh FILE` and `python3 -c` really run inside the image as it stands, anything else
// refused rather than run on this machine.
//
// A pod gets the image materialized as a directory: bin/ holds a symlink to this machine's
// program for each program the image has, and the directory is a Python venv
// (include-system-site-packages = false) whose site-packages hold a stub per installed package,
// so `import jax` works exactly when the image installed jax, and nothing of this machine's
// Python packages leaks in. The Python is this machine's, whatever version the image claims.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kinetic::fakes {

struct FakePythonPackage {
  std::string name;     // as pip printed it ("jax")
  std::string version;  // "0.7.2"
  std::set<std::string> extras;
};

struct FakeImage {
  // name on the image's PATH → the program of this machine that stands in for it
  std::map<std::string, std::string> programs;
  std::vector<std::pair<std::string, std::string>> env;  // ENV, in order (no PATH)
  std::map<std::string, std::string> files;              // absolute path → contents (COPY)
  std::map<std::string, FakePythonPackage> packages;     // normalized name → what pip installed
  std::string python;                                    // "3.11" when the image has python3
  bool pip = false;                                      // `python3 -m pip` works
  bool pep668 = false;     // the python3 is externally managed (Debian's, Ubuntu's)
  std::string distro;      // "debian12", "ubuntu24.04", "ubuntu22.04"; decides apt's python3
  bool apt_lists = false;  // `apt-get update` ran (slim images ship without lists)
  std::string workdir = "/";
  bool has(const std::string& program) const { return programs.count(program) > 0; }
};

// What a pod of an image runs with: PATH holds only DIR/bin.
struct FakeImageRuntime {
  std::string dir;
  std::vector<std::pair<std::string, std::string>> env;  // the image's ENV, then PATH
};

struct FakeImageBuild {
  std::vector<std::string> lines;  // docker's output, without Cloud Build's "Step #N: " prefix
  bool failed = false;
  FakeImage image;
};

class FakeImageStore {
 public:
  FakeImageStore();  // materializes images under a temporary directory, removed at destruction
  ~FakeImageStore();
  FakeImageStore(const FakeImageStore&) = delete;
  FakeImageStore& operator=(const FakeImageStore&) = delete;

  // A public image by reference ("python:3.11-slim", "docker.io/library/debian:12-slim",
  // "nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04"); nullopt for one the fake does not know.
  static std::optional<FakeImage> public_image(const std::string& ref);
  // What kinetic's cpu recipe makes (python:3.11-slim, g++, make, zstd): an image a test seeds in
  // the registry without saying what it holds.
  static FakeImage default_built_image();

  // Records what the image pushed as REF holds.
  void put(const std::string& ref, FakeImage image);
  // A recorded image, else a public one.
  std::optional<FakeImage> find(const std::string& ref) const;
  // The directory and environment a pod of REF runs with: a recorded image, a public one, or
  // default_built_image() (a registry image nobody described).
  FakeImageRuntime runtime(const std::string& ref);

  // Interprets DOCKERFILE over the build source FILES (path → contents) as `docker build`
  // would, with docker's own output lines. RESOLVE answers FROM for images not public (the
  // registry's); UNKNOWN_PACKAGES are packages pip cannot find.
  FakeImageBuild build(const std::string& dockerfile,
                       const std::map<std::string, std::string>& files,
                       const std::function<std::optional<FakeImage>(const std::string&)>& resolve,
                       const std::set<std::string>& unknown_packages,
                       const std::function<std::string()>& short_id);

  // Materializes IMAGE (once per content) and returns its directory.
  std::string materialize(const FakeImage& image);

 private:
  std::string root_;
  std::string host_python_;          // this machine's python3 interpreter (a real file, not a shim)
  std::string host_python_version_;  // "3.11"
  // Packages a pod gets for real rather than as a stub (a function job's runner unpickles with
  // cloudpickle): normalized name → {this machine's version, its package directory}; filled on
  // first use, empty when this machine's python3 lacks the package.
  std::map<std::string, std::pair<std::string, std::string>> real_packages_;
  const std::pair<std::string, std::string>& real_package(const std::string& normalized);
  mutable std::mutex mu_;
  std::map<std::string, FakeImage> images_;          // canonical ref → image
  std::map<std::string, std::string> materialized_;  // content hash → directory
  int scratch_ = 0;
};

// "python:3.11-slim" → "docker.io/library/python:3.11-slim"; a tag defaults to latest.
std::string canonical_image_ref(const std::string& ref);

}  // namespace kinetic::fakes
