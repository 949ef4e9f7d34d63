// engine_rule_violations: every rule reports a plan that breaks it, and the
// published configurations pass.
#include <functional>

#include "emit_fixtures/emit_test_util.h"
#include "src/io/input_error.h"

namespace parplan::emit_test {
namespace {

// Valid starting points, one per engine family.
Plan megatron_base() { return gpt3_175b_on_1024_a100(); }

// A Mixtral-8x7B-shaped MoE (32 layers, 4096 hidden, 32 heads in 8 KV groups,
// 8 experts, top-2) on 64 GPUs: tp 2, ep 8.
Plan megatron_moe_base() {
  Plan p = llama3_70b_on_64_h100();
  p.model.name = "mixtral-8x7b";
  p.model.layers = 32;
  p.model.hidden = 4096;
  p.model.ffn_hidden = 14336;
  p.model.heads = 32;
  p.model.kv_groups = 8;
  p.model.head_dim = 128;
  p.model.experts = 8;
  p.model.top_k = 2;
  p.model.expert_ffn_hidden = 14336;
  set_mesh(p, 64, 2, 1, 1, 1);
  p.config.ep = 8;
  p.config.etp = 1;
  set_batch(p, 256, 1, 4096);
  return p;
}

// Llama-3-8B shape on 16 GPUs, ZeRO-3 data parallel only: a plain DeepSpeed run.
Plan deepspeed_base() {
  Plan p = llama3_70b_on_64_h100();
  p.model.name = "llama3-8b";
  p.model.layers = 32;
  p.model.hidden = 4096;
  p.model.ffn_hidden = 14336;
  p.model.heads = 32;
  p.model.kv_groups = 8;
  set_mesh(p, 16, 1, 1, 1, 1);
  set_batch(p, 64, 2, 8192);
  p.config.sp = false;
  p.config.zero = 3;
  return p;
}

// Llama-3-70B, tp 8, ZeRO-3 with all of ZeRO++ over dp 8 on 64 GPUs.
Plan megatron_deepspeed_base() {
  Plan p = llama3_70b_on_64_h100();
  // ZeRO++ only at tp 1: DeepSpeed's hpZ and qgZ groups are global ranks.
  set_mesh(p, 64, 1, 1, 1, 1);
  p.config.sp = false;
  set_batch(p, 64, 1, 8192);
  p.config.zero = 3;
  p.config.hpz_ranks = 8;
  p.config.qwz = true;
  p.config.qgz = true;
  p.config.hierarchical_partition = true;
  return p;
}

// Llama-3-70B on 64 GPUs: tp 8 (with sequence parallelism), FSDP over 8.
Plan torchtitan_base() {
  Plan p = llama31_70b_on_64_h100();
  set_mesh(p, 64, 8, 1, 1, 1);
  set_batch(p, 128, 1, 8192);
  p.config.zero = 3;
  return p;
}

TEST(EmitRules, PublishedConfigurationsPass) {
  EXPECT_EQ(joined(engine_rule_violations(gpt3_175b_on_1024_a100(), Engine::kMegatron)), "");
  EXPECT_EQ(joined(engine_rule_violations(llama3_70b_on_64_h100(), Engine::kMegatron)), "");
  EXPECT_EQ(joined(engine_rule_violations(gpt_1t_on_3072_a100(), Engine::kMegatron)), "");
  EXPECT_EQ(joined(engine_rule_violations(frontier_22b_on_128_gcds(), Engine::kMegatron)), "");
  EXPECT_EQ(joined(engine_rule_violations(megatron_moe_base(), Engine::kMegatron)), "");
  EXPECT_EQ(joined(engine_rule_violations(deepspeed_base(), Engine::kDeepSpeed)), "");
  EXPECT_EQ(joined(engine_rule_violations(megatron_deepspeed_base(), Engine::kMegatronDeepSpeed)), "");
  EXPECT_EQ(joined(engine_rule_violations(torchtitan_base(), Engine::kTorchtitan)), "");
}

struct RuleCase {
  const char* name;
  Engine engine;
  std::function<Plan()> base;
  std::function<void(Plan&)> mutate;
  const char* expected;
};

void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.name; }

class EmitRuleCase : public ::testing::TestWithParam<RuleCase> {};

TEST_P(EmitRuleCase, ViolatingPlanIsReported) {
  const RuleCase& c = GetParam();
  Plan p = c.base();
  ASSERT_EQ(joined(engine_rule_violations(p, c.engine)), "") << "the base plan must pass";
  c.mutate(p);
  const std::vector<std::string> messages = engine_rule_violations(p, c.engine);
  EXPECT_TRUE(contains(messages, c.expected)) << "expected '" << c.expected << "' in:\n" << joined(messages);
  for (const std::string& m : messages)
    EXPECT_EQ(m.rfind(std::string(engine_name(c.engine)) + ": ", 0), 0u) << m;
  // emit_launch_files refuses the plan and writes nothing.
  TempDir dir;
  EXPECT_THROW(emit_launch_files(p, {c.engine, Launcher::kTorchrun, dir.path / "out"}), InputError);
  EXPECT_FALSE(fs::exists(dir.path / "out"));
}

const Engine kM = Engine::kMegatron;
const Engine kDS = Engine::kDeepSpeed;
const Engine kMDS = Engine::kMegatronDeepSpeed;
const Engine kTT = Engine::kTorchtitan;

const RuleCase kCases[] = {
    // Shared by every engine.
    {"SizesAtLeastOne", kM, megatron_base, [](Plan& p) { p.config.etp = 0; }, "at least 1"},
    {"WorldDivisibleByModelParallel", kM, megatron_base, [](Plan& p) { p.job.gpus = 1000; },
     "tp * cp * pp = 64 must divide the 1000 GPUs"},
    {"MeshFillsWorld", kM, megatron_base, [](Plan& p) { p.config.dp = 8; }, "must equal the 1024 GPUs"},
    {"BatchSplitsIntoMicroBatches", kM, megatron_base, [](Plan& p) { p.config.gbs = 1544; },
     "gbs 1544 must be divisible by mbs * dp"},
    {"HeadsDivisibleByTp", kM, megatron_base, [](Plan& p) { p.model.heads = 100; },
     "tp 8 must divide the model's 100 attention heads"},
    {"QueryGroupsDivisibleByTp", kM, llama3_70b_on_64_h100, [](Plan& p) { p.model.kv_groups = 4; },
     "tp 8 must divide the model's 4 key/value groups"},
    {"HiddenDivisibleByHeads", kM, megatron_base,
     [](Plan& p) {
       p.model.head_dim = 0;
       p.model.hidden = 12300;
     },
     "hidden size (12300) must be divisible by the heads"},
    {"NeedsShapeAndSequence", kM, megatron_base, [](Plan& p) { p.job.seq = 0; }, "a sequence length"},
    {"NoMultiLatentAttention", kMDS, megatron_deepspeed_base, [](Plan& p) { p.model.kv_lora_rank = 512; },
     "multi-latent attention has no Megatron-DeepSpeed"},
    // Megatron-LM.
    {"MegatronLayersDivisibleByPp", kM, megatron_base, [](Plan& p) { p.model.layers = 90; },
     "the model's 90 layers must split evenly over pp 8 stages"},
    {"MegatronStageLayersDivisibleByVp", kM, megatron_base, [](Plan& p) { p.config.vp = 5; },
     "over pp 8 stages and vp 5 chunks"},
    {"MegatronFirstStageDivisibleByVp", kM, megatron_base,
     [](Plan& p) {
       p.config.first_stage_layers = 5;
       p.config.last_stage_layers = 7;
     },
     "over pp 8 stages and vp 2 chunks"},
    {"MegatronLastStageDivisibleByVp", kM, megatron_base,
     [](Plan& p) {
       p.config.first_stage_layers = 6;
       p.config.last_stage_layers = 5;
     },
     "over pp 8 stages and vp 2 chunks"},
    {"MegatronMiddleStagesMatchMiddleLayers", kM, megatron_base,
     [](Plan& p) {
       p.config.first_stage_layers = 90;
       p.config.last_stage_layers = 6;
     },
     "leave no layer for the middle stages"},
    {"MegatronMiddleLayersDivideIntoStages", kM, megatron_base,
     [](Plan& p) {
       p.config.vp = 1;
       p.config.first_stage_layers = 6;
       p.config.last_stage_layers = 5;
     },
     "over pp 8 stages and vp 1 chunks"},
    {"MegatronMiddleRankLayersDivisibleByVp", kM, megatron_base,
     [](Plan& p) {
       p.config.first_stage_layers = 12;
       p.config.last_stage_layers = 6;
     },
     "over pp 8 stages and vp 2 chunks"},
    {"MegatronInterleavingNeedsPipeline", kM, megatron_base,
     [](Plan& p) {
       set_mesh(p, 1024, 8, 1, 1, 2);
       p.model.layers = 96;
     },
     "the interleaved schedule (vp > 1) needs pp > 1"},
    {"MegatronInterleavedMicroBatchesDivisibleByPp", kM, megatron_base,
     [](Plan& p) { set_batch(p, 192, 1, 2048); }, "(pp 8, 12 micro-batches)"},
    {"MegatronSequenceParallelNeedsTp", kM, megatron_base,
     [](Plan& p) {
       set_mesh(p, 1024, 1, 8, 1, 2);
       set_batch(p, 1024, 1, 2048);
     },
     "sequence parallelism needs tp > 1"},
    {"MegatronContextParallelSequence", kM, megatron_base,
     [](Plan& p) {
       set_mesh(p, 1024, 8, 8, 2, 2);
       set_batch(p, 1536, 1, 2046);
     },
     "cp 2 needs seq divisible by 2 * cp = 4"},
    {"MegatronLearnedPositionsCoverSequence", kM, megatron_base, [](Plan& p) { p.job.seq = 4096; },
     "max-position-embeddings (2048) must be at least seq-length (4096)"},
    {"MegatronExpertParallelNeedsExperts", kM, megatron_base, [](Plan& p) { p.config.ep = 2; },
     "ep 2 needs a mixture-of-experts model"},
    {"MegatronFp8RefusesLayernormAndMoeActRecompute", kM, megatron_moe_base,
     [](Plan& p) {
       p.job.precision = Precision::kFp8;
       p.config.recompute = Recompute::kSelective;
       p.job.recompute_modules.layernorm = true;
     },
     "cannot work with fp8"},
    {"MegatronExpertsDivisibleByEp", kM, megatron_moe_base, [](Plan& p) { p.config.ep = 16; },
     "ep 16 must divide the model's 8 experts"},
    {"MegatronExpertParallelNotFp16", kM, megatron_moe_base,
     [](Plan& p) { p.job.precision = Precision::kFp16; }, "expert parallelism does not run with fp16"},
    {"MegatronExpertAndTensorParallelNeedSp", kM, megatron_moe_base, [](Plan& p) { p.config.sp = false; },
     "expert and tensor parallelism together need sequence parallelism"},
    // transformer_config.py __post_init__, overlap_moe_expert_parallel_comm.
    {"MegatronEpOverlapNeedsVirtualStages", kM, megatron_moe_base,
     [](Plan& p) {
       p.config.ep_overlap = true;
       set_mesh(p, 64, 2, 2, 1, 1);
     },
     "the overlapped expert-parallel all-to-all needs ep > 1, pp == 1 or vp > 1"},
    {"MegatronEpOverlapNoFullRecompute", kM, megatron_moe_base,
     [](Plan& p) {
       p.config.ep_overlap = true;
       p.config.recompute = Recompute::kFull;
     },
     "no full recomputation"},
    {"MegatronRouterGroupsDivideExperts", kM, megatron_moe_base,
     [](Plan& p) {
       p.model.route_groups = 3;
       p.model.route_group_topk = 2;
     },
     "the 3 routing groups must divide the 8 experts"},
    {"MegatronExpertGridTilesWorld", kM, megatron_moe_base, [](Plan& p) { p.config.etp = 3; }, "etp * ep = "},
    {"MegatronFsdpWithoutPipeline", kM, megatron_base, [](Plan& p) { p.config.zero = 3; },
     "ZeRO-3 cannot run with pipeline parallelism (pp 8)"},
    {"MegatronZeroRange", kM, megatron_base, [](Plan& p) { p.config.zero = 4; },
     "zero must be 0, 1, 2 or 3 (got 4)"},
    {"MegatronNoZeroPlusPlus", kM, megatron_base, [](Plan& p) { p.config.qwz = true; },
     "are DeepSpeed features"},
    // DeepSpeed and Megatron-DeepSpeed.
    {"DeepSpeedPipelineOnlyWithZeroBelow2", kDS, deepspeed_base, [](Plan& p) { set_mesh(p, 16, 1, 2, 1, 1); },
     "cannot run with pipeline parallelism (pp 2)"},
    {"DeepSpeedZeroRange", kDS, deepspeed_base, [](Plan& p) { p.config.zero = 5; },
     "zero must be 0, 1, 2 or 3 (got 5)"},
    {"DeepSpeedZeroPlusPlusNeedsStage3", kMDS, megatron_deepspeed_base, [](Plan& p) { p.config.zero = 1; },
     "need ZeRO stage 3"},
    {"DeepSpeedHpzDividesDp", kMDS, megatron_deepspeed_base, [](Plan& p) { p.config.hpz_ranks = 3; },
     "zero_hpz_partition_size (3) must divide the data-parallel size (64)"},
    {"DeepSpeedHierarchicalNeedsHpz", kMDS, megatron_deepspeed_base, [](Plan& p) { p.config.hpz_ranks = 1; },
     "it needs hpz_ranks > 1"},
    {"DeepSpeedNoFp8", kDS, deepspeed_base, [](Plan& p) { p.job.precision = Precision::kFp8; }, "fp8 only"},
    {"DeepSpeedNoMoe", kDS, deepspeed_base,
     [](Plan& p) {
       p.model.experts = 8;
       p.model.top_k = 2;
     },
     "a plain DeepSpeed script has no MoE layers"},
    // deepspeed/utils/groups.py _create_expert_and_data_parallel.
    {"MegatronDeepSpeedEpDividesDp", kMDS, megatron_deepspeed_base,
     [](Plan& p) {
       set_mesh(p, 64, 8, 1, 1, 1);
       p.model.experts = 16;
       p.model.top_k = 2;
       p.config.ep = 16;
     },
     "must divide the data-parallel size"},
    {"MegatronDeepSpeedNoSharedExperts", kMDS, megatron_deepspeed_base,
     [](Plan& p) {
       p.model.experts = 8;
       p.model.top_k = 2;
       p.model.shared_experts = 1;
     },
     "no shared experts"},
    // deepspeed/runtime/engine.py _configure_zero_optimizer: DeepSpeed's own
    // MoE layers under ZeRO-3 raise (the base plan is ZeRO-3 with ZeRO++).
    {"MegatronDeepSpeedMoeNotUnderZero3", kMDS, megatron_deepspeed_base,
     [](Plan& p) {
       p.model.experts = 8;
       p.model.top_k = 2;
     },
     "DeepSpeed-MoE does not run under ZeRO-3"},
    // A model an engine's files cannot carry is that engine's rule too, so a
    // plan is never tagged with it.
    {"MegatronDeepSpeedNoQkNorm", kMDS, megatron_deepspeed_base, [](Plan& p) { p.model.qk_norm = true; },
     "query/key normalisation"},
    {"TorchtitanNoQkNorm", kTT, torchtitan_base, [](Plan& p) { p.model.qk_norm = true; },
     "query/key normalisation"},
    {"DeepSpeedNoContextParallel", kMDS, megatron_deepspeed_base,
     [](Plan& p) {
       set_mesh(p, 64, 8, 1, 2, 1);
       p.config.hpz_ranks = 4;
     },
     "has no DeepSpeed equivalent"},
    {"DeepSpeedNoInterleaving", kMDS, megatron_deepspeed_base,
     [](Plan& p) {
       set_mesh(p, 64, 8, 2, 1, 2);
       p.config.zero = 1;
       p.config.hpz_ranks = 1;
       p.config.qwz = p.config.qgz = p.config.hierarchical_partition = false;
     },
     "no interleaved schedule"},
    {"DeepSpeedEvenPipelineSplit", kMDS, megatron_deepspeed_base,
     [](Plan& p) {
       set_mesh(p, 64, 8, 2, 1, 1);
       p.config.zero = 1;
       p.config.hpz_ranks = 1;
       p.config.qwz = p.config.qgz = p.config.hierarchical_partition = false;
       p.config.first_stage_layers = 30;
       p.config.last_stage_layers = 50;
     },
     "PipelineModule takes no first/last"},
    {"DeepSpeedPlainHasNoTensorParallel", kDS, deepspeed_base, [](Plan& p) { set_mesh(p, 16, 2, 1, 1, 1); },
     "needs Megatron layers"},
    {"DeepSpeedPlainHasNoSequenceParallel", kDS, deepspeed_base, [](Plan& p) { p.config.sp = true; },
     "rides on Megatron tensor parallelism"},
    {"DeepSpeedPlainHasNoSgd", kDS, deepspeed_base, [](Plan& p) { p.job.optimizer = Optimizer::kSgd; },
     "has no SGD"},
    {"MegatronDeepSpeedEvenLayers", kMDS, megatron_deepspeed_base,
     [](Plan& p) {
       set_mesh(p, 64, 8, 8, 1, 1);
       p.config.zero = 1;
       p.config.hpz_ranks = 1;
       p.config.qwz = p.config.qgz = p.config.hierarchical_partition = false;
       p.model.layers = 81;  // costed as an even split, run as DeepSpeed's 11 x 7 + 4
     },
     "type:transformer partition, which the plan's split is not"},
    {"MegatronDeepSpeedSequenceParallelNeedsTp", kMDS, megatron_deepspeed_base,
     [](Plan& p) {
       p.config.sp = true;
       p.model.kv_groups = 8;
     },
     "sequence parallelism needs tp > 1"},
    {"MegatronDeepSpeedLearnedPositions", kMDS, megatron_deepspeed_base,
     [](Plan& p) {
       p.model.position = PositionKind::kLearned;
       p.model.max_positions = 4096;
     },
     "(Megatron-DeepSpeed validate_args)"},
    {"MegatronDeepSpeedFullRecomputeOnly", kMDS, megatron_deepspeed_base,
     [](Plan& p) { p.config.recompute_layers = 10; }, "--checkpoint-activations covers every layer"},
    // torchtitan.
    {"TorchtitanRegisteredFlavor", kTT, torchtitan_base, [](Plan& p) { p.model.layers = 40; },
     "match none of llama3"},
    {"TorchtitanNoZero1", kTT, torchtitan_base, [](Plan& p) { p.config.zero = 1; },
     "ZeRO-1 has no torchtitan"},
    {"TorchtitanDdpOnlyOneDimensional", kTT, torchtitan_base, [](Plan& p) { p.config.zero = 0; },
     "maps to DDP"},
    {"TorchtitanNoQuantizedCollectives", kTT, torchtitan_base, [](Plan& p) { p.config.qgz = true; },
     "quantized ZeRO++"},
    {"TorchtitanHsdpNeedsZero3", kTT, torchtitan_base,
     [](Plan& p) {
       p.config.zero = 2;
       p.config.hierarchical_partition = true;
       p.config.hpz_ranks = 4;
     },
     "maps to HSDP"},
    {"TorchtitanHsdpShardDividesDp", kTT, torchtitan_base,
     [](Plan& p) {
       p.config.hierarchical_partition = true;
       p.config.hpz_ranks = 3;
     },
     "HSDP shard group (3 ranks)"},
    {"TorchtitanTensorParallelIsSequenceParallel", kTT, torchtitan_base, [](Plan& p) { p.config.sp = false; },
     "always applies sequence parallelism"},
    {"TorchtitanStagesPerRank", kTT, torchtitan_base,
     [](Plan& p) {
       set_mesh(p, 64, 8, 2, 1, 4);
       set_batch(p, 128, 1, 8192);
     },
     "1 or 2 stages per rank"},
    {"TorchtitanInterleavingNeedsPipeline", kTT, torchtitan_base, [](Plan& p) { p.config.vp = 2; },
     "needs pipeline_parallel_degree > 1"},
    // pipeline_parallel.py generate_llm_fqn_per_model_part only takes layers
    // off the first/last stage (tests/emit_torchtitan_split_test.cpp).
    {"TorchtitanFirstStageNotLarger", kTT, torchtitan_base,
     [](Plan& p) {
       set_mesh(p, 64, 8, 4, 1, 1);
       p.config.first_stage_layers = 26;
       p.config.last_stage_layers = 14;
     },
     "has no such form"},
    {"TorchtitanSequenceDivisor", kTT, torchtitan_base,
     [](Plan& p) {
       set_mesh(p, 64, 8, 1, 2, 1);
       p.job.seq = 8200;
     },
     "ParallelDims.seq_len_divisor"},
    {"TorchtitanBf16Only", kTT, torchtitan_base, [](Plan& p) { p.job.precision = Precision::kFp16; },
     "mixed_precision_param"},
    {"TorchtitanFullCheckpointOnly", kTT, torchtitan_base, [](Plan& p) { p.config.recompute_layers = 20; },
     "a partial count has no torchtitan key"},
    {"TorchtitanAdamOnly", kTT, torchtitan_base, [](Plan& p) { p.job.optimizer = Optimizer::kSgd; },
     "Adam and AdamW"},
    // torchtitan main shards routed experts over ep only and borrows the ep
    // ranks from dp_shard * cp * tp (configs.py:282-290, parallel_dims.py:187-192).
    {"TorchtitanExpertTensorParallel", kTT, torchtitan_base,
     [](Plan& p) {
       p.config.ep = 2;
       p.config.etp = 2;
     },
     "use etp 1 (etp 2)"},
    {"TorchtitanExpertParallelWithEtpTp", kTT, torchtitan_base,
     [](Plan& p) {
       p.config.ep = 16;
       p.config.etp = 8;
     },
     "use etp 1 (etp 8)"},
    {"TorchtitanExpertParallelWithEtp1", kTT, torchtitan_base,
     [](Plan& p) {
       p.config.ep = 128;
       p.config.etp = 1;
     },
     "must divide dp_shard * cp * tp (64)"},
};

INSTANTIATE_TEST_SUITE_P(EmitRules, EmitRuleCase, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<RuleCase>& info) { return info.param.name; });

TEST(EmitParse, EnginesAndLaunchers) {
  for (Engine e : {Engine::kMegatron, Engine::kDeepSpeed, Engine::kMegatronDeepSpeed, Engine::kTorchtitan}) {
    EXPECT_EQ(parse_engine(engine_name(e)), e);
  }
  EXPECT_EQ(parse_launcher("torchrun"), Launcher::kTorchrun);
  EXPECT_EQ(parse_launcher("slurm"), Launcher::kSlurm);
  try {
    parse_engine("nemo");
    ADD_FAILURE() << "nemo accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--emit"), std::string::npos);
    EXPECT_NE(what.find("megatron-deepspeed"), std::string::npos);
    EXPECT_NE(what.find("torchtitan"), std::string::npos);
  }
  try {
    parse_launcher("mpirun");
    ADD_FAILURE() << "mpirun accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--launcher"), std::string::npos);
    EXPECT_NE(what.find("slurm"), std::string::npos);
  }
}

}  // namespace
}  // namespace parplan::emit_test
