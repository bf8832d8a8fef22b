// The accelerator catalog. The tables below are the single source of truth: canonical names,
// machine types, GKE labels, per-host resources and prices are all derived from them.
//
// Prices are approximate on-demand list prices in USD per hour for us-central1, for the whole
// slice (every host), as of catalog_price_date(). They are for the `kinetic accelerators` and
// `kinetic status` cost columns, not for billing: discounts, Spot, other regions, disks and network
// are not included. TPU prices are per chip-hour times chips (the TPU VM host is included in the
// chip price); GPU prices are the whole VM (GPUs + vCPUs + memory).
#include "job/catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "core/strings.h"

namespace kinetic {
namespace {

constexpr std::string_view kPriceDate = "2025-06-01";
constexpr std::string_view kListHint = "(run `kinetic accelerators` for the list)";

constexpr std::string_view kTpuResource = "google.com/tpu";
constexpr std::string_view kGpuResource = "nvidia.com/gpu";
constexpr std::string_view kTpuAcceleratorLabel = "cloud.google.com/gke-tpu-accelerator";
constexpr std::string_view kTpuTopologyLabel = "cloud.google.com/gke-tpu-topology";
constexpr std::string_view kGpuAcceleratorLabel = "cloud.google.com/gke-accelerator";

// ---- CPU ----------------------------------------------------------------------------------------

constexpr std::string_view kCpuMachineType = "e2-standard-4";
constexpr double kCpuPrice = 0.134;  // e2-standard-4

// ---- GPUs ---------------------------------------------------------------------------------------

struct GpuShape {
  int count;                      // GPUs per node (every GPU job is single-host)
  std::string_view machine_type;  // the node's machine type
  double price;                   // whole VM, USD/hour
  Capacity capacity = Capacity::on_demand;
};

struct GpuType {
  std::string_view kind;                  // "l4"
  std::string_view gke_label;             // "nvidia-l4": cloud.google.com/gke-accelerator
  std::vector<std::string_view> aliases;  // other accepted spellings besides kind and gke_label
  std::vector<GpuShape> shapes;           // ascending count
};

// Display order. N1 hosts (T4, V100) are priced as GPUs + the n1-standard machine; A2/A3/A4/G2
// machine types have their GPUs built in. a3-highgpu-1g/2g/4g are sold only as Spot or
// flex-start VMs, and a3-ultragpu-8g and a4-highgpu-8g not on demand but through reservations,
// flex-start or Spot (the sources are in docs/gke-conformance.md "Capacity"); the 1g/2g/4g
// prices are a pro-rata share of a3-highgpu-8g. a2-ultragpu has no 16-GPU shape (only
// a2-megagpu-16g, which is the 40 GB A100), so a100-80gb stops at 8. H200 and B200 machines come
// only with 8 GPUs; the a3-ultragpu-8g price is a third-party reading of Google's list (about
// $63,300 a month in us-central1), not Google's page itself. Google does not list an on-demand
// price for a4-highgpu-8g publicly (it is sold through reservations and calendar-mode); its price
// is an estimate.
const std::vector<GpuType>& gpu_types() {
  static const std::vector<GpuType> types = {
      {"l4",
       "nvidia-l4",
       {},
       {{1, "g2-standard-4", 0.7068},
        {2, "g2-standard-24", 2.0007},
        {4, "g2-standard-48", 4.0014},
        {8, "g2-standard-96", 8.0028}}},
      {"t4",
       "nvidia-tesla-t4",
       {},
       {{1, "n1-standard-4", 0.35 + 0.19},
        {2, "n1-standard-8", 0.70 + 0.38},
        {4, "n1-standard-16", 1.40 + 0.76}}},
      {"v100",
       "nvidia-tesla-v100",
       {},
       {{1, "n1-standard-8", 2.48 + 0.38},
        {2, "n1-standard-16", 4.96 + 0.76},
        {4, "n1-standard-32", 9.92 + 1.52},
        {8, "n1-standard-64", 19.84 + 3.04}}},
      {"a100",
       "nvidia-tesla-a100",
       {"a100-40gb"},
       {{1, "a2-highgpu-1g", 3.6734},
        {2, "a2-highgpu-2g", 7.3468},
        {4, "a2-highgpu-4g", 14.6935},
        {8, "a2-highgpu-8g", 29.3871},
        {16, "a2-megagpu-16g", 55.7395}}},
      {"a100-80gb",
       "nvidia-a100-80gb",
       {},
       {{1, "a2-ultragpu-1g", 5.0688},
        {2, "a2-ultragpu-2g", 10.1376},
        {4, "a2-ultragpu-4g", 20.2752},
        {8, "a2-ultragpu-8g", 40.5504}}},
      {"h100",
       "nvidia-h100-80gb",
       {"h100-80gb"},
       {{1, "a3-highgpu-1g", 11.0613, Capacity::spot_or_flex_start},
        {2, "a3-highgpu-2g", 22.1227, Capacity::spot_or_flex_start},
        {4, "a3-highgpu-4g", 44.2453, Capacity::spot_or_flex_start},
        {8, "a3-highgpu-8g", 88.4906}}},
      {"h200",
       "nvidia-h200-141gb",
       {"h200-141gb"},
       {{8, "a3-ultragpu-8g", 86.76, Capacity::reservation}}},
      {"b200", "nvidia-b200", {}, {{8, "a4-highgpu-8g", 110.00, Capacity::reservation}}},
  };
  return types;
}

// `gpu:N` picks the first of these that comes with N GPUs per node (as Kinetic does).
constexpr std::string_view kPreferredGpus[] = {"h100", "a100-80gb", "a100", "l4", "v100", "t4"};

// ---- TPUs ---------------------------------------------------------------------------------------

// How a family's slices are named. v5litepod and v6e slices are named by chips ("v5litepod-16" is
// 16 chips). v3, v4 and v5p slices are named by TensorCores, two per chip ("v5p-32" is 16 chips).
// This is deliberately Cloud TPU's naming, not Kinetic's (which counted chips for every family and
// so made `v5p-8` twice the size of the Cloud TPU v5p-8): users type what the Cloud TPU docs,
// `gcloud compute tpus accelerator-types list` and xpk print, and the same name must mean the same
// slice here as it does in GKE's docs and xpk. Topology forms ("v5p-2x2x4") are unambiguous in
// every family.
enum class TpuNaming { chips, tensorcores };

struct TpuShape {
  std::string_view topology;      // chips = product of the dimensions
  std::string_view machine_type;  // one host; the "Nt" suffix is its chips per host
  int chips_per_host;
  std::string_view gke_accelerator = {};  // overrides the family's label when set
};

struct TpuFamily {
  std::string_view kind;                  // "v5litepod"
  std::vector<std::string_view> aliases;  // "v5e"
  std::string_view gke_accelerator;       // cloud.google.com/gke-tpu-accelerator
  TpuNaming naming;
  int default_chips;             // what the bare family name means
  double price_per_chip_hour;    // on-demand, USD
  std::vector<TpuShape> shapes;  // ascending chips
};

// Display order (also the order topology forms are matched in).
const std::vector<TpuFamily>& tpu_families() {
  static const std::vector<TpuFamily> families = {
      {"v5litepod",
       {"v5e"},
       "tpu-v5-lite-podslice",
       TpuNaming::chips,
       4,
       1.20,
       {{"1x1", "ct5lp-hightpu-1t", 1},
        {"2x2", "ct5lp-hightpu-4t", 4},
        {"2x4", "ct5lp-hightpu-8t", 8},
        {"4x4", "ct5lp-hightpu-4t", 4},
        {"4x8", "ct5lp-hightpu-4t", 4},
        {"8x8", "ct5lp-hightpu-4t", 4},
        {"8x16", "ct5lp-hightpu-4t", 4},
        {"16x16", "ct5lp-hightpu-4t", 4}}},
      {"v6e",
       {},
       "tpu-v6e-slice",
       TpuNaming::chips,
       4,
       2.70,
       {{"1x1", "ct6e-standard-1t", 1},
        {"2x2", "ct6e-standard-4t", 4},
        {"2x4", "ct6e-standard-8t", 8},
        {"4x4", "ct6e-standard-4t", 4},
        {"4x8", "ct6e-standard-4t", 4},
        {"8x8", "ct6e-standard-4t", 4},
        {"8x16", "ct6e-standard-4t", 4},
        {"16x16", "ct6e-standard-4t", 4}}},
      {"v5p",
       {},
       "tpu-v5p-slice",
       TpuNaming::tensorcores,
       4,
       4.20,
       {{"2x2x1", "ct5p-hightpu-4t", 4},
        {"2x2x2", "ct5p-hightpu-4t", 4},
        {"2x2x4", "ct5p-hightpu-4t", 4},
        {"2x4x4", "ct5p-hightpu-4t", 4},
        {"4x4x4", "ct5p-hightpu-4t", 4},
        {"4x4x8", "ct5p-hightpu-4t", 4},
        {"4x8x8", "ct5p-hightpu-4t", 4},
        {"8x8x8", "ct5p-hightpu-4t", 4}}},
      {"v4",
       {},
       "tpu-v4-podslice",
       TpuNaming::tensorcores,
       4,
       3.22,
       {{"2x2x1", "ct4p-hightpu-4t", 4},
        {"2x2x2", "ct4p-hightpu-4t", 4},
        {"2x2x4", "ct4p-hightpu-4t", 4},
        {"2x4x4", "ct4p-hightpu-4t", 4},
        {"4x4x4", "ct4p-hightpu-4t", 4},
        {"4x4x8", "ct4p-hightpu-4t", 4},
        {"4x8x8", "ct4p-hightpu-4t", 4},
        {"8x8x8", "ct4p-hightpu-4t", 4},
        {"8x8x16", "ct4p-hightpu-4t", 4},
        {"8x16x16", "ct4p-hightpu-4t", 4}}},
      // GKE labels the single-host v3 machine (ct3-hightpu-4t) tpu-v3-device and the pod-slice
      // machines (ct3p-hightpu-4t) tpu-v3-slice.
      {"v3",
       {},
       "tpu-v3-slice",
       TpuNaming::tensorcores,
       4,
       2.00,
       {{"2x2", "ct3-hightpu-4t", 4, "tpu-v3-device"},
        {"4x4", "ct3p-hightpu-4t", 4},
        {"4x8", "ct3p-hightpu-4t", 4},
        {"8x8", "ct3p-hightpu-4t", 4},
        {"8x16", "ct3p-hightpu-4t", 4},
        {"16x16", "ct3p-hightpu-4t", 4},
        {"16x32", "ct3p-hightpu-4t", 4},
        {"32x32", "ct3p-hightpu-4t", 4}}},
  };
  return families;
}

// `tpu:N` (N chips) picks the first of these that has an N-chip slice (as Kinetic does).
constexpr std::string_view kPreferredTpus[] = {"v6e", "v5p", "v5litepod", "v4", "v3"};

// ---- helpers ------------------------------------------------------------------------------------

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit((unsigned char)c); });
}

// A count typed by the user. Absurdly large values are clamped (they are invalid anyway).
long parse_count(std::string_view digits) {
  long n = 0;
  for (char c : digits) {
    n = n * 10 + (c - '0');
    if (n > 1'000'000'000L) return 1'000'000'000L;
  }
  return n;
}

bool is_topology(std::string_view s) {
  auto dims = split(s, 'x');
  if (dims.size() != 2 && dims.size() != 3) return false;
  return std::all_of(dims.begin(), dims.end(),
                     [](const std::string& d) { return all_digits(d) && d.size() <= 3; });
}

int topology_chips(std::string_view topology) {
  int chips = 1;
  for (const auto& d : split(topology, 'x')) chips *= static_cast<int>(parse_count(d));
  return chips;
}

int tpu_name_number(const TpuFamily& f, int chips) {
  return f.naming == TpuNaming::tensorcores ? chips * 2 : chips;
}

std::string gpu_name(const GpuType& g, int count) {
  return count == 1 ? std::string(g.kind) : std::string(g.kind) + "x" + std::to_string(count);
}

std::string tpu_name(const TpuFamily& f, int chips) {
  return std::string(f.kind) + "-" + std::to_string(tpu_name_number(f, chips));
}

Accelerator make_cpu() {
  Accelerator a;
  a.name = "cpu";
  a.family = AcceleratorFamily::cpu;
  a.kind = "cpu";
  a.chips = 0;
  a.hosts = 1;
  a.chips_per_host = 0;
  a.machine_type = kCpuMachineType;
  a.price_per_hour = kCpuPrice;
  return a;
}

Accelerator make_gpu(const GpuType& g, const GpuShape& s) {
  Accelerator a;
  a.name = gpu_name(g, s.count);
  a.family = AcceleratorFamily::gpu;
  a.kind = g.kind;
  a.chips = s.count;
  a.hosts = 1;
  a.chips_per_host = s.count;
  a.machine_type = s.machine_type;
  a.gke_accelerator = g.gke_label;
  a.resource_name = kGpuResource;
  a.node_selector = {{std::string(kGpuAcceleratorLabel), std::string(g.gke_label)}};
  a.price_per_hour = s.price;
  a.capacity = s.capacity;
  return a;
}

Accelerator make_tpu(const TpuFamily& f, const TpuShape& s) {
  Accelerator a;
  int chips = topology_chips(s.topology);
  a.name = tpu_name(f, chips);
  a.family = AcceleratorFamily::tpu;
  a.kind = f.kind;
  a.chips = chips;
  a.chips_per_host = s.chips_per_host;
  a.hosts = chips / s.chips_per_host;
  a.topology = s.topology;
  a.machine_type = s.machine_type;
  a.gke_accelerator = s.gke_accelerator.empty() ? f.gke_accelerator : s.gke_accelerator;
  a.resource_name = kTpuResource;
  a.node_selector = {{std::string(kTpuAcceleratorLabel), a.gke_accelerator},
                     {std::string(kTpuTopologyLabel), a.topology}};
  a.price_per_hour = f.price_per_chip_hour * chips;
  return a;
}

struct Catalog {
  std::vector<Accelerator> entries;                 // display order
  std::unordered_map<std::string, size_t> by_name;  // canonical name → entry
  std::vector<std::string> suggestion_words;        // canonical names and accepted aliases
};

const Catalog& catalog() {
  static const Catalog cat = [] {
    Catalog c;
    c.entries.push_back(make_cpu());
    for (const auto& g : gpu_types())
      for (const auto& s : g.shapes) c.entries.push_back(make_gpu(g, s));
    for (const auto& f : tpu_families())
      for (const auto& s : f.shapes) c.entries.push_back(make_tpu(f, s));
    for (size_t i = 0; i < c.entries.size(); ++i) {
      c.by_name.emplace(c.entries[i].name, i);
      c.suggestion_words.push_back(c.entries[i].name);
    }
    for (std::string_view w : {"gpu", "tpu"}) c.suggestion_words.emplace_back(w);
    for (const auto& g : gpu_types()) {
      c.suggestion_words.emplace_back(g.gke_label);
      for (auto a : g.aliases) c.suggestion_words.emplace_back(a);
    }
    for (const auto& f : tpu_families()) {
      c.suggestion_words.emplace_back(f.kind);
      for (auto alias : f.aliases) {
        c.suggestion_words.emplace_back(alias);
        for (const auto& s : f.shapes)
          c.suggestion_words.push_back(
              std::string(alias) + "-" +
              std::to_string(tpu_name_number(f, topology_chips(s.topology))));
      }
    }
    return c;
  }();
  return cat;
}

const Accelerator& entry(const std::string& canonical) {
  return catalog().entries.at(catalog().by_name.at(canonical));
}

// Accelerators that exist but that kinetic deliberately does not offer: say so rather than
// suggesting a look-alike ("v2-8" is not a typo of "v3-8").
void reject_unsupported(std::string_view original, std::string_view word) {
  static constexpr std::string_view kTpus[] = {"v2", "v7", "v7x", "tpu7x", "ironwood"};
  static constexpr std::string_view kGpus[] = {"p4",
                                               "p100",
                                               "k80",
                                               "nvidia-tesla-p4",
                                               "nvidia-tesla-p100",
                                               "nvidia-tesla-k80",
                                               "gb200",
                                               "nvidia-gb200",
                                               "rtx-pro-6000",
                                               "nvidia-rtx-pro-6000"};
  std::string_view tpu_head = word.substr(0, word.find('-'));
  std::string_view gpu_head = word;
  size_t x = word.rfind('x');
  if (x != std::string_view::npos && x > 0 && all_digits(word.substr(x + 1)))
    gpu_head = word.substr(0, x);
  std::string supported;
  if (std::find(std::begin(kTpus), std::end(kTpus), tpu_head) != std::end(kTpus)) {
    for (const auto& f : tpu_families())
      supported += (supported.empty() ? "" : ", ") + std::string(f.kind);
    throw Error(Errc::usage, "accelerator '" + std::string(original) +
                                 "' is not supported; kinetic's TPUs are " + supported + " " +
                                 std::string(kListHint));
  }
  if (std::find(std::begin(kGpus), std::end(kGpus), gpu_head) != std::end(kGpus)) {
    for (const auto& g : gpu_types())
      supported += (supported.empty() ? "" : ", ") + std::string(g.kind);
    throw Error(Errc::usage, "accelerator '" + std::string(original) +
                                 "' is not supported; kinetic's GPUs are " + supported + " " +
                                 std::string(kListHint));
  }
}

[[noreturn]] void throw_unknown(std::string_view original, std::string_view word) {
  reject_unsupported(original, word);
  const auto& words = catalog().suggestion_words;
  auto close = closest_matches(word, words, words.size());
  // Keep only the closest few: "h10" should suggest h100, not every h100xN that it prefixes.
  size_t best = SIZE_MAX;
  for (const auto& c : close) best = std::min(best, edit_distance(word, c));
  std::vector<std::string> picks;
  for (const auto& c : close)
    if (edit_distance(word, c) == best && picks.size() < 3) picks.push_back(c);
  std::string msg = "unknown accelerator '" + std::string(original) + "'";
  if (!picks.empty()) msg += "; did you mean " + join_or(picks) + "?";
  msg += " ";
  msg += kListHint;
  throw Error(Errc::usage, msg);
}

// The valid values just below and just above N, for "did you mean" after a bad count.
template <typename T, typename Name>
std::vector<std::string> neighbours(const std::vector<T>& valid, long n, Name name) {
  std::vector<std::string> out;
  const T* below = nullptr;
  const T* above = nullptr;
  for (const auto& v : valid) {
    if (v < n) below = &v;
    if (v > n && !above) above = &v;
  }
  if (below) out.push_back(name(*below));
  if (above) out.push_back(name(*above));
  return out;
}

[[noreturn]] void throw_bad_gpu_count(const GpuType& g, long count) {
  std::vector<int> counts;
  std::vector<std::string> shown;
  for (const auto& s : g.shapes) {
    counts.push_back(s.count);
    shown.push_back(std::to_string(s.count));
  }
  auto near = neighbours(counts, count, [&](int c) { return gpu_name(g, c); });
  std::string msg = std::string(g.kind) + " comes in " + join_or(shown) +
                    (counts.size() == 1 && counts[0] == 1 ? " GPU" : " GPUs") + " per node";
  if (!near.empty()) msg += "; did you mean " + join_or(near) + "?";
  throw Error(Errc::usage, msg);
}

[[noreturn]] void throw_bad_tpu_count(const TpuFamily& f, long number) {
  std::vector<int> numbers;
  std::vector<std::string> shown;
  for (const auto& s : f.shapes) {
    int n = tpu_name_number(f, topology_chips(s.topology));
    numbers.push_back(n);
    shown.push_back(f.naming == TpuNaming::chips ? std::to_string(n)
                                                 : std::string(f.kind) + "-" + std::to_string(n));
  }
  auto near = neighbours(numbers, number,
                         [&](int n) { return std::string(f.kind) + "-" + std::to_string(n); });
  std::string msg;
  if (f.naming == TpuNaming::chips)
    msg = std::string(f.kind) + " comes in " + join_or(shown) + " chips";
  else
    msg = std::string(f.kind) + " slices are named by TensorCores (2 per chip): " + join_or(shown);
  if (!near.empty()) msg += "; did you mean " + join_or(near) + "?";
  throw Error(Errc::usage, msg);
}

[[noreturn]] void throw_bad_topology(const TpuFamily& f, std::string_view topology) {
  std::vector<std::string> shown;
  for (const auto& s : f.shapes) shown.emplace_back(s.topology);
  std::string msg = std::string(f.kind) + " has no " + std::string(topology) +
                    " topology; it comes in " + join_or(shown);
  // Same chips, different order of the dimensions ("4x2" for "2x4"): point at the right one.
  int chips = topology_chips(topology);
  for (const auto& s : f.shapes) {
    if (topology_chips(s.topology) == chips) {
      msg += "; did you mean " + std::string(f.kind) + "-" + std::string(s.topology) + "?";
      break;
    }
  }
  throw Error(Errc::usage, msg);
}

const GpuType* find_gpu_type(std::string_view word) {
  for (const auto& g : gpu_types()) {
    if (word == g.kind || word == g.gke_label) return &g;
    for (auto a : g.aliases)
      if (word == a) return &g;
  }
  return nullptr;
}

const TpuFamily* find_tpu_family(std::string_view word) {
  for (const auto& f : tpu_families()) {
    if (word == f.kind) return &f;
    for (auto a : f.aliases)
      if (word == a) return &f;
  }
  return nullptr;
}

// "l4", "nvidia-l4", "a100x8", "nvidia-tesla-a100x8". nullopt when WORD names no GPU type; throws
// when it names one with a count it does not come in.
std::optional<Accelerator> resolve_gpu(std::string_view word) {
  if (const GpuType* g = find_gpu_type(word)) {
    // The bare type is one GPU, or the smallest node it comes in (h200 and b200 come only in 8s).
    return entry(gpu_name(*g, g->shapes.front().count));
  }
  size_t x = word.rfind('x');
  if (x == std::string_view::npos || x == 0 || !all_digits(word.substr(x + 1))) return std::nullopt;
  const GpuType* g = find_gpu_type(word.substr(0, x));
  if (!g) return std::nullopt;
  long count = parse_count(word.substr(x + 1));
  for (const auto& s : g->shapes)
    if (s.count == count) return entry(gpu_name(*g, s.count));
  throw_bad_gpu_count(*g, count);
}

// "v5litepod", "v5e-4", "v5p-32", "v4-2x2x2". nullopt when WORD names no TPU family; throws when it
// names one with a size or topology it does not come in.
std::optional<Accelerator> resolve_tpu(std::string_view word) {
  if (const TpuFamily* f = find_tpu_family(word)) return entry(tpu_name(*f, f->default_chips));
  size_t dash = word.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const TpuFamily* f = find_tpu_family(word.substr(0, dash));
  if (!f) return std::nullopt;
  std::string_view rest = word.substr(dash + 1);
  if (all_digits(rest)) {
    long number = parse_count(rest);
    for (const auto& s : f->shapes) {
      int chips = topology_chips(s.topology);
      if (tpu_name_number(*f, chips) == number) return entry(tpu_name(*f, chips));
    }
    throw_bad_tpu_count(*f, number);
  }
  if (is_topology(rest)) {
    for (const auto& s : f->shapes)
      if (s.topology == rest) return entry(tpu_name(*f, topology_chips(s.topology)));
    throw_bad_topology(*f, rest);
  }
  return std::nullopt;
}

Accelerator preferred_gpu(long count) {
  for (auto kind : kPreferredGpus) {
    const GpuType* g = find_gpu_type(kind);
    for (const auto& s : g->shapes)
      if (s.count == count) return entry(gpu_name(*g, s.count));
  }
  std::vector<int> counts;
  for (auto kind : kPreferredGpus)
    for (const auto& s : find_gpu_type(kind)->shapes) counts.push_back(s.count);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  std::vector<std::string> shown;
  for (int c : counts) shown.push_back(std::to_string(c));
  throw Error(Errc::usage, "no GPU type comes with " + std::to_string(count) +
                               " GPUs per node; gpu:N takes " + join_or(shown) +
                               " (or name the type, e.g. l4x2)");
}

Accelerator preferred_tpu(long chips) {
  for (auto kind : kPreferredTpus) {
    const TpuFamily* f = find_tpu_family(kind);
    for (const auto& s : f->shapes)
      if (topology_chips(s.topology) == chips) return entry(tpu_name(*f, chips));
  }
  std::vector<int> counts;
  for (auto kind : kPreferredTpus)
    for (const auto& s : find_tpu_family(kind)->shapes)
      counts.push_back(topology_chips(s.topology));
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  std::vector<std::string> shown;
  for (int c : counts) shown.push_back(std::to_string(c));
  throw Error(Errc::usage, "no TPU slice has " + std::to_string(chips) +
                               " chips; tpu:N takes a chip count: " + join_or(shown) +
                               " (or name the slice, e.g. v5litepod-4)");
}

Accelerator resolve_name(const std::string& s, std::string_view original) {
  if (s == "cpu") return entry("cpu");
  if (starts_with(s, "cpu:")) {
    std::string_view n = std::string_view(s).substr(4);
    if (all_digits(n) && parse_count(n) > 0) return entry("cpu");
    throw Error(Errc::usage, "bad accelerator '" + std::string(original) +
                                 "': cpu:N takes a positive number of vCPUs");
  }
  if (s == "gpu") return entry("l4");
  if (s == "tpu") return entry("v5litepod-4");

  if (starts_with(s, "gpu:")) {
    std::string_view rest = std::string_view(s).substr(4);
    if (all_digits(rest)) return preferred_gpu(parse_count(rest));
    if (auto a = resolve_gpu(rest)) return *a;
    if (auto a = resolve_tpu(rest))
      throw Error(Errc::usage, "'" + std::string(original) + "': " + a->name +
                                   " is a TPU, not a GPU; use --accelerator " + a->name);
    throw_unknown(original, rest);
  }
  if (starts_with(s, "tpu:")) {
    std::string_view rest = std::string_view(s).substr(4);
    if (all_digits(rest)) return preferred_tpu(parse_count(rest));
    if (auto a = resolve_tpu(rest)) return *a;
    if (auto a = resolve_gpu(rest))
      throw Error(Errc::usage, "'" + std::string(original) + "': " + a->name +
                                   " is a GPU, not a TPU; use --accelerator " + a->name);
    throw_unknown(original, rest);
  }
  if (auto a = resolve_gpu(s)) return *a;
  if (auto a = resolve_tpu(s)) return *a;
  throw_unknown(original, s);
}

}  // namespace

void require_flex_start(const Accelerator& a) {
  if (offers_flex_start(a)) return;
  throw Error(Errc::usage, "flex-start gets GPUs and TPUs from v5e on, and " + a.name + " is " +
                               (a.family == AcceleratorFamily::cpu ? std::string("the CPU")
                                                                   : "a " + a.kind + " TPU") +
                               "; drop --flex-start, or pick a GPU or a v5e, v5p or v6e TPU "
                               "(`kinetic accelerators` says which offer it)");
}

std::string_view family_name(AcceleratorFamily f) {
  switch (f) {
    case AcceleratorFamily::cpu:
      return "cpu";
    case AcceleratorFamily::gpu:
      return "gpu";
    case AcceleratorFamily::tpu:
      return "tpu";
  }
  return "cpu";
}

std::string_view capacity_name(Capacity c) {
  switch (c) {
    case Capacity::on_demand:
      return "on-demand";
    case Capacity::spot_or_flex_start:
      return "spot-or-flex-start";
    case Capacity::reservation:
      return "reservation";
  }
  return "on-demand";
}

std::string qualified_name(const Accelerator& a) {
  return a.name + (a.spot ? ":spot" : a.flex_start ? ":flex-start" : "");
}

bool offers_flex_start(const Accelerator& a) {
  if (a.family == AcceleratorFamily::gpu) return true;
  return a.family == AcceleratorFamily::tpu && a.kind != "v3" && a.kind != "v4";
}

Accelerator resolve_accelerator(std::string_view spec) {
  std::string original(trim(spec));
  std::string s = to_lower(original);
  bool spot = false, flex_start = false;
  if (ends_with(s, ":spot")) {
    spot = true;
    s.resize(s.size() - 5);
  } else if (ends_with(s, ":flex-start")) {
    flex_start = true;
    s.resize(s.size() - 11);
  }
  if (s.empty())
    throw Error(Errc::usage,
                "empty accelerator name; try cpu, l4 or v5litepod-4 " + std::string(kListHint));
  // "gpu-a100x4" and "tpu-v5e-1" are the prefixed spellings of "gpu:a100x4" and "tpu:v5e-1".
  if (starts_with(s, "gpu-") || starts_with(s, "tpu-")) s[3] = ':';
  Accelerator a = resolve_name(s, original);
  a.spot = spot;
  a.flex_start = flex_start;
  if (flex_start) require_flex_start(a);
  return a;
}

const std::vector<Accelerator>& accelerator_catalog() {
  return catalog().entries;
}

std::string_view catalog_price_date() {
  return kPriceDate;
}

}  // namespace kinetic
