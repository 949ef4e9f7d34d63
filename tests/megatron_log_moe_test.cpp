// MoE runs through Megatron logs: the MoE arguments Megatron prints
// (--num-experts, --moe-router-topk, --moe-ffn-hidden-size,
// --moe-shared-expert-intermediate-size, --moe-layer-freq,
// --expert-model-parallel-size, --expert-tensor-parallel-size,
// --moe-token-dispatcher-type, --overlap-moe-expert-parallel-comm, the
// capacity factor) are read back, so a log written by `tune --simulate`
// predicts the step it was written with; before, the reader took such a log
// for a dense model and calibration fitted the constants to the difference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "cost/step_cost.h"
#include "solvers/fit_run.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/megatron_log_reader.h"
#include "src/io/model_loader.h"
#include "src/tune/simulated_log.h"

namespace parplan {
namespace {

struct MoeRun {
  ModelSpec model;
  ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job;
  ParallelConfig config;
  MoeRun(const std::string& name, int gpus, int tp, int pp, int ep) : model(load_model(name)) {
    job.gpus = gpus, job.gbs = 256, job.seq = 4096;
    apply_engine_recipe("megatron", job);
    config.tp = tp, config.pp = pp, config.cp = 1, config.ep = ep, config.etp = 1;
    config.dp = gpus / (tp * pp), config.mbs = 1, config.gbs = 256, config.zero = 1, config.sp = tp > 1;
  }
};

void expect_round_trip(const MoeRun& r) {
  const double step_s = estimate_cost(r.model, r.cluster, r.job, r.config).time.step_s;
  const std::string log = simulated_megatron_log(r.model, r.job, r.config, step_s, 50);
  const FitRun run = parse_megatron_log(log, r.model.name + ".log", r.cluster);
  EXPECT_EQ(run.model.experts, r.model.experts);
  EXPECT_EQ(run.model.top_k, r.model.top_k);
  EXPECT_EQ(run.model.expert_ffn_hidden, r.model.expert_ffn_hidden);
  EXPECT_EQ(run.model.shared_experts, r.model.shared_experts);
  EXPECT_EQ(run.model.first_dense_layers, r.model.first_dense_layers);
  EXPECT_EQ(run.model.qk_norm, r.model.qk_norm);
  EXPECT_EQ(run.config.ep, r.config.ep);
  EXPECT_EQ(run.config.etp, r.config.etp);
  EXPECT_EQ(run.config.a2a_hierarchical, r.config.a2a_hierarchical);
  EXPECT_EQ(run.config.ep_overlap, r.config.ep_overlap);
  EXPECT_NEAR(run.measured_step_s / step_s, 1.0, 1e-3);
  // The run read back predicts the step it was written with.
  EXPECT_NEAR(predict_run(run, r.cluster).step_s / step_s, 1.0, 1e-9);
}

TEST(MegatronLogMoe, MixtralRoundTrips) {
  MoeRun r("mixtral-8x7b", 64, 2, 2, 8);
  expect_round_trip(r);
  r.config.a2a_hierarchical = true;
  expect_round_trip(r);
}

TEST(MegatronLogMoe, Qwen3WithQkNormRoundTrips) { expect_round_trip(MoeRun("qwen3-30b-a3b", 16, 1, 1, 8)); }

TEST(MegatronLogMoe, LeadingDenseLayersAndSharedExpertsRoundTrip) {
  MoeRun r("mixtral-8x7b", 64, 2, 2, 8);
  r.model.first_dense_layers = 2;
  r.model.shared_experts = 1;
  expect_round_trip(r);
}

TEST(MegatronLogMoe, ADenseLayerAfterAnMoeOneIsBadInput) {
  MoeRun r("mixtral-8x7b", 64, 2, 2, 8);
  std::string log = simulated_megatron_log(r.model, r.job, r.config, 10.0, 50);
  const std::string key = "moe_layer_freq ";
  const auto at = log.find(key);
  ASSERT_NE(at, std::string::npos);
  const auto end = log.find('\n', at);
  std::string pattern = "[1, 0";
  for (int i = 2; i < r.model.layers; ++i) pattern += ", 1";
  log.replace(at, end - at, key + std::string(34, '.') + " " + pattern + "]");
  try {
    parse_megatron_log(log, "pattern.log", r.cluster);
    ADD_FAILURE() << "a dense layer after an MoE one was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("moe_layer_freq"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parplan
