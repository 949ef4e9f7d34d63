// torchtitan's FSDP float8 all-gather (JobSpec::fsdp_fp8_all_gather) and the
// dgx-h200 profile its held-out runs use.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cost/parameters.h"
#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/io/run_file_reader.h"
#include "tests/cli_support.h"
#include "tests/model_on_cluster.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

double dp_bytes(const CostReport& r) {
  double sum = 0;
  for (double b : r.dp_traffic.bytes) sum += b;
  return sum;
}

struct Fixture : test::ModelOnCluster {
  Fixture() : ModelOnCluster("llama3.1-8b", "dgx-h200", 32, 64, 8192) {
    job.precision = Precision::kFp8;
    config.dp = 32;
    config.gbs = 64;
    config.mbs = 2;
    config.zero = 3;
  }
};

// Each gather moves one byte less per linear weight: the traffic it saves is
// to ZeRO++'s quantized weights (one byte less per every parameter) as the
// blocks' linear weights are to all the parameters.
TEST(FsdpFp8AllGather, SavesOneBytePerLinearWeightOfEveryGather) {
  Fixture f;
  const double plain = dp_bytes(f.cost());
  Fixture fp8 = f;
  fp8.job.fsdp_fp8_all_gather = true;
  Fixture quantized = f;
  quantized.config.qwz = true;
  const double fp8_saved = plain - dp_bytes(fp8.cost());
  const double qwz_saved = plain - dp_bytes(quantized.cost());
  ASSERT_GT(fp8_saved, 0.0);
  const ModelSpec& m = f.model;
  const double linear = m.layers * (attention_params(m) + dense_ffn_params(m));
  const double all =
      linear + m.layers * layer_norm_params(m) + embedding_params(m, f.job.seq) + untied_head_params(m);
  EXPECT_NEAR(fp8_saved / qwz_saved, linear / all, 1e-9);
  // Llama 3.1 8B: 6.98B of 8.03B parameters are the blocks' linear weights.
  EXPECT_NEAR(linear / all, 0.869, 0.002);
}

TEST(FsdpFp8AllGather, ChangesNothingWithoutFp8OrFsdp) {
  Fixture bf16;
  bf16.job.precision = Precision::kBf16;
  Fixture flagged = bf16;
  flagged.job.fsdp_fp8_all_gather = true;
  EXPECT_DOUBLE_EQ(dp_bytes(flagged.cost()), dp_bytes(bf16.cost()));
  Fixture zero1;
  zero1.config.zero = 1;
  Fixture zero1_flagged = zero1;
  zero1_flagged.job.fsdp_fp8_all_gather = true;
  EXPECT_DOUBLE_EQ(zero1_flagged.cost().time.step_s, zero1.cost().time.step_s);
}

TEST(FsdpFp8AllGather, RunFileKeyNeedsFp8AndZero3) {
  const std::string base =
      "name: r, model: llama3.1-8b, gpus: 16, gbs: 32, seq: 8192, step_s: 2, engine: torchtitan, ";
  const ClusterSpec h200 = load_cluster("dgx-h200");
  const auto runs =
      read_run_yaml(run_file_test::write_one_run(
                        "fp8ag", base + "precision: fp8, fsdp_float8_all_gather: true, "
                                        "config: {tp: 1, pp: 1, mbs: 2, zero: 3, recompute: selective}"),
                    h200);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].job.fsdp_fp8_all_gather);
  run_file_test::expect_error_naming(
      [&] {
        read_run_yaml(run_file_test::write_one_run("fp8ag_bf16",
                                                   base + "precision: bf16, fsdp_float8_all_gather: true, "
                                                          "config: {tp: 1, pp: 1, mbs: 2, zero: 3}"),
                      h200);
      },
      "fsdp_float8_all_gather");
  run_file_test::expect_error_naming(
      [&] {
        read_run_yaml(
            run_file_test::write_one_run("fp8ag_z1", base + "precision: fp8, fsdp_float8_all_gather: true, "
                                                            "config: {tp: 1, pp: 1, mbs: 2, zero: 1}"),
            h200);
      },
      "fsdp_float8_all_gather");
}

double dp_comm_s(const std::string& args) {
  const test::CliRun run = test::run_cli("estimate " + args + " --format json");
  EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.err;
  return run.exit_code == 0 ? nlohmann::json::parse(run.out)["time"]["dp_comm_s"].get<double>() : 0.0;
}

// --fsdp-float8-all-gather and the job key fsdp_float8_all_gather price it
// in estimate and plan; other engines and 16-bit plans refuse it, naming it.
TEST(FsdpFp8AllGather, FlagAndJobKeyPriceItAndOthersRefuseIt) {
  const std::string job = "--model llama3.1-8b --cluster dgx-h200 --gpus 32 --gbs 64 --seq 8192";
  const std::string titan = job + " --engine torchtitan --precision fp8 --tp 1 --pp 1 --mbs 2 --zero 3";
  const double plain = dp_comm_s(titan);
  const double fp8 = dp_comm_s(titan + " --fsdp-float8-all-gather");
  EXPECT_LT(fp8, plain);
  const std::string file =
      test::write_temp("fp8_gather_job.yaml",
                       "model: llama3.1-8b\ncluster: dgx-h200\ngpus: 32\ngbs: 64\nseq: 8192\n"
                       "precision: fp8\nengine: torchtitan\nfsdp_float8_all_gather: true\n"
                       "config: {tp: 1, pp: 1, mbs: 2, zero: 3}\n");
  EXPECT_DOUBLE_EQ(dp_comm_s("--job " + file), fp8);
  // The bad-input contract: exit 2, one line naming the flag (or the engine).
  test::expect_cli_refusal(
      "estimate " + job + " --engine torchtitan --tp 1 --pp 1 --zero 3 --fsdp-float8-all-gather",
      "--fsdp-float8-all-gather");
  test::expect_cli_refusal(
      "estimate " + job +
          " --engine megatron --precision fp8 --tp 1 --pp 1 --zero 3 --fsdp-float8-all-gather",
      "torchtitan");
}

// The H200 is the H100 SXM5's die with more, faster HBM (the datasheet):
// same peaks, 141 GB at 4.8 TB/s; nvidia-smi's 143771 MiB allocatable.
TEST(DgxH200, IsTheH100DieWithHbm3e) {
  const ClusterSpec h200 = load_cluster("dgx-h200");
  const ClusterSpec h100 = load_cluster("dgx-h100");
  EXPECT_DOUBLE_EQ(h200.device.peak_bf16_flops_per_s, h100.device.peak_bf16_flops_per_s);
  EXPECT_DOUBLE_EQ(h200.device.peak_fp8_flops_per_s, h100.device.peak_fp8_flops_per_s);
  EXPECT_DOUBLE_EQ(h200.device.hbm_bytes, 141.0 * kGib);
  EXPECT_DOUBLE_EQ(h200.device.hbm_bytes_per_s, 4.8e12);
  EXPECT_NEAR(h200.device.usable_hbm_bytes() / (1024.0 * 1024.0), 143771.0, 1.0);
}

}  // namespace
}  // namespace parplan
