#include "cost/sliding_window.h"

#include <algorithm>

namespace parplan {

double causal_pairs(double seq) { return seq * (seq + 1.0) / 2.0; }

double window_pairs(double seq, double window) {
  if (window <= 0 || window >= seq) return causal_pairs(seq);
  // Positions 0 .. window - 1 see i + 1 keys; the rest see window each.
  return window * (window + 1.0) / 2.0 + (seq - window) * window;
}

double windowed_layer_fraction(const ModelSpec& model) {
  if (model.sliding_window <= 0 || model.layers <= 0) return 0.0;
  const int full = std::clamp(model.full_attention_layers, 0, model.layers);
  return static_cast<double>(model.layers - full) / model.layers;
}

double attention_pair_ratio(const ModelSpec& model, double seq) {
  const double f = windowed_layer_fraction(model);
  if (f <= 0 || seq <= 0) return 1.0;
  return 1.0 - f + f * window_pairs(seq, model.sliding_window) / causal_pairs(seq);
}

double windowed_kernel_seq(double seq, double window) {
  if (window <= 0) return seq;
  return std::min(seq, 2.0 * window);
}

}  // namespace parplan
