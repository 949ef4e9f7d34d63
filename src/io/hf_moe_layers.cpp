#include "src/io/hf_moe_layers.h"

#include <algorithm>

namespace parplan {

std::optional<MoeLayerLayout> moe_layer_layout(int layers, const std::function<bool(int)>& is_moe) {
  int first = -1, second = -1;
  for (int i = 0; i < layers && second < 0; ++i) {
    if (!is_moe(i)) continue;
    (first < 0 ? first : second) = i;
  }
  if (first < 0) return std::nullopt;
  // One MoE layer: a period past the last layer leaves it alone.
  MoeLayerLayout layout{first, second < 0 ? std::max(1, layers - first) : second - first};
  for (int i = 0; i < layers; ++i) {
    const bool expected =
        i >= layout.first_dense_layers && (i - layout.first_dense_layers) % layout.moe_layer_freq == 0;
    if (expected != is_moe(i)) return std::nullopt;
  }
  return layout;
}

}  // namespace parplan
