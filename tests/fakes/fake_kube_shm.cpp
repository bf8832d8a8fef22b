// The fake kubelet's /dev/shm (docs/fakes.md): a pod's processes are processes of this machine
// and share its /dev/shm, which the fake cannot shrink or replace (a tmpfs needs a mount
// namespace, which not every machine that runs the tests allows). What a container would get
// is told to it instead: KINETIC_FAKE_DEV_SHM_BYTES.
#include <unistd.h>

#include <cctype>
#include <string>

#include "fakes/fake_kube_internal.h"

namespace kinetic::fakes::kube {
namespace {

// containerd's (and Docker's) default /dev/shm: 64 MiB.
constexpr long long kRuntimeShmBytes = 64LL << 20;

// A quantity's bytes ("1Gi", "512Mi", "2G", "1000"); 0 when the fake cannot read it.
long long quantity_bytes(const std::string& q) {
  std::size_t digits = 0;
  while (digits < q.size() && std::isdigit(static_cast<unsigned char>(q[digits]))) ++digits;
  if (digits == 0 || digits > 15) return 0;
  const long long n = std::stoll(q.substr(0, digits));
  const std::string unit = q.substr(digits);
  const char* units[] = {"", "Ki", "Mi", "Gi", "Ti"};
  for (int i = 0; i < 5; ++i)
    if (unit == units[i]) return n << (10 * i);
  const char* decimal[] = {"", "k", "M", "G", "T"};
  long long scale = 1;
  for (int i = 0; i < 5; ++i, scale *= 1000)
    if (unit == decimal[i]) return n * scale;
  return 0;
}

// A memory-backed emptyDir without a sizeLimit is sized by the node's allocatable memory: this
// machine's memory stands for it (not its /dev/shm, which in a container is often 64 MiB itself).
long long node_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<long long>(pages) * page : 0;
}

}  // namespace

std::string dev_shm_bytes(const json& pod_spec, const json& container) {
  std::string volume;
  for (const auto& m : container.value("volumeMounts", json::array()))
    if (m.value("mountPath", std::string()) == "/dev/shm") volume = m.value("name", std::string());
  for (const auto& v : pod_spec.value("volumes", json::array())) {
    if (volume.empty() || v.value("name", std::string()) != volume) continue;
    const json dir = v.value("emptyDir", json());
    // A disk-backed emptyDir (no medium) holds shared memory too, sized by the node's disk; the
    // fake counts it as the node's memory.
    if (!dir.is_object()) break;
    const long long limit = quantity_bytes(dir.value("sizeLimit", std::string()));
    return std::to_string(limit > 0 ? limit : node_memory_bytes());
  }
  return std::to_string(kRuntimeShmBytes);
}

}  // namespace kinetic::fakes::kube
