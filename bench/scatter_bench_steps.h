// The scatter bench's instance, shared by the bench and its diagnoses
// (scatter_bench, scatter_exact, scatter_pooled_config): FlexSP's GPT-7B
// coefficients and the long-tailed steps, drawn the same way everywhere so
// that step k is the same step in each.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
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

/// How a reduced step is cut from a bench step (docs/scatter-exact.md).
struct ReducedStep {
  int sequences = 16;
  /// > 0: the step's `top` longest as they are and `sequences - top` others.
  int top = 0;
  /// Otherwise: one sequence of 3072 G tokens (the place the bench's 192K
  /// sequence has on 64 GPUs) and the others times `scale`, clipped to
  /// [64, 3072 G], or to one GPU's K when `short_only` (and no long one).
  double scale = 2;
  bool short_only = false;
  /// > 1: every length rounded up to the next power of it (whole tokens).
  double round_ratio = 0;
};

/// Reduced step `k` (its own draw, seed 7000 + k) from bench step `step`.
inline std::vector<std::int64_t> reduced_step(const std::vector<std::int64_t>& step, int k, int gpus,
                                              const ScatterCoefficients& c, const ReducedStep& how) {
  std::mt19937_64 rng(7000 + k);
  std::vector<std::int64_t> lengths;
  if (how.top > 0) {
    std::vector<std::int64_t> sorted = step;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    lengths.assign(sorted.begin(), sorted.begin() + how.top);
    std::vector<std::int64_t> pool(sorted.begin() + how.top, sorted.end());
    std::shuffle(pool.begin(), pool.end(), rng);
    for (int i = 0; i + how.top < how.sequences; ++i) lengths.push_back(pool[i]);
    return lengths;
  }
  // The bench's 192K sequence is 3072 tokens per GPU of 64: just over half
  // of G K, so only the whole machine holds it.
  const double half = 3072.0 * gpus;
  std::vector<std::int64_t> pool;
  for (std::int64_t s : step) {
    if (s < 192 * 1024) pool.push_back(s);
  }
  std::shuffle(pool.begin(), pool.end(), rng);
  const double longest = how.short_only ? c.token_capacity_per_gpu : half;
  if (!how.short_only) lengths.push_back(static_cast<std::int64_t>(half));
  for (int i = 0; static_cast<int>(lengths.size()) < how.sequences && i < static_cast<int>(pool.size());
       ++i) {
    double s = std::clamp(std::floor(pool[i] * how.scale), 64.0, longest);
    if (how.round_ratio > 1)
      s = std::min(half,
                   std::ceil(std::pow(how.round_ratio, std::ceil(std::log(s) / std::log(how.round_ratio)))));
    lengths.push_back(static_cast<std::int64_t>(s));
  }
  return lengths;
}

}  // namespace parplan::bench
