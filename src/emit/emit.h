// Launch files: turn a Plan into the files that start the job on a real engine
// (Megatron-LM, DeepSpeed, Megatron-DeepSpeed, torchtitan) under torchrun or Slurm.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "src/emit/engine_capabilities.h"
#include "src/plan/plan.h"

namespace parplan {

enum class Launcher { kTorchrun, kSlurm };

/// "megatron" | "deepspeed" | "megatron-deepspeed" | "torchtitan". Throws InputError naming
/// --emit and the choices.
Engine parse_engine(const std::string& name);
/// "torchrun" | "slurm". Throws InputError naming --launcher and the choices.
Launcher parse_launcher(const std::string& name);

const char* engine_name(Engine engine);
const char* launcher_name(Launcher launcher);

struct EmitOptions {
  Engine engine = Engine::kMegatron;
  Launcher launcher = Launcher::kTorchrun;
  /// Created by emit_launch_files; must not exist, or be an empty directory.
  std::filesystem::path out_dir;
};

/// The engine's own argument checks (Megatron's validate_args and config
/// __post_init__, DeepSpeed's config and pipeline engine, torchtitan's
/// ParallelDims ...) applied to the plan, plus the combinations parplan cannot
/// express for that engine. One message per violated rule; empty = the engine
/// accepts the plan.
std::vector<std::string> engine_rule_violations(const Plan& plan, Engine engine);

/// What stock DeepSpeed cannot express of the plan's hierarchical placement
/// (the parts that need the low-bandwidth-partitioning extension), one
/// sentence each; empty without hierarchical partitioning.
std::vector<std::string> deepspeed_extension_notes(const Plan& plan);

/// Writes the launch files and returns their paths, the entry point first
/// (DIR/launch.sh under torchrun, DIR/job.sbatch under Slurm). Throws
/// InputError when a rule is violated (all messages, one per line) or out_dir
/// is unusable. The files are written into a temporary sibling directory that
/// is renamed into place, so a failure leaves nothing behind.
std::vector<std::filesystem::path> emit_launch_files(const Plan& plan, const EmitOptions& options);

}  // namespace parplan
