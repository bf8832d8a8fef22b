// Creating a job's Kubernetes objects so that a lost answer leaves neither a failed run nor an
// orphan (issue #8 item 5). Names are deterministic (kinetic-ID), so whether a POST whose answer
// never came took effect can be asked of the API server: GET the object by name, and adopt it
// when it carries our job label.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "k8s/client.h"

namespace kinetic::gke {

// POSTs OBJECT (with metadata.name and the kinetic.dev/job label) to COLLECTION and returns the
// stored object. A dropped connection or a 5xx is followed by a GET of the name: an object
// carrying OBJECT's job label is adopted as if created, none is created again (ATTEMPTS POSTs in
// all). A 429 is thrown as it comes: the transport has already waited it out (http/retry.h). A
// 409 AlreadyExists adopts the object when it is ours; one that is not ours is an
// Error(Errc::job_start) naming it. Other errors are thrown as they come.
nlohmann::json create_or_adopt(k8s::Client& client, const std::string& collection,
                               const nlohmann::json& object, int attempts = 4);

// Deletes the object at PATH if it exists and carries job label JOB_ID; any error is swallowed.
// Undoes a submit that failed half-way, whether or not its creates got their answers.
void remove_if_ours(k8s::Client& client, const std::string& path, const std::string& job_id);

}  // namespace kinetic::gke
