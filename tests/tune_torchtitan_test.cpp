// The tuning loop on torchtitan main: the Python config `--emit torchtitan`
// writes reads back as the plan it was written for (same config, same step
// time), tune's simulated torchtitan logs recover a hidden profile, and bad
// Python configs and models calibrate cannot read back are refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cost/step_cost.h"
#include "solvers/profile_fit.h"
#include "src/emit/emit.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/model_loader.h"
#include "src/io/run_sources.h"
#include "src/io/torchtitan_log_reader.h"
#include "src/io/torchtitan_python_config.h"
#include "src/tune/simulated_log.h"
#include "src/tune/trials.h"
#include "src/tune/tune_loop.h"
#include "tests/cli_support.h"
#include "tests/synthetic_runs.h"
#include "tests/tune_support.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("parplan_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

JobSpec torchtitan_job(int gpus, int gbs, int seq) { return test::recipe_job("torchtitan", gpus, gbs, seq); }

// Every plan of the top trials and probes that torchtitan runs as costed:
// emitted, its log simulated, read back with the Python config beside it.
// Returns how many plans were checked.
int check_round_trip(const std::string& model_name, const JobSpec& job) {
  const ModelSpec model = load_model(model_name);
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const fs::path dir = scratch("tt_py_config");
  int checked = 0;
  std::vector<Trial> trials = candidate_trials(model, cluster, job);
  for (const Trial& t : top_plan_trials(model, cluster, job, 24)) trials.push_back(t);
  int index = 0;
  for (const Trial& t : trials) {
    ++index;
    if (!t.config.overlap_grad_reduce || t.config.hierarchical_partition || t.config.hpz_ranks > 1) continue;
    const Plan plan{model, cluster, t.job, t.config, estimate_cost(model, cluster, t.job, t.config)};
    if (!engine_rule_violations(plan, Engine::kTorchtitan).empty()) continue;
    EmitOptions options;
    options.engine = Engine::kTorchtitan;
    options.launcher = Launcher::kTorchrun;
    options.out_dir = dir / (std::to_string(index) + "-" + t.name);
    fs::path py;
    for (const auto& f : emit_launch_files(plan, options))
      if (f.extension() == ".py") py = f;
    EXPECT_FALSE(py.empty()) << t.name;
    const double step_s = plan.cost.time.step_s;
    const std::string log = simulated_torchtitan_log(model, t.job, t.config, step_s, 30,
                                                     cluster.device.peak_bf16_flops_per_s, 40, 80);
    const FitRun run = parse_torchtitan_log(log, test::slurp(py.string()), "", t.name, cluster,
                                            TorchtitanJobFormat::kPython);
    EXPECT_EQ(run.job.gpus, t.job.gpus) << t.name;
    EXPECT_EQ(run.job.gbs, t.job.gbs) << t.name;
    EXPECT_EQ(run.job.seq, t.job.seq) << t.name;
    EXPECT_EQ(run.config.tp, t.config.tp) << t.name;
    EXPECT_EQ(run.config.pp, t.config.pp) << t.name;
    EXPECT_EQ(run.config.cp, t.config.cp) << t.name;
    EXPECT_EQ(run.config.dp, t.config.dp) << t.name;
    EXPECT_EQ(run.config.ep, t.config.ep) << t.name;
    EXPECT_EQ(run.config.mbs, t.config.mbs) << t.name;
    EXPECT_EQ(run.config.zero, t.config.zero) << t.name;
    EXPECT_EQ(run.config.recompute, t.config.recompute) << t.name;
    // The step time the log prints is the one read (tps to whole tokens).
    EXPECT_NEAR(run.measured_step_s / step_s, 1.0, 1e-3) << t.name;
    // And the reader costs the run as the plan was costed.
    EXPECT_NEAR(predict_run(run, cluster).step_s / step_s, 1.0, 1e-6)
        << t.name << ": pp " << t.config.pp << " vp " << t.config.vp << " ep " << t.config.ep;
    ++checked;
  }
  fs::remove_all(dir);
  return checked;
}

TEST(TorchtitanPythonConfig, EmittedConfigReadsBackAsThePlanItWasWrittenFor) {
  EXPECT_GE(check_round_trip("llama3.1-8b", torchtitan_job(32, 256, 4096)), 5);
}

// Qwen3-30B-A3B (MoE, expert parallelism): the catalog model of the flavor.
TEST(TorchtitanPythonConfig, MoeConfigReadsBackAsThePlanItWasWrittenFor) {
  EXPECT_GE(check_round_trip("qwen3-30b-a3b", torchtitan_job(32, 256, 4096)), 3);
}

TEST(TorchtitanPythonConfig, ReadsAssignmentsKeywordArgumentsAndEnvironmentDefaults) {
  const std::string py = R"(import os
from torchtitan.config import ParallelismConfig  # a comment with config = nothing()
from torchtitan.distributed.activation_checkpoint import FullAC
from torchtitan.models.llama3.config_registry import llama3_70b

def plan():
    config = llama3_70b()
    config.training.max_context_length = 8192
    config.training.num_tokens_per_microbatch_per_dp_rank = int(os.environ.get("MB", "16384"))
    config.training.num_tokens_per_train_step = 2097152
    config.parallelism = ParallelismConfig(
        data_parallel_shard_degree=8,
        tensor_parallel_degree=8,  # tp
        fsdp_reshard_after_forward="always",
    )
    config.compile.enable = True
    config.activation_checkpoint = FullAC.Config()
    return config
)";
  const auto c = parse_torchtitan_python_config(py, "x.py");
  EXPECT_EQ(c.at("model.name"), "llama3");
  EXPECT_EQ(c.at("model.flavor"), "70B");
  EXPECT_EQ(c.at("training.seq_len"), "8192");
  EXPECT_EQ(c.at("training.local_batch_size"), "2");
  EXPECT_EQ(c.at("training.global_batch_size"), "256");
  EXPECT_EQ(c.at("parallelism.data_parallel_shard_degree"), "8");
  EXPECT_EQ(c.at("parallelism.tensor_parallel_degree"), "8");
  EXPECT_EQ(c.at("parallelism.fsdp_reshard_after_forward"), "always");
  EXPECT_EQ(c.at("compile.enable"), "true");
  EXPECT_EQ(c.at("activation_checkpoint.mode"), "full");
  EXPECT_EQ(c.count("model.converters"), 0u);
  // A model_spec with Float8 converters (the llama3_405b recipe's form).
  const auto f = parse_torchtitan_python_config(
      "config = llama3_405b()\nconfig.activation_checkpoint = None\n"
      "config.model_spec = model_registry(\"405B\", converters=[Float8LinearConverter.Config()])\n",
      "f.py");
  EXPECT_EQ(f.at("model.flavor"), "405B");
  EXPECT_EQ(f.at("model.converters"), "float8");
}

// What the registered recipes set (torchtitan main b5bcd76c,
// config_registry.py): llama3_70b tp 8, 8 x 8192 tokens per micro-batch,
// full AC; llama3_405b compile with Async TP and Float8 linears on its own
// model_spec; a CompileConfig(...) replaces the recipe's compile section.
TEST(TorchtitanPythonConfig, RegisteredRecipesSupplyTheirDefaults) {
  const auto a = parse_torchtitan_python_config("config = llama3_70b()\n", "a.py");
  EXPECT_EQ(a.at("parallelism.tensor_parallel_degree"), "8");
  EXPECT_EQ(a.at("training.seq_len"), "8192");
  EXPECT_EQ(a.at("training.local_batch_size"), "8");
  EXPECT_EQ(a.at("activation_checkpoint.mode"), "full");
  EXPECT_EQ(a.count("model.converters"), 0u);
  const auto b = parse_torchtitan_python_config("config = llama3_405b()\n", "b.py");
  EXPECT_EQ(b.at("compile.enable"), "true");
  EXPECT_EQ(b.at("compile.enable_async_tensor_parallel"), "true");
  EXPECT_EQ(b.at("model.converters"), "float8");
  const auto c = parse_torchtitan_python_config(
      "config = llama3_405b()\nconfig.model_spec = model_registry(\"405B\")\n"
      "config.compile = CompileConfig(components=[\"model\"])\nconfig.activation_checkpoint = None\n",
      "c.py");
  EXPECT_EQ(c.count("model.converters"), 0u);
  EXPECT_EQ(c.count("compile.enable"), 0u);
  EXPECT_EQ(c.at("activation_checkpoint.mode"), "none");
  EXPECT_EQ(c.count("activation_checkpoint.selective_ac_option"), 0u);
}

TEST(TorchtitanPythonConfig, RefusesConfigsItCannotRead) {
  // No recipe call: nothing says which model runs.
  EXPECT_THROW(parse_torchtitan_python_config("config = {}\n", "a.py"), InputError);
  // Activation checkpointing left to a recipe whose defaults are not known.
  EXPECT_THROW(parse_torchtitan_python_config("config = my_llama3_8b()\n", "b.py"), InputError);
  // A line no config has (std::regex would recurse once per character).
  EXPECT_THROW(
      parse_torchtitan_python_config(
          "config = llama3_8b()\nconfig.training.steps = " + std::string(100000, '1') + "\n", "long.py"),
      InputError);
  // Tokens per step that are not whole sequences.
  EXPECT_THROW(parse_torchtitan_python_config("config = llama3_8b()\nconfig.activation_checkpoint = None\n"
                                              "config.training.max_context_length = 4096\n"
                                              "config.training.num_tokens_per_train_step = 5000\n",
                                              "c.py"),
               InputError);
  // A family the reader has no flavors of.
  const std::string log =
      "step: 10  loss: 1.0  memory: 1.00GiB(1.00%)  tps: 100  tflops: 1  mfu: 1%\n"
      "step: 20  loss: 1.0  memory: 1.00GiB(1.00%)  tps: 100  tflops: 1  mfu: 1%\n";
  EXPECT_THROW(
      parse_torchtitan_log(log,
                           "from torchtitan.models.qwen3 import model_registry\nconfig = qwen3_14b()\n"
                           "config.activation_checkpoint = None\n"
                           "config.parallelism = ParallelismConfig(data_parallel_shard_degree=8)\n",
                           "", "d.log", load_cluster("dgx-h100"), TorchtitanJobFormat::kPython),
      InputError);
}

// Llama 3 8B on 32 H100s, tuned for torchtitan with `trials` trials whose
// logs a hidden profile writes into `dir`.
TuneRequest llama3_8b_tune(const fs::path& dir, int trials, const HiddenProfile& hidden) {
  TuneRequest r = test::simulated_tune_request(load_model("llama3.1-8b"), load_cluster("dgx-h100"),
                                               torchtitan_job(32, 256, 4096), trials, dir, hidden.cluster);
  r.engine = Engine::kTorchtitan;
  return r;
}

TEST(TuneTorchtitan, SimulatedTrialLogsRecoverTheHiddenProfile) {
  const ModelSpec model = load_model("llama3.1-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const HiddenProfile hidden = hidden_h100_profile(cluster);
  const fs::path dir = scratch("tune_tt");
  const TuneRequest r = llama3_8b_tune(dir, 8, hidden);
  const TuneResult result = write_tune_loop(r);
  ASSERT_EQ(result.trials.size(), 8u);
  for (const auto& t : result.trials) {
    const Plan plan{model, cluster, t.job, t.config, {}};
    EXPECT_TRUE(engine_rule_violations(plan, Engine::kTorchtitan).empty()) << t.name;
    EXPECT_TRUE(t.config.overlap_grad_reduce) << t.name;
  }
  const std::string script = test::slurp((dir / "run_trials.sh").string());
  EXPECT_NE(script.find("export TRAIN_STEPS="), std::string::npos);
  EXPECT_NE(script.find("/parplan_torchtitan.py logs/trial-01-"), std::string::npos);
  EXPECT_NE(test::slurp((dir / "README.md").string()).find("--engine torchtitan"), std::string::npos);
  // The hidden profile reserves more memory than the planning one: a trial
  // it cannot fit logs PyTorch's out-of-memory error and is left out.
  std::vector<std::string> left_out;
  const auto runs = load_runs({(dir / "logs").string()}, cluster, &left_out);
  ASSERT_EQ(runs.size() + left_out.size(), 8u);
  EXPECT_EQ(left_out.size(), static_cast<std::size_t>(result.simulated_oom));
  ASSERT_GE(result.pinned.size(), 4u);
  std::vector<FittedConstant> fit_keys;
  std::vector<double> truth;
  for (const auto& key : result.pinned) {
    fit_keys.push_back(*find_fitted_constant(cluster, key));
    truth.push_back(fitted_value(hidden.cluster, fit_keys.back()));
  }
  const ProfileFitResult fit = fit_profile(cluster, runs, fit_keys);
  for (std::size_t j = 0; j < truth.size(); ++j)
    EXPECT_NEAR(fit.after[j], truth[j], 0.02 * truth[j]) << fit_keys[j].key;
  for (const auto& run : runs)
    EXPECT_NEAR(predict_run(run, fit.cluster).step_s / run.measured_step_s, 1.0, 2e-3);
  fs::remove_all(dir);
}

// An fp8 job tuned for torchtitan v0.2.x (--engine-version 0.2): TOML
// trials with tensorwise Float8, their logs read back as fp8 runs costed as
// v0.2.x runs them (16-bit tp gathers, separate wq/wk/wv), and the fit
// recovers the hidden profile as for main's bf16 trials.
TEST(TuneTorchtitan, V02TrialsOfAnFp8JobReadBackAsCosted) {
  const ModelSpec model = load_model("llama3.1-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const HiddenProfile hidden = hidden_h100_profile(cluster);
  const fs::path dir = scratch("tune_tt02");
  TuneRequest r = llama3_8b_tune(dir, 6, hidden);
  r.job.precision = Precision::kFp8;
  r.torchtitan_version = TorchtitanVersion::kV02;
  cost_as_torchtitan_version(r.torchtitan_version, r.job);
  const TuneResult result = write_tune_loop(r);
  ASSERT_EQ(result.trials.size(), 6u);
  EXPECT_NE(test::slurp((dir / "run_trials.sh").string()).find("/torchtitan.toml logs/trial-01-"),
            std::string::npos);
  EXPECT_NE(test::slurp((dir / "README.md").string()).find("--engine-version 0.2"), std::string::npos);
  const auto runs = load_runs({(dir / "logs").string()}, cluster);
  ASSERT_EQ(runs.size(), 6u);
  for (const auto& run : runs) {
    EXPECT_EQ(run.job.precision, Precision::kFp8) << run.name;
    EXPECT_FALSE(run.job.fp8_tp_all_gather) << run.name;
    EXPECT_TRUE(run.job.separate_qkv) << run.name;
  }
  std::vector<FittedConstant> fit_keys;
  for (const auto& key : result.pinned) fit_keys.push_back(*find_fitted_constant(cluster, key));
  // Read back as simulated: under the hidden profile every log's run
  // predicts the step time the log holds.
  for (const auto& run : runs)
    EXPECT_NEAR(predict_run(run, hidden.cluster).step_s / run.measured_step_s, 1.0, 1e-3) << run.name;
  const ProfileFitResult fit = fit_profile(cluster, runs, fit_keys);
  for (const auto& run : runs)
    EXPECT_NEAR(predict_run(run, fit.cluster).step_s / run.measured_step_s, 1.0, 2e-3);
  fs::remove_all(dir);
  // torchtitan main's trials would run rowwise Float8: refused, nothing written.
  r.torchtitan_version = TorchtitanVersion::kMain;
  r.out_dir = scratch("tune_tt_main_fp8");
  EXPECT_THROW(write_tune_loop(r), InputError);
  EXPECT_FALSE(fs::exists(r.out_dir));
}

TEST(TuneTorchtitan, RefusesModelsCalibrateCannotReadBack) {
  TuneRequest r;
  r.model = load_model("gpt3-175b");  // no torchtitan flavor has its shape
  r.cluster = load_cluster("dgx-h100");
  r.job = torchtitan_job(32, 256, 4096);
  r.engine = Engine::kTorchtitan;
  r.out_dir = scratch("tune_tt_refuse");
  EXPECT_THROW(write_tune_loop(r), InputError);
  EXPECT_FALSE(fs::exists(r.out_dir));
}

}  // namespace
}  // namespace parplan
