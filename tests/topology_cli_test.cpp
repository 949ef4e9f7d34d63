// The CLI surface of topology-aware planning: --zeropp / --hierarchical-partition,
// the JSON keys (config.zeropp, config.hierarchical_partition, traffic,
// placement, notes), the launch files of a heterogeneous plan, bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::run_cli;

const std::string kFrontier = "--model gpt-20b --cluster frontier --gpus 384 --gbs 384 --seq 1024";
const std::string kHolmes = "--model gpt-7.5b --cluster holmes-mixed --gpus 64 --gbs 128 --seq 2048 --zero 1";

double tflops(const std::string& args) {
  const CliRun run = run_cli("estimate " + kFrontier + " --tp 1 --pp 1 --mbs 1 " + args + " --format json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return nlohmann::json::parse(run.out)["throughput"]["model_tflops_per_gpu"].get<double>();
}

TEST(TopologyCli, EstimateZeroPlusPlusAndHierarchicalPartition) {
  const CliRun zpp = run_cli("estimate " + kFrontier + " --tp 1 --pp 1 --zeropp --format json");
  ASSERT_EQ(zpp.exit_code, 0) << zpp.err;
  const auto z = nlohmann::json::parse(zpp.out);
  EXPECT_TRUE(z["config"]["zeropp"].get<bool>());
  EXPECT_FALSE(z["config"]["hierarchical_partition"].get<bool>());
  EXPECT_EQ(z["config"]["zero"], 3);
  EXPECT_EQ(z["config"]["hpz_ranks"], 8);
  ASSERT_TRUE(z["traffic"].is_array());
  EXPECT_EQ(z["traffic"].size(), 3u);  // package, node, slingshot
  const CliRun hier =
      run_cli("estimate " + kFrontier + " --tp 1 --pp 1 --hierarchical-partition --format json");
  ASSERT_EQ(hier.exit_code, 0) << hier.err;
  const auto h = nlohmann::json::parse(hier.out);
  EXPECT_FALSE(h["config"]["zeropp"].get<bool>());
  EXPECT_TRUE(h["config"]["hierarchical_partition"].get<bool>());
  for (const char* key : {"params", "params_secondary", "grads", "optimizer"})
    EXPECT_TRUE(h["config"]["partition"].contains(key)) << key;
  // The ordering the Frontier paper reports.
  EXPECT_LT(tflops("--zero 3"), tflops("--zeropp"));
  EXPECT_LT(tflops("--zeropp"), tflops("--hierarchical-partition"));
}

TEST(TopologyCli, PlanOnAHeterogeneousClusterReportsPlacementAndWhy) {
  const CliRun run = run_cli("plan " + kHolmes + " --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_TRUE(j.contains("placement"));
  for (const char* kind : {"tp", "dp", "pp"}) {
    ASSERT_TRUE(j["placement"][kind].is_array()) << kind;
    ASSERT_FALSE(j["placement"][kind].empty()) << kind;
    for (const auto& g : j["placement"][kind]) {
      EXPECT_TRUE(g["ranks"].is_array());
      EXPECT_TRUE(g["nic"].is_string() || g["nic"].is_array());
    }
  }
  for (const char* kind : {"tp", "dp"})
    for (const auto& g : j["placement"][kind]) {
      ASSERT_TRUE(g["nic"].is_string());
      EXPECT_NE(g["nic"].get<std::string>(), "ethernet");
    }
  EXPECT_FALSE(j["notes"].empty());
  EXPECT_EQ(j["config"]["stage_layers"].size(), j["config"]["pp"].get<size_t>());
}

TEST(TopologyCli, EmitOnAHeterogeneousClusterWritesHostfileAndNcclEnvironment) {
  const std::string out = ::testing::TempDir() + "topology_emit_" + std::to_string(::getpid());
  std::filesystem::remove_all(out);
  const CliRun run = run_cli("plan " + kHolmes + " --emit megatron --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string hostfile = test::slurp(out + "/hostfile");
  const std::string env = test::slurp(out + "/nccl_env.sh");
  EXPECT_LT(hostfile.find("ib-node-0"), hostfile.find("roce-node-0"));  // rank order: group by group
  EXPECT_NE(env.find("NCCL_IB_HCA"), std::string::npos);
  EXPECT_NE(env.find("NCCL_IB_GID_INDEX"), std::string::npos);
  EXPECT_NE(env.find("NCCL_SOCKET_IFNAME"), std::string::npos);
  EXPECT_NE(env.find("NCCL_NET=IB"), std::string::npos);
  EXPECT_NE(test::slurp(out + "/launch.sh").find("nccl_env.sh"), std::string::npos);
  std::filesystem::remove_all(out);
}

// Two node groups, one on InfiniBand and one on 1.5625 GB/s Ethernet, with
// Ethernet between them (A100 nodes); `fast_bandwidth` is the first group's.
std::string two_group_profile(const std::string& fast_nic, double fast_bandwidth) {
  return "name: two-groups\nranks_per_node: 8\nnodes: 8\ncollectives: ring\ncollective_latency_us: 8.4\n"
         "device: {name: A100-SXM4-80GB, peak_bf16_tflops: 312, hbm_gib: 80, hbm_tb_per_s: 2.039,\n"
         "  gemm_efficiency_max: 0.703, gemm_half_dim: 82, gemm_half_gflop: 0.09,\n"
         "  flash_attention_efficiency: 0.55, memory_bound_efficiency: 0.778, reserved_gib: 1.4}\n"
         "tiers:\n"
         "  - {name: nvlink, ranks: 8, bandwidth_gb_per_s: 300, latency_us: 3.4, efficiency: 1.0}\n"
         "  - {name: outer, bandwidth_gb_per_s: 1.5625, latency_us: 50, efficiency: 0.5, nic: ethernet}\n"
         "groups:\n"
         "  - {name: fast, nodes: 4, nic: " +
         fast_nic + ", bandwidth_gb_per_s: " + std::to_string(fast_bandwidth) +
         ", latency_us: 9.6, efficiency: 0.62}\n"
         "  - {name: slow, nodes: 4, nic: ethernet, bandwidth_gb_per_s: 1.5625, latency_us: 50, efficiency: "
         "0.5}\n"
         "inter_group: {name: wan, bandwidth_gb_per_s: 1.5625, latency_us: 50, efficiency: 0.5, nic: "
         "ethernet}\n";
}

// Faster NICs on half the nodes never give a slower best plan: the search
// keeps the meshes whose data-parallel groups cross the groups (costed on
// the link between them), which Holmes' placement would drop.
TEST(TopologyCli, AFasterGroupNeverGivesASlowerPlan) {
  const std::string job = " --model llama3-8b --gpus 64 --gbs 256 --seq 4096 --format json";
  const auto step_s = [&](const std::string& profile, const char* name) {
    const nlohmann::json j = test::cli_json("plan --cluster " + test::write_temp(name, profile) + job);
    return j.empty() ? 0.0 : j["time"]["step_s"].get<double>();
  };
  const double slow = step_s(two_group_profile("ethernet", 1.5625), "groups_slow.yaml");
  const double mixed = step_s(two_group_profile("ib", 50), "groups_mixed.yaml");
  ASSERT_GT(slow, 0);
  EXPECT_LE(mixed, slow * (1 + 1e-9));
}

// A plan whose data-parallel groups span the node groups runs every node on
// the link between groups (stock NCCL: one transport per communicator); a
// pipelined plan of per-group transports is refused by the DeepSpeed
// launcher script, which would hand node 0's NCCL settings to every node.
TEST(TopologyCli, OneTransportWhenDataParallelGroupsCrossNodeGroups) {
  const std::string out = ::testing::TempDir() + "topology_cross_" + std::to_string(::getpid());
  std::filesystem::remove_all(out);
  const CliRun cross = run_cli(
      "plan --model gpt-7.5b --cluster holmes-mixed --gpus 64 --gbs 256 --seq 2048 "
      "--pp 1 --zero 1 --emit megatron --out " +
      out);
  ASSERT_EQ(cross.exit_code, 0) << cross.err;
  const std::string env = test::slurp(out + "/nccl_env.sh");
  EXPECT_EQ(env.find("case "), std::string::npos) << env;
  EXPECT_NE(env.find("NCCL_NET=Socket"), std::string::npos) << env;
  EXPECT_EQ(env.find("NCCL_NET=IB"), std::string::npos) << env;
  std::filesystem::remove_all(out);
  const CliRun staged = run_cli("plan " + kHolmes + " --emit deepspeed --out " + out);
  ASSERT_EQ(staged.exit_code, 0) << staged.err;
  const std::string deepspeed = test::slurp(out + "/launch_deepspeed.sh");
  EXPECT_NE(deepspeed.find("start launch.sh on each node instead"), std::string::npos) << deepspeed;
  EXPECT_NE(test::slurp(out + "/nccl_env.sh").find("case "), std::string::npos);
  std::filesystem::remove_all(out);
}

TEST(TopologyCli, NoQuantizedCommKeepsWeightsAndGradientsExact) {
  // Allowed lossy and unreleased schemes, pure sharded data parallelism on
  // Frontier plans the quantized hierarchical scheme; by default (exact
  // collectives, released schemes) plain ZeRO stages or exact hpZ only.
  const CliRun free =
      run_cli("plan " + kFrontier + " --tp 1 --pp 1 --allow-unreleased --allow-lossy-comm --format json");
  ASSERT_EQ(free.exit_code, 0) << free.err;
  const auto f = nlohmann::json::parse(free.out)["config"];
  EXPECT_TRUE(f["qgz"].get<bool>() || f["qwz"].get<bool>());
  const CliRun exact = run_cli("plan " + kFrontier + " --tp 1 --pp 1 --format json");
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  const auto e = nlohmann::json::parse(exact.out)["config"];
  EXPECT_FALSE(e["qgz"].get<bool>());
  EXPECT_FALSE(e["qwz"].get<bool>());
  EXPECT_FALSE(e["hierarchical_partition"].get<bool>());
  // The free plan is the optimum over a superset: never slower; its notes
  // name the lossy choice and the exact alternative.
  const double free_step = nlohmann::json::parse(free.out)["time"]["step_s"].get<double>();
  const double exact_step = nlohmann::json::parse(exact.out)["time"]["step_s"].get<double>();
  EXPECT_LE(free_step, exact_step);
  bool named = false;
  const auto free_json = nlohmann::json::parse(free.out);
  for (const auto& note : free_json["notes"])
    named = named || note.get<std::string>().find("--allow-lossy-comm") != std::string::npos;
  EXPECT_TRUE(named);
}

struct BadFlags {
  const char* name;
  std::string args;
  const char* must_mention;
};

class TopologyCliBadInput : public ::testing::TestWithParam<BadFlags> {};

TEST_P(TopologyCliBadInput, OneLineOnStderrAndExitTwo) {
  const BadFlags& bad = GetParam();
  const CliRun run = run_cli(bad.args);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  // One error line; gpt-20b's unmodelled parallel residual adds a warning line.
  const auto warning = run.err.find("parplan: warning: ");
  const std::string error =
      warning == std::string::npos ? run.err : run.err.substr(run.err.find('\n', warning) + 1);
  EXPECT_EQ(test::line_count(error), 1) << run.err;
  EXPECT_NE(run.err.find(bad.must_mention), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Topology, TopologyCliBadInput,
    ::testing::Values(
        BadFlags{"BothSchemes", "estimate " + kFrontier + " --tp 1 --pp 1 --zeropp --hierarchical-partition",
                 "--hierarchical-partition"},
        BadFlags{"ZeroPlusPlusWithZero1", "estimate " + kFrontier + " --tp 1 --pp 1 --zeropp --zero 1",
                 "--zero"},
        BadFlags{"HierarchicalWithPipeline",
                 "estimate " + kFrontier + " --tp 1 --pp 2 --hierarchical-partition", "--pp 1"},
        BadFlags{"PlanZeroPlusPlusWithZero2", "plan " + kFrontier + " --zeropp --zero 2", "--zero"},
        BadFlags{"NoQuantizationWithZeroPlusPlus", "plan " + kFrontier + " --zeropp --no-quantized-comm",
                 "--no-quantized-comm"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace parplan
