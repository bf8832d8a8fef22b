#include "core/backoff.h"

#include <algorithm>
#include <cmath>

namespace kinetic {

std::chrono::milliseconds BackoffCurve::delay(int attempt) const {
  const double first = static_cast<double>(std::max<long long>(initial.count(), 1));
  const double cap = static_cast<double>(std::max(max, initial).count());
  const double grown = first * std::pow(std::max(factor, 1.0), std::max(attempt, 1) - 1);
  return std::chrono::milliseconds(static_cast<long long>(std::max(std::min(grown, cap), 1.0)));
}

std::chrono::milliseconds BackoffCurve::jittered(int attempt, double random01) const {
  random01 = std::clamp(random01, 0.0, 1.0);
  return std::chrono::milliseconds(
      static_cast<long long>(random01 * static_cast<double>(delay(attempt).count())));
}

}  // namespace kinetic
