#include "metrics/feature_net.h"

namespace hamgan::metrics {

std::string describe_feature_net(const std::string& identity) {
  return identity.empty() ? "Inception-v3 pool3 (2048-d)" : identity;
}

}  // namespace hamgan::metrics
