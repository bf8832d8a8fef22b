// What a job's image is made of (docs/images.md): the base image for the accelerator family and
// Python version, a C/C++ toolchain, the family's ML runtime reconciled with the job's own
// requirements, the runtime's platform variables, and a smoke test that makes a broken image
// fail in the build rather than on a paid node. The tag hashes all of it, so a change to any
// part builds a new image and nothing else does.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "job/catalog.h"

namespace kinetic {

struct RecipeInput {
  AcceleratorFamily family = AcceleratorFamily::cpu;
  std::vector<std::string> requirements;  // the job's, normalized (pack/requirements.h)
  std::string python;                     // --python X.Y; empty: requires_python or the default
  std::string requires_python;            // pyproject.toml's [project].requires-python
  std::string requires_python_source;     // where it came from, for messages
  std::string base_image;                 // the context's base-image; empty: kinetic's own
};

struct ImageRecipe {
  AcceleratorFamily family = AcceleratorFamily::cpu;
  std::string base_image;
  std::string python;   // "3.11"; empty when a custom base image decides
  std::string runtime;  // what the recipe added or rewrote, e.g. "jax[tpu]==0.7.2"; may be empty
  std::vector<std::string> runtime_modules;  // imported by the smoke test: "jax", "torch_xla"
  std::vector<std::string> requirements;     // what pip installs: the user's, reconciled
  std::vector<std::string> pip_options;      // e.g. {"-f", URL}
  std::vector<std::pair<std::string, std::string>> env;  // ENV of the image
  std::vector<std::string> notes;  // what reconciliation changed, one line each (shown with -v)
  std::string dockerfile;
  std::string smoke_script;
  std::string tag;  // FAMILY-HASH12 over the Dockerfile, requirements.txt and smoke.sh
  // The Cloud Build source: Dockerfile, requirements.txt (when any), smoke.sh.
  std::vector<std::pair<std::string, std::string>> build_files() const;
  // One line for messages: "tpu image (python 3.11, jax[tpu]==0.7.2, g++)".
  std::string summary() const;
};

// Builds the recipe. Throws Error(Errc::usage) for a Python version no base image of the family
// has, naming the versions there are.
ImageRecipe make_image_recipe(const RecipeInput& input);

// The Python versions kinetic's own images of FAMILY offer, the default first.
const std::vector<std::string>& supported_pythons(AcceleratorFamily family);

// Whether Python X.Y can satisfy the PEP 440 specifier SPEC (">=3.10,<3.13", "~=3.11",
// "==3.12.*"); a bare minor version stands for its newest patch release.
bool python_satisfies(const std::string& version, const std::string& spec);

// LOCATION-docker.pkg.dev/PROJECT/kinetic/base:TAG
std::string image_reference(const std::string& location, const std::string& project,
                            const std::string& tag);

}  // namespace kinetic
