// --emit torchtitan: by default the Python config of torchtitan main (module
// and function for --module/--config, the fields of TrainingConfig and
// ParallelismConfig); under --engine-version 0.2 the TOML whose keys are v0.2's
// JobConfig. The degrees multiply to the world (ParallelDims._validate);
// launch.sh checks the installed config system and starts torchtitan.train.
#include "emit_fixtures/emit_test_util.h"
#include "src/io/input_error.h"

namespace parplan::emit_test {
namespace {

struct Emitted {
  std::map<std::string, std::string> toml;
  std::vector<std::string> torchrun;
  RunResult run;
};

Emitted emit_and_run(const Plan& plan, const TempDir& dir, const std::string& nnodes) {
  Emitted e;
  EmitOptions options{Engine::kTorchtitan, Launcher::kTorchrun, dir.path / "out"};
  options.torchtitan_version = TorchtitanVersion::kV02;
  const std::vector<fs::path> files = emit_launch_files(plan, options);
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

// A plan for 8 nodes of 8 GPUs, emitted and launched on the stubs: the
// launch script runs and the config passes torchtitan's rules.
Emitted emit_valid_on_64(const Plan& plan, const TempDir& dir) {
  Emitted e = emit_and_run(plan, dir, "8");
  EXPECT_EQ(e.run.rc, 0) << e.run.output;
  EXPECT_EQ(joined(torchtitan_check(e.toml, 64)), "");
  return e;
}

// Llama 3 70B on 64 H100: FSDP 8 x TP 8, ZeRO-3.
Plan llama3_70b_fsdp8_tp8() {
  Plan plan = llama31_70b_on_64_h100();
  set_mesh(plan, 64, 8, 1, 1, 1);
  plan.config.zero = 3;
  return plan;
}

TEST(EmitTorchtitan, Llama3_70bFsdpTensorParallelOn64H100) {
  Plan plan = llama3_70b_fsdp8_tp8();
  TempDir dir;
  const Emitted e = emit_valid_on_64(plan, dir);
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
  // Timed with fused element-wise kernels: torch.compile on, as costed
  // (Compile.enable defaults to False in job_config.py).
  ASSERT_TRUE(plan.job.fused_elementwise);
  EXPECT_EQ(e.toml.at("compile.enable"), "true");
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
  Plan plan = llama31_70b_on_64_h100();
  set_mesh(plan, 64, 8, 2, 1, 2);  // dp 4
  set_batch(plan, 64, 2, 8192);
  plan.config.zero = 3;
  plan.config.hierarchical_partition = true;
  plan.config.hpz_ranks = 2;
  plan.config.recompute = Recompute::kSelective;
  TempDir dir;
  const Emitted e = emit_valid_on_64(plan, dir);
  EXPECT_EQ(num(e.toml, "parallelism.pipeline_parallel_degree"), 2);
  EXPECT_EQ(e.toml.at("parallelism.pipeline_parallel_schedule"), "Interleaved1F1B");
  EXPECT_EQ(num(e.toml, "parallelism.pipeline_parallel_microbatch_size"), 2);
  EXPECT_EQ(num(e.toml, "training.local_batch_size"), 16);  // 64 / dp 4: 8 micro-batches of 2
  EXPECT_EQ(num(e.toml, "parallelism.data_parallel_shard_degree"), 2);
  EXPECT_EQ(num(e.toml, "parallelism.data_parallel_replicate_degree"), 2);
  EXPECT_EQ(e.toml.at("activation_checkpoint.mode"), "selective");
}

// With context parallelism FSDP shards over data_parallel_shard_degree x cp
// ranks (torchtitan's dp_shard_cp mesh): an HSDP plan costed with a shard
// group of one node's 4 dp x cp ranks (tp 2, cp 2) is written as
// dp_shard 2, not 4 (which would shard over 8 ranks, two nodes).
TEST(EmitTorchtitan, HsdpShardGroupCountsContextParallelRanks) {
  Plan plan = llama31_70b_on_64_h100();
  set_mesh(plan, 64, 2, 1, 2, 1);  // dp 16
  plan.config.sp = true;
  plan.config.zero = 3;
  plan.config.hpz_ranks = 4;
  plan.config.recompute = Recompute::kFull;
  TempDir dir;
  const Emitted e = emit_valid_on_64(plan, dir);
  EXPECT_EQ(num(e.toml, "parallelism.data_parallel_shard_degree") *
                num(e.toml, "parallelism.context_parallel_degree"),
            4);
  EXPECT_EQ(num(e.toml, "parallelism.data_parallel_shard_degree"), 2);
  EXPECT_EQ(num(e.toml, "parallelism.data_parallel_replicate_degree"), 8);
  // A shard group that is no whole number of cp groups has no torchtitan form.
  plan.config.hpz_ranks = 3;
  bool refused = false;
  for (const std::string& v : engine_rule_violations(plan, Engine::kTorchtitan))
    refused = refused || v.find("data_parallel_shard_degree x cp") != std::string::npos;
  EXPECT_TRUE(refused);
}

// Assignments of the emitted Python config: "config.a.b = V" as "a.b" and the
// keyword arguments of ParallelismConfig(...) as "parallelism.k".
std::map<std::string, std::string> parse_python_config(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  bool in_parallelism = false;
  for (std::string line; std::getline(in, line);) {
    const auto start = line.find_first_not_of(' ');
    if (start == std::string::npos || line[start] == '#') continue;
    const std::string body = line.substr(start);
    if (body.rfind("config.parallelism = ParallelismConfig(", 0) == 0) {
      in_parallelism = true;
      continue;
    }
    if (in_parallelism) {
      if (body == ")") {
        in_parallelism = false;
        continue;
      }
      const auto eq = body.find('=');
      out["parallelism." + body.substr(0, eq)] = body.substr(eq + 1, body.size() - eq - 2);
      continue;
    }
    if (body.rfind("config.", 0) == 0) {
      const auto eq = body.find(" = ");
      out[body.substr(7, eq - 7)] = body.substr(eq + 3);
    }
  }
  return out;
}

struct MainEmitted {
  std::string python;
  std::map<std::string, std::string> config;
  std::string launch;
  std::vector<std::string> torchrun;
  RunResult run;
};

MainEmitted emit_main(const Plan& plan, const TempDir& dir) {
  MainEmitted e;
  const std::vector<fs::path> files =
      emit_launch_files(plan, {Engine::kTorchtitan, Launcher::kTorchrun, dir.path / "out"});
  EXPECT_FALSE(fs::exists(dir.path / "out" / "torchtitan.toml"));
  e.python = read_text(dir.path / "out" / "parplan_torchtitan.py");
  e.config = parse_python_config(e.python);
  e.launch = read_text(files.front());
  const fs::path record = dir.path / "record";
  fs::create_directories(record);
  e.run = run_clean(make_stubs(dir.path), record, "bash " + files.front().string(),
                    {{"HF_ASSETS_PATH", "/models/llama3-70b"}, {"NNODES", "8"}});
  e.torchrun = read_lines(record / "torchrun.args");
  return e;
}

TEST(EmitTorchtitanMain, PythonConfigWithModuleAndVersion) {
  Plan plan = llama3_70b_fsdp8_tp8();
  plan.job.cross_entropy = CrossEntropy::kCompiled;  // what `plan --engine torchtitan` costs
  TempDir dir;
  const MainEmitted e = emit_main(plan, dir);
  ASSERT_EQ(e.run.rc, 0) << e.run.output;
  // Every file says which torchtitan it targets.
  EXPECT_NE(e.python.find("Targets torchtitan main"), std::string::npos);
  EXPECT_NE(e.launch.find("Targets torchtitan main"), std::string::npos);
  // ConfigManager._load_config: --module and --config are both required.
  const std::vector<std::string> program = after(e.torchrun, "-m");
  ASSERT_FALSE(program.empty());
  EXPECT_EQ(program.front(), "torchtitan.train");
  const ArgMap a = parse_args({program.begin() + 1, program.end()});
  EXPECT_EQ(a.value("--module"), "parplan_torchtitan");
  EXPECT_EQ(a.value("--config"), "parplan_plan");
  EXPECT_NE(e.python.find("def parplan_plan() -> Trainer.Config:"), std::string::npos);
  EXPECT_NE(e.python.find("from torchtitan.models.llama3.config_registry import llama3_70b"),
            std::string::npos);
  // The launch script checks the installed config system before starting.
  EXPECT_NE(e.launch.find("torchtitan.config.configs"), std::string::npos);
  // Degrees multiply to the world; tokens per step = gbs x seq (trainer.py).
  const auto& c = e.config;
  const long long world = std::stoll(c.at("parallelism.data_parallel_replicate_degree")) *
                          std::stoll(c.at("parallelism.data_parallel_shard_degree")) *
                          std::stoll(c.at("parallelism.tensor_parallel_degree")) *
                          std::stoll(c.at("parallelism.pipeline_parallel_degree")) *
                          std::stoll(c.at("parallelism.context_parallel_degree"));
  EXPECT_EQ(world, 64);
  EXPECT_EQ(c.at("parallelism.data_parallel_shard_degree"), "8");
  EXPECT_EQ(c.at("parallelism.fsdp_reshard_after_forward"), "\"always\"");
  EXPECT_EQ(std::stoll(c.at("training.num_tokens_per_train_step")), 128LL * 8192);
  EXPECT_EQ(std::stoll(c.at("training.num_tokens_per_microbatch_per_dp_rank")), 8192);
  EXPECT_EQ(c.at("training.max_context_length"), "8192");
  // Trainer.Config._validate_cuda_graphs (trainer.py:168-199 at b5bcd76c):
  // CUDA graphs, on by default (configs.py:75), refuse pipeline parallelism
  // and the standard expert dispatcher; the plan is costed with eager launches.
  EXPECT_EQ(c.at("training.disable_cuda_graphs"), "True");
  EXPECT_EQ(c.at("activation_checkpoint"), "FullAC.Config()");
  EXPECT_EQ(c.at("compile"), "CompileConfig(enable=True, components=[\"model\", \"loss\"])");
  EXPECT_NE(e.python.find("from torchtitan.config import CompileConfig, ParallelismConfig"),
            std::string::npos);
}

// A plan timed eager (element-wise kernels unfused) turns compile off.
TEST(EmitTorchtitanMain, EagerPlanLeavesCompileOff) {
  Plan plan = llama3_70b_fsdp8_tp8();
  plan.job.fused_elementwise = false;
  TempDir dir;
  const MainEmitted e = emit_main(plan, dir);
  ASSERT_EQ(e.run.rc, 0) << e.run.output;
  // Off explicitly: a recipe that compiles (llama3_405b at b5bcd76c) would
  // otherwise run the eager-costed plan compiled.
  EXPECT_EQ(e.config.at("compile"), "CompileConfig(enable=False)");
}

// A plan costed with the eager loss compiles the model alone, as costed
// (torchtitan/components/loss.py: the loss compiles only when listed).
TEST(EmitTorchtitanMain, EagerLossIsLeftOutOfTheCompiledComponents) {
  Plan plan = llama3_70b_fsdp8_tp8();
  plan.job.cross_entropy = CrossEntropy::kEager;
  TempDir dir;
  const MainEmitted e = emit_main(plan, dir);
  ASSERT_EQ(e.run.rc, 0) << e.run.output;
  EXPECT_EQ(e.config.at("compile"), "CompileConfig(enable=True, components=[\"model\"])");
}

// Async TP as costed (--tp-comm-overlap under torchtitan): main's
// CompileConfig switch, v0.2's [parallelism] key, each beside the compiled
// model torchtitan requires (configs.py:307-313; v0.2.2 tensor_parallel.py).
TEST(EmitTorchtitanMain, AsyncTensorParallelAsCosted) {
  Plan plan = llama3_70b_fsdp8_tp8();
  plan.config.sp = true;
  plan.job.tp_comm_overlap = true;
  plan.job.tp_overlap_mechanism = TpOverlapMechanism::kMicroPipeline;
  plan.job.cross_entropy = CrossEntropy::kEager;
  EXPECT_TRUE(engine_rule_violations(plan, Engine::kTorchtitan).empty());
  TempDir dir;
  const MainEmitted e = emit_main(plan, dir);
  ASSERT_EQ(e.run.rc, 0) << e.run.output;
  EXPECT_EQ(e.config.at("compile"),
            "CompileConfig(enable=True, components=[\"model\"], enable_async_tensor_parallel=True)");
  TempDir v02;
  const Emitted t = emit_valid_on_64(plan, v02);
  EXPECT_EQ(t.toml.at("parallelism.enable_async_tensor_parallel"), "true");
  EXPECT_EQ(t.toml.at("compile.enable"), "true");
  // Eager, torchtitan would raise: the rules refuse the plan.
  plan.job.fused_elementwise = false;
  EXPECT_FALSE(engine_rule_violations(plan, Engine::kTorchtitan).empty());
}

TEST(EmitTorchtitanMain, PipelineMicroBatchesCoverTheBatchWithoutAccumulation) {
  Plan plan = llama31_70b_on_64_h100();
  set_mesh(plan, 64, 8, 2, 1, 2);  // dp 4
  set_batch(plan, 64, 2, 8192);
  plan.config.zero = 3;
  plan.config.recompute = Recompute::kNone;
  TempDir dir;
  const MainEmitted e = emit_main(plan, dir);
  ASSERT_EQ(e.run.rc, 0) << e.run.output;
  const auto& c = e.config;
  EXPECT_EQ(c.at("parallelism.pipeline_parallel_schedule"), "\"Interleaved1F1B\"");
  // trainer.py: accumulation = tokens per step / (tokens per micro-batch x
  // num_pp_microbatches x dp) must be 1: 64 x 8192 / (2 x 8192 x 8 x 4).
  const long long per_mb = std::stoll(c.at("training.num_tokens_per_microbatch_per_dp_rank"));
  const long long n_mb = std::stoll(c.at("parallelism.num_pp_microbatches"));
  const long long step = std::stoll(c.at("training.num_tokens_per_train_step"));
  EXPECT_EQ(step, per_mb * n_mb * 4);
  EXPECT_EQ(n_mb, 8);
  // An even split, as costed.
  EXPECT_EQ(c.at("parallelism.pipeline_parallel_first_stage_less_layers"), "0");
  EXPECT_EQ(c.at("parallelism.pipeline_parallel_last_stage_less_layers"), "0");
  EXPECT_EQ(c.at("activation_checkpoint"), "None");
}

TEST(EmitTorchtitanV02, TomlSaysItsVersionAndLaunchChecksIt) {
  Plan plan = llama3_70b_fsdp8_tp8();
  TempDir dir;
  const Emitted e = emit_and_run(plan, dir, "8");
  ASSERT_EQ(e.run.rc, 0) << e.run.output;
  EXPECT_NE(read_text(dir.path / "out" / "torchtitan.toml").find("Targets torchtitan v0.2.x"),
            std::string::npos);
  const std::string launch = read_text(dir.path / "out" / "launch.sh");
  EXPECT_NE(launch.find("Targets torchtitan v0.2.x"), std::string::npos);
  EXPECT_NE(launch.find("torchtitan==0.2.2"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path / "out" / "parplan_torchtitan.py"));
  EXPECT_EQ(parse_engine_version(Engine::kTorchtitan, "0.2"), TorchtitanVersion::kV02);
  EXPECT_EQ(parse_engine_version(Engine::kTorchtitan, ""), TorchtitanVersion::kMain);
  EXPECT_THROW(parse_engine_version(Engine::kTorchtitan, "0.3"), InputError);
  EXPECT_THROW(parse_engine_version(Engine::kMegatron, "0.2"), InputError);
}

}  // namespace
}  // namespace parplan::emit_test
