// The launch scripts: launch.sh (torchrun, one per node), job.sbatch (Slurm:
// srun of launch.sh, or on Frontier one task per GCD without torchrun, as
// OLCF's "PyTorch on Frontier" guide prescribes) and launch_deepspeed.sh.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "src/emit/emit_internal.h"

namespace parplan::emit_detail {
namespace {

// What the command runs, and the user-only settings it needs.
struct Program {
  /// Lines of the marked user block (bash), each reading one setting.
  std::vector<std::string> user_block;
  /// Bash lines that build the array PROGRAM: the script and its arguments.
  std::vector<std::string> program_lines;
};

std::string join_args(const std::vector<std::string>& args, const std::string& indent) {
  std::ostringstream out;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool is_flag = args[i].rfind("--", 0) == 0;
    if (is_flag)
      out << "\n" << indent << args[i];
    else
      out << " " << shell_word(args[i]);
  }
  return out.str();
}

// `what` must not hold a quote: bash parses the word of ${VAR:?word}.
std::string required(const std::string& var, const std::string& what) {
  return ": \"${" + var + ":?set " + var + " to " + what + "}\"";
}

std::string defaulted(const std::string& var, const std::string& value) {
  return var + "=\"${" + var + ":-" + value + "}\"";
}

// Training settings shared by the Megatron flavours.
std::vector<std::string> megatron_training_block() {
  return {defaulted("TRAIN_ITERS", "1000"),    defaulted("LR", "3.0e-4"),
          defaulted("MIN_LR", "3.0e-5"),       defaulted("LR_WARMUP_ITERS", "100"),
          defaulted("DATA_SPLIT", "949,50,1"), defaulted("CHECKPOINT_DIR", "")};
}

Program megatron_program(const Plan& plan) {
  Program p;
  p.user_block = {
      required("MEGATRON_LM", "your Megatron-LM checkout (the folder holding pretrain_gpt.py)"),
      required("DATA_PATH",
               "the preprocessed dataset prefix(es) (tools/preprocess_data.py output, no .bin/.idx)"),
      required("TOKENIZER_MODEL", "the tokenizer (a Hugging Face name or folder for HuggingFaceTokenizer)"),
      defaulted("TOKENIZER_TYPE", "HuggingFaceTokenizer")};
  for (const std::string& line : megatron_training_block()) p.user_block.push_back(line);
  std::ostringstream prog;
  prog << "PROGRAM=(\"$MEGATRON_LM/pretrain_gpt.py\"" << join_args(megatron_args(plan), "  ") << "\n"
       << "  --train-iters \"$TRAIN_ITERS\"\n"
       << "  --lr \"$LR\" --min-lr \"$MIN_LR\" --lr-decay-style cosine --lr-warmup-iters "
          "\"$LR_WARMUP_ITERS\"\n"
       << "  --tokenizer-type \"$TOKENIZER_TYPE\" --tokenizer-model \"$TOKENIZER_MODEL\"\n"
       << "  --data-path \"${DATA_PATH_ARGS[@]}\" --split \"$DATA_SPLIT\"\n"
       << "  --log-interval 10 --eval-interval 1000 --eval-iters 10)";
  p.program_lines = {
      "read -r -a DATA_PATH_ARGS <<< \"$DATA_PATH\"", prog.str(),
      "if [ -n \"$CHECKPOINT_DIR\" ]; then\n"
      "  PROGRAM+=(--save \"$CHECKPOINT_DIR\" --load \"$CHECKPOINT_DIR\" --save-interval 500)\n"
      "fi"};
  return p;
}

Program megatron_deepspeed_program(const Plan& plan) {
  Program p;
  p.user_block = {
      required("MEGATRON_DEEPSPEED", "your Megatron-DeepSpeed checkout (the folder holding pretrain_gpt.py)"),
      required("DATA_PATH",
               "the preprocessed dataset prefix(es) (tools/preprocess_data.py output, no .bin/.idx)"),
      required("TOKENIZER_MODEL", "the tokenizer (a Hugging Face name or folder for HFTokenizer)"),
      defaulted("TOKENIZER_TYPE", "HFTokenizer")};
  for (const std::string& line : megatron_training_block()) p.user_block.push_back(line);
  std::ostringstream prog;
  prog << "PROGRAM=(\"$MEGATRON_DEEPSPEED/pretrain_gpt.py\"" << join_args(megatron_deepspeed_args(plan), "  ")
       << "\n"
       << "  --deepspeed_config \"$DIR/ds_config.json\"\n"
       << "  --train-iters \"$TRAIN_ITERS\"\n"
       << "  --lr \"$LR\" --min-lr \"$MIN_LR\" --lr-decay-style cosine --lr-warmup-iters "
          "\"$LR_WARMUP_ITERS\"\n"
       << "  --tokenizer-type \"$TOKENIZER_TYPE\" --tokenizer-model \"$TOKENIZER_MODEL\"\n"
       << "  --data-path \"${DATA_PATH_ARGS[@]}\" --split \"$DATA_SPLIT\"\n"
       << "  --log-interval 10 --eval-interval 1000 --eval-iters 10)";
  p.program_lines = {
      "read -r -a DATA_PATH_ARGS <<< \"$DATA_PATH\"", prog.str(),
      "if [ -n \"$CHECKPOINT_DIR\" ]; then\n"
      "  PROGRAM+=(--save \"$CHECKPOINT_DIR\" --load \"$CHECKPOINT_DIR\" --save-interval 500)\n"
      "fi"};
  return p;
}

Program deepspeed_program() {
  Program p;
  p.user_block = {required("TRAIN_SCRIPT", "your DeepSpeed training script (it calls deepspeed.initialize)"),
                  defaulted("TRAIN_ARGS", "")};
  p.program_lines = {"read -r -a TRAIN_ARGS_ARRAY <<< \"$TRAIN_ARGS\"",
                     "PROGRAM=(\"$TRAIN_SCRIPT\" --deepspeed --deepspeed_config \"$DIR/ds_config.json\" "
                     "\"${TRAIN_ARGS_ARRAY[@]}\")"};
  return p;
}

Program torchtitan_program() {
  Program p;
  p.user_block = {required("HF_ASSETS_PATH", "the folder holding the model Hugging Face tokenizer files"),
                  defaulted("DATASET", "c4"), defaulted("DATASET_PATH", ""),
                  defaulted("TRAIN_STEPS", "1000")};
  p.program_lines = {
      "PROGRAM=(-m torchtitan.train --job.config_file \"$DIR/torchtitan.toml\"\n"
      "  --model.hf_assets_path \"$HF_ASSETS_PATH\" --training.dataset \"$DATASET\" --training.steps "
      "\"$TRAIN_STEPS\")",
      "if [ -n \"$DATASET_PATH\" ]; then PROGRAM+=(--training.dataset_path \"$DATASET_PATH\"); fi"};
  return p;
}

Program program_for(const Plan& plan, Engine engine) {
  switch (engine) {
    case Engine::kMegatron:
      return megatron_program(plan);
    case Engine::kMegatronDeepSpeed:
      return megatron_deepspeed_program(plan);
    case Engine::kDeepSpeed:
      return deepspeed_program();
    case Engine::kTorchtitan:
      break;
  }
  return torchtitan_program();
}

// Environment every engine's processes need.
std::vector<std::string> engine_env(const Plan& plan, Engine engine) {
  std::vector<std::string> env;
  const ParallelConfig& c = plan.config;
  if (engine == Engine::kMegatron) {
    if (megatron_needs_single_connection(plan)) {
      env.push_back("# Megatron validate_args: tensor or context parallelism needs one CUDA work queue.");
      env.push_back("export CUDA_DEVICE_MAX_CONNECTIONS=1");
    } else if (megatron_uses_fsdp(plan)) {
      env.push_back("# Megatron-FSDP asserts CUDA_DEVICE_MAX_CONNECTIONS is not 1.");
      env.push_back("unset CUDA_DEVICE_MAX_CONNECTIONS");
    }
  } else if (engine == Engine::kMegatronDeepSpeed && c.sp) {
    env.push_back("# Megatron-DeepSpeed validate_args: sequence parallelism needs one CUDA work queue.");
    env.push_back("export CUDA_DEVICE_MAX_CONNECTIONS=1");
  }
  return env;
}

// The environment lines followed by a blank line, or nothing.
std::string env_block(const Plan& plan, Engine engine) {
  std::string out;
  for (const std::string& line : engine_env(plan, engine)) out += line + "\n";
  if (plan.cluster.heterogeneous()) {
    out += "# NCCL settings of this node's group (InfiniBand, RoCE or Ethernet).\n";
    out += "# shellcheck disable=SC1091\n. \"$DIR/nccl_env.sh\"\n";
  }
  return out.empty() ? out : out + "\n";
}

std::string header(const Plan& plan, const EmitOptions& options, const std::string& what) {
  const ParallelConfig& c = plan.config;
  std::ostringstream h;
  h << "# " << what << " written by parplan (" << engine_name(options.engine) << ", "
    << launcher_name(options.launcher) << ").\n";
  h << "# Model " << plan.model.name << " on " << world_size(plan) << " x " << plan.cluster.device.name
    << " (" << plan.cluster.name << "): tp " << c.tp << ", pp " << c.pp << ", vp " << c.vp << ", cp " << c.cp
    << ", dp " << c.dp << ", ep " << c.ep << ", zero " << c.zero << ", mbs " << c.mbs << ", gbs " << c.gbs
    << ".\n";
  if (plan.cost.time.step_s > 0) {
    h << "# Predicted step time " << plan.cost.time.step_s << " s";
    if (plan.cost.throughput.mfu > 0) h << ", MFU " << plan.cost.throughput.mfu;
    h << ".\n";
  }
  return h.str();
}

std::string user_block(const Program& program) {
  std::ostringstream b;
  b << "# ==== BEGIN USER SETTINGS: values only you know (set them in the environment or edit here) ====\n";
  for (const std::string& line : program.user_block) b << line << "\n";
  b << "# ==== END USER SETTINGS ====\n";
  return b.str();
}

std::string program_block(const Program& program) {
  std::ostringstream b;
  for (const std::string& line : program.program_lines) b << line << "\n";
  return b.str();
}

std::string dir_line(const std::string& final_dir) {
  return "DIR=\"${PARPLAN_LAUNCH_DIR:-" + final_dir + "}\"\n";
}

// launch.sh: one torchrun per node.
std::string torchrun_script(const Plan& plan, const EmitOptions& options, const Layout& layout,
                            const std::string& final_dir) {
  const Program program = program_for(plan, options.engine);
  std::ostringstream s;
  s << "#!/usr/bin/env bash\n" << header(plan, options, "Per-node launcher");
  s << "# Run it once on every node (NODE_RANK 0.." << layout.nnodes - 1 << ")"
    << (options.launcher == Launcher::kSlurm ? "; job.sbatch does that through srun.\n" : ".\n");
  s << "set -euo pipefail\n" << dir_line(final_dir) << "\n";
  s << user_block(program) << "\n";
  s << "GPUS_PER_NODE=" << layout.nproc_per_node << "\n";
  s << "NNODES=\"${NNODES:-${SLURM_JOB_NUM_NODES:-" << layout.nnodes << "}}\"\n";
  s << "NODE_RANK=\"${NODE_RANK:-${SLURM_NODEID:-0}}\"\n";
  s << "MASTER_ADDR=\"${MASTER_ADDR:-localhost}\"\n";
  s << "MASTER_PORT=\"${MASTER_PORT:-6000}\"\n";
  s << "if [ \"$NNODES\" != " << layout.nnodes << " ]; then\n"
    << "  echo \"launch.sh: the plan needs " << layout.nnodes << " nodes of " << layout.nproc_per_node
    << " ranks; NNODES is $NNODES\" >&2\n  exit 1\nfi\n";
  s << "\n" << env_block(plan, options.engine) << program_block(program) << "\n";
  s << "exec torchrun --nproc_per_node \"$GPUS_PER_NODE\" --nnodes \"$NNODES\" --node_rank \"$NODE_RANK\" "
       "\\\n"
    << "  --master_addr \"$MASTER_ADDR\" --master_port \"$MASTER_PORT\" \"${PROGRAM[@]}\"\n";
  return s.str();
}

// launch_deepspeed.sh: the DeepSpeed launcher with the hostfile.
std::string deepspeed_launcher_script(const Plan& plan, const EmitOptions& options, const Layout& layout,
                                      const std::string& final_dir) {
  const Program program = program_for(plan, options.engine);
  std::ostringstream s;
  s << "#!/usr/bin/env bash\n" << header(plan, options, "DeepSpeed-launcher alternative to launch.sh");
  s << "# Edit hostfile to name your nodes, then run this once on the first node.\n";
  s << "set -euo pipefail\n" << dir_line(final_dir) << "\n";
  s << user_block(program) << "\n";
  s << "MASTER_ADDR=\"${MASTER_ADDR:-localhost}\"\n";
  s << "MASTER_PORT=\"${MASTER_PORT:-6000}\"\n";
  s << "\n" << env_block(plan, options.engine) << program_block(program) << "\n";
  s << "exec deepspeed --hostfile \"$DIR/hostfile\" --num_nodes " << layout.nnodes << " --num_gpus "
    << layout.nproc_per_node << " \\\n  --master_addr \"$MASTER_ADDR\" --master_port \"$MASTER_PORT\" "
    << "\"${PROGRAM[@]}\"\n";
  return s.str();
}

// Wall time for the default 1000 steps at the predicted step time, with 10%
// and 15 minutes of headroom, in whole hours between 1 and 24.
std::string wall_time(const Plan& plan) {
  double seconds = 1000.0 * plan.cost.time.step_s * 1.1 + 900.0;
  int hours = static_cast<int>(std::ceil(seconds / 3600.0));
  hours = std::clamp(hours, 1, 24);
  std::ostringstream out;
  out << (hours < 10 ? "0" : "") << hours << ":00:00";
  return out.str();
}

std::string sbatch_head(const Plan& plan, const EmitOptions& options, const Layout& layout, bool frontier) {
  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << "#SBATCH -J parplan-" << engine_name(options.engine) << "\n";
  s << "#SBATCH -N " << layout.nnodes << "\n";
  s << "#SBATCH -t " << wall_time(plan) << "\n";
  s << "# ==== PARPLAN-EDIT: your Slurm account" << (frontier ? "" : " and partition") << " ====\n";
  s << "#SBATCH -A PARPLAN_ACCOUNT\n";
  if (frontier) {
    s << "#SBATCH -p batch\n";
    // OLCF guide, "Alternative Rendezvous Protocol" (with FI_CXI_RDZV_PROTO=alt_read).
    s << "#SBATCH --network=disable_rdzv_get\n";
  } else {
    s << "#SBATCH -p PARPLAN_PARTITION\n";
    s << "#SBATCH --ntasks-per-node=1\n";
    s << "#SBATCH --gpus-per-node=" << layout.nproc_per_node << "\n";
  }
  s << "#SBATCH -o parplan-%j.out\n";
  s << header(plan, options, "Slurm batch script");
  return s.str();
}

// job.sbatch on a generic Slurm cluster: srun starts launch.sh once per node.
std::string slurm_script(const Plan& plan, const EmitOptions& options, const Layout& layout,
                         const std::string& final_dir) {
  std::ostringstream s;
  s << sbatch_head(plan, options, layout, false);
  s << "set -euo pipefail\n" << dir_line(final_dir);
  s << "export NNODES=\"$SLURM_JOB_NUM_NODES\"\n";
  s << "export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n";
  s << "export MASTER_PORT=\"${MASTER_PORT:-6000}\"\n";
  s << "# One task per node; launch.sh reads its NODE_RANK from SLURM_NODEID.\n";
  s << "srun -N \"$SLURM_JOB_NUM_NODES\" --ntasks-per-node=1 \"$DIR/launch.sh\"\n";
  return s.str();
}

// job.sbatch on Frontier (OLCF "PyTorch on Frontier"): one task per GCD,
// 7 cores each, one GPU bound closest; no torchrun; the ranks come from Slurm.
std::string frontier_script(const Plan& plan, const EmitOptions& options, const Layout& layout,
                            const std::string& final_dir) {
  const Program program = program_for(plan, options.engine);
  std::ostringstream s;
  s << sbatch_head(plan, options, layout, true);
  s << "set -euo pipefail\n" << dir_line(final_dir) << "\n";
  Program with_modules = program;
  // The modules of the OLCF guide (ROCm, the RCCL Slingshot plugin); pin versions here.
  with_modules.user_block.push_back(
      defaulted("FRONTIER_MODULES", "PrgEnv-gnu rocm rccl-net-plugin craype-accel-amd-gfx90a"));
  s << user_block(with_modules) << "\n";
  s << "if command -v module >/dev/null 2>&1; then\n"
    << "  set +u  # module scripts read unset variables\n"
    << "  # shellcheck disable=SC2086\n  module load $FRONTIER_MODULES\n  set -u\nfi\n\n";
  s << "# Rendezvous on the first node of the allocation (OLCF guide: MASTER_PORT 3442).\n";
  s << "export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n";
  s << "export MASTER_PORT=3442\n";
  s << "# RCCL over Slingshot (OLCF guide, RCCL network plugin and environment).\n";
  s << "export NCCL_SOCKET_IFNAME=hsn0\n";
  s << "export NCCL_CROSS_NIC=1\n";
  s << "export NCCL_NET_GDR_LEVEL=PHB\n";
  s << "export HSA_FORCE_FINE_GRAIN_PCIE=1\n";
  s << "export FI_CXI_ATS=0\n";
  s << "export FI_MR_CACHE_MONITOR=kdreg2\n";
  s << "export FI_CXI_DISABLE_HOST_REGISTER=1\n";
  s << "export FI_CXI_DEFAULT_CQ_SIZE=131072\n";
  s << "export FI_CXI_DEFAULT_TX_SIZE=2048\n";
  s << "export FI_CXI_RX_MATCH_MODE=hybrid\n";
  s << "export FI_CXI_RDZV_PROTO=alt_read\n";
  s << "export FI_CXI_RDZV_EAGER_SIZE=0\n";
  s << "export FI_CXI_RDZV_THRESHOLD=0\n";
  s << "export FI_CXI_RDZV_GET_MIN=0\n";
  s << "if [ \"$SLURM_JOB_NUM_NODES\" -gt 1 ]; then export NCCL_NET=OFI; else export NCCL_NET=Socket; fi\n";
  s << env_block(plan, options.engine) << program_block(program);
  // The per-task part: ranks from Slurm, a private MIOpen cache per task.
  // With --gpus-per-task=1 every task sees exactly one GPU, device 0, so
  // LOCAL_RANK (which Megatron, DeepSpeed and torchtitan pass to set_device) is 0;
  // SLURM_LOCALID still names the GCD's slot on the node.
  s << "\n# One task per GCD: " << layout.nnodes << " nodes x " << layout.nproc_per_node << " = "
    << layout.world << " ranks.\n";
  s << "srun -N " << layout.nnodes << " -n " << layout.world << " --ntasks-per-node=" << layout.nproc_per_node
    << " -c7 --gpus-per-task=1 --gpu-bind=closest \\\n";
  s << "  bash -c 'export RANK=\"$SLURM_PROCID\" WORLD_SIZE=\"$SLURM_NTASKS\" LOCAL_RANK=0 "
       "LOCAL_WORLD_SIZE=1 GCD=\"$SLURM_LOCALID\"\n";
  s << "    export MIOPEN_USER_DB_PATH=\"/tmp/miopen-cache-${USER:-user}-$SLURM_PROCID\"\n";
  s << "    export MIOPEN_CUSTOM_CACHE_DIR=\"$MIOPEN_USER_DB_PATH\"\n";
  s << "    rm -rf \"$MIOPEN_USER_DB_PATH\" && mkdir -p \"$MIOPEN_USER_DB_PATH\"\n";
  s << "    exec python3 -u \"$@\"' parplan-rank \"${PROGRAM[@]}\"\n";
  return s.str();
}

}  // namespace

ScriptFiles launch_scripts(const Plan& plan, const EmitOptions& options, const std::string& final_dir) {
  const Layout layout = layout_of(plan);
  ScriptFiles out;
  const bool deepspeed = options.engine == Engine::kDeepSpeed || options.engine == Engine::kMegatronDeepSpeed;
  if (options.launcher == Launcher::kSlurm) {
    if (plan.cluster.frontier_launch) {
      out.files.push_back({"job.sbatch", frontier_script(plan, options, layout, final_dir), true});
      return out;
    }
    out.files.push_back({"job.sbatch", slurm_script(plan, options, layout, final_dir), true});
  }
  out.files.push_back({"launch.sh", torchrun_script(plan, options, layout, final_dir), true});
  if (deepspeed && options.launcher == Launcher::kTorchrun) {
    out.files.push_back(
        {"launch_deepspeed.sh", deepspeed_launcher_script(plan, options, layout, final_dir), true});
  }
  return out;
}

}  // namespace parplan::emit_detail
