// --launcher slurm: job.sbatch on a generic cluster (srun of launch.sh, one
// torchrun per node) and on Frontier (OLCF "PyTorch on Frontier": one task per
// GCD, no torchrun, ranks from Slurm, RCCL/OFI/MIOpen environment).
#include <nlohmann/json.hpp>

#include "emit_fixtures/emit_test_util.h"

namespace parplan::emit_test {
namespace {

// "#SBATCH" lines as option -> value.
std::map<std::string, std::string> sbatch_options(const fs::path& script) {
  std::map<std::string, std::string> out;
  for (const std::string& line : read_lines(script)) {
    if (line.rfind("#SBATCH ", 0) != 0) continue;
    const std::string opt = line.substr(8);
    const auto cut = opt.find_first_of(" =");
    out[opt.substr(0, cut)] = cut == std::string::npos ? "" : opt.substr(cut + 1);
  }
  return out;
}

std::map<std::string, std::string> with(std::map<std::string, std::string> vars,
                                        const std::map<std::string, std::string>& more) {
  for (const auto& kv : more) vars[kv.first] = kv.second;
  return vars;
}

TEST(EmitSlurm, GenericClusterRunsLaunchShPerNode) {
  const Plan plan = gpt3_175b_on_1024_a100();
  TempDir dir;
  const std::vector<fs::path> files =
      emit_launch_files(plan, {Engine::kMegatron, Launcher::kSlurm, dir.path / "out"});
  ASSERT_EQ(files.front(), dir.path / "out" / "job.sbatch");
  EXPECT_TRUE(fs::exists(dir.path / "out" / "launch.sh"));
  const auto opts = sbatch_options(files.front());
  EXPECT_EQ(opts.at("-N"), "128");
  EXPECT_EQ(opts.at("-A"), "PARPLAN_ACCOUNT");
  EXPECT_EQ(opts.at("-p"), "PARPLAN_PARTITION");
  EXPECT_EQ(opts.at("-t"), "09:25:00");  // 1000 steps * 30 s * 1.1 + 15 min, whole minutes
  EXPECT_EQ(opts.at("--ntasks-per-node"), "1");
  // One task starts all eight ranks: whole nodes, or a shared node's default
  // of one CPU per task would serve them all.
  EXPECT_EQ(opts.count("--exclusive"), 1u);

  const fs::path record = dir.path / "record";
  fs::create_directories(record);
  const RunResult r = run_clean(make_stubs(dir.path), record, "bash " + files.front().string(),
                                with(kMegatronUser, {{"SLURM_JOB_NUM_NODES", "128"},
                                                     {"SLURM_JOB_NODELIST", "gpu[001-128]"},
                                                     {"PARPLAN_TEST_NODES", "gpu001 gpu002 gpu003"}}));
  ASSERT_EQ(r.rc, 0) << r.output;
  const std::vector<std::string> srun = read_lines(record / "srun.args");
  EXPECT_EQ(srun.back(), (dir.path / "out" / "launch.sh").string());
  const std::vector<std::string> torchrun = read_lines(record / "torchrun.args");
  const ArgMap own = parse_args(
      {torchrun.begin(), std::find(torchrun.begin(), torchrun.end(), "/opt/Megatron-LM/pretrain_gpt.py")});
  EXPECT_EQ(own.value("--nnodes"), "128");
  EXPECT_EQ(own.value("--node_rank"), "0");  // SLURM_NODEID of the task
  EXPECT_EQ(own.value("--master_addr"), "gpu001");
  const ArgMap a = parse_args(after(torchrun, "pretrain_gpt.py"));
  EXPECT_EQ(joined(megatron_check(a, 1024, read_env(record / "torchrun.env"))), "");
}

struct FrontierRun {
  std::vector<fs::path> files;
  RunResult result;
  fs::path record;
  std::vector<std::string> srun;
  std::vector<std::string> python;
  std::map<std::string, std::string> env;
};

FrontierRun run_frontier(const Plan& plan, Engine engine, const TempDir& dir,
                         const std::map<std::string, std::string>& user) {
  FrontierRun f;
  f.files = emit_launch_files(plan, {engine, Launcher::kSlurm, dir.path / "out"});
  f.record = dir.path / "record";
  fs::create_directories(f.record);
  f.result = run_clean(make_stubs(dir.path), f.record, "bash " + f.files.front().string(),
                       with(user, {{"SLURM_JOB_NUM_NODES", "16"},
                                   {"SLURM_JOB_NODELIST", "frontier[00001-00016]"},
                                   {"PARPLAN_TEST_NODES", "frontier00001 frontier00002"}}));
  f.srun = read_lines(f.record / "srun.args");
  f.python = read_lines(f.record / "python3.args");
  f.env = read_env(f.record / "python3.env");
  return f;
}

// What the OLCF guide asks of every Frontier launch.
// `node_visible`: a DeepSpeed plan with qgZ, whose tasks see the node's GCDs
// (DeepSpeed sizes qgZ's node-local stage by the GPUs a task sees).
void expect_frontier_launch(const FrontierRun& f, const fs::path& out, bool node_visible = false) {
  ASSERT_EQ(f.result.rc, 0) << f.result.output;
  ASSERT_EQ(f.files.size(), f.files.empty() ? 0u : f.files.size());
  EXPECT_EQ(f.files.front(), out / "job.sbatch");
  EXPECT_FALSE(fs::exists(out / "launch.sh"));
  EXPECT_EQ(read_text(f.files.front()).find("torchrun"), std::string::npos);
  EXPECT_FALSE(fs::exists(f.record / "torchrun.args"));
  const auto opts = sbatch_options(f.files.front());
  EXPECT_EQ(opts.at("-N"), "16");
  EXPECT_EQ(opts.at("-A"), "PARPLAN_ACCOUNT");
  EXPECT_EQ(opts.at("--network"), "disable_rdzv_get");
  // srun -N16 -n128 -c7 --gpus-per-task=1 --gpu-bind=closest: one task per GCD.
  const ArgMap s = parse_args(f.srun);
  auto has_word = [&](const std::string& w) {
    return std::find(f.srun.begin(), f.srun.end(), w) != f.srun.end();
  };
  EXPECT_TRUE(has_word("-N") && has_word("16"));
  EXPECT_TRUE(has_word("-n") && has_word("128"));
  EXPECT_TRUE(has_word("-c7"));
  EXPECT_TRUE(has_word("--ntasks-per-node=8"));
  EXPECT_EQ(has_word("--gpus-per-task=1"), !node_visible);
  EXPECT_EQ(has_word("--gpu-bind=closest"), !node_visible);
  EXPECT_EQ(has_word("--gpus-per-node=8"), node_visible);
  // Ranks from Slurm; each task sees its one GCD as device 0.
  EXPECT_EQ(f.env.at("RANK"), "0");
  EXPECT_EQ(f.env.at("WORLD_SIZE"), "128");
  EXPECT_EQ(f.env.at("LOCAL_RANK"), "0");
  EXPECT_EQ(f.env.at("GCD"), "0");
  EXPECT_EQ(f.env.at("MASTER_ADDR"), "frontier00001");
  EXPECT_EQ(f.env.at("MASTER_PORT"), "3442");
  // RCCL over Slingshot and a private MIOpen cache per task.
  // The OLCF guide's list (pytorch_frontier.rst, "RCCL Network Plugin").
  EXPECT_EQ(f.env.at("NCCL_SOCKET_IFNAME"), "hsn0,hsn1,hsn2,hsn3");
  EXPECT_EQ(f.env.at("FI_MR_CACHE_MONITOR"), "kdreg2");
  EXPECT_EQ(f.env.at("FI_CXI_RDZV_PROTO"), "alt_read");
  EXPECT_EQ(f.env.at("NCCL_NET"), "OFI");
  EXPECT_EQ(f.env.at("MIOPEN_USER_DB_PATH"), "/tmp/miopen-cache-tester-0");
  EXPECT_EQ(f.env.at("MIOPEN_CUSTOM_CACHE_DIR"), f.env.at("MIOPEN_USER_DB_PATH"));
  ASSERT_FALSE(f.python.empty());
  EXPECT_EQ(f.python.front(), "-u");
}

TEST(EmitSlurm, FrontierMegatronOneTaskPerGcd) {
  const Plan plan = frontier_22b_on_128_gcds();
  TempDir dir;
  const FrontierRun f = run_frontier(plan, Engine::kMegatron, dir, kMegatronUser);
  expect_frontier_launch(f, dir.path / "out");
  ASSERT_GE(f.python.size(), 2u);
  EXPECT_EQ(f.python[1], "/opt/Megatron-LM/pretrain_gpt.py");
  const ArgMap a = parse_args(after(f.python, "pretrain_gpt.py"));
  EXPECT_EQ(a.value("--tensor-model-parallel-size"), "2");
  EXPECT_EQ(a.value("--pipeline-model-parallel-size"), "4");
  EXPECT_EQ(f.env.at("CUDA_DEVICE_MAX_CONNECTIONS"), "1");
  EXPECT_EQ(joined(megatron_check(a, std::stoll(f.env.at("WORLD_SIZE")), f.env)), "");
}

TEST(EmitSlurm, FrontierMegatronDeepSpeedHierarchicalZeroPlusPlus) {
  Plan plan = frontier_22b_on_128_gcds();
  set_mesh(plan, 128, 1, 1, 1, 1);  // dp 128: ZeRO++ at tp 1 (DeepSpeed's groups are global ranks)
  plan.config.sp = false;
  plan.config.zero = 3;
  plan.config.hierarchical_partition = true;
  plan.config.hpz_ranks = 8;  // the GCDs of a node
  plan.config.qwz = plan.config.qgz = true;
  TempDir dir;
  const FrontierRun f = run_frontier(
      plan, Engine::kMegatronDeepSpeed, dir,
      {{"MEGATRON_DEEPSPEED", "/opt/mds"}, {"DATA_PATH", "/data/a"}, {"TOKENIZER_MODEL", "gpt2"}});
  expect_frontier_launch(f, dir.path / "out", /*node_visible=*/true);
  EXPECT_EQ(f.python[1], "/opt/mds/pretrain_gpt.py");
  const ArgMap a = parse_args(after(f.python, "pretrain_gpt.py"));
  EXPECT_EQ(a.value("--deepspeed_config"), (dir.path / "out" / "ds_config.json").string());
  const nlohmann::json cfg = nlohmann::json::parse(read_text(dir.path / "out" / "ds_config.json"));
  EXPECT_EQ(cfg["zero_optimization"]["zero_hpz_partition_size"].get<int>(), 8);
  EXPECT_EQ(cfg["train_batch_size"].get<int>(), cfg["train_micro_batch_size_per_gpu"].get<int>() *
                                                    cfg["gradient_accumulation_steps"].get<int>() * 128);
}

TEST(EmitSlurm, FrontierTorchtitanRunsTheModule) {
  Plan plan = llama31_70b_on_64_h100();
  plan.cluster = frontier_22b_on_128_gcds().cluster;
  set_mesh(plan, 128, 8, 1, 1, 1);
  plan.config.zero = 3;
  TempDir dir;
  const FrontierRun f = run_frontier(plan, Engine::kTorchtitan, dir, {{"HF_ASSETS_PATH", "/models/llama"}});
  expect_frontier_launch(f, dir.path / "out");
  ASSERT_GE(f.python.size(), 3u);
  EXPECT_EQ(f.python[1], "-m");
  EXPECT_EQ(f.python[2], "torchtitan.train");
}

}  // namespace
}  // namespace parplan::emit_test
