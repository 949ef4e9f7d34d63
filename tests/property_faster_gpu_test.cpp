// Property: a faster GPU never lengthens a step. Doubling every peak (and
// the HBM bandwidth) of the device shortens compute; exchanges hidden behind
// that compute may become exposed, but never by more than the compute saved.
// MoE configs matter most: the dense and the expert data-parallel exchanges
// share one overlap window, so a shorter window must not be subtracted twice.
#include <gtest/gtest.h>

#include <string>

#include "tests/model_on_cluster.h"

namespace parplan {
namespace {

ClusterSpec twice_as_fast(ClusterSpec cluster) {
  DeviceSpec& d = cluster.device;
  d.peak_bf16_flops_per_s *= 2;
  d.peak_fp16_flops_per_s *= 2;
  d.peak_fp8_flops_per_s *= 2;
  d.hbm_bytes_per_s *= 2;
  return cluster;
}

struct MoeCase {
  const char* model;
  int gpus, tp, pp, ep, zero;
  Recompute recompute;
};

TEST(PropertyFasterGpu, NeverLengthensAnMoeStep) {
  const MoeCase cases[] = {
      {"deepseek-v3", 1024, 4, 1, 128, 3, Recompute::kSelective},
      {"deepseek-v3", 1024, 4, 1, 128, 1, Recompute::kSelective},
      {"deepseek-v3", 1024, 2, 8, 64, 2, Recompute::kFull},
      {"mixtral-8x7b", 64, 1, 1, 8, 3, Recompute::kNone},
      {"mixtral-8x7b", 64, 2, 2, 4, 0, Recompute::kFull},
      {"qwen3-30b-a3b", 16, 1, 1, 16, 3, Recompute::kNone},
  };
  for (const MoeCase& m : cases) {
    for (const int gbs : {256, 1024}) {
      test::ModelOnCluster k(m.model, "dgx-h100", m.gpus, gbs, 4096);
      ParallelConfig& c = k.config;
      c.tp = m.tp, c.pp = m.pp, c.cp = 1, c.sp = m.tp > 1;
      c.dp = m.gpus / (m.tp * m.pp);
      c.ep = m.ep, c.etp = 1;
      c.mbs = 1, c.gbs = gbs, c.zero = m.zero, c.recompute = m.recompute;
      const double base_s = k.cost().time.step_s;
      const double fast_s = estimate_cost(k.model, twice_as_fast(k.cluster), k.job, c).time.step_s;
      EXPECT_LE(fast_s, base_s * (1 + 1e-9))
          << m.model << " tp " << m.tp << " pp " << m.pp << " ep " << m.ep << " zero " << m.zero << " gbs "
          << gbs << ": " << fast_s << " s on the faster GPU, " << base_s << " s";
    }
  }
}

}  // namespace
}  // namespace parplan
