// --emit megatron under torchrun: run the written launch.sh with a stand-in
// torchrun and check the recorded command line against Megatron-LM's checks.
#include "emit_fixtures/emit_test_util.h"
#include "src/io/input_error.h"

namespace parplan::emit_test {
namespace {

struct Launch {
  RunResult run;
  std::vector<std::string> torchrun;  // recorded argv
  ArgMap torchrun_args;               // torchrun's own flags (before the script)
  ArgMap megatron;                    // pretrain_gpt.py's arguments
  std::string script;                 // the script torchrun starts
  std::map<std::string, std::string> env;
};

const std::map<std::string, std::string> kUserSettings = {{"MEGATRON_LM", "/opt/Megatron-LM"},
                                                          {"DATA_PATH", "/data/pile_text_document"},
                                                          {"TOKENIZER_MODEL", "gpt2"}};

Launch emit_and_run(const Plan& plan, const TempDir& dir, std::map<std::string, std::string> vars,
                    Engine engine = Engine::kMegatron) {
  const std::vector<fs::path> files =
      emit_launch_files(plan, {engine, Launcher::kTorchrun, dir.path / "out"});
  EXPECT_EQ(files.front(), dir.path / "out" / "launch.sh");
  const fs::path stubs = make_stubs(dir.path);
  const fs::path record = dir.path / "record";
  fs::create_directories(record);
  for (const auto& [k, v] : kUserSettings) vars.emplace(k, v);
  Launch l;
  l.run = run_clean(stubs, record, "bash " + files.front().string(), vars);
  l.torchrun = read_lines(record / "torchrun.args");
  const std::vector<std::string> program = after(l.torchrun, "pretrain_gpt.py");
  std::vector<std::string> own;
  for (const std::string& word : l.torchrun) {
    if (word.find("pretrain_gpt.py") != std::string::npos) {
      l.script = word;
      break;
    }
    own.push_back(word);
  }
  l.torchrun_args = parse_args(own);
  l.megatron = parse_args(program);
  l.env = read_env(record / "torchrun.env");
  return l;
}

TEST(EmitMegatron, Gpt3On1024A100) {
  TempDir dir;
  const Plan plan = gpt3_175b_on_1024_a100();
  const Launch l = emit_and_run(
      plan, dir, {{"NNODES", "128"}, {"NODE_RANK", "3"}, {"MASTER_ADDR", "node-0"}, {"MASTER_PORT", "6123"}});
  ASSERT_EQ(l.run.rc, 0) << l.run.output;
  expect_flag(l.torchrun_args, "--nproc_per_node", "8");
  expect_flag(l.torchrun_args, "--nnodes", "128");
  expect_flag(l.torchrun_args, "--node_rank", "3");
  expect_flag(l.torchrun_args, "--master_addr", "node-0");
  expect_flag(l.torchrun_args, "--master_port", "6123");
  EXPECT_EQ(l.script, "/opt/Megatron-LM/pretrain_gpt.py");
  const ArgMap& a = l.megatron;
  expect_flag(a, "--num-layers", "96");
  expect_flag(a, "--hidden-size", "12288");
  expect_flag(a, "--ffn-hidden-size", "49152");
  expect_flag(a, "--num-attention-heads", "96");
  expect_flag(a, "--seq-length", "2048");
  expect_flag(a, "--max-position-embeddings", "2048");
  expect_flag(a, "--position-embedding-type", "learned_absolute");
  expect_flag(a, "--normalization", "LayerNorm");
  EXPECT_FALSE(a.has("--swiglu"));
  EXPECT_FALSE(a.has("--disable-bias-linear"));
  EXPECT_FALSE(a.has("--untie-embeddings-and-output-weights"));
  EXPECT_FALSE(a.has("--group-query-attention"));
  EXPECT_FALSE(a.has("--kv-channels"));
  expect_flag(a, "--tensor-model-parallel-size", "8");
  expect_flag(a, "--pipeline-model-parallel-size", "8");
  expect_flag(a, "--context-parallel-size", "1");
  expect_flag(a, "--num-layers-per-virtual-pipeline-stage", "6");  // 96 / (8 * 2)
  EXPECT_TRUE(a.has("--sequence-parallel"));
  EXPECT_TRUE(a.has("--use-distributed-optimizer"));
  EXPECT_TRUE(a.has("--overlap-grad-reduce"));
  expect_flag(a, "--micro-batch-size", "1");
  expect_flag(a, "--global-batch-size", "1536");
  expect_flag(a, "--recompute-granularity", "selective");
  EXPECT_FALSE(a.has("--recompute-method"));
  EXPECT_TRUE(a.has("--bf16"));
  expect_flag(a, "--attention-backend", "flash");
  expect_flag(a, "--optimizer", "adam");
  expect_flag(a, "--tokenizer-model", "gpt2");
  expect_flag(a, "--tokenizer-type", "HuggingFaceTokenizer");
  expect_flag(a, "--data-path", "/data/pile_text_document");
  EXPECT_TRUE(a.has("--train-iters") && a.has("--lr") && a.has("--split"));
  EXPECT_EQ(l.env.at("CUDA_DEVICE_MAX_CONNECTIONS"), "1");
  EXPECT_EQ(joined(megatron_check(a, 1024, l.env)), "");
}

// Outside Slurm a node without NODE_RANK or MASTER_ADDR would launch as
// rank 0 of a rendezvous at localhost, and the job would hang: refused.
TEST(EmitMegatron, MultiNodeTorchrunNeedsTheNodesRankAndMaster) {
  const Plan plan = gpt3_175b_on_1024_a100();
  for (const char* unset : {"NODE_RANK", "MASTER_ADDR"}) {
    TempDir dir;
    const Launch l = emit_and_run(plan, dir, {{"NNODES", "128"}, {unset, ""}});
    EXPECT_EQ(l.run.rc, 1) << unset;
    EXPECT_NE(l.run.output.find("set NODE_RANK (0..127) and MASTER_ADDR"), std::string::npos) << l.run.output;
  }
}

TEST(EmitMegatron, Llama3_70bGqaSwiGluOn64H100) {
  TempDir dir;
  const Plan plan = llama3_70b_on_64_h100();
  const Launch l = emit_and_run(plan, dir, {{"NNODES", "8"}, {"NODE_RANK", "0"}});
  ASSERT_EQ(l.run.rc, 0) << l.run.output;
  expect_flag(l.torchrun_args, "--nnodes", "8");
  const ArgMap& a = l.megatron;
  expect_flag(a, "--num-layers", "80");
  expect_flag(a, "--hidden-size", "8192");
  expect_flag(a, "--ffn-hidden-size", "28672");
  expect_flag(a, "--num-attention-heads", "64");
  EXPECT_TRUE(a.has("--group-query-attention"));
  expect_flag(a, "--num-query-groups", "8");
  EXPECT_FALSE(a.has("--kv-channels"));  // 8192 / 64 = 128 = head_dim
  expect_flag(a, "--seq-length", "8192");
  expect_flag(a, "--max-position-embeddings", "8192");
  expect_flag(a, "--position-embedding-type", "rope");
  expect_flag(a, "--normalization", "RMSNorm");
  EXPECT_TRUE(a.has("--swiglu"));
  EXPECT_TRUE(a.has("--disable-bias-linear"));
  EXPECT_TRUE(a.has("--untie-embeddings-and-output-weights"));
  expect_flag(a, "--tensor-model-parallel-size", "8");
  expect_flag(a, "--pipeline-model-parallel-size", "4");
  EXPECT_FALSE(a.has("--num-layers-per-virtual-pipeline-stage"));
  expect_flag(a, "--recompute-granularity", "full");
  expect_flag(a, "--recompute-method", "uniform");
  expect_flag(a, "--recompute-num-layers", "1");
  expect_flag(a, "--global-batch-size", "128");
  EXPECT_EQ(joined(megatron_check(a, 64, l.env)), "");
  // The same command line at a world size the plan was not made for fails Megatron's checks.
  EXPECT_FALSE(megatron_check(a, 60, l.env).empty());
}

TEST(EmitMegatron, Gpt1TrillionOn3072A100) {
  TempDir dir;
  const Plan plan = gpt_1t_on_3072_a100();
  const Launch l = emit_and_run(plan, dir, {{"NNODES", "384"}, {"NODE_RANK", "383"}});
  ASSERT_EQ(l.run.rc, 0) << l.run.output;
  expect_flag(l.torchrun_args, "--nnodes", "384");
  expect_flag(l.torchrun_args, "--node_rank", "383");
  const ArgMap& a = l.megatron;
  expect_flag(a, "--num-layers", "128");
  expect_flag(a, "--hidden-size", "25600");
  expect_flag(a, "--num-attention-heads", "160");
  expect_flag(a, "--tensor-model-parallel-size", "8");
  expect_flag(a, "--pipeline-model-parallel-size", "64");
  expect_flag(a, "--global-batch-size", "3072");
  EXPECT_FALSE(a.has("--sequence-parallel"));
  EXPECT_EQ(joined(megatron_check(a, 3072, l.env)), "");
}

TEST(EmitMegatron, UnevenInterleavedPipeline) {
  TempDir dir;
  Plan plan = gpt3_175b_on_1024_a100();
  plan.config.first_stage_layers = 6;  // 84 middle layers: 14 per middle rank, 7 per chunk
  plan.config.last_stage_layers = 6;
  const Launch l = emit_and_run(plan, dir, {{"NNODES", "128"}});
  ASSERT_EQ(l.run.rc, 0) << l.run.output;
  const ArgMap& a = l.megatron;
  EXPECT_FALSE(a.has("--num-layers-per-virtual-pipeline-stage"));
  expect_flag(a, "--num-virtual-stages-per-pipeline-rank", "2");
  expect_flag(a, "--decoder-first-pipeline-num-layers", "6");
  expect_flag(a, "--decoder-last-pipeline-num-layers", "6");
  EXPECT_EQ(joined(megatron_check(a, 1024, l.env)), "");
}

TEST(EmitMegatron, Zero3MapsToMegatronFsdp) {
  TempDir dir;
  Plan plan = llama3_70b_on_64_h100();
  set_mesh(plan, 64, 8, 1, 1, 1);
  plan.config.zero = 3;
  plan.config.recompute = Recompute::kFull;
  plan.config.recompute_layers = 40;
  // Even when the user's environment says 1, the script unsets it.
  const Launch l = emit_and_run(plan, dir, {{"NNODES", "8"}, {"CUDA_DEVICE_MAX_CONNECTIONS", "1"}});
  ASSERT_EQ(l.run.rc, 0) << l.run.output;
  const ArgMap& a = l.megatron;
  EXPECT_TRUE(a.has("--use-custom-fsdp"));
  expect_flag(a, "--data-parallel-sharding-strategy", "optim_grads_params");
  EXPECT_TRUE(a.has("--use-distributed-optimizer"));
  EXPECT_TRUE(a.has("--no-gradient-accumulation-fusion"));
  EXPECT_FALSE(a.has("--ckpt-format"));
  expect_flag(a, "--recompute-method", "block");
  expect_flag(a, "--recompute-num-layers", "40");
  EXPECT_EQ(l.env.count("CUDA_DEVICE_MAX_CONNECTIONS"), 0u);
  EXPECT_EQ(joined(megatron_check(a, 64, l.env)), "");
}

TEST(EmitMegatron, MixtureOfExperts) {
  TempDir dir;
  Plan plan = llama3_70b_on_64_h100();
  plan.model.name = "moe-16x";
  plan.model.layers = 32;
  plan.model.hidden = 4096;
  plan.model.ffn_hidden = 14336;
  plan.model.heads = 32;
  plan.model.kv_groups = 8;
  plan.model.experts = 16;
  plan.model.top_k = 2;
  plan.model.expert_ffn_hidden = 2048;
  plan.model.shared_experts = 2;
  plan.model.first_dense_layers = 1;
  set_mesh(plan, 64, 2, 1, 1, 1);
  plan.config.ep = 8;
  plan.config.etp = 1;
  set_batch(plan, 256, 1, 4096);
  const Launch l = emit_and_run(plan, dir, {{"NNODES", "8"}});
  ASSERT_EQ(l.run.rc, 0) << l.run.output;
  const ArgMap& a = l.megatron;
  expect_flag(a, "--num-experts", "16");
  expect_flag(a, "--moe-router-topk", "2");
  expect_flag(a, "--moe-ffn-hidden-size", "2048");
  expect_flag(a, "--moe-shared-expert-intermediate-size", "4096");
  expect_flag(a, "--expert-model-parallel-size", "8");
  expect_flag(a, "--expert-tensor-parallel-size", "1");
  expect_flag(a, "--moe-token-dispatcher-type", "alltoall");
  // moe_freq_type evaluates the pattern: one dense layer, then 31 MoE layers.
  std::string pattern = "[0";
  for (int i = 1; i < 32; ++i) pattern += ",1";
  expect_flag(a, "--moe-layer-freq", pattern + "]");
  EXPECT_EQ(joined(megatron_check(a, 64, l.env)), "");
}

TEST(EmitMegatron, UserSettingsAreRequired) {
  TempDir dir;
  const std::vector<fs::path> files =
      emit_launch_files(llama3_70b_on_64_h100(), {Engine::kMegatron, Launcher::kTorchrun, dir.path / "out"});
  const fs::path stubs = make_stubs(dir.path);
  const fs::path record = dir.path / "record";
  fs::create_directories(record);
  const std::string text = read_text(files.front());
  EXPECT_NE(text.find("BEGIN USER SETTINGS"), std::string::npos);
  for (const char* missing : {"MEGATRON_LM", "DATA_PATH", "TOKENIZER_MODEL"}) {
    std::map<std::string, std::string> vars = kUserSettings;
    vars.erase(missing);
    vars["NNODES"] = "8";
    const RunResult r = run_clean(stubs, record, "bash " + files.front().string(), vars);
    EXPECT_NE(r.rc, 0) << missing;
    EXPECT_NE(r.output.find(std::string(missing) + ": set " + missing), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(record / "torchrun.args")) << "torchrun started without " << missing;
  }
  // The node count is checked against the plan's.
  std::map<std::string, std::string> vars = kUserSettings;
  vars["NNODES"] = "4";
  const RunResult r = run_clean(stubs, record, "bash " + files.front().string(), vars);
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.output.find("needs 8 nodes"), std::string::npos) << r.output;
}

TEST(EmitOutput, WritesAtomicallyAndRefusesUsedDirectories) {
  TempDir dir;
  const Plan plan = llama3_70b_on_64_h100();
  const fs::path out = dir.path / "nested" / "out";
  const std::vector<fs::path> files = emit_launch_files(plan, {Engine::kMegatron, Launcher::kTorchrun, out});
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(fs::is_regular_file(out / "launch.sh"));
  EXPECT_NE(fs::status(out / "launch.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
  // Nothing but the output directory is left in its parent.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(out.parent_path())) ++entries;
  EXPECT_EQ(entries, 1);
  // A directory that is not empty is refused, and left as it was.
  EXPECT_THROW(emit_launch_files(plan, {Engine::kMegatron, Launcher::kTorchrun, out}), InputError);
  EXPECT_EQ(read_text(out / "launch.sh"), read_text(files.front()));
  // A file is refused; an empty directory is used.
  std::ofstream(dir.path / "file") << "x";
  EXPECT_THROW(emit_launch_files(plan, {Engine::kMegatron, Launcher::kTorchrun, dir.path / "file"}),
               InputError);
  fs::create_directories(dir.path / "empty");
  EXPECT_NO_THROW(emit_launch_files(plan, {Engine::kMegatron, Launcher::kTorchrun, dir.path / "empty"}));
  EXPECT_TRUE(fs::exists(dir.path / "empty" / "launch.sh"));
  // A plan the engine rejects writes nothing and names every broken rule.
  Plan bad = plan;
  bad.model.kv_groups = 4;
  bad.config.sp = true;
  bad.config.gbs = 129;
  try {
    emit_launch_files(bad, {Engine::kMegatron, Launcher::kTorchrun, dir.path / "bad"});
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    // The validator's first violation, in its words (cost/config_rules.h).
    EXPECT_NE(what.find("tp 8 must divide the model's 4 key/value groups"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(dir.path / "bad"));
}

TEST(EmitOutput, RanksFillWholeNodes) {
  TempDir dir;
  Plan plan = llama3_70b_on_64_h100();
  set_mesh(plan, 12, 4, 1, 1, 1);  // 12 ranks on nodes of 8
  set_batch(plan, 12, 1, 8192);
  plan.model.kv_groups = 4;
  plan.model.heads = 64;
  try {
    emit_launch_files(plan, {Engine::kMegatron, Launcher::kTorchrun, dir.path / "out"});
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("do not fill whole nodes of 8"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path / "out"));
  // Fewer ranks than a node: one node running them all.
  set_mesh(plan, 4, 4, 1, 1, 1);
  set_batch(plan, 8, 1, 8192);
  emit_launch_files(plan, {Engine::kMegatron, Launcher::kTorchrun, dir.path / "small"});
  const std::string text = read_text(dir.path / "small" / "launch.sh");
  EXPECT_NE(text.find("GPUS_PER_NODE=4\n"), std::string::npos);
  EXPECT_NE(text.find("SLURM_JOB_NUM_NODES:-1}"), std::string::npos);
}

TEST(EmitMegatron, PrecisionAwareOptimizerFlag) {
  Plan plan = llama3_70b_on_64_h100();
  plan.job.precision_aware_optimizer = true;
  TempDir dir;
  const Launch l = emit_and_run(plan, dir, {{"NNODES", "8"}});
  ASSERT_EQ(l.run.rc, 0) << l.run.output;
  EXPECT_TRUE(l.megatron.has("--use-precision-aware-optimizer"));
  EXPECT_EQ(joined(megatron_check(l.megatron, 64, l.env)), "");
}

// Costed as overlapped, emitted as such; without sp (which it requires) it
// is neither.
TEST(EmitMegatron, TpCommOverlapFlagFollowsTheCostedConfig) {
  Plan plan = llama3_70b_on_64_h100();
  plan.job.tp_comm_overlap = true;
  {
    TempDir dir;
    const Launch l = emit_and_run(plan, dir, {{"NNODES", "8"}});
    ASSERT_EQ(l.run.rc, 0) << l.run.output;
    EXPECT_TRUE(l.megatron.has("--tp-comm-overlap"));
    EXPECT_EQ(joined(megatron_check(l.megatron, 64, l.env)), "");
  }
  plan.config.sp = false;
  {
    TempDir dir;
    const Launch l = emit_and_run(plan, dir, {{"NNODES", "8"}});
    ASSERT_EQ(l.run.rc, 0) << l.run.output;
    EXPECT_FALSE(l.megatron.has("--tp-comm-overlap"));
    EXPECT_EQ(joined(megatron_check(l.megatron, 64, l.env)), "");
  }
}

}  // namespace
}  // namespace parplan::emit_test
