// The image recipe (job/image_recipe.h, docs/images.md): base image per family and Python,
// runtime reconciliation, platform variables, the smoke test, and what the tag covers.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "job/image_recipe.h"
#include "pack/requirements.h"

namespace kinetic {
namespace {

using Lines = std::vector<std::string>;

ImageRecipe recipe(AcceleratorFamily family, const std::string& requirements = "",
                   const std::string& python = "", const std::string& requires_python = "",
                   const std::string& base_image = "") {
  RecipeInput in;
  in.family = family;
  in.requirements = normalize_requirements(requirements);
  in.python = python;
  in.requires_python = requires_python;
  in.base_image = base_image;
  return make_image_recipe(in);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string env_of(const ImageRecipe& r, const std::string& key) {
  for (const auto& [k, v] : r.env)
    if (k == key) return v;
  return "<unset>";
}

TEST(ImageRecipe, EveryFamilyHasPythonPipAToolchainAndASmokeStep) {
  for (auto family : {AcceleratorFamily::cpu, AcceleratorFamily::tpu, AcceleratorFamily::gpu}) {
    ImageRecipe r = recipe(family);
    SCOPED_TRACE(r.dockerfile);
    EXPECT_TRUE(has(r.dockerfile, "apt-get install -y --no-install-recommends "));
    EXPECT_TRUE(has(r.dockerfile, "g++ make zstd"));
    EXPECT_TRUE(has(r.smoke_script, "command -v zstd"));
    EXPECT_TRUE(has(r.dockerfile, "COPY smoke.sh /kinetic/smoke.sh\nRUN sh /kinetic/smoke.sh\n"));
    EXPECT_TRUE(has(r.smoke_script, "command -v python3"));
    EXPECT_TRUE(has(r.smoke_script, "g++ -o"));
    EXPECT_EQ(r.tag.substr(0, r.tag.find('-')), family_name(family));
    EXPECT_EQ(r.tag.size(), family_name(family).size() + 13);
  }
  // The CUDA images bring no Python: the recipe installs Ubuntu's, which is PEP 668-managed.
  ImageRecipe gpu = recipe(AcceleratorFamily::gpu);
  EXPECT_TRUE(has(gpu.dockerfile, "FROM nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04\n"));
  EXPECT_TRUE(has(gpu.dockerfile, "python3 python3-pip g++ make"));
  EXPECT_EQ(env_of(gpu, "PIP_BREAK_SYSTEM_PACKAGES"), "1");
  EXPECT_EQ(gpu.python, "3.12");
  EXPECT_TRUE(has(recipe(AcceleratorFamily::cpu).dockerfile, "FROM python:3.11-slim\n"));
  EXPECT_FALSE(has(recipe(AcceleratorFamily::cpu).dockerfile, "python3-pip"));
}

TEST(ImageRecipe, PlatformVariablesMakeAMissingAcceleratorAnError) {
  EXPECT_EQ(env_of(recipe(AcceleratorFamily::tpu), "JAX_PLATFORMS"), "tpu");
  EXPECT_EQ(env_of(recipe(AcceleratorFamily::tpu), "PJRT_DEVICE"), "TPU");
  EXPECT_EQ(env_of(recipe(AcceleratorFamily::gpu), "JAX_PLATFORMS"), "cuda");
  EXPECT_EQ(env_of(recipe(AcceleratorFamily::cpu), "JAX_PLATFORMS"), "cpu");
  EXPECT_TRUE(has(recipe(AcceleratorFamily::tpu).dockerfile, "JAX_PLATFORMS=tpu"));
}

TEST(ImageRecipe, TpuGetsJaxTpuPinnedWhenTheJobNamesNoRuntime) {
  ImageRecipe r = recipe(AcceleratorFamily::tpu, "numpy\n");
  EXPECT_EQ(r.requirements, (Lines{"jax[tpu]==0.7.2", "numpy"}));
  EXPECT_EQ(r.runtime_modules, Lines{"jax"});
  EXPECT_TRUE(has(r.smoke_script, "python3 -c 'import jax'"));
  EXPECT_TRUE(has(r.dockerfile,
                  "pip install -r /kinetic/requirements.txt -f "
                  "https://storage.googleapis.com/jax-releases/libtpu_releases.html"));
  ASSERT_EQ(r.build_files().size(), 3u);
  EXPECT_EQ(r.build_files()[1].second, "jax[tpu]==0.7.2\nnumpy\n");
}

TEST(ImageRecipe, AJaxLineIsReconciledNotDuplicated) {
  // The user's version wins; the extra becomes the family's; no second jax line.
  ImageRecipe r = recipe(AcceleratorFamily::tpu, "jax>=0.6\nJAXlib\n");
  EXPECT_EQ(r.requirements, (Lines{"jax[tpu]>=0.6", "jaxlib"}));
  EXPECT_EQ(r.runtime, "jax[tpu]>=0.6");
  EXPECT_FALSE(r.notes.empty());
  // A foreign accelerator extra is replaced, others kept.
  EXPECT_EQ(recipe(AcceleratorFamily::tpu, "jax[cuda12,k8s]==0.7.1\n").requirements,
            Lines{"jax[k8s,tpu]==0.7.1"});
  // A pinned jaxlib alone decides the jax version, so the two agree.
  EXPECT_EQ(recipe(AcceleratorFamily::tpu, "jaxlib==0.6.2\n").requirements,
            (Lines{"jax[tpu]==0.6.2", "jaxlib==0.6.2"}));
  // GPU: jax maps to its CUDA build; without jax nothing is added.
  EXPECT_EQ(recipe(AcceleratorFamily::gpu, "jax==0.7.2\n").requirements,
            Lines{"jax[cuda12]==0.7.2"});
  EXPECT_EQ(recipe(AcceleratorFamily::gpu, "torch\n").requirements, Lines{"torch"});
  // CPU: jax's default wheels are the CPU build.
  EXPECT_EQ(recipe(AcceleratorFamily::cpu, "jax\n").requirements, Lines{"jax"});
}

TEST(ImageRecipe, TorchXlaSelectsItsOwnTpuRuntime) {
  ImageRecipe r = recipe(AcceleratorFamily::tpu, "torch~=2.5\ntorch_xla~=2.5\n");
  EXPECT_EQ(r.requirements, (Lines{"torch-xla[tpu]~=2.5", "torch~=2.5"}));
  EXPECT_EQ(r.runtime_modules, Lines{"torch_xla"});
  EXPECT_TRUE(has(r.dockerfile, "libtpu-releases/index.html"));
  EXPECT_FALSE(has(r.dockerfile, "jax-releases"));
  EXPECT_TRUE(has(r.smoke_script, "import torch_xla"));
}

TEST(ImageRecipe, PythonVersionFromFlagOrRequiresPython) {
  EXPECT_EQ(recipe(AcceleratorFamily::cpu, "", "3.12").base_image, "python:3.12-slim");
  EXPECT_EQ(recipe(AcceleratorFamily::cpu, "", "3.12.4").python, "3.12");
  EXPECT_EQ(recipe(AcceleratorFamily::gpu, "", "3.10").base_image,
            "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04");
  // requires-python: the default when it satisfies, else the newest that does.
  EXPECT_EQ(recipe(AcceleratorFamily::cpu, "", "", ">=3.10").python, "3.11");
  EXPECT_EQ(recipe(AcceleratorFamily::cpu, "", "", ">=3.12").python, "3.13");
  EXPECT_EQ(recipe(AcceleratorFamily::cpu, "", "", ">=3.9,<3.11").python, "3.10");
  EXPECT_EQ(recipe(AcceleratorFamily::cpu, "", "", "==3.12.*").python, "3.12");
  EXPECT_EQ(recipe(AcceleratorFamily::cpu, "", "", "~=3.12.1").python, "3.12");
  try {
    recipe(AcceleratorFamily::tpu, "", "3.9");
    FAIL() << "3.9 has no TPU image";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_TRUE(has(e.what(), "--python 3.9")) << e.what();
    EXPECT_TRUE(has(e.what(), "3.11, 3.12, 3.13")) << e.what();
  }
  EXPECT_THROW(recipe(AcceleratorFamily::cpu, "", "", ">=3.14"), Error);
  EXPECT_THROW(recipe(AcceleratorFamily::cpu, "", "two"), Error);
}

TEST(ImageRecipe, PythonSpecifiers) {
  EXPECT_TRUE(python_satisfies("3.11", ">=3.11.2"));
  EXPECT_TRUE(python_satisfies("3.11", "<3.12"));
  EXPECT_FALSE(python_satisfies("3.12", "<3.12"));
  EXPECT_TRUE(python_satisfies("3.12", "<=3.12"));
  EXPECT_FALSE(python_satisfies("3.11", "!=3.11"));
  EXPECT_TRUE(python_satisfies("3.11", "!=3.11.3"));
  EXPECT_TRUE(python_satisfies("3.13", "~=3.11"));
  EXPECT_FALSE(python_satisfies("3.12", "~=3.11.0"));
  EXPECT_TRUE(python_satisfies("3.11", ""));
}

TEST(ImageRecipe, ACustomBaseImageIsUsedAndItsPythonDecides) {
  ImageRecipe r = recipe(AcceleratorFamily::cpu, "", "", "", "example.com/team/base:7");
  EXPECT_TRUE(has(r.dockerfile, "FROM example.com/team/base:7\n"));
  EXPECT_TRUE(r.python.empty());
  EXPECT_THROW(recipe(AcceleratorFamily::cpu, "", "3.12", "", "example.com/team/base:7"), Error);
}

TEST(ImageRecipe, TagCoversBaseRecipeAndRequirementsAndNothingElse) {
  const std::string tag = recipe(AcceleratorFamily::tpu, "numpy>=1.26\n").tag;
  // Comments, order, case and whitespace of the requirements do not matter...
  EXPECT_EQ(recipe(AcceleratorFamily::tpu, "# pinned\n  NumPy >= 1.26  # x\n\n").tag, tag);
  // ...their content, the Python (base image), the family and a custom base do.
  EXPECT_NE(recipe(AcceleratorFamily::tpu, "numpy>=1.27\n").tag, tag);
  EXPECT_NE(recipe(AcceleratorFamily::tpu, "numpy>=1.26\n", "3.12").tag, tag);
  EXPECT_NE(recipe(AcceleratorFamily::cpu, "numpy>=1.26\n").tag.substr(4), tag.substr(4));
  EXPECT_NE(recipe(AcceleratorFamily::tpu, "numpy>=1.26\n", "", "", "python:3.11-slim").tag, tag);
}

}  // namespace
}  // namespace kinetic
