#include "src/tune/simulated_log.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "cost/memory.h"
#include "cost/tp_comm_overlap.h"
#include "src/io/job_loader.h"
#include "src/io/measured_figure.h"

namespace parplan {

namespace {
/// Megatron's _print_args layout: `  name ... value`, dots to column 48.
std::string arg_line(const std::string& name, const std::string& value) {
  const int dots = std::max(1, 48 - static_cast<int>(name.size()));
  return "  " + name + " " + std::string(dots, '.') + " " + value;
}
const char* py_bool(bool b) { return b ? "True" : "False"; }
/// A float as Python's repr prints the short ones (0.1, 0.0).
std::string py_float(double v) {
  std::ostringstream out;
  out << v;
  const std::string text = out.str();
  return text.find_first_of(".e") == std::string::npos ? text + ".0" : text;
}
/// Space-separated names as Python prints a list of strings; None when the
/// argument was left at its default.
std::string python_list(const std::string& names, bool left_default) {
  if (left_default) return "None";
  std::istringstream in(names);
  std::string out;
  for (std::string name; in >> name;) out += (out.empty() ? "'" : ", '") + name + "'";
  return "[" + out + "]";
}
}  // namespace

std::string simulated_megatron_log(const ModelSpec& model, const JobSpec& job, const ParallelConfig& config,
                                   double step_s, int train_iters, int log_interval, Engine engine) {
  const bool deepspeed = engine == Engine::kMegatronDeepSpeed;
  const bool gqa = model.kv_groups != model.heads;
  // Megatron-DeepSpeed's full recomputation is --checkpoint-activations (the
  // granularity stays None), as its launch files write it.
  const bool checkpointed = deepspeed && config.recompute == Recompute::kFull;
  const char* recompute = config.recompute == Recompute::kFull && !checkpointed ? "full"
                          : config.recompute == Recompute::kSelective           ? "selective"
                                                                                : "None";
  std::vector<std::string> args = {
      arg_line("add_bias_linear", py_bool(model.linear_bias)),
      arg_line("attention_dropout", py_float(model.dropout)),
      arg_line("hidden_dropout", py_float(model.dropout)),
      arg_line("attention_backend", std::string("AttnBackend.") + megatron_attention_backend(job, config)),
      arg_line("cross_entropy_loss_fusion", py_bool(job.cross_entropy == CrossEntropy::kTeInPlace)),
      arg_line("cross_entropy_fusion_impl", job.cross_entropy == CrossEntropy::kTeInPlace ? "te" : "native"),
      arg_line("bf16", py_bool(job.precision != Precision::kFp16)),
      arg_line("context_parallel_size", std::to_string(config.cp)),
      arg_line("data_parallel_size", std::to_string(config.dp)),
      arg_line("ffn_hidden_size", std::to_string(model.ffn_hidden)),
      arg_line("fp16", py_bool(job.precision == Precision::kFp16)),
      arg_line("fp8", job.precision == Precision::kFp8 ? "hybrid" : "None"),
      arg_line("global_batch_size", std::to_string(job.gbs)),
      arg_line("group_query_attention", py_bool(gqa)),
      arg_line("hidden_size", std::to_string(model.hidden)),
      arg_line("kv_channels", std::to_string(model.head_dim)),
      arg_line("log_interval", std::to_string(log_interval)),
      arg_line("max_position_embeddings", std::to_string(model.max_positions)),
      arg_line("micro_batch_size", std::to_string(config.mbs)),
      arg_line("normalization", model.norm == NormKind::kRmsNorm ? (deepspeed ? "rmsnorm" : "RMSNorm")
                                                                 : (deepspeed ? "layernorm" : "LayerNorm")),
      arg_line("num_attention_heads", std::to_string(model.heads)),
      arg_line("num_layers", std::to_string(model.layers)),
      arg_line("num_query_groups", std::to_string(model.kv_groups)),
      arg_line("overlap_grad_reduce", py_bool(config.overlap_grad_reduce)),
      arg_line("overlap_p2p_comm", py_bool(config.overlap_p2p)),
      arg_line("pipeline_model_parallel_size", std::to_string(config.pp)),
      arg_line("decoder_first_pipeline_num_layers",
               config.first_stage_layers > 0 ? std::to_string(config.first_stage_layers) : "None"),
      arg_line("decoder_last_pipeline_num_layers",
               config.last_stage_layers > 0 ? std::to_string(config.last_stage_layers) : "None"),
      arg_line("position_embedding_type",
               model.position == PositionKind::kRope ? "rope" : "learned_absolute"),
      arg_line("recompute_granularity", recompute),
      // As the launch file sets them (megatron_args.cpp): every layer as
      // uniform groups of one, some layers as block.
      arg_line("recompute_method", config.recompute != Recompute::kFull || checkpointed ? "None"
                                   : config.recompute_layers > 0                        ? "block"
                                                                                        : "uniform"),
      arg_line("recompute_modules", python_list(recompute_modules_text(job.recompute_modules),
                                                job.recompute_modules == RecomputeModules{})),
      arg_line("recompute_num_layers",
               config.recompute == Recompute::kFull && !checkpointed
                   ? std::to_string(config.recompute_layers > 0 ? config.recompute_layers : 1)
                   : "None"),
      arg_line("seq_length", std::to_string(job.seq)),
      arg_line("sequence_parallel", py_bool(config.sp)),
      arg_line("swiglu", py_bool(model.gated_ffn)),
      arg_line("tensor_model_parallel_size", std::to_string(config.tp)),
      arg_line("tp_comm_overlap", py_bool(tp_comm_overlapped(job, config))),
      arg_line("train_iters", std::to_string(train_iters)),
      arg_line("untie_embeddings_and_output_weights", py_bool(!model.tied_embeddings)),
      arg_line("use_distributed_optimizer", py_bool(!deepspeed && config.zero >= 1)),
      arg_line("use_megatron_fsdp", py_bool(!deepspeed && config.zero >= 2)),
      arg_line("data_parallel_sharding_strategy", config.zero == 3   ? "optim_grads_params"
                                                  : config.zero == 2 ? "optim_grads"
                                                                     : "no_shard"),
      arg_line("virtual_pipeline_model_parallel_size", config.vp > 1 ? std::to_string(config.vp) : "None"),
      arg_line("world_size", std::to_string(job.gpus)),
      arg_line("fp8_recipe", job.fp8_scaling == Fp8Scaling::kCurrent ? "tensorwise" : "delayed"),
      arg_line("multi_latent_attention", py_bool(model.uses_mla())),
      arg_line("qk_layernorm", py_bool(model.qk_norm)),
  };
  // The gradient dtype as validate_args leaves it (the launch files write the
  // flag that gives the costed one: megatron_args.cpp).
  if (!deepspeed) {
    const bool fp32_grads =
        gradient_bytes_per_param(job.precision, config.zero, job.grad_reduce_for(config.zero)) > 2.0;
    args.push_back(arg_line("accumulate_allreduce_grads_in_fp32", py_bool(fp32_grads)));
    args.push_back(
        arg_line("grad_reduce_in_bf16", py_bool(!fp32_grads && job.precision != Precision::kFp16)));
  }
  // Megatron-DeepSpeed's own arguments (megatron/arguments.py there:
  // --deepspeed, --zero-stage, --use-flash-attn-v2).
  if (deepspeed) {
    args.push_back(arg_line("deepspeed", "True"));
    args.push_back(arg_line("zero_stage", std::to_string(config.zero)));
    args.push_back(arg_line("use_flash_attn_v2", py_bool(config.flash_attention)));
    args.push_back(arg_line("checkpoint_activations", py_bool(checkpointed)));
    args.push_back(arg_line("checkpoint_num_layers", "1"));
  }
  // The MoE arguments a Megatron run prints (arguments.py: --num-experts and
  // the --moe-* / --expert-* family); None for a dense model, as Megatron's.
  const auto moe_arg = [&](const char* name, const std::string& value) {
    args.push_back(arg_line(name, model.is_moe() ? value : "None"));
  };
  if (deepspeed) {
    // Megatron-DeepSpeed's own MoE arguments (megatron/arguments.py @
    // 4efb479): --num-experts nargs '+' (a list, [1] when dense), --topk,
    // --moe-expert-parallel-size, --enable-expert-tensor-parallelism,
    // --expert-interval.
    args.push_back(arg_line("num_experts", "[" + std::to_string(model.is_moe() ? model.experts : 1) + "]"));
    args.push_back(arg_line("topk", std::to_string(model.is_moe() ? model.top_k : 1)));
    args.push_back(arg_line("moe_expert_parallel_size", std::to_string(model.is_moe() ? config.ep : 1)));
    args.push_back(arg_line("enable_expert_tensor_parallelism", py_bool(model.is_moe() && config.etp > 1)));
    args.push_back(arg_line("expert_interval", std::to_string(std::max(1, model.moe_layer_freq))));
    // DeepSpeed-MoE always pads to its capacity (cost/moe.h); dropless
    // turns dropping off.
    args.push_back(
        arg_line("moe_train_capacity_factor", py_float(job.capacity_factor > 0 ? job.capacity_factor : 1.0)));
    args.push_back(arg_line("disable_moe_token_dropping", py_bool(job.capacity_factor <= 0)));
  }
  const auto lm_moe_arg = [&](const char* name, const std::string& value) {
    if (!deepspeed) moe_arg(name, value);
  };
  lm_moe_arg("num_experts", std::to_string(model.experts));
  lm_moe_arg("moe_router_topk", std::to_string(model.top_k));
  lm_moe_arg("moe_ffn_hidden_size", std::to_string(model.expert_ffn_hidden));
  lm_moe_arg(
      "moe_shared_expert_intermediate_size",
      model.shared_experts > 0 ? std::to_string(model.shared_experts * model.expert_ffn_hidden) : "None");
  // A leading run of dense layers is a per-layer list (1 = MoE), printed as
  // Python prints it.
  std::string freq = std::to_string(std::max(1, model.moe_layer_freq));
  if (model.first_dense_layers > 0) {
    freq = "[";
    for (int i = 0; i < model.layers; ++i)
      freq += std::string(i ? ", " : "") + (i < model.first_dense_layers ? "0" : "1");
    freq += "]";
  }
  lm_moe_arg("moe_layer_freq", freq);
  lm_moe_arg("expert_model_parallel_size", std::to_string(config.ep));
  lm_moe_arg("expert_tensor_parallel_size", std::to_string(config.etp));
  lm_moe_arg("moe_token_dispatcher_type", config.a2a_hierarchical ? "flex" : "alltoall");
  lm_moe_arg("overlap_moe_expert_parallel_comm", py_bool(config.ep_overlap));
  lm_moe_arg("moe_expert_capacity_factor",
             job.capacity_factor > 0 ? std::to_string(job.capacity_factor) : "None");
  lm_moe_arg("moe_pad_expert_input_to_capacity", py_bool(job.pad_to_capacity));
  std::sort(args.begin(), args.end(), [](const std::string& a, const std::string& b) {
    std::string la = a, lb = b;
    std::transform(la.begin(), la.end(), la.begin(), ::tolower);
    std::transform(lb.begin(), lb.end(), lb.begin(), ::tolower);
    return la < lb;
  });
  std::ostringstream log;
  log << "using world size: " << job.gpus << ", data-parallel size: " << config.dp
      << ", context-parallel size: " << config.cp << ", tensor-model-parallel size: " << config.tp
      << ", pipeline-model-parallel size: " << config.pp << "\n";
  log << "------------------------ arguments ------------------------\n";
  for (const auto& a : args) log << a << "\n";
  log << "-------------------- end of arguments ---------------------\n";
  // The tokenizer pads the vocabulary after the arguments are printed
  // (Megatron-LM's build_tokenizer.py _vocab_size_with_padding); the model's
  // vocab is the padded size, the file's own size unknown here.
  log << " > padded vocab (size: " << model.vocab << ") with 0 dummy tokens (new size: " << model.vocab
      << ")\n";
  // DeepSpeed prints its ZeRO settings at engine start (DeepSpeedConfig.print:
  // `  name ..... value`, dots to column 29; the ZeRO config as its pydantic
  // `key=value` words, of which the reader needs the ZeRO++ ones).
  if (deepspeed) {
    const auto ds_line = [&](const std::string& name, const std::string& value) {
      log << "[simulated] [INFO] [config.py:1003:print]   " << name << " "
          << std::string(std::max(1, 29 - static_cast<int>(name.size())), '.') << " " << value << "\n";
    };
    log << "[simulated] [INFO] [config.py:999:print] DeepSpeedEngine configuration:\n";
    ds_line("zero_config",
            "stage=" + std::to_string(config.zero) +
                " contiguous_gradients=True overlap_comm=" + py_bool(config.overlap_grad_reduce) +
                " zero_hpz_partition_size=" + std::to_string(std::max(1, config.hpz_ranks)) +
                " zero_quantized_weights=" + py_bool(config.qwz) +
                " zero_quantized_nontrainable_weights=False zero_quantized_gradients=" + py_bool(config.qgz) +
                " mics_shard_size=-1");
    ds_line("zero_enabled", py_bool(config.zero > 0));
    ds_line("zero_optimization_stage", std::to_string(config.zero));
  }
  // The count the emitted engine prints: core_r0.13.0 holds 8873b55's
  // causal num_floating_point_operations.
  const double flops = formula_step_flops(model, job.gbs, job.seq, FlopFormula::kMegatronCausal);
  for (int it = log_interval; it <= train_iters; it += log_interval) {
    // The first window holds the warm-up iterations (allocator, NCCL
    // communicators): slower, and skipped by the reader.
    const double s = it == log_interval ? step_s * 1.5 : step_s;
    char line[512];
    std::snprintf(
        line, sizeof line,
        " [simulated] iteration %8d/%8d | consumed samples: %12lld | elapsed time per iteration (ms): "
        "%.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: 3.000000E-04 | global batch "
        "size: %5d | lm loss: 1.000000E+01 | loss scale: 1.0 | number of skipped iterations:   0 | "
        "number of nan iterations:   0 |",
        it, train_iters, static_cast<long long>(it) * job.gbs, s * 1000.0, flops / (s * job.gpus * 1e12),
        job.gbs);
    log << line << "\n";
  }
  return log.str();
}

std::string simulated_torchtitan_log(const ModelSpec& model, const JobSpec& job, const ParallelConfig& config,
                                     double step_s, int train_iters, double peak_flops_per_s,
                                     double peak_memory_gib, double device_memory_gib, int log_freq) {
  std::ostringstream log;
  // torchtitan/distributed/parallel_dims.py: the mesh of the degrees above
  // 1, in its order (pp, dp_replicate, dp_shard, cp, tp).
  const int shard = config.zero >= 2 ? config.dp : 1;
  const int replicate = config.dp / shard;
  std::string names, sizes;
  for (const auto& [name, size] : std::vector<std::pair<const char*, int>>{{"pp", config.pp},
                                                                           {"dp_replicate", replicate},
                                                                           {"dp_shard", shard},
                                                                           {"cp", config.cp},
                                                                           {"tp", config.tp}}) {
    if (size <= 1) continue;
    names += std::string(names.empty() ? "'" : ", '") + name + "'";
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
  }
  if (names.empty()) names = "'dp_shard'", sizes = "1";
  int dims = 1;
  for (char ch : sizes) dims += ch == ',';
  log << "[rank0]:[titan] [simulated] - root - INFO - Building " << dims << "-D device mesh with [" << names
      << "], [" << sizes << "]\n";
  const double tokens_per_device = static_cast<double>(job.gbs) * job.seq / job.gpus;
  const double flops_per_device =
      formula_step_flops(model, job.gbs, job.seq, FlopFormula::kMegatron) / job.gpus;
  auto line = [&](int step, double window_step_s) {
    char text[400];
    const double tflops = flops_per_device / window_step_s / 1e12;
    std::snprintf(text, sizeof text,
                  "[rank0]:[titan] [simulated] - root - INFO - step: %2d  loss: %7.4f  grad_norm: %7.4f  "
                  "memory: %5.2fGiB(%.2f%%)  tps: %.0f  tflops: %.2f  mfu: %.2f%%",
                  step, 10.0, 1.0, peak_memory_gib, 100 * peak_memory_gib / device_memory_gib,
                  tokens_per_device / window_step_s, tflops, 100 * tflops * 1e12 / peak_flops_per_s);
    log << text << "\n";
  };
  // Step 1 holds compilation and the first allocations; the next window
  // still some warm-up (the reader skips windows that reach into it).
  line(1, step_s * 3.0);
  for (int step = log_freq; step <= train_iters; step += log_freq)
    line(step, step == log_freq ? step_s * 1.2 : step_s);
  return log.str();
}

std::string simulated_oom_log(double peak_memory_gib, double device_memory_gib) {
  char text[300];
  std::snprintf(
      text, sizeof text,
      "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU 0 has a "
      "total capacity of %.2f GiB [simulated: the run needs %.2f GiB]\n",
      peak_memory_gib - device_memory_gib, device_memory_gib, peak_memory_gib);
  return text;
}

}  // namespace parplan
