// The accelerator catalog: every name `kinetic run --accelerator` accepts, resolved to what GKE
// needs (machine type, node labels, per-host resources) and what it costs.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kinetic {

enum class AcceleratorFamily { cpu, gpu, tpu };

std::string_view family_name(AcceleratorFamily f);  // "cpu", "gpu", "tpu"

// How Compute Engine sells a shape's capacity (docs/gke-conformance.md "Capacity"): on demand,
// only as Spot or flex-start VMs (a3-highgpu-1g/2g/4g), or not on demand but through a
// reservation, flex-start or Spot (a3-ultragpu-8g, a4-highgpu-8g). A pool of a shape not sold on
// demand must be Spot or consume a reservation, else its nodes never come.
enum class Capacity { on_demand, spot_or_flex_start, reservation };

std::string_view capacity_name(Capacity c);  // "on-demand", "spot-or-flex-start", "reservation"

struct Accelerator {
  std::string name;  // canonical name: "cpu", "l4", "a100x8", "v5litepod-4", "v6e-16"
  AcceleratorFamily family = AcceleratorFamily::cpu;
  std::string kind;             // "cpu", "l4", "a100-80gb", "v5litepod", "v5p", ...
  int chips = 0;                // chips (TPU) or GPUs in the whole slice; 0 for cpu
  int hosts = 1;                // nodes the job spans; > 1 means a multi-host TPU slice (JobSet)
  int chips_per_host = 0;       // google.com/tpu or nvidia.com/gpu requested by each pod
  std::string topology;         // TPU topology, e.g. "2x2" or "2x2x4"; empty otherwise
  std::string machine_type;     // GCE machine type of one node, e.g. "ct5lp-hightpu-4t"
  std::string gke_accelerator;  // value of the GKE accelerator label: "tpu-v5-lite-podslice",
                                // "nvidia-l4"; empty for cpu
  std::string resource_name;    // "google.com/tpu", "nvidia.com/gpu"; empty for cpu
  // Node selector the job's pods need (excluding the spot label, see `spot`).
  std::map<std::string, std::string> node_selector;
  double price_per_hour = 0;  // on-demand list price in USD for the whole slice, us-central1
  bool spot = false;          // run on Spot VMs (the `:spot` suffix or --spot)
  // Run on flex-start VMs (the `:flex-start` suffix or --flex-start; docs/capacity.md): capacity
  // GKE's Dynamic Workload Scheduler provides when it has it, without a reservation.
  bool flex_start = false;
  Capacity capacity = Capacity::on_demand;  // how its machine type is sold
  // Slices a run spans (`run --slices N`, multislice over the data center network): 1 for every
  // catalog entry; a run's accelerator carries its N, and every price of it is N slices'.
  int slices = 1;
};

// Resolves a user's accelerator string: case-insensitive; "cpu"; GPU names with counts ("l4",
// "a100x8", "gpu-h100x8", "nvidia-l4"); TPU names by chips or topology ("v5litepod-4",
// "tpu-v5e-1", "v5litepod-2x2", "v4-2x2x2"); a ":spot" or ":flex-start" suffix. Throws
// Error(Errc::usage) for an unknown name, with the closest catalog names ("did you mean ...?"),
// and for flex-start on an accelerator GKE does not offer it for.
Accelerator resolve_accelerator(std::string_view spec);

// Whether GKE's flex-start node pools offer A (docs/capacity.md): GPUs, and TPUs from v5e on
// (GKE "About flex-start": TPU v3 and v4 are not supported); not the CPU.
bool offers_flex_start(const Accelerator& a);
// Throws Error(Errc::usage) naming what to do when A does not offer flex-start.
void require_flex_start(const Accelerator& a);

// A's name as a run records it: the catalog name with ":spot" or ":flex-start" when it runs on
// that capacity ("v5litepod-4:spot"); resolve_accelerator reads it back.
std::string qualified_name(const Accelerator& a);

// Every canonical entry, in display order (cpu, GPUs, TPUs), spot = false.
const std::vector<Accelerator>& accelerator_catalog();

// The date the prices in the catalog were read from Google's public price lists (YYYY-MM-DD).
std::string_view catalog_price_date();

}  // namespace kinetic
