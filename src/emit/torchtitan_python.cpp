// The torchtitan main config: a Python module whose function returns the
// Trainer.Config of the plan (the config system of pytorch/torchtitan#2386,
// 9810191, 2026-02-23: `-m torchtitan.train --module M --config F`). Names as
// read at torchtitan main b5bcd76 (2026-08-21): torchtitan/trainer.py
// Trainer.Config, torchtitan/config/configs.py TrainingConfig and
// ParallelismConfig, torchtitan/distributed/activation_checkpoint.py FullAC /
// SelectiveAC (None disables it, torchtitan_recipes/tests/__init__.py), and
// the registered recipes of torchtitan/models/{llama3,qwen3}/config_registry.py
// (src/emit/torchtitan_models.cpp).
#include <sstream>

#include "cost/tp_comm_overlap.h"
#include "src/emit/emit_internal.h"

namespace parplan::emit_detail {

std::string torchtitan_python_config(const Plan& plan, long long train_steps, long long checkpoint_interval) {
  const ParallelConfig& c = plan.config;
  const TorchtitanMesh mesh = torchtitan_mesh(plan);
  const TorchtitanFlavor& model = *torchtitan_flavor(plan.model);  // engine_rules refused others
  const std::string family = model.family;
  const std::string flavor = model.name;
  const std::string recipe = model.recipe;
  const long long seq = plan.job.seq;
  const int micro_batches = c.dp > 0 && c.mbs > 0 ? c.gbs / (c.mbs * c.dp) : 1;

  std::ostringstream py;
  py << "# torchtitan config written by parplan for " << plan.model.name << " on " << world_size(plan)
     << " ranks: tp " << c.tp << ", pp " << c.pp << ", vp " << c.vp << ", cp " << c.cp << ", dp " << c.dp
     << ", zero " << c.zero << ", mbs " << c.mbs << ", gbs " << c.gbs << ".\n";
  py << "# Targets torchtitan main: Python dataclass configs (since pytorch/torchtitan#2386, 9810191,\n"
     << "# 2026-02-23), read at b5bcd76 (2026-08-21). For the v0.2.x TOML config emit with --engine-version "
        "0.2.\n";
  py << "# Run with: python -m torchtitan.train --module " << kTorchtitanPythonModule << " --config "
     << kTorchtitanPythonConfig << "\n";
  py << "# (this folder on PYTHONPATH; launch.sh does both). Reads HF_ASSETS_PATH and TRAIN_STEPS.\n";
  py << "import os\n\n";
  py << "from torchtitan.config import CompileConfig, ParallelismConfig\n";
  if (c.recompute != Recompute::kNone) {
    py << "from torchtitan.distributed.activation_checkpoint import "
       << (c.recompute == Recompute::kFull ? "FullAC" : "SelectiveAC") << "\n";
  }
  py << "from torchtitan.models." << family << " import model_registry\n";
  py << "from torchtitan.models." << family << ".config_registry import " << recipe << "\n";
  py << "from torchtitan.trainer import Trainer\n\n\n";
  py << "def " << kTorchtitanPythonConfig << "() -> Trainer.Config:\n";
  py << "    # The registered recipe supplies the loss, optimizer, data loader (c4) and checkpointing;\n";
  py << "    # edit config.dataloader for your data. The plan's choices follow.\n";
  py << "    config = " << recipe << "()\n";
  py << "    # bf16 weights and GEMMs, as costed"
     << (recipe == "llama3_405b"
             ? " (the recipe's model_spec converts linears to float8; the model_spec below has no converters)"
             : "")
     << ".\n";
  py << "    # Attention: FlexAttention (model_registry's default attn_backend), costed as\n"
     << "    # causal over each whole sequence; packed shorter documents (block-causal) cost less.\n";
  py << "    config.model_spec = model_registry(\"" << flavor << "\")\n";
  // A flavor without a recipe of its own starts from its family's nearest
  // one and names its own tokenizer assets.
  py << "    config.hf_assets_path = os.environ.get(\"HF_ASSETS_PATH\", \"" << model.assets << "\")\n";
  py << "    config.training.steps = int(os.environ.get(\"TRAIN_STEPS\", \"" << train_steps << "\"))\n";
  py << "    config.training.max_context_length = " << seq << "\n";
  py << "    # mbs " << c.mbs << " sequence(s) of " << seq
     << " tokens per micro-batch and data-parallel rank;\n";
  py << "    # gbs " << c.gbs << " sequences per optimizer step.\n";
  py << "    config.training.num_tokens_per_microbatch_per_dp_rank = " << c.mbs * seq << "\n";
  py << "    config.training.num_tokens_per_train_step = " << c.gbs * seq << "\n";
  py << "    config.training.mixed_precision_param = \"bfloat16\"\n";
  // Main captures each step as a CUDA graph unless told not to
  // (torchtitan/config/configs.py:75 at b5bcd76c) and refuses that with
  // pipeline parallelism or a host-synchronising expert dispatcher
  // (trainer.py:168-199); the cost model times eager launches either way.
  py << "    # Eager launches, as costed (CUDA graphs refuse pp > 1 and the standard expert dispatcher).\n";
  py << "    config.training.disable_cuda_graphs = True\n";
  // Some recipes trace every profile_freq steps (llama3_70b: enable_profiling,
  // profile_freq 100; Trainer.Config.profiler, trainer.py at b5bcd76c): time
  // the cost model does not price.
  py << "    # No profiler traces, as costed (set True to trace every profile_freq steps).\n";
  py << "    config.profiler.enable_profiling = False\n";
  py << "    config.parallelism = ParallelismConfig(\n";
  py << "        data_parallel_replicate_degree=" << mesh.replicate << ",\n";
  py << "        data_parallel_shard_degree=" << mesh.shard << ",\n";
  py << "        fsdp_reshard_after_forward=\"" << mesh.reshard << "\",\n";
  py << "        tensor_parallel_degree=" << c.tp << ",\n";
  py << "        enable_sequence_parallel=" << (c.sp || c.tp > 1 ? "True" : "False") << ",\n";
  py << "        pipeline_parallel_degree=" << c.pp << ",\n";
  if (c.pp > 1) {
    // Looped schedules default to 2 stages per rank (pipeline_parallel.py);
    // the plan's micro-batches go through the pipeline without accumulation.
    py << "        pipeline_parallel_schedule=\"" << (c.vp > 1 ? "Interleaved1F1B" : "1F1B") << "\",\n";
    py << "        num_pp_microbatches=" << micro_batches << ",\n";
    // The split as costed (torchtitan_less_layers; engine_rules refused others).
    TorchtitanLessLayers less;
    (void)torchtitan_less_layers(c, plan.model.layers, less);
    py << "        # The split as costed: the embedding and output count as these many layers.\n";
    py << "        pipeline_parallel_first_stage_less_layers=" << less.first << ",\n";
    py << "        pipeline_parallel_last_stage_less_layers=" << less.last << ",\n";
  }
  py << "        context_parallel_degree=" << c.cp << ",\n";
  // Routed experts shard over ep, borrowed from dp_shard * cp * tp; the
  // dispatch is the registry's standard all-to-all (moe_comm_backend).
  if (plan.model.is_moe()) py << "        expert_parallel_degree=" << c.ep << ",\n";
  py << "    )\n";
  // Timed compiled (see torchtitan_config.cpp); CompileConfig.enable
  // defaults to False (torchtitan/config/configs.py at b5bcd76c).
  // Async TP as costed (cost/micro_pipeline_tp.h): CompileConfig's switch
  // at b5bcd76c (configs.py:298), refused there without the compiled model.
  if (plan.job.fused_elementwise)
    py << "    config.compile = CompileConfig(enable=True, components=["
       << (plan.job.cross_entropy == CrossEntropy::kCompiled ? "\"model\", \"loss\"" : "\"model\"") << "]"
       << (tp_comm_overlapped(plan.job, c) ? ", enable_async_tensor_parallel=True" : "") << ")\n";
  else  // eager, as costed: a recipe that compiles (llama3_405b) would not
    py << "    config.compile = CompileConfig(enable=False)\n";
  switch (c.recompute) {
    case Recompute::kNone:
      py << "    config.activation_checkpoint = None\n";
      break;
    case Recompute::kSelective:
      py << "    config.activation_checkpoint = SelectiveAC.Config()\n";
      break;
    case Recompute::kFull:
      py << "    config.activation_checkpoint = FullAC.Config()\n";
      break;
  }
  // Checkpointing is off unless enabled (BaseCheckpointManager.Config.enable
  // defaults to False at b5bcd76c); a run the site's limit stops saves into
  // dump_folder/checkpoint and the next job loads the newest step there.
  if (checkpoint_interval > 0) {
    py << "    # The site's wall-time limit stops the run early: save, and resubmit to resume.\n";
    py << "    config.checkpoint.enable = True\n";
    py << "    config.checkpoint.interval = " << checkpoint_interval << "\n";
  }
  py << "    return config\n";
  return py.str();
}

}  // namespace parplan::emit_detail
