// The launch scripts: launch.sh (torchrun, one per node), job.sbatch (Slurm:
// srun of launch.sh; on Frontier see frontier_script.cpp) and
// launch_deepspeed.sh, and the pieces they share (script_parts.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "src/emit/script_parts.h"
#include "src/io/input_error.h"

namespace parplan::emit_detail {
namespace {

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

// Training settings shared by the Megatron flavours; TRAIN_ITERS is what
// job.sbatch's -t was sized for.
std::vector<std::string> megatron_training_block(long long train_iters) {
  return {defaulted("TRAIN_ITERS", str(train_iters)), defaulted("LR", "3.0e-4"),
          defaulted("MIN_LR", "3.0e-5"),
          // Megatron asserts lr_warmup_steps < lr_decay_steps (= train
          // iterations): optimizer_param_scheduler.py, core_r0.13.0.
          defaulted("LR_WARMUP_ITERS", "$(( TRAIN_ITERS >= 1000 ? 100 : TRAIN_ITERS / 10 ))"),
          defaulted("DATA_SPLIT", "949,50,1"), defaulted("CHECKPOINT_DIR", "")};
}

// What a user of a Megatron flavour sets: the checkout (variable
// `checkout_var`, project `project`), the data and the tokenizer (its type
// as that flavour's --tokenizer-type names it).
std::vector<std::string> megatron_user_block(const std::string& checkout_var, const std::string& project,
                                             const std::string& tokenizer_type) {
  return {
      required(checkout_var, "your " + project + " checkout (the folder holding pretrain_gpt.py)"),
      required("DATA_PATH",
               "the preprocessed dataset prefix(es) (tools/preprocess_data.py output, no .bin/.idx)"),
      required("TOKENIZER_MODEL", "the tokenizer (a Hugging Face name or folder for " + tokenizer_type + ")"),
      defaulted("TOKENIZER_TYPE", tokenizer_type)};
}

// The training block and the PROGRAM array of the Megatron flavours:
// `head` (the script and its parallelism flags) and the flags both share.
// Under a site's wall-time cap (`wall.capped`) a run with CHECKPOINT_DIR
// saves more often and, by --exit-duration-in-mins, once more inside the
// limit before it exits (training.py's duration check saves first), so
// resubmitting job.sbatch resumes it; without CHECKPOINT_DIR it warns.
void add_megatron_training(Program& p, const std::string& head, const WallTime& wall) {
  for (const std::string& line : megatron_training_block(wall.train_iters)) p.user_block.push_back(line);
  std::ostringstream prog;
  prog << "PROGRAM=(" << head << "\n"
       << "  --train-iters \"$TRAIN_ITERS\"\n"
       << "  --lr \"$LR\" --min-lr \"$MIN_LR\" --lr-decay-style cosine --lr-warmup-iters "
          "\"$LR_WARMUP_ITERS\"\n"
       << "  --tokenizer-type \"$TOKENIZER_TYPE\" --tokenizer-model \"$TOKENIZER_MODEL\"\n"
       << "  --data-path \"${DATA_PATH_ARGS[@]}\" --split \"$DATA_SPLIT\"\n"
       << "  --log-interval 10 --eval-interval 1000 --eval-iters 10)";
  const long long interval = wall.capped ? wall.checkpoint_interval : kCheckpointIntervalIters;
  std::ostringstream save;
  save << "if [ -n \"$CHECKPOINT_DIR\" ]; then\n"
       << "  PROGRAM+=(--save \"$CHECKPOINT_DIR\" --load \"$CHECKPOINT_DIR\" --save-interval " << interval;
  if (wall.capped) save << "\n    --exit-duration-in-mins " << wall.exit_minutes;
  save << ")\n";
  if (wall.capped)
    save << "else\n"
         << "  echo \"the site's wall-time limit stops this run after about " << wall.iters_that_fit
         << " iterations; set CHECKPOINT_DIR to save it and resume on resubmission\" >&2\n";
  save << "fi";
  p.program_lines = {"read -r -a DATA_PATH_ARGS <<< \"$DATA_PATH\"", prog.str(), save.str()};
}

Program megatron_program(const Plan& plan, const WallTime& wall) {
  Program p;
  p.user_block = megatron_user_block("MEGATRON_LM", "Megatron-LM", "HuggingFaceTokenizer");
  add_megatron_training(p, "\"$MEGATRON_LM/pretrain_gpt.py\"" + join_args(megatron_args(plan), "  "), wall);
  return p;
}

Program megatron_deepspeed_program(const Plan& plan, const WallTime& wall) {
  Program p;
  p.user_block = megatron_user_block("MEGATRON_DEEPSPEED", "Megatron-DeepSpeed", "HFTokenizer");
  add_megatron_training(p,
                        "\"$MEGATRON_DEEPSPEED/pretrain_gpt.py\"" +
                            join_args(megatron_deepspeed_args(plan), "  ") +
                            "\n  --deepspeed_config \"$DIR/ds_config.json\"",
                        wall);
  return p;
}

Program deepspeed_program(const Plan& plan) {
  Program p;
  p.user_block = {required("TRAIN_SCRIPT", "your DeepSpeed training script (it calls deepspeed.initialize)"),
                  defaulted("TRAIN_ARGS", "")};
  // DeepSpeed recomputes only what the script checkpoints: ds_config.json's
  // activation_checkpointing block configures deepspeed.checkpointing, and
  // PipelineModule takes its interval as an argument. The plan's memory
  // holds only if the script does what it was costed with.
  if (plan.config.recompute == Recompute::kFull) {
    p.user_block.push_back(
        "# The plan recomputes every transformer block (full recomputation); your script must:");
    if (plan.config.pp > 1)
      p.user_block.push_back("#   build its PipelineModule with activation_checkpoint_interval=1");
    else
      p.user_block.push_back(
          "#   call deepspeed.checkpointing.configure(None, deepspeed_config=<this ds_config.json>) and run "
          "each "
          "block through deepspeed.checkpointing.checkpoint");
    p.user_block.push_back(
        "#   (without it the activations of every layer are kept and the plan's memory does not hold)");
  }
  p.program_lines = {"read -r -a TRAIN_ARGS_ARRAY <<< \"$TRAIN_ARGS\"",
                     "PROGRAM=(\"$TRAIN_SCRIPT\" --deepspeed --deepspeed_config \"$DIR/ds_config.json\" "
                     "\"${TRAIN_ARGS_ARRAY[@]}\")"};
  return p;
}

}  // namespace

std::string required(const std::string& var, const std::string& what) {
  return ": \"${" + var + ":?set " + var + " to " + what + "}\"";
}

std::string defaulted(const std::string& var, const std::string& value) {
  return var + "=\"${" + var + ":-" + value + "}\"";
}

Program program_for(const ScriptContext& x) {
  switch (x.options.engine) {
    case Engine::kMegatron:
      return megatron_program(x.plan, x.wall);
    case Engine::kMegatronDeepSpeed:
      return megatron_deepspeed_program(x.plan, x.wall);
    case Engine::kDeepSpeed:
      return deepspeed_program(x.plan);
    case Engine::kTorchtitan:
      break;
  }
  return torchtitan_program(x);
}

namespace {

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

}  // namespace

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
    char line[96];
    std::snprintf(line, sizeof line, "# Predicted step time %.3f s", plan.cost.time.step_s);
    h << line;
    if (plan.cost.throughput.mfu > 0) {
      std::snprintf(line, sizeof line, ", MFU %.1f %%", plan.cost.throughput.mfu * 100.0);
      h << line;
    }
    h << ".\n";
  }
  h << "# Targets " << engine_target(options) << ".\n";
  return h.str();
}

std::string engine_target(const EmitOptions& options) {
  if (options.engine == Engine::kTorchtitan) {
    return options.torchtitan_version == TorchtitanVersion::kV02
               ? "torchtitan v0.2.x (TOML job config; read at v0.2.2, 73a0e69)"
               : "torchtitan main (Python dataclass configs, --module/--config; read at b5bcd76, 2026-08-21)";
  }
  return engine_capabilities(options.engine).revision;
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
  for (const std::string& line : program.check_lines) b << line << "\n";
  for (const std::string& line : program.program_lines) b << line << "\n";
  return b.str();
}

std::string dir_line(const std::string& final_dir) {
  return "DIR=\"${PARPLAN_LAUNCH_DIR:-" + final_dir + "}\"\n";
}
namespace {

// launch.sh: one torchrun per node.
std::string torchrun_script(const ScriptContext& x) {
  const Program program = program_for(x);
  const Layout& layout = x.layout;
  std::ostringstream s;
  s << "#!/usr/bin/env bash\n" << header(x.plan, x.options, "Per-node launcher");
  s << "# Run it once on every node (NODE_RANK 0.." << layout.nnodes - 1 << ")"
    << (x.options.launcher == Launcher::kSlurm ? "; job.sbatch does that through srun.\n" : ".\n");
  s << "# Training length: " << x.wall.explanation.front() << ".\n";
  s << "set -euo pipefail\n" << dir_line(x.final_dir) << "\n";
  s << user_block(program) << "\n";
  s << "GPUS_PER_NODE=" << layout.nproc_per_node << "\n";
  s << "NNODES=\"${NNODES:-${SLURM_JOB_NUM_NODES:-" << layout.nnodes << "}}\"\n";
  // Defaults of 0 and localhost would make every node rank 0 or meet only
  // itself: the rendezvous hangs. Outside Slurm a multi-node run names both.
  if (layout.nnodes > 1)
    s << "if [ -z \"${SLURM_NODEID:-}\" ] && { [ -z \"${NODE_RANK:-}\" ] || [ -z \"${MASTER_ADDR:-}\" ]; }; "
         "then\n"
      << "  echo \"launch.sh: " << layout.nnodes << " nodes: set NODE_RANK (0.." << layout.nnodes - 1
      << ") and MASTER_ADDR (the address of node 0) on every node\" >&2\n  exit 1\nfi\n";
  // Slurm numbers nodes in its own (sorted) order; the node groups need the
  // hostfile's, so under Slurm a heterogeneous plan's node takes its line.
  if (x.plan.cluster.heterogeneous() && layout.nnodes > 1)
    s << "if [ -z \"${NODE_RANK:-}\" ] && [ -n \"${SLURM_NODEID:-}\" ]; then\n"
      << "  NODE_RANK=\"$(awk -v h=\"$(hostname -s)\" '!/^#/ && NF { if ($1 == h) { print n + 0; exit } n++ "
         "}' "
         "\"$DIR/hostfile\")\"\n"
      << "  if [ -z \"$NODE_RANK\" ]; then\n"
      << "    echo \"launch.sh: $(hostname -s) is not in hostfile: name the job's nodes there, group by "
         "group\" "
         ">&2\n    exit 1\n  fi\nfi\n";
  s << "NODE_RANK=\"${NODE_RANK:-${SLURM_NODEID:-0}}\"\n";
  s << "MASTER_ADDR=\"${MASTER_ADDR:-localhost}\"\n";
  s << "MASTER_PORT=\"${MASTER_PORT:-6000}\"\n";
  s << "if [ \"$NNODES\" != " << layout.nnodes << " ]; then\n"
    << "  echo \"launch.sh: the plan needs " << layout.nnodes << " nodes of " << layout.nproc_per_node
    << " ranks; NNODES is $NNODES\" >&2\n  exit 1\nfi\n";
  s << "\n" << env_block(x.plan, x.options.engine) << program_block(program) << "\n";
  s << "exec torchrun --nproc_per_node \"$GPUS_PER_NODE\" --nnodes \"$NNODES\" --node_rank \"$NODE_RANK\" "
       "\\\n"
    << "  --master_addr \"$MASTER_ADDR\" --master_port \"$MASTER_PORT\" \"${PROGRAM[@]}\"\n";
  return s.str();
}

// launch_deepspeed.sh: the DeepSpeed launcher with the hostfile.
std::string deepspeed_launcher_script(const ScriptContext& x) {
  const Program program = program_for(x);
  std::ostringstream s;
  s << "#!/usr/bin/env bash\n" << header(x.plan, x.options, "DeepSpeed-launcher alternative to launch.sh");
  s << "# Edit hostfile to name your nodes, then run this once on the first node.\n";
  s << "set -euo pipefail\n" << dir_line(x.final_dir) << "\n";
  s << user_block(program) << "\n";
  // Without --master_addr the launcher asks the hostfile's first node for
  // its address and hands it to every node (launcher/runner.py:117-120,
  // 495-515 at deepspeedai/DeepSpeed@edaa722); a default such as localhost
  // would be handed on as it is, and the other nodes would meet on their own.
  s << "# MASTER_ADDR unset: the DeepSpeed launcher uses the first host's address.\n";
  s << "MASTER_ADDR_ARGS=()\n";
  s << "if [ -n \"${MASTER_ADDR:-}\" ]; then MASTER_ADDR_ARGS=(--master_addr \"$MASTER_ADDR\"); fi\n";
  s << "MASTER_PORT=\"${MASTER_PORT:-6000}\"\n";
  // The launcher hands the NCCL variables of the node it runs on to every
  // node (runner.py EXPORT_ENVS plus the CUDA accelerator's 'NCCL'), which
  // would give every group the first group's transport.
  if (nccl_env_per_group(x.plan))
    s << "echo \"launch_deepspeed.sh: the DeepSpeed launcher hands this node's NCCL settings to every node, "
         "and the node groups need their own (nccl_env.sh): start launch.sh on each node instead\" >&2\n"
      << "exit 1\n";
  s << "\n" << env_block(x.plan, x.options.engine) << program_block(program) << "\n";
  s << "exec deepspeed --hostfile \"$DIR/hostfile\" --num_nodes " << x.layout.nnodes << " --num_gpus "
    << x.layout.nproc_per_node << " \\\n  ${MASTER_ADDR_ARGS[@]+\"${MASTER_ADDR_ARGS[@]}\"} --master_port "
    << "\"$MASTER_PORT\" \"${PROGRAM[@]}\"\n";
  return s.str();
}

// job.sbatch on a generic Slurm cluster: srun starts launch.sh once per node.
std::string slurm_script(const ScriptContext& x) {
  std::ostringstream s;
  s << sbatch_head(x, false);
  s << "set -euo pipefail\n" << dir_line(x.final_dir);
  s << "export NNODES=\"$SLURM_JOB_NUM_NODES\"\n";
  if (x.plan.cluster.heterogeneous()) {
    // Rank 0 is the hostfile's first node, whatever order Slurm lists them in.
    s << "# PARPLAN-EDIT: allocate the hostfile's nodes (sbatch --nodelist=...); each takes its line there "
         "as\n"
      << "# its node rank, so the node groups keep their ranks and NCCL settings.\n";
    s << "export MASTER_ADDR=\"$(awk '!/^#/ && NF { print $1; exit }' \"$DIR/hostfile\")\"\n";
  } else {
    s << "export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n";
  }
  s << "export MASTER_PORT=\"${MASTER_PORT:-6000}\"\n";
  s << "# One task per node; launch.sh reads its NODE_RANK from "
    << (x.plan.cluster.heterogeneous() ? "its line in hostfile" : "SLURM_NODEID") << ".\n";
  s << "srun -N \"$SLURM_JOB_NUM_NODES\" --ntasks-per-node=1 \"$DIR/launch.sh\"\n";
  return s.str();
}

}  // namespace

std::string sbatch_head(const ScriptContext& x, bool frontier) {
  const BatchLimits& limits = x.plan.cluster.batch_limits;
  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << "#SBATCH -J parplan-" << engine_name(x.options.engine) << "\n";
  s << "#SBATCH -N " << x.layout.nnodes << "\n";
  s << "#SBATCH -t " << slurm_time(x.wall.seconds) << "\n";
  s << "# ==== PARPLAN-EDIT: your Slurm account" << (limits.partition.empty() ? " and partition" : "")
    << " ====\n";
  s << "#SBATCH -A PARPLAN_ACCOUNT\n";
  s << "#SBATCH -p " << (limits.partition.empty() ? "PARPLAN_PARTITION" : limits.partition) << "\n";
  if (frontier) {
    // OLCF guide, "Alternative Rendezvous Protocol" (with FI_CXI_RDZV_PROTO=alt_read).
    s << "#SBATCH --network=disable_rdzv_get\n";
  } else {
    s << "#SBATCH --ntasks-per-node=1\n";
    s << "#SBATCH --gpus-per-node=" << x.layout.nproc_per_node << "\n";
    // Whole nodes: one task per node starts every rank, so without it a site
    // that shares nodes gives that task one CPU for all of them (and their
    // data loaders); the plan assumes the node's links and memory its own.
    s << "#SBATCH --exclusive\n";
  }
  s << "#SBATCH -o parplan-%j.out\n";
  // After every #SBATCH line: sweep arrays copy the leading #SBATCH block.
  s << "# -t: " << x.wall.explanation.front() << "\n";
  for (std::size_t i = 1; i < x.wall.explanation.size(); ++i) s << "#     " << x.wall.explanation[i] << "\n";
  s << header(x.plan, x.options, "Slurm batch script");
  return s.str();
}

ScriptFiles launch_scripts(const Plan& plan, const EmitOptions& options, const std::string& final_dir) {
  const Layout layout = layout_of(plan);
  WallTime wall = plan_wall_time(plan, layout.nnodes, options.train_iters, options.hours);
  if (options.launcher != Launcher::kSlurm) wall.drop_site_limit();  // -t is Slurm's
  const ScriptContext x{plan, options, layout, wall, final_dir};
  ScriptFiles out;
  out.notes = x.wall.notes;
  out.train_iters = x.wall.train_iters;
  out.checkpoint_interval = x.wall.checkpoint_interval;
  const bool deepspeed = options.engine == Engine::kDeepSpeed || options.engine == Engine::kMegatronDeepSpeed;
  if (options.launcher == Launcher::kSlurm) {
    if (plan.cluster.frontier_launch) {
      out.files.push_back({"job.sbatch", frontier_script(x), true});
      return out;
    }
    out.files.push_back({"job.sbatch", slurm_script(x), true});
  }
  out.files.push_back({"launch.sh", torchrun_script(x), true});
  if (deepspeed && options.launcher == Launcher::kTorchrun)
    out.files.push_back({"launch_deepspeed.sh", deepspeed_launcher_script(x), true});
  return out;
}

}  // namespace parplan::emit_detail
