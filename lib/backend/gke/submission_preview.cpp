#include "backend/gke/submission_preview.h"

#include "backend/gke/job_manifest.h"
#include "backend/gke/names.h"
#include "job/manifest.h"

namespace kinetic::gke {
namespace {

class GkeSubmissionPreview : public SubmissionPreview {
 public:
  explicit GkeSubmissionPreview(Target target) : target_(std::move(target)) {}

  bool gzip_for_prebuilt_images() const override { return true; }

  std::string image(const ImageRecipe* recipe, const std::string& custom) const override {
    return recipe ? image_reference(target_.region, target_.project, recipe->tag) : custom;
  }

  std::string context_uri(const std::string& sha256, Compression compression) const override {
    return "gs://" + bucket() + "/" + context_object(sha256, compression);
  }

  std::vector<nlohmann::ordered_json> manifests(const JobSpec& spec) const override {
    std::map<std::string, std::string> redacted;
    for (const auto& name : spec.secret_env) redacted[name] = "<redacted>";
    return build_manifests(manifest_input(spec, bucket(), target_.ns), redacted);
  }

 private:
  std::string bucket() const { return bucket_name(target_.project, target_.cluster); }

  Target target_;
};

}  // namespace

std::unique_ptr<SubmissionPreview> make_submission_preview(const Target& target,
                                                           const std::string& command) {
  require_target(target, command);
  return std::make_unique<GkeSubmissionPreview>(target);
}

}  // namespace kinetic::gke
