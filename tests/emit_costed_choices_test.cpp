// Launch files carry every costed choice (issue 12 item 4): each test emits the
// files, runs launch.sh under stand-in launchers, parses the recorded
// pretrain_gpt.py arguments or ds_config.json and checks the flag against the
// plan and the engine's rule. Engine sources: NVIDIA/Megatron-LM core_r0.13.0
// (73a28a1078a8), deepspeedai/Megatron-DeepSpeed main (4efb479d5317),
// deepspeedai/DeepSpeed v0.17.0, NVIDIA/TransformerEngine v2.5 (f05f12c974b3).
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "cost/config_rules.h"
#include "emit_fixtures/emit_test_util.h"
#include "src/io/input_error.h"
#include "src/io/model_loader.h"

namespace parplan::emit_test {
namespace {

struct Emitted {
  ArgMap args;  // pretrain_gpt.py's arguments
  nlohmann::json ds_config;
};

// Emits `plan` for `engine` under torchrun and runs launch.sh with stand-ins.
Emitted emit_run(const Plan& plan, Engine engine) {
  TempDir dir;
  emit_launch_files(plan, {engine, Launcher::kTorchrun, dir.path / "out"});
  const fs::path stubs = make_stubs(dir.path);
  const fs::path record = dir.path / "record";
  fs::create_directories(record);
  const RunResult run = run_clean(stubs, record, "bash " + (dir.path / "out" / "launch.sh").string(),
                                  {{"MEGATRON_LM", "/opt/mlm"},
                                   {"MEGATRON_DEEPSPEED", "/opt/mds"},
                                   {"TRAIN_SCRIPT", "/opt/train.py"},
                                   {"DATA_PATH", "/data/a"},
                                   {"TOKENIZER_MODEL", "gpt2"},
                                   {"NNODES", std::to_string(std::max(1, plan.job.gpus / 8))}});
  EXPECT_EQ(run.rc, 0) << run.output;
  Emitted e;
  const std::string script = engine == Engine::kDeepSpeed ? "train.py" : "pretrain_gpt.py";
  e.args = parse_args(after(read_lines(record / "torchrun.args"), script));
  if (fs::exists(dir.path / "out" / "ds_config.json"))
    e.ds_config = nlohmann::json::parse(read_text(dir.path / "out" / "ds_config.json"));
  return e;
}

/// One node of 8 H100, tp 1, pp 1, dp 8: every model of the tables fits the mesh rules.
Plan one_node(const ModelSpec& model) {
  Plan p;
  p.model = model;
  p.cluster = cluster("dgx-h100", "H100-SXM5-80GB", 8);
  set_mesh(p, 8, 1, 1, 1, 1);
  set_batch(p, 16, 1, std::min(2048, model.max_positions));
  p.config.zero = 1;
  p.cost.time.step_s = 1.0;
  return p;
}

// ------------------------------------------------------ (a) recomputation ----

TEST(EmitCostedChoices, MegatronBlockRecomputeCountsPerChunk) {
  // TransformerBlock (one per model chunk) recomputes its first
  // recompute_num_layers layers with the block method
  // (megatron/core/transformer/transformer_block.py:439-456); the cost model's
  // recompute_layers is per chunk too (cost/stage_memory.cpp).
  Plan plan = llama3_70b_on_64_h100();
  set_mesh(plan, 64, 8, 4, 1, 2);  // 80 layers: 10 per chunk
  plan.config.recompute = Recompute::kFull;
  plan.config.recompute_layers = 3;
  const ArgMap a = emit_run(plan, Engine::kMegatron).args;
  expect_flag(a, "--recompute-granularity", "full");
  expect_flag(a, "--recompute-method", "block");
  expect_flag(a, "--recompute-num-layers", "3");
  // Selective: TransformerConfig.__post_init__ wants neither method nor count.
  plan.config.recompute = Recompute::kSelective;
  plan.config.recompute_layers = 0;
  const ArgMap s = emit_run(plan, Engine::kMegatron).args;
  expect_flag(s, "--recompute-granularity", "selective");
  EXPECT_FALSE(s.has("--recompute-method"));
  EXPECT_FALSE(s.has("--recompute-num-layers"));
}

TEST(EmitCostedChoices, DeepSpeedEnginesCheckpointActivations) {
  // Megatron-DeepSpeed: --checkpoint-activations (megatron/arguments.py:864)
  // and --deepspeed-activation-checkpointing (:1524), which hands ds_config.json
  // to deepspeed.checkpointing.configure (megatron/initialize.py:186).
  Plan plan = gpt3_175b_on_1024_a100();
  plan.config.vp = 1;
  plan.config.recompute = Recompute::kFull;
  const Emitted mds = emit_run(plan, Engine::kMegatronDeepSpeed);
  EXPECT_TRUE(mds.args.has("--checkpoint-activations"));
  EXPECT_TRUE(mds.args.has("--deepspeed-activation-checkpointing"));
  ASSERT_TRUE(mds.ds_config.contains("activation_checkpointing")) << mds.ds_config.dump(2);
  // deepspeed/runtime/activation_checkpointing/config.py keys; a checkpoint per layer of a stage.
  const nlohmann::json& ac = mds.ds_config["activation_checkpointing"];
  EXPECT_EQ(ac.at("number_checkpoints").get<int>(), 96 / 8);
  for (const char* key : {"partition_activations", "contiguous_memory_optimization", "cpu_checkpointing",
                          "synchronize_checkpoint_boundary", "profile"})
    EXPECT_TRUE(ac.contains(key)) << key;

  // A plain DeepSpeed script reads the same section.
  Plan ds = one_node(gpt("gpt-1.3b", 24, 2048, 16));
  ds.config.zero = 2;
  ds.config.recompute = Recompute::kFull;
  EXPECT_TRUE(emit_run(ds, Engine::kDeepSpeed).ds_config.contains("activation_checkpointing"));
  ds.config.recompute = Recompute::kNone;
  EXPECT_FALSE(emit_run(ds, Engine::kDeepSpeed).ds_config.contains("activation_checkpointing"));
}

// --------------------------------------------- (b) parameter all-gather ----

TEST(EmitCostedChoices, DistributedOptimizerOverlapsParamGather) {
  Plan plan = llama3_70b_on_64_h100();  // zero 1, overlap_grad_reduce costed
  ASSERT_TRUE(plan.config.overlap_grad_reduce);
  const ArgMap a = emit_run(plan, Engine::kMegatron).args;
  EXPECT_TRUE(a.has("--overlap-param-gather"));
  // arguments.py:594-598: --overlap-param-gather needs the distributed
  // optimizer and --overlap-grad-reduce.
  EXPECT_TRUE(a.has("--use-distributed-optimizer"));
  EXPECT_TRUE(a.has("--overlap-grad-reduce"));
  // Costed without overlap: neither switch.
  plan.config.overlap_grad_reduce = false;
  const ArgMap off = emit_run(plan, Engine::kMegatron).args;
  EXPECT_FALSE(off.has("--overlap-param-gather"));
  EXPECT_FALSE(off.has("--overlap-grad-reduce"));
  // No sharded optimizer: nothing to gather.
  plan.config.overlap_grad_reduce = true;
  plan.config.zero = 0;
  const ArgMap ddp = emit_run(plan, Engine::kMegatron).args;
  EXPECT_TRUE(ddp.has("--overlap-grad-reduce"));
  EXPECT_FALSE(ddp.has("--overlap-param-gather"));
}

// ------------------------------------------------ (c) attention backend ----

TEST(EmitCostedChoices, ContextParallelNeedsFusedAttention) {
  Plan plan = llama3_70b_on_64_h100();
  set_mesh(plan, 64, 8, 2, 2, 1);
  plan.config.flash_attention = true;
  const ArgMap a = emit_run(plan, Engine::kMegatron).args;
  expect_flag(a, "--context-parallel-size", "2");
  expect_flag(a, "--attention-backend", "flash");
  // megatron/core/transformer/dot_product_attention.py:52-54 asserts cp == 1;
  // TransformerEngine utils.py:549 disables unfused attention under CP.
  plan.config.flash_attention = false;
  EXPECT_TRUE(contains(engine_rule_violations(plan, Engine::kMegatron), "needs --attention-backend flash"));
  EXPECT_NE(capability_problem(engine_capabilities(Engine::kMegatron), plan.model, plan.job, plan.config),
            nullptr);
  TempDir dir;
  EXPECT_THROW(emit_launch_files(plan, {Engine::kMegatron, Launcher::kTorchrun, dir.path / "out"}),
               InputError);
  // Unfused without CP stays as costed.
  set_mesh(plan, 64, 8, 4, 1, 1);
  expect_flag(emit_run(plan, Engine::kMegatron).args, "--attention-backend", "unfused");
}

// ------------------------------------------------------- loss kernel ----

TEST(EmitCostedChoices, TransformerEngineCrossEntropyIsEmittedOrRefused) {
  // The memory model gives TE's in-place cross-entropy 2 bytes per logit;
  // Megatron-LM runs it with --cross-entropy-loss-fusion
  // --cross-entropy-fusion-impl te (arguments.py:1897-1902 at core_r0.13.0).
  Plan plan = llama3_70b_on_64_h100();
  plan.job.cross_entropy = CrossEntropy::kTeInPlace;
  const ArgMap a = emit_run(plan, Engine::kMegatron).args;
  EXPECT_TRUE(a.has("--cross-entropy-loss-fusion"));
  expect_flag(a, "--cross-entropy-fusion-impl", "te");
  // The other engines have no such switch: the plan is refused, not emitted
  // with a loss that holds more memory than was costed.
  for (Engine e : {Engine::kDeepSpeed, Engine::kMegatronDeepSpeed, Engine::kTorchtitan})
    EXPECT_TRUE(contains(engine_rule_violations(plan, e), "cross-entropy te")) << engine_name(e);
  // The engine's own loss: no fusion flags.
  plan.job.cross_entropy = CrossEntropy::kFused;
  const ArgMap fused = emit_run(plan, Engine::kMegatron).args;
  EXPECT_FALSE(fused.has("--cross-entropy-loss-fusion"));
  EXPECT_FALSE(fused.has("--cross-entropy-fusion-impl"));
  EXPECT_TRUE(engine_rule_violations(plan, Engine::kMegatron).empty());
}

// ------------------------------------------- (d) architecture and Adam ----

TEST(EmitCostedChoices, Llama3CatalogArchitectureAndAdam) {
  Plan plan = one_node(load_model("llama3-8b"));
  const ArgMap a = emit_run(plan, Engine::kMegatron).args;
  // Llama 3 config.json: rope_theta 500000, rms_norm_eps 1e-5, no dropout, SwiGLU, untied.
  expect_flag(a, "--rotary-base", "500000");
  expect_flag(a, "--norm-epsilon", "1e-05");
  expect_flag(a, "--attention-dropout", "0");
  expect_flag(a, "--hidden-dropout", "0");
  EXPECT_TRUE(a.has("--swiglu"));
  EXPECT_TRUE(a.has("--untie-embeddings-and-output-weights"));
  EXPECT_FALSE(a.has("--add-qkv-bias"));
  // Adam as Brown et al. 2020 Appendix B (beta2 0.95, not Megatron's default 0.999).
  expect_flag(a, "--adam-beta1", "0.9");
  expect_flag(a, "--adam-beta2", "0.95");
  const ArgMap mds = emit_run(plan, Engine::kMegatronDeepSpeed).args;
  expect_flag(mds, "--rotary-position-embeddings-theta", "500000");
  expect_flag(mds, "--layernorm-epsilon", "1e-05");
  expect_flag(mds, "--adam-beta2", "0.95");
  // A plain DeepSpeed script takes Adam from ds_config.json: the same betas.
  Plan ds = one_node(load_model("gpt-1.7b"));
  const nlohmann::json betas = emit_run(ds, Engine::kDeepSpeed).ds_config["optimizer"]["params"]["betas"];
  EXPECT_EQ(betas[0].get<double>(), std::stod(a.value("--adam-beta1")));
  EXPECT_EQ(betas[1].get<double>(), std::stod(a.value("--adam-beta2")));
  // GPT-3 (catalog): Megatron's dropout 0.1, learned positions, no --swiglu.
  const ArgMap gpt = emit_run(one_node(load_model("gpt-1.7b")), Engine::kMegatron).args;
  expect_flag(gpt, "--attention-dropout", "0.1");
  EXPECT_FALSE(gpt.has("--swiglu"));
  EXPECT_FALSE(gpt.has("--rotary-base"));
}

/// One Hugging Face model_type: a small config.json and what its files must
/// say (flag -> value, "" for a switch; "!flag" for a flag that must be
/// absent), or the unmodelled feature --emit must name when it refuses.
struct HfCase {
  const char* model_type;
  const char* extra;  // JSON members after the shared shape
  std::vector<std::pair<std::string, std::string>> flags;
  const char* refused;
  // The refused feature is priced (cost/sliding_window.h) but no launch file
  // carries it: not among the unmodelled ones, and still refused.
  bool priced = false;
};

const char* kShape =
    R"("hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8,
       "intermediate_size": 1024, "vocab_size": 32000, "max_position_embeddings": 2048)";

const HfCase kHfCases[] = {
    {"llama",
     R"("rope_theta": 500000.0, "rms_norm_eps": 1e-5)",
     {{"--rotary-base", "500000"},
      {"--norm-epsilon", "1e-05"},
      {"--swiglu", ""},
      {"--attention-dropout", "0"}},
     nullptr},
    // A window shorter than the plan's 2048 tokens (one as long is full
    // causal attention, written as such: OwnClusterInputs).
    {"mistral",
     R"("rope_theta": 10000.0, "sliding_window": 1024)",
     {},
     "sliding-window attention (1024 tokens)",
     true},
    {"mixtral",
     R"("rope_theta": 1e6, "num_local_experts": 8, "num_experts_per_tok": 2, "sliding_window": null)",
     {{"--rotary-base", "1000000"},
      {"--num-experts", "8"},
      {"--norm-epsilon", "1e-05"},
      {"--moe-aux-loss-coeff", "1e-2"}},  // not given: Megatron's recommended weight
     nullptr},
    // The published Mixtral config's load-balancing weight reaches the files.
    {"mixtral",
     R"("num_local_experts": 8, "num_experts_per_tok": 2, "router_aux_loss_coef": 0.02)",
     {{"--moe-aux-loss-coeff", "0.02"}},
     nullptr},
    // Qwen2.5: Q/K/V biases (Qwen2Attention), rope 1e6, eps 1e-6, window off.
    {"qwen2",
     R"("rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "sliding_window": 131072, "use_sliding_window": false)",
     {{"--add-qkv-bias", ""}, {"--rotary-base", "1000000"}, {"--norm-epsilon", "1e-06"}, {"--swiglu", ""}},
     nullptr},
    {"qwen2_moe",
     R"("num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 256, "shared_expert_intermediate_size": 512)",
     {{"--add-qkv-bias", ""}, {"--num-experts", "4"}},
     nullptr},
    {"qwen3",
     R"("rope_theta": 1000000.0, "head_dim": 128)",
     {{"--qk-layernorm", ""}, {"--kv-channels", "128"}, {"!--add-qkv-bias", ""}},
     nullptr},
    {"qwen3_moe",
     R"("num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 256)",
     {{"--qk-layernorm", ""}, {"--num-experts", "8"}},
     nullptr},
    {"deepseek_v3",
     R"("n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 256, "kv_lora_rank": 64,
        "q_lora_rank": 96, "qk_rope_head_dim": 16, "qk_nope_head_dim": 48, "v_head_dim": 64,
        "rope_scaling": {"type": "yarn", "factor": 40})",
     {},
     "RoPE scaling 'yarn'"},
    {"gemma2",
     R"("head_dim": 64, "hidden_activation": "gelu_pytorch_tanh", "sliding_window": 4096,
        "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0)",
     {},
     "logit soft-capping"},
    {"phi3",
     R"("rope_theta": 10000.0, "sliding_window": null)",
     {{"--rotary-base", "10000"}, {"--swiglu", ""}, {"--norm-epsilon", "1e-05"}},
     nullptr},
    {"gpt_neox",
     R"("rotary_pct": 0.25, "use_parallel_residual": true, "hidden_act": "gelu")",
     {},
     "parallel attention/FFN residual"},
    {"gpt_neox",
     R"("rotary_pct": 0.25, "use_parallel_residual": false, "hidden_act": "gelu")",
     {{"--rotary-percent", "0.25"}, {"--rotary-base", "10000"}, {"!--swiglu", ""}},
     nullptr},
};

TEST(EmitCostedChoices, HuggingFaceModelTypesReachTheFiles) {
  for (const HfCase& c : kHfCases) {
    SCOPED_TRACE(std::string(c.model_type) + " " + c.extra);
    const std::string path = test::write_temp(
        std::string(c.model_type) + ".json",
        std::string("{\"model_type\": \"") + c.model_type + "\", " + kShape + ", " + c.extra + "}");
    const ModelSpec model = load_model(path);
    const Plan plan = one_node(model);
    if (c.refused != nullptr) {
      EXPECT_EQ(model.unmodelled.find(c.refused) == std::string::npos, c.priced) << model.unmodelled;
      TempDir dir;
      try {
        emit_launch_files(plan, {Engine::kMegatron, Launcher::kTorchrun, dir.path / "out"});
        ADD_FAILURE() << "--emit wrote a model it cannot express";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(c.refused), std::string::npos) << e.what();
      }
      EXPECT_FALSE(fs::exists(dir.path / "out"));
      continue;
    }
    EXPECT_EQ(model.unmodelled, "");
    const ArgMap a = emit_run(plan, Engine::kMegatron).args;
    for (const auto& [flag, value] : c.flags) {
      if (flag[0] == '!') {
        EXPECT_FALSE(a.has(flag.substr(1))) << flag;
      } else if (value.empty()) {
        EXPECT_TRUE(a.has(flag)) << flag;
      } else {
        expect_flag(a, flag, value);
      }
    }
  }
}

TEST(EmitCostedChoices, GemmaIsNeverEmittedAsSwiGlu) {
  const std::string gemma2 = test::write_temp(
      "gemma2.json", std::string(R"({"model_type": "gemma2", )") + kShape + R"(, "head_dim": 64})");
  const std::string gemma3 =
      test::write_temp("gemma3.json", std::string(R"({"model_type": "gemma3", "text_config": {)") + kShape +
                                          R"(, "head_dim": 64}})");
  for (const std::string& path : {gemma2, gemma3}) {
    const ModelSpec model = load_model(path);
    EXPECT_EQ(model.activation, Activation::kGeluTanh);
    for (Engine e :
         {Engine::kMegatron, Engine::kMegatronDeepSpeed, Engine::kDeepSpeed, Engine::kTorchtitan}) {
      TempDir dir;
      EXPECT_THROW(emit_launch_files(one_node(model), {e, Launcher::kTorchrun, dir.path / "out"}),
                   InputError);
    }
  }
}

TEST(EmitCostedChoices, UnmodelledIsAWarningForPlanAndExit2ForEmit) {
  const std::string gemma =
      test::write_temp("gemma2_cli.json", std::string(R"({"model_type": "gemma2", )") + kShape +
                                              R"(, "head_dim": 64, "attn_logit_softcapping": 50.0})");
  const std::string job = "--model " + gemma + " --cluster dgx-h100 --gpus 8 --gbs 16 --seq 2048";
  const test::CliRun est = test::run_cli("estimate " + job + " --tp 1 --pp 1 --mbs 1");
  EXPECT_EQ(est.exit_code, 0) << est.err;
  EXPECT_NE(est.err.find("parplan: warning: "), std::string::npos) << est.err;
  EXPECT_NE(est.err.find("soft-capping"), std::string::npos) << est.err;
  const std::string out = ::testing::TempDir() + "gemma_emit_" + std::to_string(::getpid());
  const test::CliRun emit = test::run_cli("plan " + job + " --emit megatron --out " + out);
  EXPECT_EQ(emit.exit_code, 2) << emit.err;
  EXPECT_NE(emit.err.find("soft-capping"), std::string::npos) << emit.err;
  EXPECT_FALSE(fs::exists(out));
  const test::CliRun sweep =
      test::run_cli("sweep --models " + gemma + " --cluster dgx-h100 --gpus 8 --gbs 16 --seq 2048");
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(sweep.err.find("parplan: warning: "), std::string::npos) << sweep.err;
  EXPECT_NE(sweep.err.find("soft-capping"), std::string::npos) << sweep.err;
  const std::string array = ::testing::TempDir() + "gemma_array_" + std::to_string(::getpid());
  const test::CliRun arrayed = test::run_cli("sweep --models " + gemma +
                                             " --cluster dgx-h100 --gpus 8 --gbs 16 --seq 2048 "
                                             "--emit-slurm-array " +
                                             array);
  EXPECT_EQ(arrayed.exit_code, 2) << arrayed.err;
  EXPECT_NE(arrayed.err.find("soft-capping"), std::string::npos) << arrayed.err;
}

// ------------------------------------------ engine rules call the validator ----

TEST(EmitCostedChoices, EngineRulesWordModelRulesAsTheValidator) {
  Plan plan = gpt3_175b_on_1024_a100();
  plan.config.tp = 5;  // 96 heads
  plan.config.dp = 1024 / (5 * 8);
  JobSpec job = plan.job;
  const std::string expected = describe(validate_config(plan.model, job, plan.config));
  ASSERT_FALSE(expected.empty());
  for (Engine e : {Engine::kMegatron, Engine::kMegatronDeepSpeed, Engine::kTorchtitan})
    EXPECT_TRUE(contains(engine_rule_violations(plan, e), expected)) << engine_name(e);
}

}  // namespace
}  // namespace parplan::emit_test
