// Admission fair sharing between namespaces (`kinetic up --queue fair`, docs/capacity.md
// "Queueing"): each ClusterQueue kinetic writes asks for
// spec.admissionScope.admissionMode: UsageBasedAdmissionFairSharing, and Kueue's own
// configuration must hold `admissionFairSharing`, without which Kueue ignores that mode
// (pkg/util/admissionfairsharing ResourceWeights). The configuration is the file
// controller_manager_config.yaml of the ConfigMap kueue-system/kueue-manager-config, which the
// controller reads once at start: changing it on an installed Kueue restarts the controller.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/cluster.h"
#include "backend/gke/session.h"
#include "k8s/client.h"

namespace kinetic::gke {

inline constexpr const char* kKueueConfigMap = "kueue-manager-config";
inline constexpr const char* kKueueConfigKey = "controller_manager_config.yaml";
// Kueue's sample configuration (config/components/manager/controller_manager_config.yaml):
// usage halves in a week, sampled every 5 minutes.
inline constexpr const char* kUsageHalfLifeTime = "168h";
inline constexpr const char* kUsageSamplingInterval = "5m";

// Whether Kueue's configuration CONFIG_YAML turns admission fair sharing on. Throws
// Error(Errc::config) when it is not YAML.
bool has_admission_fair_sharing(const std::string& config_yaml);

// CONFIG_YAML with `admissionFairSharing` (kUsageHalfLifeTime, kUsageSamplingInterval) added
// when it has none; everything else in it is kept (its comments are not). Returned unchanged
// when it has it already, whatever its values: an administrator's choice stays. Pure.
std::string with_admission_fair_sharing(const std::string& config_yaml);

// Edits OBJECT, one of Kueue's release manifests, when it is its configuration ConfigMap: its
// controller_manager_config.yaml gets admissionFairSharing. Other objects are left alone.
void edit_for_fair_sharing(nlohmann::json& object);

// On an installed Kueue: when its configuration lacks admissionFairSharing, applies the edited
// ConfigMap, restarts kueue-controller-manager as `kubectl rollout restart` does and waits for
// it. Reported as a change only when it did so.
void ensure_fair_sharing_config(const Session& session, k8s::Client& kube,
                                const std::function<void(ClusterChange)>& report);

}  // namespace kinetic::gke
