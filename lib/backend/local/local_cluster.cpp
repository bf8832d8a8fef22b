#include "backend/local/local_cluster.h"

#include "core/error.h"

namespace kinetic {

void LocalCluster::refuse() const {
  throw Error(Errc::usage, "`kinetic " + command_ + "` works on a gke context; context '" +
                               context_ + "' is local (create one with `kinetic up`)");
}

}  // namespace kinetic
