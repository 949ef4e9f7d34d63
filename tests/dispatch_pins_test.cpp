// The expert all-to-all as a given config runs it: --a2a flat|hierarchical
// and --ep-overlap on|off (job file config: a2a_hierarchical, ep_overlap,
// the run files' keys) pin what
// estimate and check cost and what plan searches, over the defaults
// (hierarchical where the expert-parallel group spans nodes, the overlap
// wherever Megatron's rules allow it).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

// Mixtral 8x7B, etp 2 x ep 8 = 16 ranks: the expert group spans two nodes.
const std::string kAcrossNodes =
    "estimate --model mixtral-8x7b --cluster dgx-h100 --gpus 32 --gbs 64 --seq 4096 --tp 2 --sp --pp 2 "
    "--vp 2 --ep 8 --etp 2 --format json";

nlohmann::json estimate(const std::string& extra) {
  const test::CliRun run = test::run_cli(kAcrossNodes + extra);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return nlohmann::json::parse(run.out);
}

TEST(DispatchPins, EstimateCostsTheGivenAllToAll) {
  const nlohmann::json defaults = estimate("");
  EXPECT_EQ(defaults["config"]["a2a"], "hierarchical");
  EXPECT_TRUE(defaults["config"]["ep_overlap"].get<bool>());
  const nlohmann::json flat = estimate(" --a2a flat");
  EXPECT_EQ(flat["config"]["a2a"], "flat");
  // Across nodes the hierarchical dispatch moves one copy per node.
  EXPECT_GE(flat["time"]["step_s"].get<double>(), defaults["time"]["step_s"].get<double>());
  const nlohmann::json exposed = estimate(" --ep-overlap off");
  EXPECT_FALSE(exposed["config"]["ep_overlap"].get<bool>());
  EXPECT_GE(exposed["time"]["step_s"].get<double>(), defaults["time"]["step_s"].get<double>());
}

TEST(DispatchPins, JobFileKeysMatchTheFlags) {
  const std::string job = test::write_temp(
      "dispatch_job.yaml",
      "model: mixtral-8x7b\ncluster: dgx-h100\ngpus: 32\ngbs: 64\nseq: 4096\n"
      "config: {tp: 2, sp: true, pp: 2, vp: 2, ep: 8, etp: 2, a2a_hierarchical: false, ep_overlap: false}\n");
  const test::CliRun from_file = test::run_cli("estimate --job " + job + " --format json");
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  const nlohmann::json j = nlohmann::json::parse(from_file.out);
  const nlohmann::json flags = estimate(" --a2a flat --ep-overlap off");
  EXPECT_EQ(j["config"]["a2a"], "flat");
  EXPECT_FALSE(j["config"]["ep_overlap"].get<bool>());
  EXPECT_DOUBLE_EQ(j["time"]["step_s"].get<double>(), flags["time"]["step_s"].get<double>());
  const std::string bad =
      test::write_temp("dispatch_bad.yaml",
                       "model: mixtral-8x7b\ncluster: dgx-h100\ngpus: 32\ngbs: 64\nseq: 4096\n"
                       "config: {tp: 2, sp: true, pp: 2, ep: 8, a2a_hierarchical: sideways}\n");
  test::expect_refusal(test::run_cli("estimate --job " + bad), "a2a_hierarchical");
}

TEST(DispatchPins, ImpossibleOrMisplacedChoicesAreOneLine) {
  const std::string base = "estimate --model mixtral-8x7b --cluster dgx-h100 --gpus 32 --gbs 64 --seq 4096 ";
  // Megatron overlaps the expert all-to-all only with pp 1 or interleaving.
  test::expect_refusal(test::run_cli(base + "--tp 1 --pp 2 --ep 8 --ep-overlap on"), "overlapped");
  test::expect_refusal(test::run_cli(base + "--tp 1 --pp 1 --a2a hierarchical"), "ep 2 or more");
  test::expect_refusal(test::run_cli(base + "--tp 1 --pp 1 --ep 8 --a2a ring"), "--a2a");
  test::expect_refusal(test::run_cli(base + "--tp 1 --pp 1 --ep 8 --ep-overlap maybe"), "--ep-overlap");
  test::expect_refusal(
      test::run_cli(
          "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 --tp 1 --pp 1 "
          "--a2a flat"),
      "dense");
  test::expect_refusal(test::run_cli(base + "--tp 1 --pp 1 --ep 8 --ep-overlap on --no-overlap"),
                       "--no-overlap");
}

// plan keeps a pinned dispatch in every plan it ranks; a pinned overlap no
// released engine runs (Megatron-LM core_r0.13.0 has no overlapped expert
// all-to-all) leaves no plan, and the reason names it.
TEST(DispatchPins, PlanKeepsThePinnedDispatch) {
  const std::string job =
      "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 32 --gbs 64 --seq 4096 --ep 8 ";
  const test::CliRun run = test::run_cli(job + "--a2a hierarchical --top 5 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["config"]["a2a"], "hierarchical");
  for (const auto& alternative : j["alternatives"]) EXPECT_EQ(alternative["config"]["a2a"], "hierarchical");
  const test::CliRun overlap = test::run_cli(job + "--ep-overlap on");
  EXPECT_EQ(overlap.exit_code, 1) << overlap.err;
  EXPECT_NE(overlap.err.find("overlapped all-to-all"), std::string::npos) << overlap.err;
}

}  // namespace
}  // namespace parplan
