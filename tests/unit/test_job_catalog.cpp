#include "job/catalog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <string>

#include "core/error.h"

namespace kinetic {
namespace {

// The message of the usage error SPEC raises; fails the test if it resolves or raises another kind.
std::string usage_error(const std::string& spec) {
  try {
    Accelerator a = resolve_accelerator(spec);
    ADD_FAILURE() << "'" << spec << "' resolved to " << a.name << ", expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage) << spec;
    return e.what();
  }
  return "";
}

std::string name_of(const std::string& spec) {
  return resolve_accelerator(spec).name;
}

// ---- CPU --------------------------------------------------------------------------------------

TEST(CatalogResolve, Cpu) {
  for (const char* spec : {"cpu", "CPU", "cpu:8", " cpu ", "Cpu:16"}) {
    Accelerator a = resolve_accelerator(spec);
    EXPECT_EQ(a.name, "cpu") << spec;
    EXPECT_EQ(a.family, AcceleratorFamily::cpu);
    EXPECT_EQ(a.chips, 0);
    EXPECT_EQ(a.hosts, 1);
    EXPECT_TRUE(a.node_selector.empty());
    EXPECT_TRUE(a.resource_name.empty());
    EXPECT_TRUE(a.gke_accelerator.empty());
    EXPECT_EQ(a.machine_type, "e2-standard-4");
    EXPECT_FALSE(a.spot);
  }
  EXPECT_TRUE(resolve_accelerator("cpu:spot").spot);
  EXPECT_TRUE(resolve_accelerator("cpu:4:spot").spot);
}

TEST(CatalogResolve, CpuBadCount) {
  EXPECT_NE(usage_error("cpu:x").find("cpu:N"), std::string::npos);
  EXPECT_NE(usage_error("cpu:0").find("cpu:N"), std::string::npos);
  usage_error("cpu:");
}

// ---- GPUs -------------------------------------------------------------------------------------

TEST(CatalogResolve, GpuNamesAndCounts) {
  Accelerator l4 = resolve_accelerator("l4");
  EXPECT_EQ(l4.name, "l4");
  EXPECT_EQ(l4.family, AcceleratorFamily::gpu);
  EXPECT_EQ(l4.kind, "l4");
  EXPECT_EQ(l4.chips, 1);
  EXPECT_EQ(l4.hosts, 1);
  EXPECT_EQ(l4.chips_per_host, 1);
  EXPECT_EQ(l4.machine_type, "g2-standard-4");
  EXPECT_EQ(l4.gke_accelerator, "nvidia-l4");
  EXPECT_EQ(l4.resource_name, "nvidia.com/gpu");
  EXPECT_TRUE(l4.topology.empty());

  EXPECT_EQ(resolve_accelerator("l4x2").machine_type, "g2-standard-24");
  EXPECT_EQ(resolve_accelerator("l4x4").machine_type, "g2-standard-48");
  EXPECT_EQ(resolve_accelerator("l4x8").machine_type, "g2-standard-96");
  EXPECT_EQ(resolve_accelerator("t4x4").machine_type, "n1-standard-16");
  EXPECT_EQ(resolve_accelerator("v100").machine_type, "n1-standard-8");
  EXPECT_EQ(resolve_accelerator("v100x8").machine_type, "n1-standard-64");
  EXPECT_EQ(resolve_accelerator("a100x4").machine_type, "a2-highgpu-4g");
  EXPECT_EQ(resolve_accelerator("a100x16").machine_type, "a2-megagpu-16g");
  EXPECT_EQ(resolve_accelerator("a100-80gbx2").machine_type, "a2-ultragpu-2g");
  EXPECT_EQ(resolve_accelerator("a100-80gb").gke_accelerator, "nvidia-a100-80gb");
  EXPECT_EQ(resolve_accelerator("a100").gke_accelerator, "nvidia-tesla-a100");
  EXPECT_EQ(resolve_accelerator("h100").machine_type, "a3-highgpu-1g");
  EXPECT_EQ(resolve_accelerator("h100x8").machine_type, "a3-highgpu-8g");
  EXPECT_EQ(resolve_accelerator("h100x8").gke_accelerator, "nvidia-h100-80gb");

  // "x1" is the same as no count; the canonical name has no "x1".
  EXPECT_EQ(name_of("a100x1"), "a100");
  EXPECT_EQ(name_of("l4x1"), "l4");
}

TEST(CatalogResolve, GpuPerHostMath) {
  Accelerator a = resolve_accelerator("a100x8");
  EXPECT_EQ(a.name, "a100x8");
  EXPECT_EQ(a.chips, 8);
  EXPECT_EQ(a.hosts, 1);
  EXPECT_EQ(a.chips_per_host, 8);
  EXPECT_EQ(a.machine_type, "a2-highgpu-8g");
}

TEST(CatalogResolve, H200AndB200ComeInEights) {
  Accelerator h200 = resolve_accelerator("h200");
  EXPECT_EQ(h200.name, "h200x8");
  EXPECT_EQ(h200.chips, 8);
  EXPECT_EQ(h200.machine_type, "a3-ultragpu-8g");
  EXPECT_EQ(h200.gke_accelerator, "nvidia-h200-141gb");
  Accelerator b200 = resolve_accelerator("b200x8");
  EXPECT_EQ(b200.name, "b200x8");
  EXPECT_EQ(b200.machine_type, "a4-highgpu-8g");
  EXPECT_EQ(b200.gke_accelerator, "nvidia-b200");
  EXPECT_EQ(name_of("b200"), "b200x8");
  EXPECT_EQ(usage_error("h200x4"), "h200 comes in 8 GPUs per node; did you mean h200x8?");
}

TEST(CatalogResolve, GpuPrefixesAndLabels) {
  EXPECT_EQ(name_of("gpu-a100x4"), "a100x4");
  EXPECT_EQ(name_of("gpu:a100x4"), "a100x4");
  EXPECT_EQ(name_of("gpu-l4"), "l4");
  EXPECT_EQ(name_of("gpu:l4"), "l4");
  EXPECT_EQ(name_of("nvidia-l4"), "l4");
  EXPECT_EQ(name_of("nvidia-tesla-t4"), "t4");
  EXPECT_EQ(name_of("nvidia-tesla-v100"), "v100");
  EXPECT_EQ(name_of("nvidia-tesla-a100"), "a100");
  EXPECT_EQ(name_of("nvidia-a100-80gb"), "a100-80gb");
  EXPECT_EQ(name_of("NVIDIA-H100-80GB"), "h100");
  EXPECT_EQ(name_of("nvidia-h200-141gb"), "h200x8");
  EXPECT_EQ(name_of("nvidia-b200"), "b200x8");
  EXPECT_EQ(name_of("nvidia-tesla-t4x2"), "t4x2");
  EXPECT_EQ(name_of("gpu-nvidia-l4x4"), "l4x4");
}

TEST(CatalogResolve, GenericGpu) {
  EXPECT_EQ(name_of("gpu"), "l4");
  EXPECT_EQ(name_of("GPU"), "l4");
  // gpu:N takes the first of h100 > a100-80gb > a100 > l4 > v100 > t4 with N GPUs per node.
  EXPECT_EQ(name_of("gpu:1"), "h100");
  EXPECT_EQ(name_of("gpu:8"), "h100x8");
  EXPECT_EQ(name_of("gpu-8"), "h100x8");
  EXPECT_EQ(name_of("gpu:16"), "a100x16");
  std::string msg = usage_error("gpu:3");
  EXPECT_NE(msg.find("no GPU type comes with 3 GPUs per node"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1, 2, 4, 8 or 16"), std::string::npos) << msg;
}

TEST(CatalogResolve, GpuBadCounts) {
  EXPECT_EQ(usage_error("l4x3"),
            "l4 comes in 1, 2, 4 or 8 GPUs per node; did you mean l4x2 or l4x4?");
  EXPECT_EQ(usage_error("l4x16"), "l4 comes in 1, 2, 4 or 8 GPUs per node; did you mean l4x8?");
  EXPECT_EQ(usage_error("L4X0"), "l4 comes in 1, 2, 4 or 8 GPUs per node; did you mean l4?");
  EXPECT_EQ(usage_error("t4x8"), "t4 comes in 1, 2 or 4 GPUs per node; did you mean t4x4?");
  // A2 Ultra has no 16-GPU machine (a2-megagpu-16g is the 40 GB A100).
  EXPECT_EQ(usage_error("a100-80gbx16"),
            "a100-80gb comes in 1, 2, 4 or 8 GPUs per node; did you mean a100-80gbx8?");
  EXPECT_EQ(usage_error("gpu-h100x3"),
            "h100 comes in 1, 2, 4 or 8 GPUs per node; did you mean h100x2 or h100x4?");
  // One line.
  EXPECT_EQ(usage_error("a100x99999999999999").find('\n'), std::string::npos);
}

// ---- TPUs -------------------------------------------------------------------------------------

TEST(CatalogResolve, V5litepodByChips) {
  Accelerator a = resolve_accelerator("v5litepod-1");
  EXPECT_EQ(a.name, "v5litepod-1");
  EXPECT_EQ(a.family, AcceleratorFamily::tpu);
  EXPECT_EQ(a.kind, "v5litepod");
  EXPECT_EQ(a.chips, 1);
  EXPECT_EQ(a.hosts, 1);
  EXPECT_EQ(a.chips_per_host, 1);
  EXPECT_EQ(a.topology, "1x1");
  EXPECT_EQ(a.machine_type, "ct5lp-hightpu-1t");
  EXPECT_EQ(a.gke_accelerator, "tpu-v5-lite-podslice");
  EXPECT_EQ(a.resource_name, "google.com/tpu");

  Accelerator b = resolve_accelerator("v5litepod-8");
  EXPECT_EQ(b.topology, "2x4");
  EXPECT_EQ(b.machine_type, "ct5lp-hightpu-8t");
  EXPECT_EQ(b.hosts, 1);
  EXPECT_EQ(b.chips_per_host, 8);

  Accelerator c = resolve_accelerator("v5litepod-16");
  EXPECT_EQ(c.chips, 16);
  EXPECT_EQ(c.hosts, 4);
  EXPECT_EQ(c.chips_per_host, 4);
  EXPECT_EQ(c.topology, "4x4");
  EXPECT_EQ(c.machine_type, "ct5lp-hightpu-4t");

  Accelerator d = resolve_accelerator("v5litepod-256");
  EXPECT_EQ(d.topology, "16x16");
  EXPECT_EQ(d.hosts, 64);
}

TEST(CatalogResolve, V6eByChipsIncludingSingleHost) {
  struct Row {
    const char* spec;
    int chips, hosts, per_host;
    const char* topology;
    const char* machine;
  };
  for (const Row& r : {Row{"v6e-1", 1, 1, 1, "1x1", "ct6e-standard-1t"},
                       Row{"v6e-4", 4, 1, 4, "2x2", "ct6e-standard-4t"},
                       Row{"v6e-8", 8, 1, 8, "2x4", "ct6e-standard-8t"},
                       Row{"v6e-16", 16, 4, 4, "4x4", "ct6e-standard-4t"},
                       Row{"v6e-256", 256, 64, 4, "16x16", "ct6e-standard-4t"}}) {
    Accelerator a = resolve_accelerator(r.spec);
    EXPECT_EQ(a.name, r.spec);
    EXPECT_EQ(a.chips, r.chips) << r.spec;
    EXPECT_EQ(a.hosts, r.hosts) << r.spec;
    EXPECT_EQ(a.chips_per_host, r.per_host) << r.spec;
    EXPECT_EQ(a.topology, r.topology) << r.spec;
    EXPECT_EQ(a.machine_type, r.machine) << r.spec;
    EXPECT_EQ(a.gke_accelerator, "tpu-v6e-slice") << r.spec;
  }
}

TEST(CatalogResolve, V5pV4V3AreNamedByTensorCores) {
  Accelerator p8 = resolve_accelerator("v5p-8");
  EXPECT_EQ(p8.chips, 4);
  EXPECT_EQ(p8.hosts, 1);
  EXPECT_EQ(p8.topology, "2x2x1");
  EXPECT_EQ(p8.machine_type, "ct5p-hightpu-4t");
  EXPECT_EQ(p8.gke_accelerator, "tpu-v5p-slice");

  Accelerator p32 = resolve_accelerator("v5p-32");
  EXPECT_EQ(p32.chips, 16);
  EXPECT_EQ(p32.hosts, 4);
  EXPECT_EQ(p32.chips_per_host, 4);
  EXPECT_EQ(p32.topology, "2x2x4");

  Accelerator v4 = resolve_accelerator("v4-8");
  EXPECT_EQ(v4.chips, 4);
  EXPECT_EQ(v4.hosts, 1);
  EXPECT_EQ(v4.topology, "2x2x1");
  EXPECT_EQ(v4.machine_type, "ct4p-hightpu-4t");
  EXPECT_EQ(v4.gke_accelerator, "tpu-v4-podslice");
  EXPECT_EQ(resolve_accelerator("v4-4096").topology, "8x16x16");
  EXPECT_EQ(resolve_accelerator("v4-4096").hosts, 512);

  Accelerator v3 = resolve_accelerator("v3-8");
  EXPECT_EQ(v3.chips, 4);
  EXPECT_EQ(v3.hosts, 1);
  EXPECT_EQ(v3.topology, "2x2");
  EXPECT_EQ(v3.machine_type, "ct3-hightpu-4t");
  EXPECT_EQ(v3.gke_accelerator, "tpu-v3-device");

  Accelerator v3_32 = resolve_accelerator("v3-32");
  EXPECT_EQ(v3_32.chips, 16);
  EXPECT_EQ(v3_32.hosts, 4);
  EXPECT_EQ(v3_32.topology, "4x4");
  EXPECT_EQ(v3_32.machine_type, "ct3p-hightpu-4t");
  EXPECT_EQ(v3_32.gke_accelerator, "tpu-v3-slice");
}

TEST(CatalogResolve, TopologyForms) {
  EXPECT_EQ(name_of("v5litepod-1x1"), "v5litepod-1");
  EXPECT_EQ(name_of("v5litepod-2x2"), "v5litepod-4");
  EXPECT_EQ(name_of("v5litepod-2x4"), "v5litepod-8");
  EXPECT_EQ(name_of("v5e-4x8"), "v5litepod-32");
  EXPECT_EQ(name_of("v6e-4x4"), "v6e-16");
  EXPECT_EQ(name_of("v6e-1x1"), "v6e-1");
  EXPECT_EQ(name_of("v4-2x2x2"), "v4-16");
  EXPECT_EQ(name_of("v4-2x2x1"), "v4-8");
  EXPECT_EQ(name_of("tpu-v4-2x2x2"), "v4-16");
  EXPECT_EQ(name_of("v5p-2x2x4"), "v5p-32");
  EXPECT_EQ(name_of("v5p-2x2x1"), "v5p-8");
  EXPECT_EQ(name_of("v3-4x4"), "v3-32");
  EXPECT_EQ(name_of("V5LITEPOD-2X2"), "v5litepod-4");
}

TEST(CatalogResolve, AliasesAndPrefixes) {
  EXPECT_EQ(name_of("v5e-4"), "v5litepod-4");
  EXPECT_EQ(name_of("tpu-v5e-1"), "v5litepod-1");
  EXPECT_EQ(name_of("tpu:v5e-1"), "v5litepod-1");
  EXPECT_EQ(name_of("tpu-v5litepod-16"), "v5litepod-16");
  EXPECT_EQ(name_of("tpu-v6e-8"), "v6e-8");
  EXPECT_EQ(name_of("tpu-v5p-8"), "v5p-8");
  EXPECT_EQ(name_of("TPU-V5E-1"), "v5litepod-1");
}

TEST(CatalogResolve, BareFamilyDefaults) {
  EXPECT_EQ(name_of("tpu"), "v5litepod-4");
  EXPECT_EQ(name_of("v5litepod"), "v5litepod-4");
  EXPECT_EQ(name_of("v5e"), "v5litepod-4");
  EXPECT_EQ(name_of("tpu-v5e"), "v5litepod-4");
  EXPECT_EQ(name_of("v6e"), "v6e-4");
  EXPECT_EQ(name_of("v5p"), "v5p-8");
  EXPECT_EQ(name_of("v4"), "v4-8");
  EXPECT_EQ(name_of("v3"), "v3-8");
  // Every default is a single host.
  for (const char* f : {"tpu", "v5litepod", "v6e", "v5p", "v4", "v3"})
    EXPECT_EQ(resolve_accelerator(f).hosts, 1) << f;
}

TEST(CatalogResolve, GenericTpuByChips) {
  // tpu:N is N chips, from v6e > v5p > v5litepod > v4 > v3.
  EXPECT_EQ(name_of("tpu:1"), "v6e-1");
  EXPECT_EQ(name_of("tpu:4"), "v6e-4");
  EXPECT_EQ(name_of("tpu-16"), "v6e-16");
  EXPECT_EQ(name_of("tpu:512"), "v5p-1024");
  EXPECT_EQ(resolve_accelerator("tpu:512").chips, 512);
  EXPECT_EQ(name_of("tpu:1024"), "v4-2048");
  std::string msg = usage_error("tpu:2");
  EXPECT_NE(msg.find("no TPU slice has 2 chips"), std::string::npos) << msg;
}

TEST(CatalogResolve, TpuBadCounts) {
  EXPECT_EQ(usage_error("v5litepod-3"),
            "v5litepod comes in 1, 4, 8, 16, 32, 64, 128 or 256 chips; did you mean v5litepod-1 "
            "or v5litepod-4?");
  EXPECT_EQ(usage_error("v5e-512"),
            "v5litepod comes in 1, 4, 8, 16, 32, 64, 128 or 256 chips; did you mean "
            "v5litepod-256?");
  std::string v5p = usage_error("v5p-12");
  EXPECT_NE(v5p.find("named by TensorCores"), std::string::npos) << v5p;
  EXPECT_NE(v5p.find("did you mean v5p-8 or v5p-16?"), std::string::npos) << v5p;
  // Kinetic's old chip-count name v5p-4 is no Cloud TPU slice; point at the smallest one.
  EXPECT_NE(usage_error("v5p-4").find("did you mean v5p-8?"), std::string::npos);
  EXPECT_NE(usage_error("v4-9").find("did you mean v4-8 or v4-16?"), std::string::npos);
}

TEST(CatalogResolve, TpuBadTopologies) {
  std::string msg = usage_error("v5litepod-4x2");
  EXPECT_NE(msg.find("v5litepod has no 4x2 topology"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean v5litepod-2x4?"), std::string::npos) << msg;
  msg = usage_error("v4-2x2");
  EXPECT_NE(msg.find("v4 has no 2x2 topology"), std::string::npos) << msg;
  EXPECT_EQ(usage_error("v6e-3x3").find("did you mean"), std::string::npos);
}

TEST(CatalogResolve, WrongPrefix) {
  EXPECT_NE(usage_error("gpu-v5litepod-4").find("v5litepod-4 is a TPU"), std::string::npos);
  EXPECT_NE(usage_error("tpu:l4").find("l4 is a GPU"), std::string::npos);
}

// ---- spot, case, whitespace ---------------------------------------------------------------------

TEST(CatalogResolve, SpotSuffix) {
  Accelerator a = resolve_accelerator("v5litepod-4:spot");
  EXPECT_EQ(a.name, "v5litepod-4");
  EXPECT_TRUE(a.spot);
  // The spot label is not part of the node selector: it is added where `spot` is honoured.
  EXPECT_EQ(a.node_selector.count("cloud.google.com/gke-spot"), 0u);
  Accelerator g = resolve_accelerator("GPU-L4X2:SPOT");
  EXPECT_EQ(g.name, "l4x2");
  EXPECT_TRUE(g.spot);
  EXPECT_TRUE(resolve_accelerator("tpu:spot").spot);
  EXPECT_EQ(name_of("tpu:spot"), "v5litepod-4");
  EXPECT_TRUE(resolve_accelerator("gpu:8:spot").spot);
  EXPECT_FALSE(resolve_accelerator("v5litepod-4").spot);
}

// ":flex-start" (docs/capacity.md): GPUs and TPUs from v5e on, the way a run records it and reads
// it back; TPU v3 and v4 and the CPU are refused, naming what does take it.
TEST(CatalogResolve, FlexStartSuffix) {
  Accelerator a = resolve_accelerator("v6e-8:flex-start");
  EXPECT_EQ(a.name, "v6e-8");
  EXPECT_TRUE(a.flex_start);
  EXPECT_FALSE(a.spot);
  EXPECT_EQ(qualified_name(a), "v6e-8:flex-start");
  EXPECT_TRUE(resolve_accelerator(qualified_name(a)).flex_start);
  EXPECT_TRUE(resolve_accelerator("L4:FLEX-START").flex_start);
  EXPECT_EQ(qualified_name(resolve_accelerator("l4:spot")), "l4:spot");
  EXPECT_EQ(qualified_name(resolve_accelerator("l4")), "l4");
  for (const char* refused : {"v4-8:flex-start", "v3-8:flex-start", "cpu:flex-start"}) {
    try {
      resolve_accelerator(refused);
      ADD_FAILURE() << refused << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_NE(std::string(e.what()).find("drop --flex-start"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(offers_flex_start(resolve_accelerator("v5p-8")));
  EXPECT_TRUE(offers_flex_start(resolve_accelerator("v5litepod-16")));
  EXPECT_FALSE(offers_flex_start(resolve_accelerator("v4-8")));
}

TEST(CatalogResolve, CaseAndWhitespace) {
  EXPECT_EQ(name_of("  V6E-16\t"), "v6e-16");
  EXPECT_EQ(name_of("A100-80GBx4"), "a100-80gbx4");
  EXPECT_EQ(name_of("H100X8"), "h100x8");
}

// ---- node selectors -----------------------------------------------------------------------------

TEST(CatalogResolve, NodeSelectors) {
  using Sel = std::map<std::string, std::string>;
  EXPECT_EQ(resolve_accelerator("v5litepod-1").node_selector,
            (Sel{{"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"},
                 {"cloud.google.com/gke-tpu-topology", "1x1"}}));
  EXPECT_EQ(resolve_accelerator("v5p-32").node_selector,
            (Sel{{"cloud.google.com/gke-tpu-accelerator", "tpu-v5p-slice"},
                 {"cloud.google.com/gke-tpu-topology", "2x2x4"}}));
  EXPECT_EQ(resolve_accelerator("v3-8").node_selector,
            (Sel{{"cloud.google.com/gke-tpu-accelerator", "tpu-v3-device"},
                 {"cloud.google.com/gke-tpu-topology", "2x2"}}));
  EXPECT_EQ(resolve_accelerator("l4x2").node_selector,
            (Sel{{"cloud.google.com/gke-accelerator", "nvidia-l4"}}));
  EXPECT_EQ(resolve_accelerator("t4").node_selector,
            (Sel{{"cloud.google.com/gke-accelerator", "nvidia-tesla-t4"}}));
  EXPECT_TRUE(resolve_accelerator("cpu").node_selector.empty());
}

// ---- unknown names ------------------------------------------------------------------------------

TEST(CatalogResolve, UnknownNamesSuggestTheClosest) {
  EXPECT_EQ(usage_error("v5litpod-1"),
            "unknown accelerator 'v5litpod-1'; did you mean v5litepod-1? (run `kinetic "
            "accelerators` for the list)");
  std::string h10 = usage_error("h10");
  EXPECT_NE(h10.find("did you mean h100?"), std::string::npos) << h10;
  // The message quotes what the user typed, and suggests from what follows the prefix.
  std::string prefixed = usage_error("tpu-v6f-8");
  EXPECT_NE(prefixed.find("'tpu-v6f-8'"), std::string::npos) << prefixed;
  EXPECT_NE(prefixed.find("did you mean v6e-8?"), std::string::npos) << prefixed;
  EXPECT_NE(usage_error("nvidia-l5").find("did you mean nvidia-l4?"), std::string::npos);
  EXPECT_NE(usage_error("v5ltiepod").find("did you mean v5litepod?"), std::string::npos);
}

TEST(CatalogResolve, UnsupportedAcceleratorsSaySo) {
  for (const char* spec : {"v2-8", "tpu-v2-8", "tpu7x", "v7x-8"}) {
    std::string msg = usage_error(spec);
    EXPECT_NE(msg.find("is not supported; kinetic's TPUs are v5litepod, v6e, v5p, v4, v3"),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("did you mean"), std::string::npos) << msg;
  }
  for (const char* spec : {"p100", "gpu-p4x2", "nvidia-tesla-k80", "GB200"}) {
    std::string msg = usage_error(spec);
    EXPECT_NE(msg.find("is not supported; kinetic's GPUs are l4, t4, v100"), std::string::npos)
        << msg;
  }
}

TEST(CatalogResolve, UnknownNamesWithoutAMatch) {
  EXPECT_EQ(usage_error("quantum-computer"),
            "unknown accelerator 'quantum-computer' (run `kinetic accelerators` for the list)");
  std::string empty = usage_error("");
  EXPECT_NE(empty.find("empty accelerator name"), std::string::npos);
  usage_error(":spot");
  usage_error("v5litepod-");
  usage_error("v5litepod-abc");
  usage_error("gpu:");
  usage_error("l4x");
}

// ---- the catalog --------------------------------------------------------------------------------

TEST(Catalog, EveryEntryResolvesToItself) {
  for (const Accelerator& e : accelerator_catalog()) {
    Accelerator a = resolve_accelerator(e.name);
    EXPECT_EQ(a.name, e.name);
    EXPECT_EQ(a.family, e.family) << e.name;
    EXPECT_EQ(a.chips, e.chips) << e.name;
    EXPECT_EQ(a.hosts, e.hosts) << e.name;
    EXPECT_EQ(a.topology, e.topology) << e.name;
    EXPECT_EQ(a.machine_type, e.machine_type) << e.name;
    EXPECT_FALSE(e.spot) << e.name;
  }
}

TEST(Catalog, TopologyFormsResolveToTheSameEntry) {
  for (const Accelerator& e : accelerator_catalog()) {
    if (e.family != AcceleratorFamily::tpu) continue;
    EXPECT_EQ(name_of(e.kind + "-" + e.topology), e.name);
    EXPECT_EQ(name_of("tpu-" + e.name), e.name);
  }
}

TEST(Catalog, DisplayOrderAndUniqueness) {
  const auto& cat = accelerator_catalog();
  ASSERT_FALSE(cat.empty());
  EXPECT_EQ(cat.front().name, "cpu");
  std::set<std::string> names;
  int rank = 0;
  for (const Accelerator& e : cat) {
    EXPECT_TRUE(names.insert(e.name).second) << "duplicate " << e.name;
    int r = static_cast<int>(e.family);  // cpu < gpu < tpu
    EXPECT_GE(r, rank) << e.name << " out of order";
    rank = r;
  }
  EXPECT_EQ(std::count_if(cat.begin(), cat.end(),
                          [](const Accelerator& e) { return e.family == AcceleratorFamily::cpu; }),
            1);
  for (const char* n : {"l4", "l4x8", "t4x4", "v100x8", "a100x16", "a100-80gbx8", "h100x8",
                        "h200x8", "b200x8", "v5litepod-1", "v5litepod-256", "v6e-1", "v6e-256",
                        "v5p-8", "v5p-1024", "v4-8", "v4-4096", "v3-8", "v3-2048"})
    EXPECT_EQ(names.count(n), 1u) << n;
  EXPECT_EQ(names.count("a100-80gbx16"), 0u);
}

TEST(Catalog, Consistency) {
  static const std::regex topology_re(R"(^\d{1,3}x\d{1,3}(x\d{1,3})?$)");
  for (const Accelerator& e : accelerator_catalog()) {
    EXPECT_GT(e.price_per_hour, 0) << e.name;
    EXPECT_TRUE(std::isfinite(e.price_per_hour)) << e.name;
    if (e.family == AcceleratorFamily::cpu) continue;
    EXPECT_EQ(e.hosts * e.chips_per_host, e.chips) << e.name;
    EXPECT_FALSE(e.machine_type.empty()) << e.name;
    EXPECT_FALSE(e.gke_accelerator.empty()) << e.name;
    if (e.family == AcceleratorFamily::gpu) {
      EXPECT_EQ(e.hosts, 1) << e.name;
      EXPECT_EQ(e.resource_name, "nvidia.com/gpu");
      EXPECT_EQ(e.node_selector.at("cloud.google.com/gke-accelerator"), e.gke_accelerator);
    } else {
      EXPECT_TRUE(std::regex_match(e.topology, topology_re)) << e.name;
      int product = 1;
      size_t start = 0;
      for (;;) {
        size_t x = e.topology.find('x', start);
        product *= std::stoi(e.topology.substr(start, x - start));
        if (x == std::string::npos) break;
        start = x + 1;
      }
      EXPECT_EQ(product, e.chips) << e.name;
      // The machine type's "Nt" suffix is the chips per host.
      EXPECT_TRUE(e.machine_type.ends_with("-" + std::to_string(e.chips_per_host) + "t"))
          << e.name << " " << e.machine_type;
      EXPECT_EQ(e.resource_name, "google.com/tpu");
      EXPECT_EQ(e.node_selector.at("cloud.google.com/gke-tpu-accelerator"), e.gke_accelerator);
      EXPECT_EQ(e.node_selector.at("cloud.google.com/gke-tpu-topology"), e.topology);
    }
  }
}

TEST(Catalog, Prices) {
  auto price = [](const char* n) { return resolve_accelerator(n).price_per_hour; };
  EXPECT_NEAR(price("v5litepod-1"), 1.20, 1e-9);
  EXPECT_NEAR(price("v5litepod-16"), 16 * 1.20, 1e-9);
  EXPECT_NEAR(price("v6e-8"), 8 * 2.70, 1e-9);
  EXPECT_NEAR(price("v5p-8"), 4 * 4.20, 1e-9);  // 4 chips, not 8
  EXPECT_NEAR(price("v4-8"), 4 * 3.22, 1e-9);
  EXPECT_NEAR(price("v3-8"), 4 * 2.00, 1e-9);
  EXPECT_NEAR(price("l4"), 0.71, 0.01);
  EXPECT_NEAR(price("a100"), 3.67, 0.01);
  EXPECT_NEAR(price("h100x8"), 88.49, 0.01);
  EXPECT_NEAR(price("cpu"), 0.134, 0.001);
  // Bigger nodes of one type cost more.
  EXPECT_LT(price("l4"), price("l4x2"));
  EXPECT_LT(price("a100x8"), price("a100x16"));
  EXPECT_LT(price("a100x8"), price("a100-80gbx8"));
  // Spot does not change the listed (on-demand) price.
  EXPECT_EQ(price("v6e-4:spot"), price("v6e-4"));
  EXPECT_TRUE(
      std::regex_match(std::string(catalog_price_date()), std::regex(R"(^\d{4}-\d{2}-\d{2}$)")));
}

TEST(Catalog, FamilyNames) {
  EXPECT_EQ(family_name(AcceleratorFamily::cpu), "cpu");
  EXPECT_EQ(family_name(AcceleratorFamily::gpu), "gpu");
  EXPECT_EQ(family_name(AcceleratorFamily::tpu), "tpu");
}

}  // namespace
}  // namespace kinetic
