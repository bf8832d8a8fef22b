#include "fakes/fake_images.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace kinetic::fakes {

namespace fs = std::filesystem;

namespace {

// ---- what images hold -----------------------------------------------------------------------

// The programs of a minimal Debian or Ubuntu image (essential and required packages: coreutils,
// dash, bash, grep, sed, findutils, tar, gzip, diffutils, mawk, apt, dpkg, hostname).
const char* const kBaseSystem[] = {
    "sh",       "bash",      "dash",     "cat",      "ls",      "cp",     "mv",      "rm",
    "mkdir",    "rmdir",     "mktemp",   "chmod",    "chown",   "ln",     "echo",    "printf",
    "env",      "test",      "[",        "true",     "false",   "sleep",  "date",    "head",
    "tail",     "wc",        "sort",     "uniq",     "cut",     "tr",     "tee",     "touch",
    "basename", "dirname",   "readlink", "realpath", "id",      "uname",  "pwd",     "grep",
    "sed",      "find",      "xargs",    "tar",      "gzip",    "gunzip", "zcat",    "hostname",
    "kill",     "nproc",     "stat",     "du",       "df",      "expr",   "seq",     "timeout",
    "nohup",    "od",        "comm",     "paste",    "cmp",     "diff",   "awk",     "mawk",
    "whoami",   "sha256sum", "md5sum",   "base64",   "install", "sync",   "apt-get", "apt",
    "dpkg",
};

// Debian packages apt installs here, by the programs they bring (dependencies included: g++
// brings gcc and binutils, which g++ calls by name through PATH).
const std::map<std::string, std::vector<std::string>>& apt_packages() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"g++",
       {"g++", "c++", "gcc", "cc", "cpp", "as", "ld", "ld.bfd", "ar", "ranlib", "nm", "objdump",
        "objcopy", "strip"}},
      {"gcc",
       {"gcc", "cc", "cpp", "as", "ld", "ld.bfd", "ar", "ranlib", "nm", "objdump", "objcopy",
        "strip"}},
      {"make", {"make"}},
      {"build-essential",
       {"g++", "c++", "gcc", "cc", "cpp", "as", "ld", "ld.bfd", "ar", "ranlib", "nm", "objdump",
        "objcopy", "strip", "make", "dpkg-buildpackage"}},
      {"curl", {"curl"}},
      {"wget", {"wget"}},
      {"git", {"git"}},
      {"zstd", {"zstd"}},
      {"unzip", {"unzip"}},
      {"zip", {"zip"}},
      {"procps", {"ps", "top", "free", "pkill", "pgrep"}},
      {"ca-certificates", {}},
      {"python3", {"python3"}},
      {"python3-pip", {"python3", "pip", "pip3"}},
      {"python3-venv", {"python3"}},
      {"python3-dev", {"python3"}},
      {"python-is-python3", {"python3", "python"}},
  };
  return table;
}

FakeImage base_system(const std::string& distro) {
  FakeImage img;
  for (const char* p : kBaseSystem) img.programs[p] = p;
  img.distro = distro;
  return img;
}

void add_program(FakeImage& img, const std::string& name, const std::string& host) {
  img.programs[name] = host;
}

// The Python of the official python:3.X images: /usr/local/bin/python3 with pip, not managed.
void add_official_python(FakeImage& img, const std::string& version) {
  add_program(img, "python3", "python3");
  add_program(img, "python", "python3");
  add_program(img, "python" + version, "python3");
  add_program(img, "pip", "pip");
  add_program(img, "pip3", "pip");
  img.python = version;
  img.pip = true;
  img.pep668 = false;
  img.env.push_back({"LANG", "C.UTF-8"});
  img.env.push_back({"PYTHON_VERSION", version});
}

// The python3 apt installs on DISTRO.
std::string distro_python(const std::string& distro) {
  if (distro == "ubuntu24.04") return "3.12";
  if (distro == "ubuntu22.04") return "3.10";
  return "3.11";  // Debian 12
}

// ---- text helpers -----------------------------------------------------------------------------

std::string trim_images(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), ::toupper);
  return s;
}

std::string join(const std::vector<std::string>& words, const std::string& sep = " ") {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

// PEP 503 normalisation: lower case, runs of -_. become one '-'.
std::string normalize_package(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') out.push_back('-');
    } else {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

// The module a distribution installs, where it is not its own name.
std::string module_of(const std::string& normalized) {
  static const std::map<std::string, std::string> table = {{"pyyaml", "yaml"},
                                                           {"scikit-learn", "sklearn"},
                                                           {"pillow", "PIL"},
                                                           {"opencv-python", "cv2"},
                                                           {"beautifulsoup4", "bs4"},
                                                           {"python-dateutil", "dateutil"},
                                                           {"libtpu-nightly", "libtpu"},
                                                           {"tensorflow-cpu", "tensorflow"}};
  auto it = table.find(normalized);
  if (it != table.end()) return it->second;
  std::string m = normalized;
  std::replace(m.begin(), m.end(), '-', '_');
  return m;
}

bool images_truthy(const std::string& v) {
  auto l = v;
  std::transform(l.begin(), l.end(), l.begin(), ::tolower);
  return l == "1" || l == "true" || l == "yes" || l == "on";
}

std::string env_value(const FakeImage& img, const std::string& key) {
  for (auto it = img.env.rbegin(); it != img.env.rend(); ++it)
    if (it->first == key) return it->second;
  return {};
}

void set_env(FakeImage& img, const std::string& key, const std::string& value) {
  for (auto& [k, v] : img.env) {
    if (k == key) {
      v = value;
      return;
    }
  }
  img.env.push_back({key, value});
}

std::string resolve_path(const std::string& path, const std::string& workdir) {
  if (path.empty()) return workdir;
  fs::path p = path[0] == '/' ? fs::path(path) : fs::path(workdir) / path;
  return p.lexically_normal().string();
}

// ---- a RUN line as the shell would split it ----------------------------------------------------

struct ShellLine {
  std::vector<std::vector<std::string>> commands;  // joined by &&
  std::string refused;                             // a construct the fake does not model
};

// Splits a RUN line into `&&`-joined simple commands: quotes, backslashes and $VAR (from the
// image's ENV) as /bin/sh does. Pipes, redirections, `;`, `||` and command substitution are not
// modelled: the line is refused rather than guessed at.
ShellLine split_shell(const std::string& line, const FakeImage& img) {
  ShellLine out;
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) words.push_back(word);
    word.clear();
    in_word = false;
  };
  auto end_command = [&] {
    end_word();
    if (!words.empty()) out.commands.push_back(words);
    words.clear();
  };
  auto expand = [&](std::size_t& i) {
    std::string name;
    if (i + 1 < line.size() && line[i + 1] == '{') {
      auto close = line.find('}', i + 2);
      if (close == std::string::npos) return false;
      name = line.substr(i + 2, close - i - 2);
      i = close;
    } else {
      std::size_t j = i + 1;
      while (j < line.size() &&
             (std::isalnum(static_cast<unsigned char>(line[j])) || line[j] == '_'))
        ++j;
      if (j == i + 1) return false;
      name = line.substr(i + 1, j - i - 1);
      i = j - 1;
    }
    word += env_value(img, name);
    in_word = true;
    return true;
  };
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\'') {
      auto close = line.find('\'', i + 1);
      if (close == std::string::npos) return {{}, "an unterminated ' quote"};
      word += line.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == '"') {
      in_word = true;
      std::size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size() &&
            std::string("\"\\$`").find(line[j + 1]) != std::string::npos) {
          word += line[++j];
        } else if (line[j] == '`' ||
                   (line[j] == '$' && j + 1 < line.size() && line[j + 1] == '(')) {
          return {{}, "command substitution"};
        } else if (line[j] == '$') {
          if (!expand(j)) word += '$';
        } else {
          word += line[j];
        }
      }
      if (j >= line.size()) return {{}, "an unterminated \" quote"};
      i = j;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      end_word();
    } else if (c == '&' && i + 1 < line.size() && line[i + 1] == '&') {
      end_command();
      ++i;
    } else if (c == '$' && i + 1 < line.size() && line[i + 1] == '(') {
      return {{}, "command substitution"};
    } else if (c == '$') {
      if (!expand(i)) {
        word += '$';
        in_word = true;
      }
    } else if (std::string("|;<>`()&").find(c) != std::string::npos) {
      std::string op(1, c);
      if (i + 1 < line.size() && line[i + 1] == c) op += c;
      return {{}, "the shell operator '" + op + "'"};
    } else {
      word += c;
      in_word = true;
    }
  }
  end_command();
  return out;
}

// ---- running a program inside an image -------------------------------------------------------

struct Ran {
  int code = 0;
  std::vector<std::string> lines;
};

// Runs ARGV (argv[0] found in DIR/bin only) with ENV in a scratch directory; stdout and stderr
// together, as docker's build output shows them.
Ran run_in(const std::string& dir, const std::vector<std::string>& argv,
           const std::vector<std::string>& env, const std::string& cwd) {
  Ran r;
  std::string exe = dir + "/bin/" + argv[0];
  std::vector<char*> argv_p, env_p;
  for (auto& a : argv) argv_p.push_back(const_cast<char*>(a.c_str()));
  argv_p.push_back(nullptr);
  for (auto& e : env) env_p.push_back(const_cast<char*>(e.c_str()));
  env_p.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {127, {"pipe: failed"}};
  const char* exe_c = exe.c_str();
  const char* cwd_c = cwd.c_str();
  pid_t pid = ::fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    if (::chdir(cwd_c) != 0) ::_exit(126);
    ::execve(exe_c, argv_p.data(), env_p.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string output;
  char buf[8192];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.code = pid < 0               ? 127
           : WIFEXITED(status)   ? WEXITSTATUS(status)
           : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                 : 1;
  r.lines = lines_of(output);
  return r;
}

std::string read_command_output(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  return trim_images(out);
}

// The Python stub that stands in for a package's module.
std::string stub_module(const FakePythonPackage& pkg, const std::string& module) {
  std::string extras;
  for (const auto& e : pkg.extras) extras += (extras.empty() ? "\"" : ", \"") + e + "\"";
  std::string s = "# A stub of " + pkg.name + " " + pkg.version +
                  " made by kinetic's fake image store (tests/fakes/fake_images.cpp).\n"
                  "__version__ = \"" +
                  pkg.version +
                  "\"\n"
                  "__kinetic_stub__ = {\"name\": \"" +
                  pkg.name + "\", \"extras\": [" + extras + "]}\n";
  if (module == "jax") {
    // jax reaches an accelerator through its extra (jax[tpu] brings libtpu, jax[cuda12] the CUDA
    // plugin); JAX_PLATFORMS names the one a job demands.
    std::string platforms = "\"cpu\"";
    if (pkg.extras.count("tpu")) platforms += ", \"tpu\"";
    for (const auto& e : pkg.extras)
      if (e.rfind("cuda", 0) == 0) platforms += ", \"cuda\"";
    s +=
        "_PLATFORMS = [" + platforms +
        "]\n"
        "def devices(backend=None):\n"
        "    import os\n"
        "    platform = backend or (os.environ.get(\"JAX_PLATFORMS\") or \"cpu\").split(\",\")[0]\n"
        "    if platform == \"gpu\" and \"cuda\" in _PLATFORMS:  # jax's alias for its GPU "
        "backend\n"
        "        platform = \"cuda\"\n"
        "    if platform not in _PLATFORMS:\n"
        "        raise RuntimeError(\"Unable to initialize backend '%s': Backend '%s' is not in "
        "the list of known backends: %s. (you may need to uninstall the failing plugin package, "
        "or set JAX_PLATFORMS=cpu to skip this backend.)\" % (platform, platform, \" "
        "\".join(_PLATFORMS)))\n"
        "    return [\"%s:%d\" % (platform, i) for i in range(1)]\n"
        "def default_backend():\n"
        "    return devices()[0].split(\":\")[0]\n";
  }
  return s;
}

void write_file(const fs::path& path, const std::string& contents) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << contents;
}

}  // namespace

// ---- references and the public images ---------------------------------------------------------

std::string canonical_image_ref(const std::string& ref) {
  std::string r = ref;
  auto at = r.find('@');
  std::string digest;
  if (at != std::string::npos) {
    digest = r.substr(at);
    r = r.substr(0, at);
  }
  auto slash = r.find('/');
  std::string first = slash == std::string::npos ? "" : r.substr(0, slash);
  bool has_host = !first.empty() && (first.find('.') != std::string::npos ||
                                     first.find(':') != std::string::npos || first == "localhost");
  if (!has_host) r = "docker.io/" + (slash == std::string::npos ? "library/" + r : r);
  auto last_slash = r.rfind('/');
  if (digest.empty() && r.find(':', last_slash) == std::string::npos) r += ":latest";
  return r + digest;
}

namespace {

// The image indexes Docker's official images published under a tag, as docker-library/repo-info
// records them (repos/python/remote/3.12-slim.md): the digests kinetic pins. A registry serves a
// reference with a digest by the digest alone, so a digest the fake does not know is not found.
std::optional<std::string> tag_of_published_digest(const std::string& repository,
                                                   const std::string& digest) {
  static const std::map<std::pair<std::string, std::string>, std::string> kPublished = {
      {{"docker.io/library/python",
        "sha256:229a2c5bfa27522db7815ea81f9bed70af17ccb9de9fc7ad142b1877b5830d36"},
       "3.12-slim"}};
  auto it = kPublished.find({repository, digest});
  if (it == kPublished.end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::optional<FakeImage> FakeImageStore::public_image(const std::string& ref) {
  std::string c = canonical_image_ref(ref);
  if (const auto at = c.find('@'); at != std::string::npos) {
    std::string repository = c.substr(0, at);
    if (const auto colon = repository.find(':', repository.rfind('/')); colon != std::string::npos)
      repository.resize(colon);  // `name:tag@digest`: the tag is a comment; the digest decides
    const auto tag = tag_of_published_digest(repository, c.substr(at + 1));
    if (!tag) return std::nullopt;
    c = repository + ":" + *tag;
  }
  std::smatch m;
  static const std::regex python_re(
      R"(^docker\.io/library/python:(3\.\d+)(\.\d+)?(-slim)?(-bookworm)?$)");
  if (std::regex_match(c, m, python_re)) {
    FakeImage img = base_system("debian12");
    add_official_python(img, m[1]);
    if (!m[3].matched) {  // the full image is buildpack-deps: a toolchain and git
      for (const char* pkg : {"g++", "make", "git", "curl"})
        for (const auto& p : apt_packages().at(pkg)) add_program(img, p, p);
    }
    return img;
  }
  static const std::regex debian_re(R"(^docker\.io/library/debian:(12|bookworm)(-slim)?$)");
  if (std::regex_match(c, debian_re)) return base_system("debian12");
  static const std::regex ubuntu_re(R"(^docker\.io/library/ubuntu:(22\.04|24\.04|jammy|noble)$)");
  if (std::regex_match(c, m, ubuntu_re))
    return base_system(m[1] == "22.04" || m[1] == "jammy" ? "ubuntu22.04" : "ubuntu24.04");
  // The CUDA images: the CUDA libraries on Ubuntu, no Python, no compiler.
  static const std::regex cuda_re(
      R"(^docker\.io/nvidia/cuda:\d+\.\d+\.\d+-(base|runtime|cudnn-runtime|cudnn\d*-runtime)-ubuntu(22\.04|24\.04)$)");
  if (std::regex_match(c, m, cuda_re)) {
    FakeImage img = base_system("ubuntu" + m[2].str());
    img.env.push_back({"NVIDIA_VISIBLE_DEVICES", "all"});
    return img;
  }
  return std::nullopt;
}

FakeImage FakeImageStore::default_built_image() {
  FakeImage img = *public_image("python:3.11-slim");
  for (const char* pkg : {"g++", "make", "zstd"})
    for (const auto& p : apt_packages().at(pkg)) add_program(img, p, p);
  img.workdir = "/workspace";
  return img;
}

// ---- the store --------------------------------------------------------------------------------

FakeImageStore::FakeImageStore() {
  char tmpl[] = "/tmp/kinetic-fake-images-XXXXXX";
  if (char* d = ::mkdtemp(tmpl)) root_ = d;
  // A real interpreter, not a launcher script (pyenv's shims are): the venv links to it.
  std::error_code ec;
  if (fs::exists("/usr/bin/python3", ec))
    host_python_ = "/usr/bin/python3";
  else
    host_python_ = read_command_output("python3 -c 'import sys; print(sys.executable)'");
  host_python_version_ = read_command_output(
      "'" + host_python_ + "' -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'");
}

const std::pair<std::string, std::string>& FakeImageStore::real_package(
    const std::string& normalized) {
  // Only pure-Python packages whose behaviour a test needs: cloudpickle, which a function job's
  // runner unpickles the call with (docs/python.md). Everything else stays a stub.
  static const std::set<std::string> kReal = {"cloudpickle"};
  auto it = real_packages_.find(normalized);
  if (it != real_packages_.end()) return it->second;
  std::pair<std::string, std::string> found;
  if (kReal.count(normalized)) {
    const std::string line = read_command_output("'" + host_python_ + "' -c 'import os, " +
                                                 normalized + " as m; print(m.__version__, " +
                                                 "os.path.dirname(m.__file__))' 2>/dev/null");
    if (const size_t space = line.find(' '); space != std::string::npos)
      found = {line.substr(0, space), line.substr(space + 1)};
  }
  return real_packages_[normalized] = found;
}

FakeImageStore::~FakeImageStore() {
  std::error_code ec;
  if (!root_.empty()) fs::remove_all(root_, ec);
}

void FakeImageStore::put(const std::string& ref, FakeImage image) {
  std::lock_guard lock(mu_);
  images_[canonical_image_ref(ref)] = std::move(image);
}

std::optional<FakeImage> FakeImageStore::find(const std::string& ref) const {
  {
    std::lock_guard lock(mu_);
    auto it = images_.find(canonical_image_ref(ref));
    if (it != images_.end()) return it->second;
  }
  return public_image(ref);
}

FakeImageRuntime FakeImageStore::runtime(const std::string& ref) {
  FakeImage img = find(ref).value_or(default_built_image());
  FakeImageRuntime rt;
  rt.dir = materialize(img);
  rt.env = img.env;
  rt.env.push_back({"PATH", rt.dir + "/bin"});
  return rt;
}

std::string FakeImageStore::materialize(const FakeImage& img) {
  // The content decides the directory: one per distinct image, however many refs name it.
  std::string key = img.python + (img.pip ? "+pip" : "") + "\n";
  for (const auto& [name, host] : img.programs) key += "p " + name + "=" + host + "\n";
  for (const auto& [name, pkg] : img.packages) {
    key += "k " + name + "=" + pkg.version;
    for (const auto& e : pkg.extras) key += "," + e;
    key += "\n";
  }
  for (const auto& [path, contents] : img.files)
    key += "f " + path + " " + std::to_string(std::hash<std::string>{}(contents)) + "\n";
  std::lock_guard lock(mu_);
  auto it = materialized_.find(key);
  if (it != materialized_.end()) return it->second;
  const std::string dir = root_ + "/image-" + std::to_string(materialized_.size());
  const fs::path bin = fs::path(dir) / "bin";
  fs::create_directories(bin);
  std::string host_path = "/usr/local/bin:/usr/bin:/bin";
  if (const char* p = std::getenv("PATH")) host_path = std::string(p) + ":" + host_path;
  auto host_program = [&](const std::string& name) -> std::string {
    if (name == "python3") return host_python_;
    std::stringstream dirs(host_path);
    for (std::string d; std::getline(dirs, d, ':');) {
      // pyenv's shims are launchers that look for a Python of their own: never lend them.
      if (d.empty() || d.find("/.pyenv/") != std::string::npos) continue;
      auto candidate = fs::path(d) / name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
    return {};
  };
  std::error_code ec;
  for (const auto& [name, host] : img.programs) {
    // pip runs as `python3 -m pip` here: the fake's images have no real pip (see pip below).
    if (host == "pip") continue;
    auto target = host_program(host);
    if (!target.empty()) fs::create_symlink(target, bin / name, ec);
  }
  if (!img.python.empty()) {
    // A venv over this machine's Python: the standard library, and only the image's packages.
    const fs::path site =
        fs::path(dir) / "lib" / ("python" + host_python_version_) / "site-packages";
    fs::create_directories(site);
    write_file(fs::path(dir) / "pyvenv.cfg",
               "home = " + fs::path(host_python_).parent_path().string() +
                   "\ninclude-system-site-packages = false\nversion = " + host_python_version_ +
                   "\n");
    for (const auto& [normalized, pkg] : img.packages) {
      const std::string module = module_of(normalized);
      // The version this machine has is this machine's package (a link); any other is a stub.
      if (const auto& [version, where] = real_package(normalized);
          !where.empty() && version == pkg.version) {
        fs::create_directory_symlink(where, site / module, ec);
      } else {
        write_file(site / module / "__init__.py", stub_module(pkg, module));
      }
      write_file(site / (module + "-" + pkg.version + ".dist-info") / "METADATA",
                 "Metadata-Version: 2.1\nName: " + pkg.name + "\nVersion: " + pkg.version + "\n");
    }
  }
  for (const auto& [path, contents] : img.files)
    write_file(fs::path(dir) / "fs" / path.substr(1), contents);
  materialized_[key] = dir;
  return dir;
}

// ---- docker build -----------------------------------------------------------------------------

namespace {

struct BuildContext {
  FakeImage& img;
  const std::set<std::string>& unknown_packages;
  std::vector<std::string>& out;
};

struct Requirement {
  std::string name;  // as written
  std::set<std::string> extras;
  std::string spec;
};

std::optional<Requirement> parse_requirement(std::string line) {
  auto hash = line.find('#');
  if (hash != std::string::npos) line = line.substr(0, hash);
  auto semi = line.find(';');
  if (semi != std::string::npos) line = line.substr(0, semi);
  line = trim_images(line);
  if (line.empty() || line[0] == '-') return std::nullopt;
  Requirement r;
  auto end = line.find_first_of("<>=!~[ @(\t");
  r.name = trim_images(line.substr(0, end));
  if (end == std::string::npos) return r;
  auto rest = line.substr(end);
  if (rest[0] == '[') {
    auto close = rest.find(']');
    std::stringstream extras(
        rest.substr(1, close == std::string::npos ? std::string::npos : close - 1));
    for (std::string e; std::getline(extras, e, ',');)
      if (!trim_images(e).empty()) r.extras.insert(trim_images(e));
    rest = close == std::string::npos ? "" : rest.substr(close + 1);
  }
  r.spec = trim_images(rest);
  return r;
}

// The version pip would pick for SPEC: an exact pin, else a lower bound, else 1.0.0.
std::string version_for(const std::string& spec) {
  static const std::regex pin(R"(===?\s*([0-9][0-9A-Za-z.\-+]*))");
  static const std::regex lower(R"(>=\s*([0-9][0-9A-Za-z.\-+]*))");
  std::smatch m;
  if (std::regex_search(spec, m, pin)) return m[1];
  if (std::regex_search(spec, m, lower)) return m[1];
  return "1.0.0";
}

int pip_install(BuildContext& b, const std::vector<std::string>& args, const std::string& python) {
  auto& img = b.img;
  if (!img.pip) {
    b.out.push_back(python + ": No module named pip");
    return 1;
  }
  std::vector<Requirement> wanted;
  bool break_system = images_truthy(env_value(img, "PIP_BREAK_SYSTEM_PACKAGES"));
  auto add_line = [&](const std::string& line) {
    if (auto r = parse_requirement(line)) wanted.push_back(*r);
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    auto takes_value = [&](std::initializer_list<const char*> names) {
      for (const char* n : names) {
        if (a == n) return true;
      }
      return false;
    };
    if (a == "-r" || a == "--requirement") {
      if (i + 1 >= args.size()) {
        b.out.push_back("ERROR: -r option requires 1 argument");
        return 2;
      }
      auto path = resolve_path(args[++i], img.workdir);
      auto f = img.files.find(path);
      if (f == img.files.end()) {
        b.out.push_back(
            "ERROR: Could not open requirements file: [Errno 2] No such file or "
            "directory: '" +
            args[i] + "'");
        return 1;
      }
      for (const auto& line : lines_of(f->second)) add_line(line);
    } else if (takes_value({"-f", "--find-links", "-i", "--index-url", "--extra-index-url", "-c",
                            "--constraint", "--root-user-action", "--progress-bar"})) {
      ++i;
    } else if (a.rfind("--find-links=", 0) == 0 || a.rfind("--index-url=", 0) == 0 ||
               a.rfind("--extra-index-url=", 0) == 0 || a.rfind("--root-user-action=", 0) == 0) {
    } else if (a == "--break-system-packages") {
      break_system = true;
    } else if (a == "--no-cache-dir" || a == "-q" || a == "--quiet" || a == "-U" ||
               a == "--upgrade" || a == "--pre" || a == "--no-deps" ||
               a == "--disable-pip-version-check" || a == "--no-warn-script-location") {
    } else if (!a.empty() && a[0] == '-') {
      b.out.push_back("");
      b.out.push_back("Usage:   ");
      b.out.push_back(
          "  pip install [options] <requirement specifier> [package-index-options] ...");
      b.out.push_back("");
      b.out.push_back("no such option: " + a);
      return 2;
    } else {
      add_line(a);
    }
  }
  if (img.pep668 && !break_system) {
    for (const char* l :
         {"error: externally-managed-environment", "",
          "\xC3\x97 This environment is externally managed",
          "\xE2\x95\xB0\xE2\x94\x80> To install Python packages system-wide, try apt install",
          "    python3-xyz, where xyz is the package you are trying to", "    install.", "",
          "note: If you believe this is a mistake, please contact your Python installation or OS "
          "distribution provider. You can override this, at the risk of breaking your Python "
          "installation or OS, by passing --break-system-packages.",
          "hint: See PEP 668 for the detailed specification."})
      b.out.push_back(l);
    return 1;
  }
  std::vector<FakePythonPackage> installed;
  for (const auto& r : wanted) {
    const auto normalized = normalize_package(r.name);
    for (const auto& u : b.unknown_packages) {
      if (normalize_package(u) != normalized) continue;
      b.out.push_back("ERROR: Could not find a version that satisfies the requirement " + r.name +
                      (r.spec.empty() ? "" : r.spec) + " (from versions: none)");
      b.out.push_back("ERROR: No matching distribution found for " + r.name + r.spec);
      return 1;
    }
    FakePythonPackage pkg{r.name, version_for(r.spec), r.extras};
    b.out.push_back(
        "Collecting " + r.name +
        (r.extras.empty() ? "" : "[" + join({r.extras.begin(), r.extras.end()}, ",") + "]") +
        r.spec);
    b.out.push_back("  Downloading " + module_of(normalized) + "-" + pkg.version +
                    "-py3-none-any.whl (120 kB)");
    installed.push_back(pkg);
    // An accelerator extra of jax brings jaxlib with it, at the same version.
    if (normalized == "jax" && !r.extras.empty()) installed.push_back({"jaxlib", pkg.version, {}});
  }
  std::string names;
  for (const auto& p : installed) {
    img.packages[normalize_package(p.name)] = p;
    names += " " + normalize_package(p.name) + "-" + p.version;
  }
  if (!installed.empty()) b.out.push_back("Successfully installed" + names);
  return 0;
}

int apt_get(BuildContext& b, const std::vector<std::string>& args) {
  auto& img = b.img;
  std::string op;
  std::vector<std::string> packages;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i][0] == '-') {
      if (args[i] == "-o") ++i;
      continue;
    }
    if (op.empty())
      op = args[i];
    else
      packages.push_back(args[i]);
  }
  const std::string suite = img.distro == "debian12" ? "http://deb.debian.org/debian bookworm"
                                                     : "http://archive.ubuntu.com/ubuntu noble";
  if (op == "update") {
    b.out.push_back("Get:1 " + suite + " InRelease [151 kB]");
    b.out.push_back("Reading package lists...");
    img.apt_lists = true;
    return 0;
  }
  if (op == "clean" || op == "autoremove" || op == "autoclean") return 0;
  if (op != "install") {
    b.out.push_back("E: Invalid operation " + op);
    return 100;
  }
  b.out.push_back("Reading package lists...");
  b.out.push_back("Building dependency tree...");
  for (const auto& p : packages) {
    if (!img.apt_lists || !apt_packages().count(p)) {
      b.out.push_back("E: Unable to locate package " + p);
      return 100;
    }
  }
  b.out.push_back("The following NEW packages will be installed:");
  b.out.push_back("  " + join(packages));
  for (const auto& p : packages) {
    for (const auto& prog : apt_packages().at(p)) add_program(img, prog, prog);
    if (p.rfind("python3", 0) == 0 || p == "python-is-python3") {
      // The distribution's Python: externally managed (PEP 668); pip only from python3-pip.
      if (img.python.empty()) {
        img.python = distro_python(img.distro);
        img.pep668 = true;
      }
      add_program(img, "python3", "python3");
      add_program(img, "python" + img.python, "python3");
    }
    if (p == "python3-pip") img.pip = true;
    b.out.push_back("Setting up " + p + " ...");
  }
  return 0;
}

}  // namespace

FakeImageBuild FakeImageStore::build(
    const std::string& dockerfile, const std::map<std::string, std::string>& files,
    const std::function<std::optional<FakeImage>(const std::string&)>& resolve,
    const std::set<std::string>& unknown_packages, const std::function<std::string()>& short_id) {
  FakeImageBuild result;
  auto& out = result.lines;
  std::size_t context_bytes = 0;
  for (const auto& [p, c] : files) context_bytes += c.size();
  char sending[96];
  std::snprintf(sending, sizeof sending, "Sending build context to Docker daemon  %.3fkB",
                static_cast<double>(context_bytes) / 1000.0);
  out.push_back(sending);

  std::vector<std::string> instructions;
  for (const auto& line : lines_of(dockerfile)) {
    auto t = trim_images(line);
    if (t.empty() || t[0] == '#') continue;
    if (!instructions.empty() && !instructions.back().empty() &&
        instructions.back().back() == '\\') {
      instructions.back().pop_back();
      instructions.back() += " " + t;
    } else {
      instructions.push_back(t);
    }
  }
  auto fail = [&](const std::string& line) {
    if (!line.empty()) out.push_back(line);
    result.failed = true;
    return result;
  };
  std::string scratch;
  {
    std::lock_guard lock(mu_);
    scratch = root_ + "/build-" + std::to_string(++scratch_);
  }
  std::error_code ec;
  fs::create_directories(scratch, ec);
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code e;
      fs::remove_all(dir, e);
    }
  } cleanup{scratch};

  FakeImage& img = result.image;
  bool from_seen = false;
  const auto total = instructions.size();
  for (std::size_t i = 0; i < total; ++i) {
    const std::string& ins = instructions[i];
    out.push_back("Step " + std::to_string(i + 1) + "/" + std::to_string(total) + " : " + ins);
    auto sp = ins.find_first_of(" \t");
    const std::string op = upper(ins.substr(0, sp));
    const std::string arg = sp == std::string::npos ? "" : trim_images(ins.substr(sp));
    if (op == "FROM") {
      auto ref = arg.substr(0, arg.find_first_of(" \t"));
      auto found = public_image(ref);
      if (!found && resolve) found = resolve(ref);
      if (!found) {
        auto c = canonical_image_ref(ref);
        if (c.rfind("docker.io/", 0) == 0)
          return fail("pull access denied for " + ref.substr(0, ref.find(':')) +
                      ", repository does not exist or may require 'docker login': denied: "
                      "requested access to the resource is denied");
        return fail("manifest for " + ref + " not found: manifest unknown: manifest unknown");
      }
      img = *found;
      from_seen = true;
      auto colon = ref.rfind(':');
      out.push_back((colon == std::string::npos ? "latest" : ref.substr(colon + 1)) +
                    ": Pulling from " + ref.substr(0, colon));
      out.push_back("Status: Downloaded newer image for " + ref);
      out.push_back(" ---> " + short_id());
      continue;
    }
    if (!from_seen)
      return fail("failed to process \"" + ins + "\": no build stage in current context");
    if (op == "ENV") {
      auto split = split_shell(arg, img);
      if (!split.refused.empty() || split.commands.size() != 1)
        return fail("ENV names must be KEY=VALUE pairs");
      auto& words = split.commands[0];
      if (words.empty()) return fail("ENV requires at least one argument");
      if (words[0].find('=') == std::string::npos) {  // the legacy form: ENV KEY VALUE...
        std::vector<std::string> rest(words.begin() + 1, words.end());
        set_env(img, words[0], join(rest));
      } else {
        for (const auto& w : words) {
          auto eq = w.find('=');
          if (eq == std::string::npos) return fail("ENV names can not be blank");
          if (w.substr(0, eq) != "PATH") set_env(img, w.substr(0, eq), w.substr(eq + 1));
        }
      }
    } else if (op == "WORKDIR") {
      img.workdir = resolve_path(arg, img.workdir);
    } else if (op == "COPY" || op == "ADD") {
      auto split = split_shell(arg, img);
      if (!split.refused.empty() || split.commands.size() != 1 || split.commands[0].size() < 2)
        return fail(op + " requires at least two arguments");
      auto words = split.commands[0];
      if (words[0].rfind("--", 0) == 0)
        return fail("kinetic fake Cloud Build: " + op + " " + words[0] +
                    " is not modelled (docs/fakes.md, \"Images\")");
      const std::string dest = words.back();
      words.pop_back();
      for (const auto& src : words) {
        auto f = files.find(fs::path(src).lexically_normal().string());
        if (f == files.end())
          return fail(
              "COPY failed: file not found in build context or excluded by "
              ".dockerignore: stat " +
              src + ": file does not exist");
        std::string to = resolve_path(dest, img.workdir);
        if (dest.back() == '/' || dest == "." || words.size() > 1)
          to = resolve_path(fs::path(src).filename().string(), to);
        img.files[to] = f->second;
      }
    } else if (op == "RUN") {
      out.push_back(" ---> Running in " + short_id());
      auto shell = split_shell(arg, img);
      std::string why = shell.refused;
      int code = 0;
      BuildContext b{img, unknown_packages, out};
      // Runs a program of the image as it stands, in the image's own environment; an argument
      // starting with IMAGE_ROOT names a file of the image.
      auto run_here = [&](std::vector<std::string> argv) {
        auto dir = materialize(img);
        for (auto& a : argv)
          if (a.rfind("IMAGE_ROOT", 0) == 0) a = dir + "/fs" + a.substr(10);
        std::vector<std::string> env;
        for (const auto& [k, v] : img.env) env.push_back(k + "=" + v);
        env.push_back("PATH=" + dir + "/bin");
        env.push_back("HOME=" + scratch);
        env.push_back("TMPDIR=" + scratch);
        auto ran = run_in(dir, argv, env, scratch);
        out.insert(out.end(), ran.lines.begin(), ran.lines.end());
        return ran.code;
      };
      for (const auto& cmd : shell.commands) {
        if (!why.empty() || code != 0) break;
        std::string prog =
            cmd[0].substr(cmd[0].rfind('/') == std::string::npos ? 0 : cmd[0].rfind('/') + 1);
        if (!img.has(prog)) {
          out.push_back("/bin/sh: 1: " + cmd[0] + ": not found");
          code = 127;
          break;
        }
        std::vector<std::string> args(cmd.begin() + 1, cmd.end());
        const bool python = prog == "python3" || prog == "python" || prog.rfind("python3.", 0) == 0;
        if (prog == "apt-get" || prog == "apt") {
          code = apt_get(b, cmd);
        } else if ((prog == "pip" || prog == "pip3") && !args.empty() && args[0] == "install") {
          code = pip_install(b, {args.begin() + 1, args.end()}, "/usr/local/bin/python3");
        } else if (python && args.size() >= 3 && args[0] == "-m" && args[1] == "pip" &&
                   args[2] == "install") {
          code = pip_install(b, {args.begin() + 3, args.end()}, "/usr/bin/" + prog);
        } else if (prog == "rm") {
          for (const auto& a : args)
            if (a.rfind("/var/lib/apt/lists", 0) == 0) img.apt_lists = false;
        } else if (prog == "ln" && args.size() >= 2 && args[0].rfind("-s", 0) == 0) {
          auto target = fs::path(args[args.size() - 2]).filename().string();
          auto link = fs::path(args.back()).filename().string();
          if (img.has(target)) add_program(img, link, img.programs[target]);
        } else if (prog == "true" || prog == "mkdir" || prog == "chmod") {
          // nothing the fake tracks
        } else if (prog == "echo") {
          out.push_back(join(args));
        } else if ((prog == "sh" || prog == "bash") && args.size() == 1 &&
                   img.files.count(resolve_path(args[0], img.workdir))) {
          code = run_here({prog, "IMAGE_ROOT" + resolve_path(args[0], img.workdir)});
        } else if (python && args.size() == 2 && args[0] == "-c") {
          code = run_here({prog, "-c", args[1]});
        } else {
          why = "`" + join(cmd) + "`";
        }
      }
      if (!why.empty())
        return fail("kinetic fake Cloud Build: cannot run " + why +
                    " in a RUN step: the fake interprets only what it models (docs/fakes.md, "
                    "\"Images\")");
      if (code != 0)
        return fail("The command '/bin/sh -c " + arg +
                    "' returned a non-zero code: " + std::to_string(code));
      out.push_back("Removing intermediate container " + short_id());
    } else if (op == "ARG" || op == "LABEL" || op == "USER" || op == "CMD" || op == "ENTRYPOINT" ||
               op == "EXPOSE" || op == "SHELL" || op == "STOPSIGNAL" || op == "VOLUME" ||
               op == "HEALTHCHECK" || op == "ONBUILD") {
      // no effect on what a pod can run here
    } else {
      return fail("unknown instruction: " + op);
    }
    out.push_back(" ---> " + short_id());
  }
  if (!from_seen) return fail("the Dockerfile has no FROM");
  out.push_back("Successfully built " + short_id());
  return result;
}

}  // namespace kinetic::fakes
