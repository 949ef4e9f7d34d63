// The fluid bound of sequence scattering, the baseline the scatter bound
// tests measure tightening against: the fewest micro-batches the memory
// allows, each paying d, plus the larger of the cheapest GPU-ms over G and
// the slowest sequence's time on its fastest group.
#pragma once

#include <algorithm>
#include <cmath>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::test {

inline double fluid_bound_ms(const scatter_detail::Instance& in) {
  double tokens = 0, gpu_ms = 0, slowest = 0;
  for (int i = 0; i < in.num_sequences(); ++i) {
    tokens += in.tokens[i];
    gpu_ms += in.cheapest_gpu_ms[i];
    slowest = std::max(slowest, in.fastest_ms[i]);
  }
  const double fewest =
      std::max(1.0, std::ceil(tokens / (in.gpus * in.coefficients->token_capacity_per_gpu)));
  return fewest * in.coefficients->fixed_ms + std::max(gpu_ms / in.gpus, slowest);
}

}  // namespace parplan::test
