// The expert all-to-all as a given config runs it: --a2a flat|hierarchical
// and --ep-overlap on|off (job file config: a2a_hierarchical, ep_overlap,
// the run files' keys) pin what estimate and check cost and what plan
// searches, over the defaults (hierarchical where the expert-parallel group
// spans nodes; the overlap where Megatron's rules allow it and an engine of
// the selection runs it, which no released one does).
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
  // Defaults: the hierarchical dispatch across nodes (Megatron's flex
  // dispatcher runs it); no overlap, which no released engine runs.
  const nlohmann::json defaults = estimate("");
  EXPECT_EQ(defaults["config"]["a2a"], "hierarchical");
  EXPECT_FALSE(defaults["config"]["ep_overlap"].get<bool>());
  EXPECT_FALSE(defaults["engines"].empty());
  const nlohmann::json flat = estimate(" --a2a flat");
  EXPECT_EQ(flat["config"]["a2a"], "flat");
  // Across nodes the hierarchical dispatch moves one copy per node.
  EXPECT_GE(flat["time"]["step_s"].get<double>(), defaults["time"]["step_s"].get<double>());
  const nlohmann::json overlapped = estimate(" --ep-overlap on");
  EXPECT_TRUE(overlapped["config"]["ep_overlap"].get<bool>());
  EXPECT_LE(overlapped["time"]["step_s"].get<double>(), defaults["time"]["step_s"].get<double>());
  EXPECT_TRUE(overlapped["engines"].empty());  // costed as asked, and said no engine runs it
  EXPECT_DOUBLE_EQ(estimate(" --ep-overlap off")["time"]["step_s"].get<double>(),
                   defaults["time"]["step_s"].get<double>());
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

// Free, the search overlaps the expert all-to-all only where an engine of
// the selection runs it. Megatron-LM core_r0.13.0 does not: every
// expert-parallel candidate without pipelining was costed overlapped and
// then dropped by the engine check, so this job had no plan at all.
TEST(DispatchPins, ExpertParallelPlansWithoutAnEngineOverlap) {
  const test::CliRun run = test::run_cli(
      "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 32 --gbs 64 --seq 4096 --engine megatron --ep 8 "
      "--pp 1 --recompute none --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["config"]["ep"], 8);
  EXPECT_FALSE(j["config"]["ep_overlap"].get<bool>());
  EXPECT_EQ(j["engine"], "megatron");
}

}  // namespace
}  // namespace parplan
