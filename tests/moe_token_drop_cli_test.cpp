// MoE token dropping and the fp8 recipe as plan inputs: the job file's keys
// (moe_capacity_factor, moe_pad_to_capacity, fp8_recipe, as the run files
// spell them) act as their flags, flags override them, and every bad value
// or contradictory combination is one line on stderr naming the input, exit 2.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::run_cli;
using test::write_temp;

// Mixtral 8x7B (8 experts, top-2) on two DGX H100 nodes.
const std::string kMoeJob = "model: mixtral-8x7b\ncluster: dgx-h100\ngpus: 16\ngbs: 64\nseq: 4096\n";
const std::string kConfig = " --tp 2 --pp 2 --sp --ep 4 --zero 1";

std::string estimate_json(const std::string& args) {
  const CliRun run = run_cli("estimate " + args + kConfig + " --format json");
  EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.err;
  return run.out;
}

void expect_refused(const std::string& args, const std::string& names, const std::string& says = "") {
  const CliRun run = run_cli(args);
  test::expect_refusal(run, names, args);
  EXPECT_NE(run.err.find(says), std::string::npos) << args << "\n" << run.err;
}

TEST(MoeTokenDropInputs, JobFileKeysActAsTheirFlags) {
  const std::string bare = write_temp("drop_bare.yaml", kMoeJob);
  const struct {
    const char* keys;
    const char* flags;
  } cases[] = {{"moe_capacity_factor: 1.25\n", "--moe-capacity-factor 1.25"},
               {"moe_capacity_factor: 1.0\nmoe_pad_to_capacity: true\n",
                "--moe-capacity-factor 1.0 --moe-pad-to-capacity"},
               {"precision: fp8\nfp8_recipe: current\n", "--precision fp8 --fp8-recipe current"}};
  for (const auto& c : cases) {
    const std::string file = write_temp("drop_keys.yaml", kMoeJob + c.keys);
    EXPECT_EQ(estimate_json("--job " + file), estimate_json("--job " + bare + " " + c.flags)) << c.keys;
  }
}

// Each input reaches the cost model: padding runs every expert at capacity
// (load factor = the capacity factor, 2 here, against the default imbalance
// near 1.2 at ep 4), and current scaling adds an amax pass before each cast.
TEST(MoeTokenDropInputs, EachInputChangesTheEstimate) {
  const std::string job = write_temp("drop_each.yaml", kMoeJob);
  const std::string base = "--job " + job;
  EXPECT_NE(estimate_json(base + " --moe-capacity-factor 2 --moe-pad-to-capacity"),
            estimate_json(base + " --moe-capacity-factor 2"));
  EXPECT_NE(estimate_json(base + " --precision fp8 --fp8-recipe current"),
            estimate_json(base + " --precision fp8 --fp8-recipe delayed"));
  // delayed is the default recipe.
  EXPECT_EQ(estimate_json(base + " --precision fp8"),
            estimate_json(base + " --precision fp8 --fp8-recipe delayed"));
}

TEST(MoeTokenDropInputs, FlagsOverrideTheFile) {
  const std::string bare = write_temp("drop_bare2.yaml", kMoeJob + "precision: fp8\n");
  const std::string file =
      write_temp("drop_all.yaml", kMoeJob + "precision: fp8\nfp8_recipe: delayed\nmoe_capacity_factor: 4\n");
  EXPECT_EQ(estimate_json("--job " + file + " --fp8-recipe current --moe-capacity-factor 1.5"),
            estimate_json("--job " + bare + " --fp8-recipe current --moe-capacity-factor 1.5"));
}

TEST(MoeTokenDropInputs, BadFlagsNameTheFlag) {
  const std::string moe =
      "estimate --model mixtral-8x7b --cluster dgx-h100 --gpus 16 --gbs 64 --seq 4096" + kConfig;
  const std::string dense =
      "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 --tp 8 --pp 1";
  expect_refused(moe + " --moe-capacity-factor 0", "--moe-capacity-factor");
  expect_refused(moe + " --moe-capacity-factor -1", "--moe-capacity-factor");
  expect_refused(moe + " --moe-capacity-factor nan", "--moe-capacity-factor");
  expect_refused(moe + " --moe-capacity-factor inf", "--moe-capacity-factor");
  expect_refused(moe + " --moe-capacity-factor 1e9", "--moe-capacity-factor");
  expect_refused(moe + " --moe-capacity-factor lots", "--moe-capacity-factor");
  expect_refused(moe + " --moe-pad-to-capacity", "--moe-pad-to-capacity", "capacity factor");
  expect_refused(dense + " --moe-capacity-factor 1.25", "--moe-capacity-factor", "no experts");
  expect_refused(dense + " --moe-capacity-factor 1.25 --moe-pad-to-capacity", "--moe-capacity-factor",
                 "no experts");
  expect_refused(moe + " --fp8-recipe current", "--fp8-recipe", "fp8");
  expect_refused(moe + " --precision bf16 --fp8-recipe delayed", "--fp8-recipe", "fp8");
  expect_refused(moe + " --precision fp8 --fp8-recipe tensorwise", "--fp8-recipe", "delayed or current");
}

TEST(MoeTokenDropInputs, BadKeysNameTheField) {
  const struct {
    std::string text;
    const char* field;
    const char* says;
  } cases[] = {{kMoeJob + "moe_capacity_factor: 0\n", "moe_capacity_factor", ""},
               {kMoeJob + "moe_capacity_factor: .nan\n", "moe_capacity_factor", ""},
               {kMoeJob + "moe_capacity_factor: [1]\n", "moe_capacity_factor", ""},
               {kMoeJob + "moe_pad_to_capacity: yes please\n", "moe_pad_to_capacity", ""},
               {kMoeJob + "moe_pad_to_capacity: true\n", "moe_pad_to_capacity", "capacity factor"},
               {kMoeJob + "fp8_recipe: mxfp8\n", "fp8_recipe", "delayed or current"},
               {kMoeJob + "fp8_recipe: current\n", "fp8_recipe", "fp8"},
               {"model: llama3-8b\ncluster: dgx-h100\ngpus: 8\ngbs: 64\nseq: 4096\nmoe_capacity_factor: 1\n",
                "moe_capacity_factor", "no experts"}};
  for (const auto& c : cases) {
    const std::string file = write_temp("drop_bad.yaml", c.text);
    expect_refused("plan --job " + file, std::string("field '") + c.field + "'", c.says);
  }
}

// An engine pinned by --engine or --emit that cannot drop tokens as asked is
// refused before the search, naming the input: torchtitan routes dropless,
// and DeepSpeed-MoE (Megatron-DeepSpeed) always pads to capacity.
TEST(MoeTokenDropInputs, AnEngineThatCannotExpressItRefusesThePlan) {
  const std::string plan = "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 16 --gbs 64 --seq 4096";
  expect_refused(plan + " --engine torchtitan --moe-capacity-factor 1.25", "--moe-capacity-factor",
                 "torchtitan");
  expect_refused(plan + " --engine torchtitan --moe-capacity-factor 1.25 --moe-pad-to-capacity",
                 "--moe-capacity-factor", "dropless");
  expect_refused(plan + " --engine megatron-deepspeed --moe-capacity-factor 1.25", "--moe-capacity-factor",
                 "pads every expert");
  const std::string file =
      write_temp("drop_tt.yaml", kMoeJob + "engine: torchtitan\nmoe_capacity_factor: 2\n");
  expect_refused("plan --job " + file, "field 'moe_capacity_factor'", "torchtitan");
}

}  // namespace
}  // namespace parplan
