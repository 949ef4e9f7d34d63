// The engines' argument checks restated for the emit tests: Megatron-LM's
// validate_args, DeepSpeed's config model, Megatron-DeepSpeed's and
// torchtitan's known flags and keys. Part of emit_test_util.h.
#pragma once

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "emit_test_util.h"

namespace parplan::emit_test {

// ------------------------------------------- Megatron-LM validate_args ----

// Flags of megatron/training/arguments.py (NVIDIA/Megatron-LM core_r0.13.0,
// the target of parplan's Megatron files) that a
// parplan launch may pass, as the file spells them.
inline const std::set<std::string>& megatron_known_flags() {
  static const std::set<std::string> flags = {
      "--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads",
      "--group-query-attention", "--num-query-groups", "--kv-channels", "--seq-length",
      "--max-position-embeddings", "--position-embedding-type", "--normalization", "--swiglu",
      "--disable-bias-linear", "--untie-embeddings-and-output-weights", "--num-experts", "--moe-router-topk",
      "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size", "--moe-layer-freq",
      "--moe-token-dispatcher-type",
      // TransformerConfig fields generated into arguments.py
      // (ArgumentGroupFactory) and _add_moe_args / _add_mla_args.
      "--moe-grouped-gemm", "--moe-enable-deepep", "--moe-router-score-function",
      "--moe-router-enable-expert-bias", "--moe-router-load-balancing-type", "--moe-aux-loss-coeff",
      "--moe-router-num-groups", "--moe-router-group-topk", "--moe-router-topk-scaling-factor",
      "--moe-expert-capacity-factor", "--mtp-num-layers", "--multi-latent-attention", "--q-lora-rank",
      "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim",
      "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--context-parallel-size",
      "--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
      "--decoder-first-pipeline-num-layers", "--pipeline-model-parallel-layout",
      "--decoder-last-pipeline-num-layers", "--sequence-parallel", "--expert-model-parallel-size",
      "--expert-tensor-parallel-size", "--use-distributed-optimizer", "--use-custom-fsdp",
      "--data-parallel-sharding-strategy", "--no-gradient-accumulation-fusion", "--ckpt-format",
      "--overlap-grad-reduce", "--micro-batch-size", "--global-batch-size", "--recompute-granularity",
      "--recompute-method", "--recompute-num-layers", "--bf16", "--fp16", "--fp8-format",
      "--attention-backend", "--optimizer", "--train-iters", "--lr", "--min-lr", "--lr-decay-style",
      "--lr-warmup-iters", "--tokenizer-type", "--tokenizer-model", "--data-path", "--split",
      "--log-interval", "--eval-interval", "--eval-iters", "--save", "--load", "--save-interval",
      "--exit-duration-in-mins",  // arguments.py:1871 at core_r0.13.0
      // Architecture, overlap and Adam (arguments.py at core_r0.13.0: :1400-1410,
      // :1433, :1442, :1665-1686, :1909, :2319, :2690).
      "--rotary-base", "--rotary-percent", "--use-rope-scaling", "--rope-scaling-factor", "--norm-epsilon",
      "--openai-gelu", "--add-qkv-bias", "--qk-layernorm", "--attention-dropout", "--hidden-dropout",
      "--overlap-param-gather", "--use-precision-aware-optimizer", "--weight-decay", "--adam-beta1",
      "--adam-beta2", "--adam-eps",
      // arguments.py:1811 (core_r0.13.0).
      "--tp-comm-overlap",
      // arguments.py:1184-1187 and 2803-2804 (core_r0.13.0).
      "--fp8-recipe", "--moe-pad-expert-input-to-capacity",
      // arguments.py:1768 (core_r0.13.0).
      "--recompute-modules",
      // arguments.py:2204 and 2225 (core_r0.13.0).
      "--grad-reduce-in-bf16", "--accumulate-allreduce-grads-in-fp32"};
  return flags;
}

/// What Megatron-LM main would reject in this pretrain_gpt.py command line at
/// this world size and environment: validate_args, TransformerConfig and
/// ModelParallelConfig __post_init__, the micro-batch calculator and the
/// interleaved schedule, restated.
// Megatron's PipelineParallelLayerLayout.parse_str_to_list (core_r0.13.0,
// pipeline_parallel_layer_layout.py:228-262): commas dropped, "(...)*n" then
// "x*n" unrolled by regular expression, stages split at '|'.
inline std::vector<std::string> megatron_layout_stages(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  for (const char* pattern : {R"(\(([^)]+)\)\*(\d+))", R"((.)\*(\d+))"}) {
    const std::regex re(pattern);
    std::string out;
    auto begin = text.cbegin();
    for (std::smatch m; std::regex_search(begin, text.cend(), m, re); begin = m.suffix().first) {
      out += m.prefix().str();
      for (long long i = 0; i < std::stoll(m[2].str()); ++i) out += m[1].str();
    }
    text = out + std::string(begin, text.cend());
  }
  std::vector<std::string> stages(1);
  for (const char ch : text) {
    if (ch == '|')
      stages.emplace_back();
    else
      stages.back() += ch;
  }
  return stages;
}

inline std::vector<std::string> megatron_check(const ArgMap& a, long long world,
                                               const std::map<std::string, std::string>& env) {
  std::vector<std::string> errors;
  auto fail = [&](bool bad, const std::string& what) {
    if (bad) errors.push_back(what);
  };
  for (const auto& flag : a.order) fail(!megatron_known_flags().count(flag), "unknown flag " + flag);
  for (const char* req : {"--num-layers", "--hidden-size", "--num-attention-heads",
                          "--max-position-embeddings", "--micro-batch-size", "--seq-length"}) {
    fail(!a.has(req), std::string("missing ") + req);
  }
  fail(!a.has("--train-iters"), "missing --train-iters");
  const long long tp = a.num("--tensor-model-parallel-size", 1),
                  pp = a.num("--pipeline-model-parallel-size", 1), cp = a.num("--context-parallel-size", 1);
  fail(world % (tp * pp * cp) != 0, "world size is not divisible by total_model_size");
  const long long dp = world / (tp * pp * cp);
  const long long layers = a.num("--num-layers", 0), heads = a.num("--num-attention-heads", 1),
                  hidden = a.num("--hidden-size", 0), seq = a.num("--seq-length", 0);
  const long long mbs = a.num("--micro-batch-size", 1), gbs = a.num("--global-batch-size", mbs * dp);
  fail(gbs % (mbs * dp) != 0,
       "global batch size is not divisible by micro batch size times data parallel size");
  fail(heads % tp != 0, "num_attention_heads must be a multiple of tensor_model_parallel_size");
  const long long groups = a.has("--group-query-attention") ? a.num("--num-query-groups", 1) : heads;
  fail(groups % tp != 0 && tp % groups != 0, "num_query_groups must be a multiple or divisor of tp");
  fail(!a.has("--kv-channels") && hidden % heads != 0, "hidden_size % num_attention_heads != 0");
  fail(cp > 1 && seq % (2 * cp) != 0, "seq-length should be a multiple of 2 * context-parallel-size");
  fail(a.num("--max-position-embeddings", 0) < seq, "max_position_embeddings must be >= seq_length");
  // Pipeline split.
  const bool uneven =
      a.has("--decoder-first-pipeline-num-layers") || a.has("--decoder-last-pipeline-num-layers");
  long long vp = 1;
  const bool layout = a.has("--pipeline-model-parallel-layout");
  if (layout) {
    // arguments.py:497-518; transformer_config.py:873-925 (the layout and
    // the other split arguments exclude each other; vp = stages / pp);
    // validate_layer_layout, pipeline_parallel_layer_layout.py:81-111.
    fail(uneven || a.has("--num-layers-per-virtual-pipeline-stage") ||
             a.has("--num-virtual-stages-per-pipeline-rank") ||
             a.has("--account-for-embedding-in-pipeline-split") ||
             a.has("--account-for-loss-in-pipeline-split"),
         "pipeline_model_parallel_layout cannot be set with other pipeline layout arguments");
    const std::vector<std::string> stages =
        megatron_layout_stages(a.value("--pipeline-model-parallel-layout"));
    fail(static_cast<long long>(stages.size()) % pp != 0,
         "The length of pipeline_model_parallel_layout must be divisible by pipeline_model_parallel_size");
    std::string flat;
    for (const auto& s : stages) flat += s;
    for (const char ch : flat)
      fail(std::string("ELtm").find(ch) == std::string::npos, "Invalid layer character");
    fail(flat.empty() || flat.front() != 'E', "The first layer must be embedding");
    fail(flat.empty() || flat.back() != 'L', "The last layer must be loss");
    fail(std::count(flat.begin(), flat.end(), 'E') != 1, "Embedding must be specified exactly once");
    fail(std::count(flat.begin(), flat.end(), 'L') != 1, "Loss must be specified exactly once");
    fail(std::count(flat.begin(), flat.end(), 't') != layers,
         "Number of decoder layers must match num_layers");
    fail(std::count(flat.begin(), flat.end(), 'm') > 0,
         "MTP layer is not supported for flexible pipeline layout");
    vp = static_cast<long long>(stages.size()) / pp;
  } else if (a.has("--num-layers-per-virtual-pipeline-stage")) {
    fail(a.has("--num-virtual-stages-per-pipeline-rank"), "only one virtual-pipeline argument may be set");
    fail(uneven, "use --num-virtual-stages-per-pipeline-rank with uneven pipeline parallelism");
    fail(layers % pp != 0, "number of layers must be divisible by pipeline model parallel size");
    const long long per_vstage = a.num("--num-layers-per-virtual-pipeline-stage", 1);
    fail((layers / pp) % per_vstage != 0, "layers per stage must be divisible by layers per virtual stage");
    vp = (layers / pp) / per_vstage;
  } else if (a.has("--num-virtual-stages-per-pipeline-rank")) {
    vp = a.num("--num-virtual-stages-per-pipeline-rank", 1);
  } else if (!uneven) {
    fail(layers % pp != 0, "Number of layers should be divisible by the pipeline-model-parallel size");
  }
  if (uneven && !layout) {
    long long rest = layers, stages = pp;
    for (const char* f : {"--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers"}) {
      if (!a.has(f)) continue;
      const long long n = a.num(f, 0);
      fail(n <= 0, std::string(f) + " must be larger than 0");
      fail(vp > 1 && n % vp != 0, std::string(f) + " must be divisible by the virtual pipeline degree");
      rest -= n;
      --stages;
    }
    fail((rest > 0) != (stages > 0), "middle layers and middle stages mismatch");
    fail(stages > 0 && rest % stages != 0, "middle layers must divide into middle stages");
    fail(stages > 0 && vp > 1 && (rest / stages) % vp != 0, "middle layers per rank must divide by vp");
  }
  if (vp > 1) {
    fail(pp <= 1, "interleaved schedule needs pipeline-model-parallel size > 1");
    const long long micro = gbs / (mbs * dp);
    fail(micro < pp || micro % pp != 0, "interleaved micro-batches must be a multiple of pp");
  }
  // Recomputation (TransformerConfig).
  const std::string gran = a.value("--recompute-granularity");
  if (a.has("--recompute-modules")) {
    // transformer_config.py:816-830 (core_r0.13.0).
    const std::set<std::string> allowed = {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe"};
    for (const auto& m : a.flags.at("--recompute-modules"))
      fail(!allowed.count(m), "Invalid choices for recompute_modules: " + m);
    const auto& mods = a.flags.at("--recompute-modules");
    const bool moe_act = std::find(mods.begin(), mods.end(), "moe_act") != mods.end();
    fail(gran == "selective" && moe_act && !a.has("--moe-grouped-gemm"),
         "moe_act in recompute_modules is only supported with moe_grouped_gemm.");
    const bool layernorm = std::find(mods.begin(), mods.end(), "layernorm") != mods.end();
    fail(gran == "selective" && a.has("--fp8-format") && (moe_act || layernorm),
         "moe_act and layernorm recompute cannot work with fp8.");
  }
  if (gran == "selective") {
    fail(a.has("--recompute-method"), "recompute method is not supported for selective granularity");
    fail(a.has("--recompute-num-layers"), "recompute_num_layers must be None for selective");
  } else if (gran == "full") {
    const std::string method = a.value("--recompute-method");
    fail(method != "block" && method != "uniform", "full recompute needs recompute_method block or uniform");
    fail(!a.has("--recompute-num-layers"), "full recompute needs recompute_num_layers");
  }
  fail(a.has("--sequence-parallel") && tp <= 1, "Cannot use sequence parallelism without tensor parallelism");
  // arguments.py:855-856 (core_r0.13.0).
  fail(a.has("--tp-comm-overlap") && !a.has("--sequence-parallel"),
       "Tensor parallel communication/GEMM overlap can happen only when sequence parallelism is enabled");
  // arguments.py:594-598 (core_r0.13.0).
  fail(a.has("--overlap-param-gather") && !a.has("--use-distributed-optimizer"),
       "--overlap-param-gather only supported with distributed optimizer");
  fail(a.has("--overlap-param-gather") && !a.has("--overlap-grad-reduce"),
       "Must use --overlap-param-gather with --overlap-grad-reduce");
  // megatron/core/transformer/dot_product_attention.py:52-54; TE utils.py:549.
  fail(cp > 1 && a.value("--attention-backend") == "unfused",
       "Context parallelism is only supported by TEDotProductAttention");
  fail(a.has("--fp16") && a.has("--bf16"), "fp16 and bf16 are exclusive");
  // arguments.py:804-805 and 1073-1075 (core_r0.13.0).
  fail(a.has("--moe-grouped-gemm") && !a.has("--bf16"),
       "Currently GroupedGEMM for MoE only supports bf16 dtype.");
  fail(a.has("--mtp-num-layers") && cp > 1,
       "Multi-Token Prediction (MTP) is not supported with Context Parallelism.");
  // optimizer_config.py:194-200 at core_r0.13.0.
  fail(a.has("--use-precision-aware-optimizer") && a.has("--optimizer") && a.value("--optimizer") != "adam",
       "--use-precision-aware-optimizer only supported with adam");
  fail(a.has("--use-precision-aware-optimizer") && !a.has("--use-distributed-optimizer"),
       "--use-precision-aware-optimizer only supported with distributed optimizer");
  const bool fsdp = a.has("--use-custom-fsdp");
  const auto conn = env.find("CUDA_DEVICE_MAX_CONNECTIONS");
  const bool single = conn != env.end() && conn->second == "1";
  if (fsdp) {
    fail(single, "FSDP always requires CUDA_DEVICE_MAX_CONNECTIONS value large than one");
    // validate_args :646-660 at core_r0.13.0.
    fail(!a.has("--use-distributed-optimizer"),
         "--use-custom-fsdp only supported with distributed optimizer");
    const std::string strategy = a.value("--data-parallel-sharding-strategy");
    fail((strategy == "optim_grads" || strategy == "optim_grads_params") &&
             !a.has("--no-gradient-accumulation-fusion"),
         "optim_grads_params optim_grads are not supported with gradient accumulation fusion");
  } else if (tp > 1 || cp > 1) {
    fail(!single, "tensor or context parallelism require CUDA_DEVICE_MAX_CONNECTIONS=1");
  }
  if (a.has("--expert-model-parallel-size") && a.num("--expert-model-parallel-size", 1) > 1) {
    const long long ep = a.num("--expert-model-parallel-size", 1);
    fail(!a.has("--num-experts"), "num_experts must be non None to use expert model parallelism");
    fail(a.num("--num-experts", 1) % ep != 0, "Number of experts should be a multiple of ep");
    fail(a.has("--fp16"), "Expert parallelism is not supported with fp16 training");
  }
  // MoE rules of Megatron-LM main (megatron/core/transformer/transformer_config.py
  // __post_init__ and megatron/training/arguments.py validate_args).
  const long long ep = a.num("--expert-model-parallel-size", 1);
  const long long etp = a.num("--expert-tensor-parallel-size", tp);
  // parallel_state.initialize_model_parallel (MoE parallel folding): the expert
  // grid etp * ep * pp must tile the world.
  fail(a.has("--num-experts") && world % (etp * ep * pp) != 0, "world size not divisible by etp * ep * pp");
  // model_parallel_config.py: expert and tensor parallelism need sequence parallelism.
  fail(ep > 1 && tp > 1 && !a.has("--sequence-parallel"),
       "When using expert parallelism and tensor parallelism, sequence parallelism must be used");
  const std::string dispatcher =
      a.has("--moe-token-dispatcher-type") ? a.value("--moe-token-dispatcher-type") : "allgather";
  // transformer_config.py:719-721 at core_r0.13.0.
  fail(a.has("--moe-enable-deepep") && dispatcher != "flex",
       "DeepEP backend is only supported with flex token dispatcher");
  if (a.has("--moe-router-group-topk")) {
    fail(!a.has("--moe-router-num-groups"),
         "When using group limited routing, moe_router_num_groups must be specified");
    fail(a.num("--num-experts", 1) % a.num("--moe-router-num-groups", 1) != 0,
         "num_moe_experts should be divisible by moe_router_num_groups");
    fail(a.num("--moe-router-group-topk", 1) > a.num("--moe-router-num-groups", 1),
         "moe_router_group_topk should be smaller than moe_router_num_groups");
  }
  // Token dropping: transformer_config.py:723-727 and 743-755 at core_r0.13.0.
  fail(a.has("--moe-pad-expert-input-to-capacity") && dispatcher == "flex",
       "Flex token dispatcher does not support moe_pad_expert_input_to_capacity");
  fail(a.has("--moe-pad-expert-input-to-capacity") && !a.has("--moe-expert-capacity-factor"),
       "moe_expert_capacity_factor must be set to use moe_pad_expert_input_to_capacity");
  if (a.has("--moe-expert-capacity-factor")) {
    const std::string balancing =
        a.has("--moe-router-load-balancing-type") ? a.value("--moe-router-load-balancing-type") : "aux_loss";
    fail(balancing != "aux_loss" && balancing != "seq_aux_loss" && balancing != "none",
         "moe_expert_capacity_factor only works with aux_loss or none load balancing");
  }
  // validate_args: "Group query attention is mutually exclusive with multi latent attention."
  fail(a.has("--multi-latent-attention") && a.has("--group-query-attention"),
       "Group query attention is mutually exclusive with multi latent attention");
  // Choices.
  auto choice = [&](const char* flag, std::set<std::string> ok) {
    if (a.has(flag)) fail(!ok.count(a.value(flag)), std::string("invalid choice for ") + flag);
  };
  choice("--position-embedding-type", {"learned_absolute", "rope", "mrope", "relative", "none"});
  choice("--normalization", {"LayerNorm", "RMSNorm"});
  choice("--attention-backend", {"flash", "fused", "unfused", "local", "auto"});
  choice("--optimizer", {"adam", "sgd", "muon", "dist_muon"});
  choice("--recompute-granularity", {"full", "selective"});
  choice("--moe-token-dispatcher-type", {"allgather", "alltoall", "flex"});
  choice("--fp8-recipe", {"tensorwise", "delayed", "mxfp8", "blockwise"});
  choice("--ckpt-format", {"torch", "torch_dist", "zarr", "torch_dcp"});
  choice("--moe-router-score-function", {"softmax", "sigmoid", "sqrtsoftplus"});
  choice("--moe-router-load-balancing-type",
         {"aux_loss", "seq_aux_loss", "global_aux_loss", "sinkhorn", "quantile_balancing", "none"});
  choice("--data-parallel-sharding-strategy", {"no_shard", "optim", "optim_grads", "optim_grads_params"});
  choice("--tokenizer-type",
         {"BertWordPieceLowerCase", "BertWordPieceCase", "GPT2BPETokenizer", "SentencePieceTokenizer",
          "GPTSentencePieceTokenizer", "HuggingFaceTokenizer", "Llama2Tokenizer", "TikTokenizer",
          "MultimodalTokenizer", "NullTokenizer", "NullMultimodalTokenizer", "SFTTokenizer"});
  return errors;
}

// ------------------------------------------------------------ DeepSpeed ----

// Fields of DeepSpeedZeroConfig (deepspeed/runtime/zero/config.py,
// deepspeedai/DeepSpeed master) and their stage3_* aliases. The model forbids
// any other key.
inline const std::set<std::string>& deepspeed_zero_keys() {
  static const std::set<std::string> keys = {"stage",
                                             "contiguous_gradients",
                                             "reduce_scatter",
                                             "reduce_bucket_size",
                                             "use_multi_rank_bucket_allreduce",
                                             "allgather_partitions",
                                             "allgather_bucket_size",
                                             "overlap_comm",
                                             "load_from_fp32_weights",
                                             "elastic_checkpoint",
                                             "offload_param",
                                             "offload_optimizer",
                                             "zenflow",
                                             "sub_group_size",
                                             "cpu_offload_param",
                                             "cpu_offload_use_pin_memory",
                                             "cpu_offload",
                                             "prefetch_bucket_size",
                                             "stage3_prefetch_bucket_size",
                                             "param_persistence_threshold",
                                             "stage3_param_persistence_threshold",
                                             "model_persistence_threshold",
                                             "stage3_model_persistence_threshold",
                                             "max_live_parameters",
                                             "stage3_max_live_parameters",
                                             "max_reuse_distance",
                                             "stage3_max_reuse_distance",
                                             "gather_16bit_weights_on_model_save",
                                             "stage3_gather_16bit_weights_on_model_save",
                                             "module_granularity_threshold",
                                             "stage3_module_granularity_threshold",
                                             "use_all_reduce_for_fetch_params",
                                             "stage3_use_all_reduce_for_fetch_params",
                                             "allgather_sequential",
                                             "stage3_allgather_sequential",
                                             "partition_stream_chunk_size",
                                             "stage3_partition_stream_chunk_size",
                                             "stage3_gather_fp16_weights_on_model_save",
                                             "ignore_unused_parameters",
                                             "legacy_stage1",
                                             "round_robin_gradients",
                                             "zero_hpz_partition_size",
                                             "zero_quantized_weights",
                                             "zero_quantized_nontrainable_weights",
                                             "zero_quantized_gradients",
                                             "zeropp_loco_param",
                                             "mics_shard_size",
                                             "mics_hierarchical_params_gather",
                                             "memory_efficient_linear",
                                             "pipeline_loading_checkpoint",
                                             "override_module_apply",
                                             "log_trace_cache_warnings",
                                             "enable_sanity_checks",
                                             "save_muon_momentum_buffer_in_memory",
                                             "leaf_module"};
  return keys;
}

// Flags of megatron/arguments.py (deepspeedai/Megatron-DeepSpeed) plus the two
// deepspeed.add_config_arguments adds, that a parplan launch may pass.
inline const std::set<std::string>& megatron_deepspeed_known_flags() {
  static const std::set<std::string> flags = {
      "--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads", "--num-key-value-heads",
      "--kv-channels", "--seq-length", "--max-position-embeddings", "--use-rotary-position-embeddings",
      "--normalization", "--swiglu", "--disable-bias-linear", "--untie-embeddings-and-output-weights",
      "--rotary-position-embeddings-theta", "--rotary-percent", "--layernorm-epsilon", "--openai-gelu",
      "--attention-dropout", "--hidden-dropout", "--weight-decay", "--adam-beta1", "--adam-beta2",
      "--adam-eps", "--tensor-model-parallel-size", "--pipeline-model-parallel-size",
      "--no-pipeline-parallel", "--sequence-parallel", "--micro-batch-size", "--global-batch-size",
      "--recompute-granularity", "--checkpoint-activations", "--checkpoint-num-layers",
      "--deepspeed-activation-checkpointing", "--partition-activations", "--bf16", "--fp16",
      "--use-flash-attn-v2", "--optimizer", "--zero-stage", "--deepspeed", "--deepspeed_config",
      "--train-iters", "--lr", "--min-lr", "--lr-decay-style", "--lr-warmup-iters", "--tokenizer-type",
      "--tokenizer-model", "--data-path", "--split", "--log-interval", "--eval-interval", "--eval-iters",
      "--save", "--load", "--save-interval",
      // megatron/arguments.py:892 at 4efb479
      "--exit-duration-in-mins"};
  return flags;
}

// ------------------------------------------------------------ torchtitan ----

/// A flat view of our TOML: "section.key" -> raw value text.
inline std::map<std::string, std::string> parse_toml(const std::string& text) {
  std::map<std::string, std::string> out;
  std::string section;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
      continue;
    }
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    std::string value = line.substr(eq + 3);
    if (value.size() >= 2 && value.front() == '"') value = value.substr(1, value.size() - 2);
    out[section + "." + line.substr(0, eq)] = value;
  }
  return out;
}

// JobConfig fields (torchtitan/config/job_config.py, the TOML-era JobConfig
// with Model.hf_assets_path) that parplan may write.
inline const std::set<std::string>& torchtitan_known_keys() {
  static const std::set<std::string> keys = {
      "job.dump_folder",
      "job.description",
      "model.name",
      "model.flavor",
      "model.converters",
      "optimizer.name",
      "optimizer.lr",
      "lr_scheduler.warmup_steps",
      "training.local_batch_size",
      "training.global_batch_size",
      "training.seq_len",
      "training.steps",
      "training.mixed_precision_param",
      "parallelism.data_parallel_replicate_degree",
      "parallelism.data_parallel_shard_degree",
      "parallelism.fsdp_reshard_after_forward",
      "parallelism.tensor_parallel_degree",
      "parallelism.pipeline_parallel_degree",
      "parallelism.pipeline_parallel_schedule",
      "parallelism.pipeline_parallel_microbatch_size",
      "parallelism.pipeline_parallel_first_stage_less_layers",
      "parallelism.pipeline_parallel_last_stage_less_layers",
      "parallelism.context_parallel_degree",
      "parallelism.enable_async_tensor_parallel",
      "parallelism.expert_parallel_degree",
      "parallelism.expert_tensor_parallel_degree",
      "compile.enable",
      "compile.components",
      "activation_checkpoint.mode",
      "activation_checkpoint.selective_ac_option",
      "quantize.linear.float8.filter_fqns",
      "quantize.linear.float8.enable_fsdp_float8_all_gather",
      "quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp"};
  return keys;
}

}  // namespace parplan::emit_test
