// The torchtitan v0.2.x TOML job config (--engine-version 0.2). Sections and
// keys as v0.2.2's JobConfig dataclasses spell them (torchtitan/config/
// job_config.py @ v0.2.2, 73a0e69: job, model, optimizer, lr_scheduler,
// training, parallelism, activation_checkpoint), and the mesh mapping and
// stage split shared with torchtitan main's Python config.
#include <algorithm>
#include <sstream>

#include "cost/tp_comm_overlap.h"
#include "src/emit/emit_internal.h"

namespace parplan::emit_detail {

bool torchtitan_less_layers(const ParallelConfig& config, int layers, TorchtitanLessLayers& out) {
  out = {};
  ParallelConfig c;
  if (!megatron_split(config, c)) return false;
  if (c.first_stage_layers <= 0 && c.last_stage_layers <= 0) return true;
  if (c.vp > 1 || c.pp < 2) return false;
  const int first = c.first_stage_layers > 0 ? c.first_stage_layers : -1;
  const int last = c.last_stage_layers > 0 ? c.last_stage_layers : -1;
  // The stages the counts leave open share the remaining layers evenly.
  const int open_stages = c.pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
  const int rest = layers - std::max(first, 0) - std::max(last, 0);
  int middle = 0;
  if (open_stages > 0) {
    if (rest <= 0 || rest % open_stages != 0) return false;
    middle = rest / open_stages;
  } else {
    middle = std::max(first, last);  // pp 2: the larger stage is the even one
  }
  if (first > middle || last > middle) return false;
  out.first = first > 0 ? middle - first : 0;
  out.last = last > 0 ? middle - last : 0;
  return true;
}

TorchtitanMesh torchtitan_mesh(const Plan& plan) {
  const ParallelConfig& c = plan.config;
  TorchtitanMesh mesh;
  if (c.zero >= 2) {
    // FSDP shards over data_parallel_shard_degree x cp (torchtitan's
    // "dp_shard_cp" mesh, cp inside dp_shard as in parplan's tp-cp-dp rank
    // order); an HSDP shard group of N ranks of the dp x cp group is
    // N / cp of dp_shard (the rules refuse an N that is not whole in cp).
    const int hsdp = c.hierarchical_partition || c.hpz_ranks > 1 ? deepspeed_hpz_ranks(plan) : 0;
    mesh.shard = hsdp > 1 ? std::max(1, hsdp / std::max(1, c.cp)) : c.dp;
    mesh.replicate = std::max(1, c.dp / mesh.shard);
    mesh.reshard = c.zero == 2 ? "never" : "always";
  } else {
    mesh.replicate = c.dp;
  }
  return mesh;
}

std::string torchtitan_toml(const Plan& plan, long long train_steps, long long checkpoint_interval) {
  const ParallelConfig& c = plan.config;
  const TorchtitanMesh mesh = torchtitan_mesh(plan);
  // Batch: without a pipeline one optimizer step accumulates gbs/(mbs*dp)
  // local batches of mbs; with one, local_batch_size is the whole per-replica
  // batch and the schedule splits it into micro-batches of mbs.
  const int local_batch = c.pp > 1 ? c.gbs / c.dp : c.mbs;

  std::ostringstream t;
  t << "# torchtitan job config written by parplan for " << plan.model.name << " on " << world_size(plan)
    << " ranks.\n";
  t << "# Targets torchtitan v0.2.x: the TOML job config (torchtitan/config/job_config.py, read at v0.2.2,\n"
    << "# 73a0e69). torchtitan main replaced it with Python configs: emit without --engine-version for "
       "main.\n";
  t << "# Run with: torchrun ... -m torchtitan.train --job.config_file <this file>\n\n";
  t << "[job]\n";
  t << "dump_folder = \"./outputs\"\n";
  t << "description = \"parplan: tp " << c.tp << ", pp " << c.pp << ", cp " << c.cp << ", dp " << c.dp
    << "\"\n\n";
  t << "[model]\n";
  t << "name = \"llama3\"\n";
  t << "flavor = \"" << torchtitan_llama3_flavor(plan.model) << "\"\n";
  // Float8 linears with tensorwise dynamic scaling, as costed: the converter
  // registers as "quantize.linear.float8" (components/quantization/
  // float8.py:238 at v0.2.2); recipe_name stays unset (tensorwise).
  const bool fp8 = plan.job.precision == Precision::kFp8;
  if (fp8) t << "converters = [\"quantize.linear.float8\"]\n";
  t << "\n";
  t << "[optimizer]\n";
  t << "name = \"AdamW\"\n";
  t << "lr = 3e-4\n\n";
  t << "[lr_scheduler]\n";
  t << "warmup_steps = 100\n\n";
  t << "[training]\n";
  t << "local_batch_size = " << local_batch << "\n";
  t << "global_batch_size = " << c.gbs << "\n";
  t << "seq_len = " << plan.job.seq << "\n";
  t << "steps = " << train_steps << "\n";
  t << "mixed_precision_param = \"bfloat16\"\n\n";
  t << "[parallelism]\n";
  t << "data_parallel_replicate_degree = " << mesh.replicate << "\n";
  t << "data_parallel_shard_degree = " << mesh.shard << "\n";
  t << "fsdp_reshard_after_forward = \"" << mesh.reshard << "\"\n";
  t << "tensor_parallel_degree = " << c.tp << "\n";
  t << "pipeline_parallel_degree = " << c.pp << "\n";
  if (c.pp > 1) {
    t << "pipeline_parallel_schedule = \"" << (c.vp > 1 ? "Interleaved1F1B" : "1F1B") << "\"\n";
    t << "pipeline_parallel_microbatch_size = " << c.mbs << "\n";
    // distributed/pipeline_parallel.py counts the embedding and the output as
    // one layer each unless these are 0; these give the split parplan costs.
    TorchtitanLessLayers less;
    (void)torchtitan_less_layers(c, plan.model.layers, less);  // engine_rules refused others
    t << "pipeline_parallel_first_stage_less_layers = " << less.first << "\n";
    t << "pipeline_parallel_last_stage_less_layers = " << less.last << "\n";
  }
  t << "context_parallel_degree = " << c.cp << "\n";
  // Async TP as costed (cost/micro_pipeline_tp.h); v0.2.2 reads it here
  // (job_config.py:357, distributed/tensor_parallel.py maybe_enable_async_tp).
  if (tp_comm_overlapped(plan.job, c)) t << "enable_async_tensor_parallel = true\n";
  // The plan is timed with element-wise kernels fused (JobSpec::
  // fused_elementwise, torch.compile) and, under context parallelism, with
  // the compiled ring's exposed exchange (cost/pytorch_cp_exchange.h);
  // torchtitan compiles nothing unless asked (job_config.py Compile.enable
  // defaults to False at v0.2.2, 73a0e69). An eager plan says so too: the
  // [compile] section marks the file as v0.2's for `calibrate`, which reads
  // the attention kernel from it (src/io/torchtitan_log_reader.cpp).
  t << "\n[compile]\n";
  if (plan.job.fused_elementwise) {
    t << "enable = true\n";
    t << (plan.job.cross_entropy == CrossEntropy::kCompiled ? "components = [\"model\", \"loss\"]\n"
                                                            : "components = [\"model\"]\n");
  } else {
    t << "enable = false\n";
  }
  if (fp8) {
    t << "\n[quantize.linear.float8]\n";
    // The LM head stays 16-bit, as Megatron's and as parplan costs it.
    t << "filter_fqns = [\"output\"]\n";
    // JobSpec::fsdp_fp8_all_gather: weights gathered in fp8, their scales
    // computed in one all-reduce after the optimizer step (job_config.py
    // Float8Linear, "recommended for tensorwise scaling").
    if (plan.job.fsdp_fp8_all_gather) {
      t << "enable_fsdp_float8_all_gather = true\n";
      t << "precompute_float8_dynamic_scale_for_fsdp = true\n";
    }
  }
  t << "\n[activation_checkpoint]\n";
  switch (c.recompute) {
    case Recompute::kNone:
      t << "mode = \"none\"\n";
      break;
    case Recompute::kSelective:
      t << "mode = \"selective\"\n";
      t << "selective_ac_option = \"op\"\n";
      break;
    case Recompute::kFull:
      t << "mode = \"full\"\n";
      break;
  }
  // Off unless enabled (job_config.py Checkpoint.enable at v0.2.2); a run
  // the site's limit stops resumes from dump_folder/checkpoint.
  if (checkpoint_interval > 0) {
    t << "\n# The site's wall-time limit stops the run early: save, and resubmit to resume.\n";
    t << "[checkpoint]\n";
    t << "enable = true\n";
    t << "interval = " << checkpoint_interval << "\n";
  }
  return t.str();
}

}  // namespace parplan::emit_detail
