// The catalog's TPU slices checked, entry by entry, against the shapes Google publishes, written
// here independently of lib/job/catalog.cpp: a topology GKE does not offer (say v5p-256 as 4x8x4
// instead of 4x4x8: same chips, but no node pool of that shape exists) leaves the job's pods
// Pending for ever, and a wrong machine type or host count asks for a pool that never comes.
//
// Sources (read 2026-11-27):
//  - xpk src/xpk/core/system_characteristics.py at commit 367c838253be (github.com/
//    AI-Hypercomputer/xpk): the multi-host shapes of v5litepod, v6e, v5p and v4, each family's
//    gke_accelerator and machine type, chips per VM (1 for a 1-chip slice, else 4) and the
//    device-type name (prefix-(chips x TensorCores per chip)); v5p's topologies are
//    generate_tpu_topologies(max_cubes=140) (A<=B<=C), v4's generate_tpu_topologies(max_cubes=64,
//    enforce_nondecreasing=False); both add 2x2x1, 2x2x2, 2x2x4, 2x4x4.
//  - Cloud TPU "Supported TPU configurations" (cloud.google.com/tpu/docs/supported-tpu-
//    configurations) and GKE "Plan TPUs in GKE" (cloud.google.com/kubernetes-engine/docs/concepts/
//    plan-tpus): the single-host v5e shapes 1x1 ct5lp-hightpu-1t, 2x2 ct5lp-hightpu-4t, 2x4
//    ct5lp-hightpu-8t (and v6e's ct6e-standard-1t/4t/8t likewise), which xpk does not list; the
//    v5p table (2x2x1 ... 4x4x8 = v5p-256 ... 16x16x24).
//  - Cloud TPU "TPU v3" (cloud.google.com/tpu/docs/v3): v3-8 (2x2, one ct3-hightpu-4t, GKE label
//    tpu-v3-device) up to v3-2048 (32x32) as pod slices of ct3p-hightpu-4t (tpu-v3-slice).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "job/catalog.h"

namespace kinetic {
namespace {

struct PublishedShape {
  std::string topology;
  std::string machine_type;
  int chips_per_host;
  std::string gke_accelerator;
};

struct PublishedFamily {
  std::string kind;
  int tensorcores_per_chip;  // 1: named by chips; 2: named by TensorCores (Cloud TPU's naming)
  std::vector<PublishedShape> shapes;
};

// xpk's generate_tpu_topologies(): AxBxC, each a multiple of 4 up to 256, at most MAX_CUBES cubes
// of 4x4x4, A<=B<=C unless NONDECREASING is false; and the four shapes smaller than a cube.
std::vector<std::string> generated_topologies(int max_cubes, bool nondecreasing) {
  std::vector<std::string> out = {"2x2x1", "2x2x2", "2x2x4", "2x4x4"};
  for (int x = 4; x <= 256; x += 4)
    for (int y = nondecreasing ? x : 4; y <= 256; y += 4)
      for (int z = nondecreasing ? y : 4; z <= 256; z += 4)
        if ((x / 4) * (y / 4) * (z / 4) <= max_cubes)
          out.push_back(std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z));
  return out;
}

std::vector<PublishedShape> shapes_of(const std::vector<std::string>& topologies,
                                      const std::string& machine_type, int chips_per_host,
                                      const std::string& label) {
  std::vector<PublishedShape> out;
  for (const auto& t : topologies) out.push_back({t, machine_type, chips_per_host, label});
  return out;
}

std::vector<PublishedShape> joined(std::vector<PublishedShape> a,
                                   const std::vector<PublishedShape>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<PublishedFamily>& published_families() {
  static const std::vector<PublishedFamily> families = {
      {"v5litepod", 1,
       joined({{"1x1", "ct5lp-hightpu-1t", 1, "tpu-v5-lite-podslice"},
               {"2x2", "ct5lp-hightpu-4t", 4, "tpu-v5-lite-podslice"},
               {"2x4", "ct5lp-hightpu-8t", 8, "tpu-v5-lite-podslice"}},
              shapes_of({"2x4", "4x4", "4x8", "8x8", "8x16", "16x16"}, "ct5lp-hightpu-4t", 4,
                        "tpu-v5-lite-podslice"))},
      {"v6e", 1,
       joined({{"1x1", "ct6e-standard-1t", 1, "tpu-v6e-slice"},
               {"2x4", "ct6e-standard-8t", 8, "tpu-v6e-slice"}},
              shapes_of({"2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"}, "ct6e-standard-4t", 4,
                        "tpu-v6e-slice"))},
      {"v5p", 2, shapes_of(generated_topologies(140, true), "ct5p-hightpu-4t", 4, "tpu-v5p-slice")},
      {"v4", 2,
       shapes_of(generated_topologies(64, false), "ct4p-hightpu-4t", 4, "tpu-v4-podslice")},
      {"v3", 2,
       joined({{"2x2", "ct3-hightpu-4t", 4, "tpu-v3-device"}},
              shapes_of({"4x4", "4x8", "8x8", "8x16", "16x16", "16x32", "32x32"}, "ct3p-hightpu-4t",
                        4, "tpu-v3-slice"))},
  };
  return families;
}

int chips_of(const std::string& topology) {
  int product = 1;
  size_t start = 0;
  for (;;) {
    const size_t x = topology.find('x', start);
    product *= std::stoi(topology.substr(start, x - start));
    if (x == std::string::npos) return product;
    start = x + 1;
  }
}

const PublishedFamily* published_family(const std::string& kind) {
  for (const auto& f : published_families())
    if (f.kind == kind) return &f;
  return nullptr;
}

TEST(CatalogPublishedTopologies, EveryTpuEntryIsAShapeGooglePublishes) {
  int checked = 0;
  for (const Accelerator& e : accelerator_catalog()) {
    if (e.family != AcceleratorFamily::tpu) continue;
    const PublishedFamily* family = published_family(e.kind);
    ASSERT_NE(family, nullptr) << e.name << ": no published table for TPU family " << e.kind;
    const PublishedShape* match = nullptr;
    for (const auto& s : family->shapes)
      if (s.topology == e.topology && s.machine_type == e.machine_type) match = &s;
    ASSERT_NE(match, nullptr) << e.name << ": " << e.topology << " on " << e.machine_type
                              << " is not a published " << e.kind << " shape";
    EXPECT_EQ(e.chips, chips_of(match->topology)) << e.name;
    EXPECT_EQ(e.chips_per_host, match->chips_per_host) << e.name;
    EXPECT_EQ(e.hosts, e.chips / match->chips_per_host) << e.name;
    EXPECT_EQ(e.gke_accelerator, match->gke_accelerator) << e.name;
    // The name Cloud TPU, GKE's docs and xpk give the slice: chips or TensorCores.
    EXPECT_EQ(e.name, e.kind + "-" + std::to_string(e.chips * family->tensorcores_per_chip))
        << e.topology;
    ++checked;
  }
  EXPECT_GE(checked, 40) << "the TPU entries went missing from the catalog";
}

// The sizes users ask for most, pinned to the exact shape Cloud TPU gives the name (its
// configuration tables): a swap of two dimensions keeps the chips but not the slice.
TEST(CatalogPublishedTopologies, NamedSlicesHaveCloudTpusTopology) {
  const std::vector<std::pair<std::string, std::string>> named = {
      {"v5p-8", "2x2x1"},     {"v5p-16", "2x2x2"},        {"v5p-32", "2x2x4"},
      {"v5p-64", "2x4x4"},    {"v5p-128", "4x4x4"},       {"v5p-256", "4x4x8"},
      {"v5p-512", "4x8x8"},   {"v5p-1024", "8x8x8"},      {"v4-8", "2x2x1"},
      {"v4-128", "4x4x4"},    {"v4-256", "4x4x8"},        {"v4-512", "4x8x8"},
      {"v4-1024", "8x8x8"},   {"v4-2048", "8x8x16"},      {"v4-4096", "8x16x16"},
      {"v5litepod-8", "2x4"}, {"v5litepod-256", "16x16"}, {"v3-8", "2x2"},
      {"v3-2048", "32x32"},
  };
  for (const auto& [name, topology] : named)
    EXPECT_EQ(resolve_accelerator(name).topology, topology) << name;
}

}  // namespace
}  // namespace kinetic
