// The scatter bench's instance, shared by the bench and its diagnoses
// (scatter_bench, scatter_exact, scatter_pooled_config): FlexSP's GPT-7B
// coefficients and the long-tailed steps, drawn the same way everywhere so
// that step k is the same step in each.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "solvers/sequence_scatter.h"

namespace parplan::bench {

// FlexSP's cost model for GPT-7B on 64 A100s (Hetu-Galvatron, FlexSP solver
// `optimizer_param_dict['gpt-7b']`: alpha1 5.128e-6 ms/token^2, alpha2
// 183.9576e-3 ms/token, beta1 629.3563 ms, 4.480441895 MB of activations per
// token, 7.1174e9 parameters at 192K, 28 GB memory limit; all-to-all bandwidth
// {2: 119.54, 4: 104.07, 8: 96.5, 16: 10.33, 32: 5.94, 64: 4.87} GB/s over
// 2 MiB per token (4 x 2 x 32 layers x 4096 x 2 bytes) split over p ranks),
// with the group sizes from `min_size` up to `gpus`.
inline ScatterCoefficients flexsp_gpt7b(int gpus = 64, int min_size = 1) {
  ScatterCoefficients c;
  c.quadratic_ms = 5.128e-6;
  c.linear_ms = 183.9576e-3;
  c.fixed_ms = 629.3563;
  const int sizes[] = {1, 2, 4, 8, 16, 32, 64};
  const double bandwidth_gb_per_s[] = {0, 119.54, 104.07, 96.5, 10.33, 5.94, 4.87};
  for (size_t j = 0; j < 7 && sizes[j] <= gpus; ++j) {
    if (sizes[j] < min_size) continue;
    c.group_sizes.push_back(sizes[j]);
    c.alltoall_ms_per_token.push_back(sizes[j] == 1 ? 0.0 : 2.0 / (sizes[j] * bandwidth_gb_per_s[j]));
  }
  // (28 GiB - 7.1174e9 x 16 B / 64 of ZeRO-3 model states) / 4.48 MiB per token.
  c.token_capacity_per_gpu = std::floor((28 * 1024 - 7.1174 * 16 / 64 * 1024) / 4.480441895);
  return c;
}

/// The bench's first `count` steps: 512 log-normal lengths (median 3000
/// tokens, sigma 1.4) clipped to [128, 192K], one of them set to 192K.
inline std::vector<std::vector<std::int64_t>> long_tail_steps(int count) {
  constexpr std::int64_t kMaxTokens = 192 * 1024;
  std::mt19937_64 rng(2025);
  std::vector<std::vector<std::int64_t>> steps;
  for (int k = 0; k < count; ++k) {
    std::lognormal_distribution<double> length(std::log(3000.0), 1.4);
    std::vector<std::int64_t> lengths(512);
    for (auto& s : lengths)
      s = std::clamp<std::int64_t>(static_cast<std::int64_t>(length(rng)), 128, kMaxTokens);
    lengths[rng() % lengths.size()] = kMaxTokens;
    steps.push_back(std::move(lengths));
  }
  return steps;
}

}  // namespace parplan::bench
