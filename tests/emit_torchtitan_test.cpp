// --emit torchtitan: the TOML uses JobConfig's keys and its degrees multiply to
// the world (torchtitan ParallelDims._validate); launch.sh starts torchtitan.train.
#include "emit_fixtures/emit_test_util.h"

namespace parplan::emit_test {
namespace {

struct Emitted {
  std::map<std::string, std::string> toml;
  std::vector<std::string> torchrun;
  RunResult run;
};

Emitted emit_and_run(const Plan& plan, const TempDir& dir, const std::string& nnodes) {
  Emitted e;
  const std::vector<fs::path> files =
      emit_launch_files(plan, {Engine::kTorchtitan, Launcher::kTorchrun, dir.path / "out"});
  EXPECT_EQ(files.front(), dir.path / "out" / "launch.sh");
  e.toml = parse_toml(read_text(dir.path / "out" / "torchtitan.toml"));
  const fs::path record = dir.path / "record";
  fs::create_directories(record);
  e.run = run_clean(make_stubs(dir.path), record, "bash " + files.front().string(),
                    {{"HF_ASSETS_PATH", "/models/llama3-70b"}, {"NNODES", nnodes}});
  e.torchrun = read_lines(record / "torchrun.args");
  return e;
}

long long num(const std::map<std::string, std::string>& t, const std::string& key) {
  return std::stoll(t.at(key));
}

// ParallelDims._validate and train.py's batch rule, restated.
std::vector<std::string> torchtitan_check(const std::map<std::string, std::string>& t, long long world) {
  std::vector<std::string> errors;
  for (const auto& [key, value] : t) {
    if (!torchtitan_known_keys().count(key)) errors.push_back("unknown key " + key);
  }
  const long long rep = num(t, "parallelism.data_parallel_replicate_degree");
  const long long shard = num(t, "parallelism.data_parallel_shard_degree");
  const long long cp = num(t, "parallelism.context_parallel_degree");
  const long long tp = num(t, "parallelism.tensor_parallel_degree");
  const long long pp = num(t, "parallelism.pipeline_parallel_degree");
  if (rep * shard * cp * tp * pp != world)
    errors.push_back("dp_replicate * dp_shard * cp * tp * pp != WORLD_SIZE");
  const long long local = num(t, "training.local_batch_size");
  const long long global = num(t, "training.global_batch_size");
  if (global % (local * rep * shard) != 0) errors.push_back("global batch not divisible by local batch * dp");
  if (pp > 1 && local % num(t, "parallelism.pipeline_parallel_microbatch_size") != 0) {
    errors.push_back("local batch not divisible by the pipeline micro-batch size");
  }
  const long long seq = num(t, "training.seq_len");
  if (cp > 1 && seq % (tp * 2 * cp) != 0) errors.push_back("seq_len not divisible by seq_len_divisor");
  const std::set<std::string> modes = {"selective", "full", "none"};
  if (!modes.count(t.at("activation_checkpoint.mode"))) errors.push_back("bad activation_checkpoint.mode");
  return errors;
}

TEST(EmitTorchtitan, Llama3_70bFsdpTensorParallelOn64H100) {
  Plan plan = llama3_70b_on_64_h100();
  set_mesh(plan, 64, 8, 1, 1, 1);
  plan.config.zero = 3;
  TempDir dir;
  const Emitted e = emit_and_run(plan, dir, "8");
  ASSERT_EQ(e.run.rc, 0) << e.run.output;
  EXPECT_EQ(joined(torchtitan_check(e.toml, 64)), "");
  EXPECT_EQ(e.toml.at("model.name"), "llama3");
  EXPECT_EQ(e.toml.at("model.flavor"), "70B");
  EXPECT_EQ(num(e.toml, "parallelism.data_parallel_shard_degree"), 8);
  EXPECT_EQ(num(e.toml, "parallelism.data_parallel_replicate_degree"), 1);
  EXPECT_EQ(e.toml.at("parallelism.fsdp_reshard_after_forward"), "always");
  EXPECT_EQ(num(e.toml, "parallelism.tensor_parallel_degree"), 8);
  EXPECT_EQ(num(e.toml, "training.seq_len"), 8192);
  EXPECT_EQ(num(e.toml, "training.local_batch_size"), 1);
  EXPECT_EQ(num(e.toml, "training.global_batch_size"), 128);
  EXPECT_EQ(e.toml.at("activation_checkpoint.mode"), "full");
  EXPECT_EQ(e.toml.at("training.mixed_precision_param"), "bfloat16");
  // torchrun runs the module with the config and the user's assets.
  const ArgMap own = parse_args(
      std::vector<std::string>(e.torchrun.begin(), std::find(e.torchrun.begin(), e.torchrun.end(), "-m")));
  EXPECT_EQ(own.value("--nnodes"), "8");
  const std::vector<std::string> program = after(e.torchrun, "-m");
  ASSERT_FALSE(program.empty());
  EXPECT_EQ(program.front(), "torchtitan.train");
  const ArgMap a = parse_args({program.begin() + 1, program.end()});
  EXPECT_EQ(a.value("--job.config_file"), (dir.path / "out" / "torchtitan.toml").string());
  EXPECT_EQ(a.value("--model.hf_assets_path"), "/models/llama3-70b");
}

TEST(EmitTorchtitan, InterleavedPipelineAndHsdp) {
  Plan plan = llama3_70b_on_64_h100();
  set_mesh(plan, 64, 8, 2, 1, 2);  // dp 4
  set_batch(plan, 64, 2, 8192);
  plan.config.zero = 3;
  plan.config.hierarchical_partition = true;
  plan.config.hpz_ranks = 2;
  plan.config.recompute = Recompute::kSelective;
  TempDir dir;
  const Emitted e = emit_and_run(plan, dir, "8");
  ASSERT_EQ(e.run.rc, 0) << e.run.output;
  EXPECT_EQ(joined(torchtitan_check(e.toml, 64)), "");
  EXPECT_EQ(num(e.toml, "parallelism.pipeline_parallel_degree"), 2);
  EXPECT_EQ(e.toml.at("parallelism.pipeline_parallel_schedule"), "Interleaved1F1B");
  EXPECT_EQ(num(e.toml, "parallelism.pipeline_parallel_microbatch_size"), 2);
  EXPECT_EQ(num(e.toml, "training.local_batch_size"), 16);  // 64 / dp 4: 8 micro-batches of 2
  EXPECT_EQ(num(e.toml, "parallelism.data_parallel_shard_degree"), 2);
  EXPECT_EQ(num(e.toml, "parallelism.data_parallel_replicate_degree"), 2);
  EXPECT_EQ(e.toml.at("activation_checkpoint.mode"), "selective");
}

}  // namespace
}  // namespace parplan::emit_test
