// Megatron-LM's --recompute-modules: what each module frees (the tensor
// Megatron discards, by its formula), that selective recomputation with no
// module costs exactly what no recomputation costs, that the routing
// probabilities weighting the activation (Megatron-Core 0.13) keep no expert
// output, and that the list travels through job files, flags, launch files
// and logs as Megatron spells it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cost/memory.h"
#include "cost/moe.h"
#include "cost/step_cost.h"
#include "src/emit/emit.h"
#include "src/emit/emit_internal.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/job_loader.h"
#include "src/io/megatron_log_reader.h"
#include "src/io/model_loader.h"
#include "src/tune/simulated_log.h"
#include "tests/cli_support.h"
#include "tests/emit_fixtures/engine_checks.h"
#include "tests/model_on_cluster.h"

namespace parplan {
namespace {

ActivationShape selective_shape(bool fp8) {
  ActivationShape shape;
  shape.seq = 4096;
  shape.micro_batch = 1;
  shape.tp = 2;
  shape.sp = true;
  shape.fp8 = fp8;
  shape.recompute = Recompute::kSelective;
  return shape;
}

MoeShape moe_shape_of(const ActivationShape& a) {
  MoeShape s;
  s.tokens = a.seq * a.micro_batch;
  s.tp = a.tp;
  s.etp = 1;
  s.ep = 8;
  s.load_factor = 1.25;
  return s;
}

// layernorm discards the pre-MLP norm's output: s b h / t 16-bit values
// (its sequence-parallel shard), gemm-input wide as the layer counts it.
TEST(RecomputeModules, LayernormFreesThePreMlpNormOutputOfAnMoeLayer) {
  const ModelSpec m = load_model("qwen3-30b-a3b");
  for (bool fp8 : {false, true}) {
    ActivationShape kept = selective_shape(fp8);
    ActivationShape redone = kept;
    redone.recompute_modules.layernorm = true;
    const MoeShape s = moe_shape_of(kept);
    const double freed = moe_layer_activation_bytes(m, kept, s) - moe_layer_activation_bytes(m, redone, s);
    EXPECT_DOUBLE_EQ(freed, 4096.0 * (fp8 ? 1.0 : 2.0) * m.hidden / 2) << "fp8 " << fp8;
  }
}

// moe_act discards FC2's 16-bit input, f_e / etp per routed row; under fp8
// FC2 keeps its own fp8 cast and nothing is freed.
TEST(RecomputeModules, MoeActFreesFc2sInputPerRoutedRowInBf16Only) {
  const ModelSpec m = load_model("qwen3-30b-a3b");
  ActivationShape kept = selective_shape(false);
  ActivationShape redone = kept;
  redone.recompute_modules.moe_act = true;
  const MoeShape s = moe_shape_of(kept);
  const double rows = 4096.0 / 2 * m.top_k * s.etp * s.load_factor;
  EXPECT_DOUBLE_EQ(moe_layer_activation_bytes(m, kept, s) - moe_layer_activation_bytes(m, redone, s),
                   rows * 2.0 * m.expert_ffn_hidden);
  kept.fp8 = redone.fp8 = true;
  EXPECT_DOUBLE_EQ(moe_layer_activation_bytes(m, kept, s), moe_layer_activation_bytes(m, redone, s));
}

// Without Megatron's selective recomputation the modules change nothing.
TEST(RecomputeModules, ModulesActOnlyUnderMegatronSelective) {
  const ModelSpec m = load_model("qwen3-30b-a3b");
  for (Recompute r : {Recompute::kNone, Recompute::kFull}) {
    ActivationShape a = selective_shape(false);
    a.recompute = r;
    ActivationShape b = a;
    b.recompute_modules = {false, true, true};
    EXPECT_DOUBLE_EQ(moe_layer_activation_bytes(m, a, moe_shape_of(a)),
                     moe_layer_activation_bytes(m, b, moe_shape_of(b)));
  }
  ActivationShape titan = selective_shape(false);
  titan.selective_checkpoint = SelectiveCheckpoint::kTorchtitanOps;
  ActivationShape titan_modules = titan;
  titan_modules.recompute_modules = {false, true, true};
  EXPECT_DOUBLE_EQ(moe_layer_activation_bytes(m, titan, moe_shape_of(titan)),
                   moe_layer_activation_bytes(m, titan_modules, moe_shape_of(titan_modules)));
}

// Megatron-Core 0.13 weights the activation by the routing probabilities:
// the h-wide expert output per routed row is not kept.
TEST(RecomputeModules, ProbabilitiesInTheActivationKeepNoExpertOutput) {
  const ModelSpec m = load_model("qwen3-30b-a3b");
  ActivationShape combine = selective_shape(false);
  combine.recompute = Recompute::kNone;
  ActivationShape in_activation = combine;
  in_activation.moe_probs_in_activation = true;
  const MoeShape s = moe_shape_of(combine);
  const double rows = 4096.0 / 2 * m.top_k * s.etp * s.load_factor;
  EXPECT_DOUBLE_EQ(
      moe_layer_activation_bytes(m, combine, s) - moe_layer_activation_bytes(m, in_activation, s),
      rows * 2.0 * m.hidden);
}

struct Qwen3Plan : test::ModelOnCluster {
  Qwen3Plan() : ModelOnCluster("qwen3-30b-a3b", "dgx-h100", 16, 256, 4096) {
    apply_engine_recipe("megatron", job);
    config.tp = 1, config.pp = 2, config.cp = 1, config.ep = 8, config.etp = 1;
    config.dp = 8, config.mbs = 1, config.gbs = 256, config.zero = 1;
    config.recompute = Recompute::kSelective;
  }
};

// An empty module list (Megatron accepts `--recompute-modules` with no
// names) recomputes nothing: the step and the memory of no recomputation.
TEST(RecomputeModules, SelectiveWithNoModuleCostsWhatNoRecomputationCosts) {
  Qwen3Plan p;
  p.job.recompute_modules = {false, false, false};
  ParallelConfig none = p.config;
  none.recompute = Recompute::kNone;
  const CostReport selective = estimate_cost(p.model, p.cluster, p.job, p.config);
  const CostReport plain = estimate_cost(p.model, p.cluster, p.job, none);
  EXPECT_DOUBLE_EQ(selective.time.step_s, plain.time.step_s);
  EXPECT_DOUBLE_EQ(selective.memory.peak_bytes, plain.memory.peak_bytes);
  // Redoing the norms and the activation costs time and frees memory.
  p.job.recompute_modules = {false, true, true};
  const CostReport redone = estimate_cost(p.model, p.cluster, p.job, p.config);
  EXPECT_GT(redone.time.step_s, plain.time.step_s);
  EXPECT_LT(redone.memory.peak_bytes, plain.memory.peak_bytes);
}

TEST(RecomputeModules, LaunchFileWritesTheListMegatronAccepts) {
  Qwen3Plan p;
  p.job.recompute_modules = {false, true, true};
  const Plan plan{p.model, p.cluster, p.job, p.config, estimate_cost(p.model, p.cluster, p.job, p.config)};
  emit_test::TempDir dir;
  const auto [args, env] = emit_test::megatron_torchrun_launch(plan, dir);
  ASSERT_TRUE(args.has("--recompute-modules"));
  EXPECT_EQ(args.flags.at("--recompute-modules"), (std::vector<std::string>{"layernorm", "moe_act"}));
  EXPECT_EQ(args.value("--recompute-granularity"), "selective");
  const auto errors = emit_test::megatron_check(args, p.job.gpus, env);
  EXPECT_TRUE(errors.empty()) << errors.front();
  // Megatron's default (core_attn) is left to Megatron.
  Plan default_plan = plan;
  default_plan.job.recompute_modules = {};
  EXPECT_FALSE(emit_test::parse_args(emit_detail::megatron_args(default_plan)).has("--recompute-modules"));
}

TEST(RecomputeModules, NamesParseAsMegatronSpellsThemAndOthersAreRefused) {
  const RecomputeModules m = parse_recompute_modules("layernorm, moe_act", "--recompute-modules");
  EXPECT_EQ(m, (RecomputeModules{false, true, true}));
  EXPECT_EQ(recompute_modules_text(m), "layernorm moe_act");
  EXPECT_EQ(parse_recompute_modules("none", "x"), (RecomputeModules{false, false, false}));
  EXPECT_EQ(parse_recompute_modules("core_attn", "x"), RecomputeModules{});
  EXPECT_EQ(parse_recompute_modules("mlp moe", "x"), (RecomputeModules{false, false, false, true, true}));
  EXPECT_EQ(parse_recompute_modules("mla_up_proj,mlp", "x"),
            (RecomputeModules{false, false, false, true, false, true}));
  EXPECT_EQ(recompute_modules_text(parse_recompute_modules("mla_up_proj mlp", "x")), "mlp mla_up_proj");
  // An empty item, a repeated name and "none" beside a module are refused,
  // naming what to fix (the old reader glued "none,mlp" into "nonemlp").
  for (const auto& [bad, said] :
       std::vector<std::pair<const char*, const char*>>{{"none,mlp", "'none' excludes"},
                                                        {",mlp", "empty item"},
                                                        {"mlp,,moe", "empty item"},
                                                        {"core_attn,core_attn", "twice"},
                                                        {"mlp moe mlp", "twice"}}) {
    try {
      parse_recompute_modules(bad, "--recompute-modules");
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << bad << ": " << e.what();
    }
  }
  for (const char* bad : {"attention", "mla_up"}) {
    try {
      parse_recompute_modules(bad, "--recompute-modules");
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--recompute-modules"), std::string::npos) << e.what();
    }
  }
}

// A Megatron log prints the list as Python does; read back, it costs the
// step it was written with.
TEST(RecomputeModules, MegatronLogRoundTripsTheList) {
  Qwen3Plan p;
  p.job.recompute_modules = {false, true, true};
  const double step_s = estimate_cost(p.model, p.cluster, p.job, p.config).time.step_s;
  const std::string log = simulated_megatron_log(p.model, p.job, p.config, step_s, 50);
  EXPECT_NE(log.find("['layernorm', 'moe_act']"), std::string::npos);
  const FitRun run = parse_megatron_log(log, "qwen3.log", p.cluster);
  EXPECT_EQ(run.job.recompute_modules, p.job.recompute_modules);
  EXPECT_NEAR(predict_run(run, p.cluster).step_s / step_s, 1.0, 1e-9);
}

// Job-file key and flag: a YAML list works; a misspelt module, or the list
// with an engine that has no such flag, is one line naming the field, exit 2.
TEST(RecomputeModules, JobKeyAndFlagAreCheckedAtTheInput) {
  const std::string job_text =
      "model: qwen3-30b-a3b\ncluster: dgx-h100\ngpus: 16\ngbs: 512\nseq: 4096\nengine: megatron\n"
      "recompute_modules: [layernorm, moe_act]\n"
      "config: {tp: 1, pp: 2, ep: 8, mbs: 2, zero: 1, recompute: selective}\n";
  const std::string job = test::write_temp("recompute_modules.yaml", job_text);
  const test::CliRun listed = test::run_cli("estimate --job " + job + " --format json");
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  const test::CliRun flagged =
      test::run_cli("estimate --job " + job + " --recompute-modules layernorm,moe_act --format json");
  EXPECT_EQ(flagged.out, listed.out);
  test::expect_refusal(test::run_cli("estimate --job " + job + " --recompute-modules moe_ac"), "moe_ac");
  test::expect_refusal(test::run_cli("estimate --job " + job + " --engine torchtitan"), "recompute_modules");
}

// The per-layer figure of an MoE model is its layers' mean, so it
// reconciles with the stage's total: Qwen3 30B-A3B (48 MoE layers, no
// dropout) at pp 2, the first stage (no logits) holding 2 micro-batches of
// its 24 layers under 1F1B.
TEST(RecomputeModules, MoePerLayerActivationsReconcileWithTheStage) {
  Qwen3Plan p;
  const MemoryBreakdown m = estimate_memory(p.model, p.cluster, p.job, p.config);
  ASSERT_EQ(m.peak_stage, 0);
  EXPECT_NEAR(m.activations_bytes / (2 * 24 * m.activations_per_layer_bytes), 1.0, 1e-12);
}

// mlp keeps only a dense MLP's input (the residual, a norm input): FC1's
// input (s b h, / t with sp), the activation's inputs and FC2's input
// (s b (2 + 1) f_gated / t) are freed. An MoE layer keeps its own.
TEST(RecomputeModules, MlpFreesTheDenseMlpInternals) {
  const ModelSpec llama = load_model("llama3-8b");
  ActivationShape kept = selective_shape(false);
  ActivationShape redone = kept;
  redone.recompute_modules.mlp = true;
  const double per_token = 2.0 * llama.hidden / 2 + (4.0 * llama.ffn_hidden + 2.0 * llama.ffn_hidden) / 2;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(llama, kept) - layer_activation_bytes(llama, redone),
                   4096 * per_token);
  const ModelSpec qwen = load_model("qwen3-30b-a3b");
  EXPECT_DOUBLE_EQ(moe_layer_activation_bytes(qwen, kept, moe_shape_of(kept)),
                   moe_layer_activation_bytes(qwen, redone, moe_shape_of(redone)));
}

// moe keeps only the MoE block's input: the layer keeps what its attention
// part keeps, the dense FFN's share of layer_activation_bytes aside.
TEST(RecomputeModules, MoeKeepsOnlyTheBlocksInput) {
  const ModelSpec qwen = load_model("qwen3-30b-a3b");
  ActivationShape redone = selective_shape(false);
  redone.recompute_modules.moe = true;
  const double attention_part =
      layer_activation_bytes(qwen, redone) - 4096.0 * (4.0 * qwen.ffn_hidden + 2.0 * qwen.ffn_hidden) / 2;
  EXPECT_DOUBLE_EQ(moe_layer_activation_bytes(qwen, redone, moe_shape_of(redone)), attention_part);
}

// Each module redoes work and keeps less: on Llama 3 8B (dense) mlp, on
// Qwen3 30B-A3B (MoE) moe, against selective recomputation of nothing.
TEST(RecomputeModules, EachModuleTradesTimeForMemory) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const auto compare = [&](const ModelSpec& model, ParallelConfig c, RecomputeModules modules) {
    JobSpec job;
    job.gpus = c.world(), job.gbs = c.gbs, job.seq = 4096;
    apply_engine_recipe("megatron", job);
    job.recompute_modules = {false, false, false};
    const CostReport none = estimate_cost(model, cluster, job, c);
    job.recompute_modules = modules;
    const CostReport redone = estimate_cost(model, cluster, job, c);
    EXPECT_GT(redone.time.step_s, none.time.step_s) << model.name;
    EXPECT_LT(redone.memory.peak_bytes, none.memory.peak_bytes) << model.name;
  };
  ParallelConfig dense;
  dense.tp = 2, dense.pp = 2, dense.cp = 1, dense.dp = 4, dense.mbs = 1, dense.gbs = 128, dense.sp = true;
  dense.zero = 1, dense.recompute = Recompute::kSelective;
  compare(load_model("llama3-8b"), dense, {false, false, false, true, false});
  Qwen3Plan p;
  compare(p.model, p.config, {false, false, false, false, true});
}

}  // namespace
}  // namespace parplan
