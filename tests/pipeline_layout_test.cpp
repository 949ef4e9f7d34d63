// Megatron's custom pipeline layout (--pipeline-model-parallel-layout):
// read as Megatron reads it, laid over the ranks as Megatron places virtual
// stages, costed per rank, written back in a form Megatron's rules accept.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cost/memory.h"
#include "cost/stage_layout.h"
#include "cost/step_cost.h"
#include "src/emit/emit.h"
#include "src/emit/emit_internal.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/model_loader.h"
#include "src/io/pipeline_layout_text.h"
#include "tests/cli_support.h"
#include "tests/emit_fixtures/engine_checks.h"
#include "tests/model_on_cluster.h"

namespace parplan {
namespace {

// DeepSeek-V3's H100 preset (Megatron-Bridge run_script.py @ cac49dc):
// 61 layers, one MTP layer, pp 8 with 32 virtual stages.
TEST(PipelineLayout, DeepSeekV3PresetLaysSevenAndSixLayersOnTheEdgeRanks) {
  const ModelSpec m = load_model("deepseek-v3");
  const PipelineLayout layout = parse_pipeline_layout("Et|(tt|)*30mL", 8, m, "x");
  ASSERT_EQ(layout.stages, 32);
  EXPECT_EQ(layout.decoder_layers[0], 1);
  EXPECT_EQ(layout.decoder_layers[31], 0);
  ParallelConfig c;
  c.pp = 8;
  ASSERT_TRUE(apply_pipeline_layout(layout, c));
  EXPECT_EQ(c.vp, 4);
  // Virtual stage i on rank i % 8: rank 0 holds stages 0, 8, 16, 24 (1 + 2
  // + 2 + 2 layers), rank 7 holds 7, 15, 23, 31 (2 + 2 + 2 + 0).
  const int expected[] = {7, 8, 8, 8, 8, 8, 8, 6};
  for (int r = 0; r < 8; ++r) EXPECT_EQ(stage_layers(m.layers, c, r), expected[r]) << r;
  EXPECT_TRUE(layout_is_valid(m.layers, c));
  EXPECT_EQ(pipeline_layout_text(layout, m.mtp_layers), "Et|(tt|)*30mL");
}

// Megatron's own examples of the grammar (arguments.py help and
// parse_str_to_list's docstring), on a dense model of the right depth.
TEST(PipelineLayout, MegatronsRepeatsAndCosmeticCommasUnrollAsMegatronDoes) {
  ModelSpec m = load_model("llama3-8b");
  m.layers = 30;
  const PipelineLayout a = parse_pipeline_layout("Ettt|(tt|)*13,t|L", 2, m, "x");
  ASSERT_EQ(a.stages, 16);
  EXPECT_EQ(a.decoder_layers[0], 3);
  EXPECT_EQ(a.decoder_layers[13], 2);
  EXPECT_EQ(a.decoder_layers[14], 1);
  EXPECT_EQ(a.decoder_layers[15], 0);
  m.layers = 32;
  const PipelineLayout b = parse_pipeline_layout("E,t*4|(t*4|)*6,t*4L", 4, m, "x");
  ASSERT_EQ(b.stages, 8);
  for (int s = 0; s < 8; ++s) EXPECT_EQ(b.decoder_layers[s], 4) << s;
}

// Every layout written back reads as the same layout, and Megatron's own
// reader (the test fixture's, by regular expression) finds the same stages.
TEST(PipelineLayout, WrittenTextReadsBackToTheSameLayout) {
  ModelSpec m = load_model("llama3-8b");
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int pp = 1 + static_cast<int>(rng() % 6);
    const int vp = 1 + static_cast<int>(rng() % 4);
    PipelineLayout layout;
    layout.stages = pp * vp;
    int total = 0;
    for (int s = 0; s < layout.stages; ++s) {
      // Repeats of equal stages are common: draw from a few counts.
      layout.decoder_layers[s] = static_cast<std::uint8_t>(s < pp ? 1 + rng() % 3 : rng() % 3);
      total += layout.decoder_layers[s];
    }
    m.layers = total;
    const std::string text = pipeline_layout_text(layout, 0);
    EXPECT_EQ(parse_pipeline_layout(text, pp, m, "x"), layout) << text;
    const std::vector<std::string> stages = emit_test::megatron_layout_stages(text);
    ASSERT_EQ(static_cast<int>(stages.size()), layout.stages) << text;
    for (int s = 0; s < layout.stages; ++s)
      EXPECT_EQ(std::count(stages[s].begin(), stages[s].end(), 't'), layout.decoder_layers[s]) << text;
  }
}

TEST(PipelineLayout, BadLayoutsAreOneLineNamingTheFix) {
  const ModelSpec ds = load_model("deepseek-v3");
  ModelSpec dense = load_model("llama3-8b");
  dense.layers = 32;
  const std::vector<std::tuple<std::string, int, const ModelSpec*, std::string>> cases = {
      {"Et|(tt|)*30mX", 8, &ds, "unknown layer character 'X'"},
      {"Et|(tt|)*30mL", 6, &ds, "not a multiple of pp 6"},
      {"t|(tt|)*30mEL", 8, &ds, "open with the embedding"},
      {"Et|(tt|)*30mLL", 8, &ds, "close with the loss"},
      {"Et|(tt|)*30tmL", 8, &ds, "has 62 transformer layers"},
      {"Et|(tt|)*30L", 8, &ds, "has 0 MTP layers"},
      {"Et|(tt|)*29m|ttL", 8, &ds, "transformer layer after an MTP layer"},
      {"Et|m|(tt|)*30L", 1, &ds, "transformer layer after an MTP layer"},
      {"Et|(tt|)*29ttm|L", 8, &ds, "MTP layers outside the last stage"},
      {"Et*32|L", 2, &dense, "pipeline rank 1 holds no transformer layer"},
      {"Et*999999999|L", 2, &dense, "unrolls to more than"},
      {"E(t|)*200L", 1, &dense, "has 201 virtual stages"},
      {std::string(5000, 't'), 1, &dense, "at most 4096"},
  };
  for (const auto& [text, pp, model, said] : cases) {
    try {
      parse_pipeline_layout(text, pp, *model, "job.yaml: field 'config.pipeline_layout'");
      ADD_FAILURE() << text;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(said), std::string::npos) << text << ": " << what;
      EXPECT_EQ(what.rfind("job.yaml: field 'config.pipeline_layout'", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

struct DensePlan : test::ModelOnCluster {
  DensePlan() : ModelOnCluster("llama3-70b", "dgx-h100", 64, 128, 4096) {
    apply_engine_recipe("megatron", job);
    config.tp = 4, config.pp = 4, config.vp = 2, config.dp = 4, config.mbs = 1, config.gbs = 128;
    config.sp = true, config.zero = 1;
  }
};

// The even split written as a layout costs what the even split costs.
TEST(PipelineLayout, TheEvenSplitAsALayoutCostsTheSame) {
  DensePlan p;
  ParallelConfig laid_out = p.config;
  JobSpec job = p.job;
  // 80 layers over 8 virtual stages of 10 (embedding and loss on the edges).
  apply_pipeline_layout_text("E(t*10|)*7t*10L", "x", true, p.model, job, laid_out);
  const CostReport even = estimate_cost(p.model, p.cluster, p.job, p.config);
  const CostReport layout = estimate_cost(p.model, p.cluster, job, laid_out);
  ASSERT_GT(even.time.step_s, 0);
  EXPECT_NEAR(layout.time.step_s, even.time.step_s, 1e-9 * even.time.step_s);
  EXPECT_NEAR(layout.memory.peak_bytes, even.memory.peak_bytes, 1e-6 * even.memory.peak_bytes);
}

// A rank given more layers is the pipeline's slowest: the step is never
// faster than the even split, and a config naming another vp is refused.
TEST(PipelineLayout, AnUnevenLayoutIsNeverFasterAndVpMustAgree) {
  DensePlan p;
  ParallelConfig laid_out = p.config;
  JobSpec job = p.job;
  apply_pipeline_layout_text("Et*9|t*10|t*10|t*11|(t*10|)*3t*10L", "x", true, p.model, job, laid_out);
  EXPECT_EQ(stage_layers(p.model.layers, laid_out, 3), 21);
  EXPECT_GT(estimate_cost(p.model, p.cluster, job, laid_out).time.step_s,
            estimate_cost(p.model, p.cluster, p.job, p.config).time.step_s);
  ParallelConfig other = p.config;
  other.vp = 4;
  EXPECT_THROW(apply_pipeline_layout_text("E(t*10|)*7t*10L", "x", true, p.model, job, other), InputError);
}

TEST(PipelineLayout, MegatronLaunchFilesCarryTheLayoutAndPassItsRules) {
  DensePlan p;
  ParallelConfig laid_out = p.config;
  JobSpec job = p.job;
  apply_pipeline_layout_text("Et*9|t*10|t*10|t*11|(t*10|)*3t*10L", "x", true, p.model, job, laid_out);
  const Plan plan{p.model, p.cluster, job, laid_out, estimate_cost(p.model, p.cluster, job, laid_out)};
  EXPECT_EQ(capability_problem(engine_capabilities(Engine::kMegatron), p.model, job, laid_out), nullptr);
  EXPECT_NE(capability_problem(engine_capabilities(Engine::kTorchtitan), p.model, job, laid_out), nullptr);
  emit_test::TempDir dir;
  const auto [args, env] = emit_test::megatron_torchrun_launch(plan, dir);
  EXPECT_EQ(args.value("--pipeline-model-parallel-layout"), "Et*9|(t*10|)*2t*11|(t*10|)*3t*10L");
  EXPECT_FALSE(args.has("--num-layers-per-virtual-pipeline-stage"));
  EXPECT_FALSE(args.has("--num-virtual-stages-per-pipeline-rank"));
  EXPECT_FALSE(args.has("--decoder-first-pipeline-num-layers"));
  const auto errors = emit_test::megatron_check(args, job.gpus, env);
  EXPECT_TRUE(errors.empty()) << errors.front();
}

// Megatron-LM core_r0.13.0 refuses an MTP layer in a layout
// (pipeline_parallel_layer_layout.py:110-111): an MTP model's layout is
// costed but not emitted for it.
TEST(PipelineLayout, AnMtpLayoutIsCostedButNotWrittenForMegatronR013) {
  const ModelSpec m = load_model("deepseek-v3");
  JobSpec job;
  job.gpus = 1024, job.gbs = 8192, job.seq = 4096;
  ParallelConfig c;
  c.tp = 2, c.pp = 8, c.ep = 64, c.dp = 64, c.mbs = 1, c.gbs = 8192, c.sp = true, c.zero = 1;
  apply_pipeline_layout_text("Et|(tt|)*30mL", "x", false, m, job, c);
  EXPECT_STREQ(capability_problem(engine_capabilities(Engine::kMegatron), m, job, c),
               "no MTP layer in a custom pipeline layout");
}

// mla_up_proj frees the attention kernel's query, key and value: per token
// and layer, heads x (qk head_dim + qk head_dim + v_head_dim) 16-bit values
// over tp (DeepSeek-V3: 128 x (192 + 192 + 128) x 2 bytes / tp), and times
// the up projections once more.
TEST(PipelineLayout, MlaUpProjFreesQueryKeyAndValueAndRedoesTheUpProjections) {
  const ModelSpec m = load_model("deepseek-v3");
  ActivationShape kept;
  kept.seq = 4096, kept.micro_batch = 1, kept.tp = 2, kept.sp = true;
  kept.recompute = Recompute::kSelective;
  ActivationShape redone = kept;
  redone.recompute_modules.mla_up_proj = true;
  const double freed = layer_activation_bytes(m, kept) - layer_activation_bytes(m, redone);
  EXPECT_DOUBLE_EQ(freed, 4096.0 * 128 * (192 + 192 + 128) * 2 / 2);
  // Without multi-latent attention there is nothing to free.
  const ModelSpec dense = load_model("llama3-8b");
  EXPECT_DOUBLE_EQ(layer_activation_bytes(dense, kept), layer_activation_bytes(dense, redone));
}

}  // namespace
}  // namespace parplan

namespace parplan {
namespace {

// --pipeline-layout is the job file's config: pipeline_layout as a flag of
// estimate and check: the same layout costs the same step either way, the
// flag replaces the file's, and plan (which searches stage splits) has no
// such flag.
TEST(PipelineLayoutFlag, TheFlagCostsWhatTheJobFileCosts) {
  const std::string job =
      "model: deepseek-v3\ncluster: dgx-h100\ngpus: 1024\ngbs: 8192\nseq: 4096\n"
      "precision: fp8\nengine: megatron\n";
  const std::string config = "config: {tp: 2, pp: 8, ep: 64, sp: true, mbs: 1, zero: 1";
  const auto step_s = [](const test::CliRun& run) {
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return nlohmann::json::parse(run.out)["time"]["step_s"].get<double>();
  };
  const double from_file = step_s(test::run_cli(
      "estimate --format json --job " +
      test::write_temp("layout_file.yaml", job + config + ", pipeline_layout: \"Et|(tt|)*30mL\"}\n")));
  const std::string plain = test::write_temp("layout_none.yaml", job + config + "}\n");
  EXPECT_DOUBLE_EQ(
      step_s(test::run_cli("estimate --format json --job " + plain + " --pipeline-layout 'Et|(tt|)*30mL'")),
      from_file);
  // The flag replaces the file's layout.
  const std::string other =
      test::write_temp("layout_other.yaml", job + config + ", pipeline_layout: \"Ett|(tt|)*29t|mL\"}\n");
  EXPECT_DOUBLE_EQ(
      step_s(test::run_cli("estimate --format json --job " + other + " --pipeline-layout 'Et|(tt|)*30mL'")),
      from_file);
  test::expect_refusal(test::run_cli("estimate --job " + plain + " --pipeline-layout 'Et|tt'"),
                       "--pipeline-layout");
  EXPECT_EQ(test::run_cli("plan --job " + plain + " --pipeline-layout 'Et|(tt|)*30mL'").exit_code, 2);
}

}  // namespace
}  // namespace parplan
