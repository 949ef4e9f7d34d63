// Launch files run the setup that was costed: the gradient dtype each
// engine ends up with from the written flags (its own defaults restated),
// Megatron-DeepSpeed's MoE layer count, and the Megatron-LM core_r0.13.0
// checks on MoE precision and multi-token prediction. Engine sources:
// NVIDIA/Megatron-LM core_r0.13.0 (73a28a1078a8), deepspeedai/Megatron-DeepSpeed
// main (4efb479d5317), deepspeedai/DeepSpeed (edaa722).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "cost/memory.h"
#include "emit_fixtures/emit_test_util.h"
#include "src/emit/emit_internal.h"
#include "src/io/model_loader.h"

namespace parplan::emit_dtype_test {

using emit_test::cluster;
using emit_test::set_batch;
using emit_test::set_mesh;

bool has_flag(const std::vector<std::string>& args, const std::string& flag) {
  return std::find(args.begin(), args.end(), flag) != args.end();
}

std::string flag_value(const std::vector<std::string>& args, const std::string& flag) {
  const auto it = std::find(args.begin(), args.end(), flag);
  return it == args.end() || it + 1 == args.end() ? std::string() : *(it + 1);
}

Plan llama_on_one_node() {
  Plan p;
  p.model = load_model("llama3-8b");
  p.cluster = cluster("dgx-h100", "H100-SXM5-80GB", 8);
  set_mesh(p, 8, 1, 1, 1, 1);
  set_batch(p, 16, 1, 4096);
  p.cost.time.step_s = 1.0;
  return p;
}

Plan mixtral_on(int gpus) {
  Plan p;
  p.model = load_model("mixtral-8x7b");
  p.cluster = cluster("dgx-h100", "H100-SXM5-80GB", 8);
  set_mesh(p, gpus, 1, 1, 1, 1);
  set_batch(p, 64, 1, 4096);
  p.config.zero = 1;
  p.cost.time.step_s = 1.0;
  return p;
}

bool violates(const Plan& p, Engine engine, const std::string& words) {
  for (const std::string& v : engine_rule_violations(p, engine))
    if (v.find(words) != std::string::npos) return true;
  return false;
}

// Megatron's validate_args (arguments.py:664-689, 2204, 2225): under --bf16
// (fp8 runs under it too) main grads are fp32 unless --grad-reduce-in-bf16;
// under --fp16 they are 16-bit unless --accumulate-allreduce-grads-in-fp32.
double megatron_grad_bytes(const std::vector<std::string>& args) {
  if (has_flag(args, "--fp16")) return has_flag(args, "--accumulate-allreduce-grads-in-fp32") ? 4.0 : 2.0;
  return has_flag(args, "--grad-reduce-in-bf16") ? 2.0 : 4.0;
}

TEST(EmitEngineDtype, MegatronRunsTheCostedGradientDtype) {
  for (const Precision precision : {Precision::kBf16, Precision::kFp8, Precision::kFp16}) {
    for (const GradReduceDtype reduce :
         {GradReduceDtype::kEngineDefault, GradReduceDtype::kFp32, GradReduceDtype::kBf16}) {
      if (precision == Precision::kFp16 && reduce == GradReduceDtype::kBf16) continue;  // refused by the CLI
      for (const int zero : {0, 1, 2, 3}) {
        Plan p = llama_on_one_node();
        p.job.precision = precision;
        p.job.grad_reduce = reduce;
        p.config.zero = zero;
        const std::vector<std::string> args = emit_detail::megatron_args(p);
        EXPECT_EQ(megatron_grad_bytes(args), gradient_bytes_per_param(precision, zero, reduce))
            << "precision " << static_cast<int>(precision) << " reduce " << static_cast<int>(reduce)
            << " zero " << zero;
        // The two flags are the two engine defaults' opposites: never both.
        EXPECT_FALSE(has_flag(args, "--grad-reduce-in-bf16") &&
                     has_flag(args, "--accumulate-allreduce-grads-in-fp32"));
      }
    }
  }
}

TEST(EmitEngineDtype, DeepSpeedCommunicatesInTheChosenDtype) {
  for (const Engine engine : {Engine::kDeepSpeed, Engine::kMegatronDeepSpeed}) {
    Plan p = llama_on_one_node();
    p.config.zero = 2;
    EXPECT_FALSE(emit_detail::deepspeed_config(p, engine).contains("communication_data_type"));
    p.job.grad_reduce = GradReduceDtype::kFp32;
    EXPECT_EQ(emit_detail::deepspeed_config(p, engine)["communication_data_type"], "fp32");
    p.job.grad_reduce = GradReduceDtype::kBf16;
    EXPECT_EQ(emit_detail::deepspeed_config(p, engine)["communication_data_type"], "bf16");
  }
}

// Megatron-DeepSpeed gives a layer experts when layer_num % expert_interval
// == 0 (megatron/model/transformer.py:1650-1660), --expert-interval default
// 2 (megatron/arguments.py:614): the file must name the model's interval,
// 1 included, so that every costed MoE layer is one.
TEST(EmitEngineDtype, MegatronDeepSpeedWritesTheExpertInterval) {
  Plan p = mixtral_on(32);
  p.config.ep = 8;
  p.job.capacity_factor = 1.0;
  const std::vector<std::string> args = emit_detail::megatron_deepspeed_args(p);
  const int interval = std::stoi(flag_value(args, "--expert-interval"));
  int moe_layers = 0;
  for (int layer_num = 1; layer_num <= p.model.layers; ++layer_num) moe_layers += layer_num % interval == 0;
  EXPECT_EQ(moe_layers, p.model.layers);  // Mixtral: every layer has experts
}

// DeepSpeed's ZeRO and bf16 optimizers assert that an MoE model's experts
// have their own param groups (v0.17.0 runtime/zero/stage_1_and_2.py:647-649,
// runtime/bf16_optimizer.py:113-115), which Megatron-DeepSpeed builds only
// under --create-moe-param-group (megatron/optimizer/__init__.py:79-81): on
// every MoE launch, at every ZeRO stage it writes; never on a dense one.
TEST(EmitEngineDtype, MegatronDeepSpeedMarksTheExpertParamGroups) {
  for (const int zero : {0, 1, 2}) {
    Plan p = mixtral_on(32);
    p.config.ep = 8;
    p.config.zero = zero;
    p.job.capacity_factor = 1.0;
    const std::vector<std::string> args = emit_detail::megatron_deepspeed_args(p);
    EXPECT_EQ(std::count(args.begin(), args.end(), "--create-moe-param-group"), 1) << "zero " << zero;
  }
  const std::vector<std::string> dense = emit_detail::megatron_deepspeed_args(llama_on_one_node());
  EXPECT_EQ(std::count(dense.begin(), dense.end(), "--create-moe-param-group"), 0);
}

// validate_args asserts bf16 under --moe-grouped-gemm (arguments.py:804-805),
// the only expert path parplan writes and times.
TEST(EmitEngineDtype, MegatronRefusesFp16Experts) {
  Plan p = mixtral_on(16);
  p.job.precision = Precision::kFp16;
  EXPECT_TRUE(violates(p, Engine::kMegatron, "grouped GEMM"));
  p.job.precision = Precision::kBf16;
  EXPECT_FALSE(violates(p, Engine::kMegatron, "grouped GEMM"));
  p.job.precision = Precision::kFp8;
  EXPECT_FALSE(violates(p, Engine::kMegatron, "grouped GEMM"));
}

// arguments.py:1073-1075 at core_r0.13.0: MTP asserts context_parallel_size == 1.
TEST(EmitEngineDtype, MegatronRefusesMultiTokenPredictionWithContextParallelism) {
  Plan p;
  p.model = load_model("deepseek-v3");
  ASSERT_GT(p.model.mtp_layers, 0);
  p.cluster = cluster("dgx-h800", "H800-SXM5-80GB", 8);
  set_mesh(p, 2048, 4, 16, 2, 1);
  set_batch(p, 15360, 1, 4096);
  p.config.ep = 32;
  p.config.zero = 1;
  EXPECT_TRUE(violates(p, Engine::kMegatron, "multi-token prediction"));
  set_mesh(p, 2048, 4, 16, 1, 1);
  EXPECT_FALSE(violates(p, Engine::kMegatron, "multi-token prediction"));
}

// torchtitan v0.2.2's maybe_enable_amp (distributed/utils.py:243-263) leaves
// mixed precision to FSDP, or to autocast under DDP or one device: with tp or
// pp > 1 and no FSDP or cp it trains in fp32 (training.dtype's default).
TEST(EmitEngineDtype, TorchtitanV02RefusesTpOrPpWithoutFsdp) {
  Plan p;
  p.model = load_model("llama3-70b");
  p.cluster = cluster("dgx-h100", "H100-SXM5-80GB", 8);
  set_mesh(p, 32, 8, 4, 1, 1);  // dp 1
  set_batch(p, 32, 1, 8192);
  p.config.sp = true;
  p.config.zero = 0;
  EXPECT_FALSE(violates(p, Engine::kTorchtitan, "trains in fp32"));  // main: no such rule
  cost_as_torchtitan_version(TorchtitanVersion::kV02, p.job);
  EXPECT_TRUE(violates(p, Engine::kTorchtitan, "trains in fp32"));
  set_mesh(p, 32, 8, 1, 1, 1);  // dp 4 sharded: FSDP gives mixed precision
  p.config.zero = 3;
  EXPECT_FALSE(violates(p, Engine::kTorchtitan, "trains in fp32"));
  set_mesh(p, 8, 1, 1, 1, 1);  // no tp, no pp: autocast
  p.config.zero = 0;
  EXPECT_FALSE(violates(p, Engine::kTorchtitan, "trains in fp32"));
}

// torchtitan's flavors fix the vocabulary (llama3 128256, qwen3 151936 at
// b5bcd76c): a Llama-3-8B shape with another vocabulary is another model,
// not written as torchtitan's 8B.
TEST(EmitEngineDtype, TorchtitanFlavorsMatchTheVocabularyToo) {
  ModelSpec model = load_model("llama3-8b");
  ASSERT_NE(emit_detail::torchtitan_flavor(model), nullptr);
  model.vocab = 32000;
  EXPECT_EQ(emit_detail::torchtitan_flavor(model), nullptr);
  EXPECT_NE(emit_detail::torchtitan_flavor(load_model("qwen3-30b-a3b")), nullptr);
}

// The search skips what the engine refuses: DeepSeek-V3's best Megatron plan
// (the example of docs/emit.md) runs without context parallelism.
TEST(EmitEngineDtype, DeepSeekV3PlanForMegatronHasNoContextParallelism) {
  const nlohmann::json j = test::cli_json(
      "plan --model deepseek-v3 --cluster dgx-h800 --gpus 2048 --gbs 15360 --seq 4096 --engine megatron "
      "--format json --no-timings");
  EXPECT_EQ(j["config"]["cp"].get<int>(), 1);
}

}  // namespace parplan::emit_dtype_test
