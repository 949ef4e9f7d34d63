// --emit deepspeed and megatron-deepspeed: ds_config.json obeys DeepSpeed's
// batch rule and DeepSpeedZeroConfig's keys; the scripts start the right
// command under stand-in torchrun and deepspeed launchers.
#include <nlohmann/json.hpp>

#include "emit_fixtures/emit_test_util.h"

namespace parplan::emit_test {
namespace {

// DeepSpeed's checks on ds_config.json: runtime/config.py _batch_assertion
// (world_size there is the data-parallel size when Megatron's mpu is passed)
// and DeepSpeedZeroConfig (extra keys forbidden, stage 0..3), plus the
// pipeline engine's ZeRO limit.
std::vector<std::string> deepspeed_check(const nlohmann::json& cfg, long long dp, long long pp) {
  std::vector<std::string> errors;
  auto fail = [&](bool bad, const std::string& what) {
    if (bad) errors.push_back(what);
  };
  const long long train = cfg.value("train_batch_size", 0LL);
  const long long micro = cfg.value("train_micro_batch_size_per_gpu", 0LL);
  const long long accum = cfg.value("gradient_accumulation_steps", 0LL);
  fail(train <= 0 || micro <= 0 || accum <= 0, "batch sizes must be positive");
  fail(train != micro * accum * dp,
       "train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size");
  const nlohmann::json& zero = cfg.at("zero_optimization");
  for (const auto& [key, value] : zero.items()) {
    fail(!deepspeed_zero_keys().count(key), "DeepSpeedZeroConfig has no field " + key);
  }
  const int stage = zero.value("stage", 0);
  fail(stage < 0 || stage > 3, "stage must be 0..3");
  fail(pp > 1 && stage >= 2, "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism");
  fail(cfg.contains("bf16") && cfg.contains("fp16") && cfg["bf16"].value("enabled", false) &&
           cfg["fp16"].value("enabled", false),
       "bf16 and fp16 cannot both be enabled");
  return errors;
}

// engine.py _do_optimizer_sanity_check (v0.17.0 :1341-1344): under ZeRO an
// optimizer outside ZERO_SUPPORTED_OPTIMIZERS (Adam, AdamW, Adagrad, Lion)
// needs zero_allow_untested_optimizer.
bool zero_accepts_optimizer(const nlohmann::json& cfg, bool sgd) {
  return !sgd || cfg.at("zero_optimization").value("stage", 0) == 0 ||
         cfg.value("zero_allow_untested_optimizer", false);
}

struct DsRun {
  std::vector<fs::path> files;
  RunResult result;
  fs::path record;
};

DsRun emit_and_run(const Plan& plan, Engine engine, const TempDir& dir, const std::string& script,
                   std::map<std::string, std::string> vars) {
  DsRun r;
  r.files = emit_launch_files(plan, {engine, Launcher::kTorchrun, dir.path / "out"});
  const fs::path stubs = make_stubs(dir.path);
  r.record = dir.path / "record";
  fs::create_directories(r.record);
  r.result = run_clean(stubs, r.record, "bash " + (dir.path / "out" / script).string(), vars);
  return r;
}

TEST(EmitMegatronDeepSpeed, Llama3_70bZeroPlusPlusOn64H100) {
  Plan plan = llama3_70b_on_64_h100();
  // ZeRO++ at tp 1: DeepSpeed forms hpZ's and qgZ's groups from global ranks.
  set_mesh(plan, 64, 1, 1, 1, 1);
  plan.config.sp = false;
  set_batch(plan, 64, 1, 8192);
  plan.config.zero = 3;
  plan.config.hpz_ranks = 8;
  plan.config.qwz = true;
  plan.config.qgz = true;
  plan.config.hierarchical_partition = true;
  TempDir dir;
  const std::map<std::string, std::string> vars = {{"MEGATRON_DEEPSPEED", "/opt/Megatron-DeepSpeed"},
                                                   {"DATA_PATH", "/data/a_text_document"},
                                                   {"TOKENIZER_MODEL", "meta-llama/Meta-Llama-3-70B"},
                                                   {"NNODES", "8"},
                                                   {"NODE_RANK", "5"}};
  const DsRun r = emit_and_run(plan, Engine::kMegatronDeepSpeed, dir, "launch.sh", vars);
  ASSERT_EQ(r.result.rc, 0) << r.result.output;
  const fs::path out = dir.path / "out";
  ASSERT_EQ(r.files.front(), out / "launch.sh");
  for (const char* name : {"launch_deepspeed.sh", "ds_config.json", "hostfile"}) {
    EXPECT_TRUE(fs::exists(out / name)) << name;
  }

  const std::vector<std::string> argv = read_lines(r.record / "torchrun.args");
  const ArgMap a = parse_args(after(argv, "pretrain_gpt.py"));
  EXPECT_NE(std::find(argv.begin(), argv.end(), "/opt/Megatron-DeepSpeed/pretrain_gpt.py"), argv.end());
  for (const auto& flag : a.order) EXPECT_TRUE(megatron_deepspeed_known_flags().count(flag)) << flag;
  EXPECT_EQ(a.value("--num-key-value-heads"), "8");
  EXPECT_EQ(a.value("--normalization"), "rmsnorm");
  EXPECT_TRUE(a.has("--use-rotary-position-embeddings"));
  EXPECT_TRUE(a.has("--swiglu"));
  EXPECT_EQ(a.value("--tensor-model-parallel-size"), "1");
  EXPECT_EQ(a.value("--pipeline-model-parallel-size"), "1");
  EXPECT_TRUE(a.has("--no-pipeline-parallel"));  // validate_args: only with pp 1
  EXPECT_FALSE(a.has("--sequence-parallel"));
  EXPECT_TRUE(a.has("--deepspeed"));
  EXPECT_EQ(a.value("--deepspeed_config"), (out / "ds_config.json").string());
  EXPECT_EQ(a.value("--zero-stage"), "3");
  EXPECT_TRUE(a.has("--checkpoint-activations") && a.has("--deepspeed-activation-checkpointing"));
  EXPECT_EQ(a.value("--tokenizer-type"), "HFTokenizer");  // a choice of Megatron-DeepSpeed's --tokenizer-type

  const nlohmann::json cfg = nlohmann::json::parse(read_text(out / "ds_config.json"));
  const long long world = 64, tp = std::stoll(a.value("--tensor-model-parallel-size")), pp = 1;
  const long long dp = world / (tp * pp);
  EXPECT_EQ(joined(deepspeed_check(cfg, dp, pp)), "");
  EXPECT_EQ(cfg["train_batch_size"].get<long long>(), std::stoll(a.value("--global-batch-size")));
  EXPECT_EQ(cfg["train_micro_batch_size_per_gpu"].get<long long>(),
            std::stoll(a.value("--micro-batch-size")));
  EXPECT_EQ(cfg["zero_optimization"]["stage"].get<int>(), std::stoi(a.value("--zero-stage")));
  EXPECT_EQ(cfg["zero_optimization"]["zero_hpz_partition_size"].get<int>(), 8);
  EXPECT_TRUE(cfg["zero_optimization"]["zero_quantized_weights"].get<bool>());
  EXPECT_TRUE(cfg["zero_optimization"]["zero_quantized_gradients"].get<bool>());
  EXPECT_TRUE(cfg["bf16"]["enabled"].get<bool>());
  EXPECT_FALSE(cfg.contains("optimizer"));  // Megatron-DeepSpeed builds its own

  // The hostfile names 8 nodes of 8 slots.
  const std::vector<std::string> hosts = read_lines(out / "hostfile");
  ASSERT_EQ(hosts.size(), 8u);
  for (const std::string& line : hosts) EXPECT_NE(line.find(" slots=8"), std::string::npos) << line;
}

TEST(EmitMegatronDeepSpeed, PipelineWithZero1) {
  Plan plan = gpt3_175b_on_1024_a100();
  plan.config.vp = 1;
  TempDir dir;
  const std::map<std::string, std::string> vars = {{"MEGATRON_DEEPSPEED", "/opt/mds"},
                                                   {"DATA_PATH", "/data/a"},
                                                   {"TOKENIZER_MODEL", "gpt2"},
                                                   {"NNODES", "128"}};
  const DsRun r = emit_and_run(plan, Engine::kMegatronDeepSpeed, dir, "launch.sh", vars);
  ASSERT_EQ(r.result.rc, 0) << r.result.output;
  const ArgMap a = parse_args(after(read_lines(r.record / "torchrun.args"), "pretrain_gpt.py"));
  EXPECT_EQ(a.value("--pipeline-model-parallel-size"), "8");
  EXPECT_FALSE(a.has("--no-pipeline-parallel"));
  EXPECT_FALSE(a.has("--use-rotary-position-embeddings"));
  EXPECT_EQ(a.value("--normalization"), "layernorm");
  EXPECT_EQ(a.value("--recompute-granularity"), "selective");
  const nlohmann::json cfg = nlohmann::json::parse(read_text(dir.path / "out" / "ds_config.json"));
  EXPECT_EQ(joined(deepspeed_check(cfg, 16, 8)), "");
  EXPECT_EQ(cfg["gradient_accumulation_steps"].get<int>(), 96);  // 1536 / (1 * 16)
  EXPECT_EQ(cfg["zero_optimization"]["stage"].get<int>(), 1);
  EXPECT_TRUE(zero_accepts_optimizer(cfg, false));
}

TEST(EmitMegatronDeepSpeed, SgdUnderZeroIsAllowedExplicitly) {
  Plan plan = gpt3_175b_on_1024_a100();
  plan.config.vp = 1;
  plan.job.optimizer = Optimizer::kSgd;
  TempDir dir;
  const DsRun r = emit_and_run(plan, Engine::kMegatronDeepSpeed, dir, "launch.sh",
                               {{"MEGATRON_DEEPSPEED", "/opt/mds"},
                                {"DATA_PATH", "/data/a"},
                                {"TOKENIZER_MODEL", "gpt2"},
                                {"NNODES", "128"}});
  ASSERT_EQ(r.result.rc, 0) << r.result.output;
  const ArgMap a = parse_args(after(read_lines(r.record / "torchrun.args"), "pretrain_gpt.py"));
  EXPECT_EQ(a.value("--optimizer"), "sgd");
  const nlohmann::json cfg = nlohmann::json::parse(read_text(dir.path / "out" / "ds_config.json"));
  EXPECT_EQ(joined(deepspeed_check(cfg, 16, 8)), "");
  EXPECT_TRUE(zero_accepts_optimizer(cfg, true));
}

TEST(EmitDeepSpeed, PlainScriptUnderTorchrunAndDeepSpeedLauncher) {
  Plan plan = llama3_70b_on_64_h100();
  plan.model.name = "llama3-8b";
  plan.model.layers = 32;
  plan.model.hidden = 4096;
  plan.model.ffn_hidden = 14336;
  plan.model.heads = 32;
  set_mesh(plan, 16, 1, 1, 1, 1);
  set_batch(plan, 64, 2, 8192);
  plan.config.sp = false;
  plan.config.zero = 3;
  plan.job.precision = Precision::kFp16;
  TempDir dir;
  const std::map<std::string, std::string> vars = {{"TRAIN_SCRIPT", "/work/train.py"},
                                                   {"TRAIN_ARGS", "--epochs 1"},
                                                   {"NNODES", "2"},
                                                   {"MASTER_ADDR", "n0"}};
  const DsRun r = emit_and_run(plan, Engine::kDeepSpeed, dir, "launch.sh", vars);
  ASSERT_EQ(r.result.rc, 0) << r.result.output;
  const fs::path out = dir.path / "out";
  const std::vector<std::string> argv = read_lines(r.record / "torchrun.args");
  const ArgMap a = parse_args(after(argv, "train.py"));
  EXPECT_NE(std::find(argv.begin(), argv.end(), "/work/train.py"), argv.end());
  EXPECT_TRUE(a.has("--deepspeed"));
  EXPECT_EQ(a.value("--deepspeed_config"), (out / "ds_config.json").string());
  EXPECT_EQ(a.value("--epochs"), "1");
  const nlohmann::json cfg = nlohmann::json::parse(read_text(out / "ds_config.json"));
  EXPECT_EQ(joined(deepspeed_check(cfg, 16, 1)), "");
  EXPECT_EQ(cfg["train_batch_size"].get<int>(), 64);
  EXPECT_EQ(cfg["gradient_accumulation_steps"].get<int>(), 2);  // 64 / (2 * 16)
  EXPECT_TRUE(cfg["fp16"]["enabled"].get<bool>());
  EXPECT_FALSE(cfg.contains("bf16"));
  EXPECT_EQ(cfg["optimizer"]["type"].get<std::string>(), "AdamW");

  // The DeepSpeed-launcher alternative reads the hostfile.
  const RunResult ds =
      run_clean(dir.path / "bin", r.record, "bash " + (out / "launch_deepspeed.sh").string(), vars);
  ASSERT_EQ(ds.rc, 0) << ds.output;
  const ArgMap launcher = parse_args(read_lines(r.record / "deepspeed.args"));
  EXPECT_EQ(launcher.value("--hostfile"), (out / "hostfile").string());
  EXPECT_EQ(launcher.value("--num_nodes"), "2");
  EXPECT_EQ(launcher.value("--num_gpus"), "8");
  EXPECT_EQ(launcher.value("--master_addr"), "n0");
  EXPECT_EQ(read_lines(out / "hostfile"), (std::vector<std::string>{"worker-0 slots=8", "worker-1 slots=8"}));

  // Run as docs/emit.md shows, without MASTER_ADDR: no --master_addr, so the
  // DeepSpeed launcher hands every node the first host's address (a default
  // such as localhost would be handed on as it is).
  std::map<std::string, std::string> no_addr = vars;
  no_addr["MASTER_ADDR"] = "";  // unset for the script (run_clean's default is node 0's)
  const RunResult ds_no_addr =
      run_clean(dir.path / "bin", r.record, "bash " + (out / "launch_deepspeed.sh").string(), no_addr);
  ASSERT_EQ(ds_no_addr.rc, 0) << ds_no_addr.output;
  const ArgMap no_addr_args = parse_args(read_lines(r.record / "deepspeed.args"));
  EXPECT_FALSE(no_addr_args.has("--master_addr"));
  EXPECT_EQ(no_addr_args.value("--master_port"), "6000");
  EXPECT_EQ(no_addr_args.value("--num_nodes"), "2");
}

// DeepSpeed recomputes only what the script checkpoints: a plan costed with
// full recomputation tells the script's author what to call, and a plan
// without recomputation asks nothing.
TEST(EmitDeepSpeed, FullRecomputationTellsTheScriptWhatToCheckpoint) {
  Plan plan = llama3_70b_on_64_h100();
  set_mesh(plan, 64, 1, 1, 1, 1);
  set_batch(plan, 64, 1, 8192);
  plan.config.sp = false;
  plan.config.zero = 3;
  for (const Recompute mode : {Recompute::kFull, Recompute::kNone}) {
    plan.config.recompute = mode;
    TempDir dir;
    emit_launch_files(plan, {Engine::kDeepSpeed, Launcher::kTorchrun, dir.path / "out"});
    const std::string script = read_text(dir.path / "out" / "launch.sh");
    EXPECT_EQ(script.find("deepspeed.checkpointing.checkpoint") != std::string::npos,
              mode == Recompute::kFull);
  }
}

}  // namespace
}  // namespace parplan::emit_test
