#include "job/image_recipe.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/error.h"
#include "core/strings.h"
#include "pack/requirements.h"
#include "pack/sha256.h"

namespace kinetic {

namespace {

// ---- the runtime catalog: what each family's image holds (docs/images.md) --------------------

// Bumping any of these changes every Dockerfile of the family, hence its tag: images rebuild.
constexpr const char* kJaxPin = "0.7.2";  // jax[tpu] when the job names no jax of its own
constexpr const char* kLibtpuIndex =
    "https://storage.googleapis.com/jax-releases/libtpu_releases.html";
constexpr const char* kTorchXlaIndex = "https://storage.googleapis.com/libtpu-releases/index.html";
// A C/C++ toolchain in every image: .cpp jobs, pip's source builds and runtime JITs need one.
constexpr const char* kToolchain = "g++ make";
// The runner unpacks tar.zst contexts with it: 5.6x faster than tar.gz to pack (issue #30),
// which python3's tarfile alone reads only from 3.14 (docs/images.md).
constexpr const char* kUnpacker = "zstd";

struct Base {
  std::string python;
  std::string image;
};

// The default first. TPU: jax 0.7 needs Python 3.11+. GPU: the CUDA images' own python3 (Ubuntu
// 24.04 has 3.12, 22.04 has 3.10), so the CUDA libraries and the interpreter come together.
const std::vector<Base>& bases(AcceleratorFamily family) {
  static const std::vector<Base> cpu = {{"3.11", "python:3.11-slim"},
                                        {"3.10", "python:3.10-slim"},
                                        {"3.12", "python:3.12-slim"},
                                        {"3.13", "python:3.13-slim"}};
  static const std::vector<Base> tpu = {
      {"3.11", "python:3.11-slim"}, {"3.12", "python:3.12-slim"}, {"3.13", "python:3.13-slim"}};
  static const std::vector<Base> gpu = {{"3.12", "nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04"},
                                        {"3.10", "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"}};
  switch (family) {
    case AcceleratorFamily::gpu:
      return gpu;
    case AcceleratorFamily::tpu:
      return tpu;
    case AcceleratorFamily::cpu:
      break;
  }
  return cpu;
}

// ---- PEP 440 specifiers, at the granularity of base images ------------------------------------

std::vector<int> version_parts(std::string_view v) {
  std::vector<int> out;
  for (const auto& part : split(v, '.')) {
    if (part == "*") break;
    int n = 0;
    bool digits = !part.empty();
    for (char c : part) {
      if (!std::isdigit(static_cast<unsigned char>(c))) {
        digits = false;
        break;
      }
      n = n * 10 + (c - '0');
    }
    if (!digits) break;
    out.push_back(n);
  }
  return out;
}

int compare(std::vector<int> a, std::vector<int> b) {
  size_t n = std::max(a.size(), b.size());
  a.resize(n, 0);
  b.resize(n, 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

bool clause_holds(const std::vector<int>& minor, std::string_view clause) {
  clause = trim(clause);
  size_t i = 0;
  while (i < clause.size() && std::string_view("<>=!~").find(clause[i]) != std::string_view::npos)
    ++i;
  std::string op(clause.substr(0, i));
  std::string_view text = trim(clause.substr(i));
  std::vector<int> want = version_parts(text);
  if (want.empty()) return true;  // not a version we understand: let pip decide
  // X.Y stands for its newest patch release, as the base image ships it.
  std::vector<int> have = minor;
  have.push_back(999);
  // == and != compare the release series only: the base image decides the patch release.
  auto same_series = [&] {
    for (size_t k = 0; k < want.size() && k < 2; ++k)
      if (minor[k] != want[k]) return false;
    return true;
  };
  if (op == "==" || op == "===") return same_series();
  if (op == "!=") return !(want.size() <= 2 && same_series());
  if (op == ">=") return compare(have, want) >= 0;
  if (op == ">") return compare(have, want) > 0;
  if (op == "<=") return compare(minor, want) <= 0;  // X.Y.0 is the lowest of the series
  if (op == "<") return compare(minor, want) < 0;
  if (op == "~=") {
    // ~=3.11 means >=3.11,<4; ~=3.11.2 means >=3.11.2,<3.12.
    if (compare(have, want) < 0) return false;
    std::vector<int> upper(want.begin(), want.end() - 1);
    if (upper.empty()) return true;
    ++upper.back();
    return compare(minor, upper) < 0;
  }
  return true;
}

// ---- requirement lines -------------------------------------------------------------------------

struct Line {
  std::string name;                 // canonical (PEP 503)
  std::vector<std::string> extras;  // canonical
  std::string rest;                 // specifiers and marker, as normalized
};

std::optional<Line> parse_line(const std::string& normalized) {
  if (normalized.empty() || !std::isalnum(static_cast<unsigned char>(normalized[0])))
    return std::nullopt;
  size_t i = 0;
  while (i < normalized.size() &&
         (std::isalnum(static_cast<unsigned char>(normalized[i])) || normalized[i] == '-'))
    ++i;
  if (i < normalized.size() && std::string_view(":/+").find(normalized[i]) != std::string::npos)
    return std::nullopt;  // a URL or a path
  Line l;
  l.name = normalized.substr(0, i);
  std::string rest = normalized.substr(i);
  if (!rest.empty() && rest[0] == '[') {
    size_t close = rest.find(']');
    if (close == std::string::npos) return std::nullopt;
    for (const auto& x : split(rest.substr(1, close - 1), ','))
      if (!trim(x).empty()) l.extras.emplace_back(trim(x));
    rest = rest.substr(close + 1);
  }
  l.rest = rest;
  return l;
}

std::string render(const Line& l) {
  std::string out = l.name;
  if (!l.extras.empty()) {
    out += '[';
    for (size_t k = 0; k < l.extras.size(); ++k) out += (k ? "," : "") + l.extras[k];
    out += ']';
  }
  return out + l.rest;
}

// The accelerator extras of jax and torch_xla, replaced by the family's own.
bool accelerator_extra(const std::string& extra) {
  return extra == "tpu" || starts_with(extra, "cuda") || extra == "rocm" || extra == "cpu";
}

void set_extra(Line& l, const std::string& extra) {
  std::vector<std::string> kept;
  for (const auto& x : l.extras)
    if (!accelerator_extra(x)) kept.push_back(x);
  kept.push_back(extra);
  std::sort(kept.begin(), kept.end());
  l.extras = kept;
}

// "==V" when REST pins one exact version (no marker), else empty.
std::string exact_pin(const std::string& rest) {
  if (!starts_with(rest, "==") || rest.find_first_of(",;* ") != std::string::npos) return {};
  return rest.substr(2);
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./:=@") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Rewrites the job's requirements so the family's runtime is there exactly once.
void reconcile_runtime(ImageRecipe& r) {
  if (r.family == AcceleratorFamily::cpu) return;  // jax's default wheels are the CPU build
  const std::string extra = r.family == AcceleratorFamily::tpu ? "tpu" : "cuda12";
  std::vector<std::string> out;
  bool has_jax = false, has_torch_xla = false;
  std::string jaxlib_pin;
  for (const auto& raw : r.requirements) {
    auto l = parse_line(raw);
    if (l && l->name == "jaxlib") jaxlib_pin = exact_pin(l->rest);
  }
  for (const auto& raw : r.requirements) {
    auto l = parse_line(raw);
    if (l && l->name == "jax") {
      has_jax = true;
      Line rewritten = *l;
      set_extra(rewritten, extra);
      if (render(rewritten) != raw)
        r.notes.push_back("requirement " + raw + " became " + render(rewritten) + " (the " +
                          std::string(family_name(r.family)) + " build of jax)");
      r.runtime = render(rewritten);
      out.push_back(render(rewritten));
      continue;
    }
    if (l && l->name == "torch-xla" && r.family == AcceleratorFamily::tpu) {
      has_torch_xla = true;
      Line rewritten = *l;
      set_extra(rewritten, "tpu");
      if (render(rewritten) != raw)
        r.notes.push_back("requirement " + raw + " became " + render(rewritten) +
                          " (torch_xla's TPU runtime)");
      if (r.runtime.empty()) r.runtime = render(rewritten);
      out.push_back(render(rewritten));
      continue;
    }
    out.push_back(raw);
  }
  if (has_jax) r.runtime_modules.push_back("jax");
  if (has_torch_xla) r.runtime_modules.push_back("torch_xla");
  if (!has_jax && !has_torch_xla && r.family == AcceleratorFamily::tpu) {
    // A TPU job gets jax's TPU runtime unless it brings torch_xla; a pinned jaxlib decides the
    // version, so the two agree.
    Line jax{"jax", {"tpu"}, "==" + (jaxlib_pin.empty() ? std::string(kJaxPin) : jaxlib_pin)};
    r.runtime = render(jax);
    r.notes.push_back("added " + r.runtime +
                      " (the TPU runtime; list torch_xla to use it instead)");
    out.push_back(r.runtime);
    r.runtime_modules.push_back("jax");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  r.requirements = out;
  if (r.family == AcceleratorFamily::tpu) {
    if (has_jax || !has_torch_xla) {
      r.pip_options.push_back("-f");
      r.pip_options.push_back(kLibtpuIndex);
    }
    if (has_torch_xla) {
      r.pip_options.push_back("-f");
      r.pip_options.push_back(kTorchXlaIndex);
    }
  }
}

std::string pick_python(const RecipeInput& in) {
  const auto& offered = bases(in.family);
  auto list = [&] {
    std::string s;
    for (const auto& b : offered) s += (s.empty() ? "" : ", ") + b.python;
    return s;
  };
  const std::string family(family_name(in.family));
  if (!in.python.empty()) {
    std::vector<int> want = version_parts(in.python);
    for (const auto& b : offered)
      if (want.size() >= 2 && compare({want[0], want[1]}, version_parts(b.python)) == 0)
        return b.python;
    throw Error(Errc::usage, "--python " + in.python + ": kinetic's " + family +
                                 " images have Python " + list() +
                                 "; pick one of those, or set the context's base-image to an "
                                 "image of your own");
  }
  if (!in.requires_python.empty()) {
    auto holds = [&](const std::string& v) { return python_satisfies(v, in.requires_python); };
    if (holds(offered.front().python)) return offered.front().python;
    std::optional<std::string> best;
    for (const auto& b : offered)
      if (holds(b.python) && (!best || compare(version_parts(b.python), version_parts(*best)) > 0))
        best = b.python;
    if (best) return *best;
    throw Error(Errc::usage,
                "requires-python \"" + in.requires_python + "\"" +
                    (in.requires_python_source.empty() ? "" : " in " + in.requires_python_source) +
                    ": kinetic's " + family + " images have Python " + list() +
                    "; widen requires-python, pass --python, or set the context's base-image");
  }
  return offered.front().python;
}

std::string smoke_script(const ImageRecipe& r) {
  std::string s =
      "# kinetic's smoke test (docs/images.md): the image must run what kinetic ships to it,\n"
      "# so a broken image fails here, in the build, not on a paid node.\n"
      "fail() { echo \"kinetic-smoke: ERROR: $*\"; exit 1; }\n"
      "command -v python3 >/dev/null 2>&1 || fail \"python3 is not on the image's PATH "
      "(kinetic's bootstrap runs with it)\"\n"
      "python3 -c 'import sys' || fail \"python3 does not run\"\n"
      "echo \"kinetic-smoke: $(python3 -c 'import sys; print(\"python \" + "
      "sys.version.split()[0])')\"\n";
  for (const auto& m : r.runtime_modules)
    s += "python3 -c 'import " + m +
         "' || fail \"the runtime does not import: python3 -c 'import " + m +
         "' failed (see above)\"\n";
  s += "command -v zstd >/dev/null 2>&1 || fail \"zstd is not on the image's PATH (kinetic's "
       "bootstrap unpacks the job's files with it)\"\n"
       "command -v g++ >/dev/null 2>&1 || fail \"g++ is not on the image's PATH\"\n"
       "dir=$(mktemp -d) || fail \"mktemp -d failed\"\n"
       "printf 'int main() { return 0; }\\n' >\"$dir/smoke.cpp\"\n"
       "g++ -o \"$dir/smoke\" \"$dir/smoke.cpp\" || fail \"g++ cannot compile a one-line "
       "program\"\n"
       "\"$dir/smoke\" || fail \"a program g++ built does not run\"\n"
       "rm -rf \"$dir\"\n"
       "echo \"kinetic-smoke: ok\"\n";
  return s;
}

std::string dockerfile(const ImageRecipe& r, bool kinetic_base) {
  const bool gpu_base = kinetic_base && r.family == AcceleratorFamily::gpu;
  std::string d = "# kinetic image recipe: " + std::string(family_name(r.family)) +
                  (r.python.empty() ? std::string(", custom base") : ", python " + r.python) +
                  " (docs/images.md)\n";
  d += "FROM " + r.base_image + "\n";
  d += "ENV";
  for (const auto& [k, v] : r.env) d += " " + k + "=" + shell_quote(v);
  d += "\n";
  // The CUDA images have no Python: theirs comes from Ubuntu, with `python` for old scripts.
  d += "RUN apt-get update && apt-get install -y --no-install-recommends " +
       std::string(gpu_base ? "python3 python3-pip " : "") + kToolchain + " " + kUnpacker +
       (gpu_base ? " && ln -sf /usr/bin/python3 /usr/local/bin/python" : "") +
       " && rm -rf /var/lib/apt/lists/*\n";
  if (!r.requirements.empty()) {
    d += "COPY requirements.txt /kinetic/requirements.txt\n";
    d += "RUN python3 -m pip install -r /kinetic/requirements.txt";
    for (const auto& o : r.pip_options) d += " " + shell_quote(o);
    d += "\n";
  }
  d += "COPY smoke.sh /kinetic/smoke.sh\n";
  d += "RUN sh /kinetic/smoke.sh\n";
  d += "WORKDIR /workspace\n";
  return d;
}

}  // namespace

const std::vector<std::string>& supported_pythons(AcceleratorFamily family) {
  static const auto make = [](AcceleratorFamily f) {
    std::vector<std::string> out;
    for (const auto& b : bases(f)) out.push_back(b.python);
    return out;
  };
  static const std::vector<std::string> cpu = make(AcceleratorFamily::cpu);
  static const std::vector<std::string> gpu = make(AcceleratorFamily::gpu);
  static const std::vector<std::string> tpu = make(AcceleratorFamily::tpu);
  return family == AcceleratorFamily::gpu ? gpu : family == AcceleratorFamily::tpu ? tpu : cpu;
}

bool python_satisfies(const std::string& version, const std::string& spec) {
  std::vector<int> minor = version_parts(version);
  minor.resize(2, 0);
  for (const auto& clause : split(spec, ','))
    if (!trim(clause).empty() && !clause_holds(minor, clause)) return false;
  return true;
}

ImageRecipe make_image_recipe(const RecipeInput& in) {
  ImageRecipe r;
  r.family = in.family;
  const bool kinetic_base = in.base_image.empty();
  if (kinetic_base) {
    r.python = pick_python(in);
    for (const auto& b : bases(in.family))
      if (b.python == r.python) r.base_image = b.image;
  } else {
    if (!in.python.empty())
      throw Error(Errc::usage, "--python " + in.python +
                                   " picks one of kinetic's base images, "
                                   "but the context sets base-image " +
                                   in.base_image +
                                   ", whose python3 is used; drop --python or unset base-image");
    r.base_image = in.base_image;
  }
  r.requirements = in.requirements;
  reconcile_runtime(r);

  r.env = {
      {"PYTHONUNBUFFERED", "1"}, {"PIP_NO_CACHE_DIR", "1"}, {"PIP_DISABLE_PIP_VERSION_CHECK", "1"}};
  if (kinetic_base && r.family == AcceleratorFamily::gpu) {
    // Ubuntu 24.04's python3 is "externally managed" (PEP 668): the image is the environment.
    r.env.push_back({"DEBIAN_FRONTEND", "noninteractive"});
    r.env.push_back({"PIP_BREAK_SYSTEM_PACKAGES", "1"});
  }
  // The platform each runtime must use, so a job that cannot reach its accelerator fails
  // instead of running on the host CPU.
  switch (r.family) {
    case AcceleratorFamily::tpu:
      r.env.push_back({"JAX_PLATFORMS", "tpu"});
      r.env.push_back({"PJRT_DEVICE", "TPU"});
      break;
    case AcceleratorFamily::gpu:
      r.env.push_back({"JAX_PLATFORMS", "cuda"});
      r.env.push_back({"PJRT_DEVICE", "CUDA"});
      break;
    case AcceleratorFamily::cpu:
      r.env.push_back({"JAX_PLATFORMS", "cpu"});
      r.env.push_back({"PJRT_DEVICE", "CPU"});
      break;
  }

  r.dockerfile = dockerfile(r, kinetic_base);
  r.smoke_script = smoke_script(r);
  Sha256 h;
  for (const auto& [name, text] : r.build_files()) {
    h.update(name);
    h.update(std::string_view("\0", 1));
    h.update(text);
    h.update(std::string_view("\0", 1));
  }
  r.tag = std::string(family_name(r.family)) + "-" + h.hex_digest().substr(0, 12);
  return r;
}

std::vector<std::pair<std::string, std::string>> ImageRecipe::build_files() const {
  std::vector<std::pair<std::string, std::string>> files = {{"Dockerfile", dockerfile}};
  if (!requirements.empty()) {
    std::string text;
    for (const auto& l : requirements) text += l + "\n";
    files.push_back({"requirements.txt", text});
  }
  files.push_back({"smoke.sh", smoke_script});
  return files;
}

std::string ImageRecipe::summary() const {
  std::string s = std::string(family_name(family)) + " image (" +
                  (python.empty() ? base_image : "python " + python);
  if (!runtime.empty()) s += ", " + runtime;
  return s + ", g++)";
}

std::string image_reference(const std::string& location, const std::string& project,
                            const std::string& tag) {
  return location + "-docker.pkg.dev/" + project + "/kinetic/base:" + tag;
}

}  // namespace kinetic
