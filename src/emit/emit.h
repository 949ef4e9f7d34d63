// Launch files: turn a Plan into the files that start the job on a real engine
// (Megatron-LM, DeepSpeed, Megatron-DeepSpeed, torchtitan) under torchrun or Slurm.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "src/emit/engine_capabilities.h"
#include "src/plan/plan.h"

namespace parplan {

enum class Launcher { kTorchrun, kSlurm };

/// Which torchtitan config system the files target: main's Python dataclass
/// configs (--module/--config, since pytorch/torchtitan#2386, 2026-02-23) or
/// the TOML job config of the v0.2.x releases.
enum class TorchtitanVersion { kMain, kV02 };

/// "megatron" | "deepspeed" | "megatron-deepspeed" | "torchtitan". Throws InputError naming
/// --emit and the choices.
Engine parse_engine(const std::string& name);
/// "torchrun" | "slurm". Throws InputError naming --launcher and the choices.
Launcher parse_launcher(const std::string& name);

/// --engine-version: "main" (default) | "0.2" | "0.2.x" | "0.2.0".."0.2.2" for
/// torchtitan; other engines have one target (their capability table's
/// revision), so any text is refused. Throws InputError naming the flag.
TorchtitanVersion parse_engine_version(Engine engine, const std::string& text);

/// What torchtitan `version` cannot run of the job as parplan costs it, or
/// nullptr: main's Float8 converter has rowwise recipes only, and parplan
/// prices fp8 linears with tensorwise scaling (v0.2.x's default recipe).
const char* torchtitan_version_problem(TorchtitanVersion version, const JobSpec& job);

/// The job as the files of `version` run it, to be costed before the plan is
/// searched. v0.2.x: wq, wk, wv as three matmuls, SDPA with cuDNN first, and
/// Float8 tensor parallelism gathering 16 bits. Throws InputError (naming
/// --engine-version) on what the version cannot run.
void cost_as_torchtitan_version(TorchtitanVersion version, JobSpec& job);

/// Throws InputError when the cluster cannot be launched that way (torchrun
/// on a profile that launches with srun, one task per GCD: Frontier).
void check_launcher(const ClusterSpec& cluster, Launcher launcher);

const char* engine_name(Engine engine);
/// The torchtitan model family and flavor the model's shape is ("qwen3",
/// "30B-A3B"), or two empty strings.
std::pair<std::string, std::string> torchtitan_family_flavor(const ModelSpec& model);
/// The catalog model (models/*.yaml) torchtitan builds as `family` `flavor`,
/// or "" (the log reader costs such a run with it).
std::string torchtitan_catalog_model(const std::string& family, const std::string& flavor);
const char* launcher_name(Launcher launcher);

struct EmitOptions {
  Engine engine = Engine::kMegatron;
  Launcher launcher = Launcher::kTorchrun;
  /// Created by emit_launch_files; must not exist, or be an empty directory.
  std::filesystem::path out_dir;
  TorchtitanVersion torchtitan_version = TorchtitanVersion::kMain;
  /// Training length the scripts default to and `#SBATCH -t` is sized for:
  /// --train-iters N, or --hours H (iterations that fit in H hours); both 0:
  /// the assumed default (src/emit/wall_time.h). At most one is non-zero.
  long long train_iters = 0;
  double hours = 0;
};

/// The engine's own argument checks (Megatron's validate_args and config
/// __post_init__, DeepSpeed's config and pipeline engine, torchtitan's
/// ParallelDims ...) applied to the plan, plus the combinations parplan cannot
/// express for that engine. One message per violated rule; empty = the engine
/// accepts the plan.
std::vector<std::string> engine_rule_violations(const Plan& plan, Engine engine);

/// What of the model itself `engine`'s launch files cannot carry, whatever
/// the plan (a torchtitan flavor's fixed RoPE base, Megatron-DeepSpeed's
/// missing Q/K norm flag, ...): one sentence each, naming the engine; empty
/// when the engine can build the model. Every plan of such a model breaks
/// the same rule of engine_rule_violations, so a search need not look.
std::vector<std::string> engine_model_problems(const ModelSpec& model, Engine engine);

/// What of the model parplan prices but no launch file it writes carries
/// (sliding-window attention: Megatron-LM's --window-size came after
/// core_r0.13.0), comma separated; empty when none. plan/estimate warn,
/// --emit refuses. A window as long as the sequence (`seq` tokens) is full
/// causal attention, which every engine writes: nothing to refuse then.
std::string unwritable_features(const ModelSpec& model, int seq);

/// What stock DeepSpeed cannot express of the plan's hierarchical placement
/// (the parts that need the low-bandwidth-partitioning extension), one
/// sentence each; empty without hierarchical partitioning.
std::vector<std::string> deepspeed_extension_notes(const Plan& plan);

/// Writes the launch files and returns their paths, the entry point first
/// (DIR/launch.sh under torchrun, DIR/job.sbatch under Slurm). Throws
/// InputError when a rule is violated (all messages, one per line) or out_dir
/// is unusable. The files are written into a temporary sibling directory that
/// is renamed into place, so a failure leaves nothing behind.
/// `notes` (when given) receives what the user should know about the files,
/// one sentence each (e.g. a wall time capped at the site's limit).
std::vector<std::filesystem::path> emit_launch_files(const Plan& plan, const EmitOptions& options,
                                                     std::vector<std::string>* notes = nullptr);

}  // namespace parplan
