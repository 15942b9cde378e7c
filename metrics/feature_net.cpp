#include "metrics/feature_net.h"

namespace hamgan::metrics {

std::string describe_feature_net(const std::string& identity) {
  if (identity.empty()) return "Inception-v3 pool3 (2048-d)";
  // "dinov2_vits14-<hash>" (metrics/dinov2.h)
  if (identity.rfind("dinov2_", 0) == 0) return "DINOv2 " + identity.substr(7, 6) + " class token (" + identity + ")";
  return identity;
}

}  // namespace hamgan::metrics
