// Pieces the launch scripts are built from (the program a script runs, its
// user-settings block, the header naming the engine version it targets), shared
// by launch_scripts.cpp, frontier_script.cpp and torchtitan_launch.cpp.
// Internal to src/emit.
#pragma once

#include <string>
#include <vector>

#include "src/emit/emit_internal.h"
#include "src/emit/wall_time.h"

namespace parplan::emit_detail {

// What the command runs, and the user-only settings it needs.
struct Program {
  /// Lines of the marked user block (bash), each reading one setting.
  std::vector<std::string> user_block;
  /// Bash lines run before the program starts (e.g. the engine version check).
  std::vector<std::string> check_lines;
  /// Bash lines that build the array PROGRAM: the script and its arguments.
  std::vector<std::string> program_lines;
};

/// Everything a script writer needs to know about the job.
struct ScriptContext {
  const Plan& plan;
  const EmitOptions& options;
  Layout layout;
  WallTime wall;
  std::string final_dir;
};

/// `what` must not hold a quote: bash parses the word of ${VAR:?word}.
std::string required(const std::string& var, const std::string& what);
std::string defaulted(const std::string& var, const std::string& value);

/// The engine version the files target, e.g. "Megatron-LM core_r0.13.0".
std::string engine_target(const EmitOptions& options);
/// Comment lines: who wrote the file, the plan, its predicted step time, the
/// engine version it targets.
std::string header(const Plan& plan, const EmitOptions& options, const std::string& what);
std::string user_block(const Program& program);
/// The check lines and the program lines.
std::string program_block(const Program& program);
std::string dir_line(const std::string& final_dir);
/// Engine environment (CUDA_DEVICE_MAX_CONNECTIONS ...) and, on heterogeneous
/// clusters, the node group's NCCL settings; then a blank line, or nothing.
std::string env_block(const Plan& plan, Engine engine);

Program program_for(const ScriptContext& context);
/// torchtitan under --engine-version: main's `--module/--config` or v0.2's TOML.
Program torchtitan_program(const ScriptContext& context);

/// The `#SBATCH` lines (with the wall-time comment) and the header.
std::string sbatch_head(const ScriptContext& context, bool frontier);
/// job.sbatch on Frontier (OLCF "PyTorch on Frontier").
std::string frontier_script(const ScriptContext& context);

}  // namespace parplan::emit_detail
