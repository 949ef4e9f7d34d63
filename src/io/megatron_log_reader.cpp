#include "src/io/megatron_log_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

#include "cost/step_cost.h"
#include "src/io/input_error.h"
#include "src/io/log_lines.h"
#include "src/io/measured_figure.h"
#include "src/io/megatron_iteration_lines.h"
#include "src/io/printable_text.h"
#include "src/io/run_file_reader.h"

namespace parplan {

namespace {
/// An argument's printed value and the log line it is on (for messages).
struct PrintedArg {
  std::string text;
  int line = 0;
};
/// The arguments block, and the log it came from, so every read names the
/// file, the line and the argument.
struct Args {
  std::map<std::string, PrintedArg> values;
  std::string origin;
  const PrintedArg* find(const std::string& key) const {
    const auto it = values.find(key);
    return it == values.end() || it->second.text == "None" ? nullptr : &it->second;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    const auto it = values.find(key);
    throw InputError(origin + ": line " + std::to_string(it->second.line) + ": argument '" + key + "' " +
                     what + " (got '" + it->second.text + "')");
  }
};

/// Arguments a restarted run may print differently without being another
/// run (how long it trains, where it checkpoints).
bool restart_may_change(const std::string& key) {
  static const char* const kKeys[] = {
      "train_iters",           "train_samples",  "load",     "save",          "exit_interval",
      "exit_duration_in_mins", "wandb_exp_name", "finetune", "no_load_optim", "no_load_rng"};
  for (const char* k : kKeys)
    if (key == k) return true;
  return false;
}

/// `  name ........ value` lines between the arguments banners (Megatron's
/// _print_args). A log may hold several blocks: a run that restarted (from
/// a checkpoint, or the same launch again) prints them again, the same; a
/// block that differs in anything but `restart_may_change` is another run,
/// refused. `blocks` gets each block's first line (warm-up restarts there).
Args parse_arguments(const std::string& text, const std::string& origin, std::vector<int>& blocks) {
  Args args;
  args.origin = origin;
  std::map<std::string, PrintedArg> block;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  int number = 0;
  static const std::regex kArg(R"(^\s*([A-Za-z_][A-Za-z0-9_]*) \.+ (.*?)\s*$)");
  const auto close_block = [&] {
    inside = false;
    if (blocks.size() == 1) {
      args.values = std::move(block);
    } else {
      for (const auto& [key, arg] : block) {
        const auto first = args.values.find(key);
        const std::string before = first == args.values.end() ? "(absent)" : first->second.text;
        if (before != arg.text && !restart_may_change(key))
          throw InputError(origin + ": line " + std::to_string(arg.line) +
                           ": a second arguments block gives '" + key + "' " + arg.text +
                           " where the first gave " + before +
                           ": the log holds two runs; give each run its own log");
      }
    }
    block.clear();
  };
  std::optional<PrintedArg> padded_vocab;
  while (std::getline(in, line)) {
    ++number;
    // The padded vocabulary is set by the tokenizer after the arguments are
    // printed: " > padded vocab (size: V) with K dummy tokens (new size: N)"
    // (Megatron-LM core/tokenizers/utils/build_tokenizer.py, Megatron-DeepSpeed
    // megatron/tokenizer/tokenizer.py); the block has it only for a run that
    // loaded its arguments from a checkpoint.
    if (const auto at = line.find(" > padded vocab (size: "); at != std::string::npos && !padded_vocab) {
      const auto size_at = line.find("(new size: ", at);
      const auto end = size_at == std::string::npos ? size_at : line.find(')', size_at);
      if (end != std::string::npos)
        padded_vocab = PrintedArg{line.substr(size_at + 11, end - size_at - 11), number};
    }
    if (line.find("------------------------ arguments ------------------------") != std::string::npos) {
      if (inside) close_block();
      inside = true;
      blocks.push_back(number);
      continue;
    }
    if (inside && line.find("end of arguments") != std::string::npos) {
      close_block();
      continue;
    }
    std::smatch m;
    if (!inside || line.size() > kMaxMatchedLogLine || !std::regex_match(line, m, kArg)) continue;
    // _print_args prints each argument once: a second, different value is
    // an edited or spliced log, and which one ran is unknown.
    const auto [it, added] = block.emplace(m[1], PrintedArg{m[2], number});
    if (!added && it->second.text != m[2])
      throw InputError(origin + ": line " + std::to_string(number) + ": argument '" + m[1].str() +
                       "' is listed twice ('" + it->second.text + "' on line " +
                       std::to_string(it->second.line) + ", '" + m[2].str() +
                       "' here); give the log as Megatron wrote it");
  }
  if (inside) close_block();
  if (padded_vocab && !args.values.count("padded_vocab_size"))
    args.values["padded_vocab_size"] = *padded_vocab;
  return args;
}

const std::string& need(const Args& args, const std::string& key) {
  const PrintedArg* arg = args.find(key);
  if (arg == nullptr)
    throw InputError(args.origin + ": the arguments block has no '" + key +
                     "'; log the full Megatron arguments");
  return arg->text;
}
/// Megatron prints its integer arguments as Python ints: the whole token is
/// read, never a prefix of it ("4e3" is not 4).
int whole_number(const Args& args, const std::string& key) {
  const std::optional<int> v = parse_printed_int(need(args, key));
  if (!v) args.fail(key, "must be a whole number as Megatron prints one");
  return *v;
}
int need_int(const Args& args, const std::string& key, const std::string& /*origin*/) {
  return whole_number(args, key);
}
int int_or(const Args& args, const std::string& key, int fallback) {
  return args.find(key) == nullptr ? fallback : whole_number(args, key);
}
bool flag(const Args& args, const std::string& key) {
  const PrintedArg* arg = args.find(key);
  return arg != nullptr && arg->text == "True";
}
std::string text_or(const Args& args, const std::string& key, const std::string& fallback) {
  const PrintedArg* arg = args.find(key);
  return arg == nullptr ? fallback : arg->text;
}

double number_or(const Args& args, const std::string& key, double fallback, const std::string& /*origin*/) {
  if (args.find(key) == nullptr) return fallback;
  const std::optional<double> v = parse_printed_number(need(args, key));
  if (!v) args.fail(key, "must be a number");
  return *v;
}

/// The model's moe: block from Megatron's MoE arguments (arguments.py
/// --num-experts, --moe-router-topk, --moe-ffn-hidden-size,
/// --moe-shared-expert-intermediate-size, --moe-layer-freq: an int N (every
/// N-th layer) or a per-layer list of 0/1 whose leading zeros are dense
/// layers).
YAML::Node moe_node(const Args& args, const std::string& origin, int layers) {
  YAML::Node moe;
  const int experts = need_int(args, "num_experts", origin);
  moe["experts"] = experts;
  moe["top_k"] = need_int(args, "moe_router_topk", origin);
  const int expert_ffn = int_or(args, "moe_ffn_hidden_size", need_int(args, "ffn_hidden_size", origin));
  moe["expert_ffn_hidden"] = expert_ffn;
  const int shared_width = int_or(args, "moe_shared_expert_intermediate_size", 0);
  if (shared_width > 0 && expert_ffn > 0 && shared_width % expert_ffn != 0)
    throw InputError(origin + ": moe_shared_expert_intermediate_size (" + std::to_string(shared_width) +
                     ") must be a whole number of experts of moe_ffn_hidden_size (" +
                     std::to_string(expert_ffn) + ")");
  moe["shared_experts"] = expert_ffn > 0 ? shared_width / expert_ffn : 0;
  const std::string freq = text_or(args, "moe_layer_freq", "1");
  if (!freq.empty() && freq.front() == '[') {
    // Leading zeros then ones only: the first dense layers, every later one MoE.
    int dense = 0, count = 0;
    bool seen_moe = false;
    for (char c : freq) {
      if (c != '0' && c != '1') continue;
      ++count;
      if (c == '1')
        seen_moe = true;
      else if (seen_moe)
        throw InputError(origin + ": moe_layer_freq " + freq +
                         " puts a dense layer after an MoE one; only leading dense layers are read");
      else
        ++dense;
    }
    if (count != layers)
      throw InputError(origin + ": moe_layer_freq lists " + std::to_string(count) +
                       " layers for num_layers " + std::to_string(layers));
    moe["moe_layer_freq"] = 1;
    moe["first_dense_layers"] = dense;
  } else {
    moe["moe_layer_freq"] = int_or(args, "moe_layer_freq", 1);
    moe["first_dense_layers"] = 0;
  }
  return moe;
}

/// Megatron-DeepSpeed prints its own names for what Megatron-LM calls
/// otherwise (its megatron/arguments.py @ 4efb479): --num-experts (nargs '+',
/// printed as a list), --topk, --moe-expert-parallel-size,
/// --enable-expert-tensor-parallelism (experts split over tp),
/// --expert-interval, and --checkpoint-activations for full recomputation of
/// every layer (granularity left None). Renamed in place so one reader reads
/// both engines' logs.
void as_megatron_lm_names(Args& args) {
  const auto rename = [&](const char* from, const char* to) {
    const auto it = args.values.find(from);
    if (it == args.values.end() || args.values.count(to)) return;
    args.values[to] = it->second;
  };
  if (const auto it = args.values.find("num_experts"); it != args.values.end()) {
    std::string& text = it->second.text;
    if (!text.empty() && text.front() == '[') {
      if (text.find(',') != std::string::npos)
        args.fail("num_experts",
                  "lists expert counts per layer group; parplan reads one count for every layer");
      text = text.substr(1, text.size() - 2);
      if (text == "1") text = "None";  // the default [1]: a dense model
    }
  }
  // Grouped-query attention and RoPE under Megatron-DeepSpeed's names
  // (arguments.py --num-key-value-heads, printed as the head count when not
  // given; --use-rotary-position-embeddings).
  if (const PrintedArg* kv = args.find("num_key_value_heads"); kv != nullptr && kv->text != "None") {
    rename("num_key_value_heads", "num_query_groups");
    if (!args.values.count("group_query_attention"))
      args.values["group_query_attention"] = PrintedArg{"True", 0};
  }
  if (flag(args, "use_rotary_position_embeddings") && !args.values.count("position_embedding_type"))
    args.values["position_embedding_type"] =
        PrintedArg{"rope", args.values["use_rotary_position_embeddings"].line};
  // --zero-stage is type=int with default=1.0 (arguments.py), printed 1.0
  // when not given.
  if (const auto it = args.values.find("zero_stage"); it != args.values.end() && it->second.text == "1.0")
    it->second.text = "1";
  rename("topk", "moe_router_topk");
  rename("moe_expert_parallel_size", "expert_model_parallel_size");
  rename("expert_interval", "moe_layer_freq");
  if (!args.values.count("expert_tensor_parallel_size") && args.values.count("num_experts")) {
    const PrintedArg* tp = args.find("tensor_model_parallel_size");
    args.values["expert_tensor_parallel_size"] =
        PrintedArg{flag(args, "enable_expert_tensor_parallelism") && tp != nullptr ? tp->text : "1", 0};
  }
  // DeepSpeed-MoE pads every expert to --moe-train-capacity-factor unless
  // --disable-moe-token-dropping (deepspeed/moe/sharded_moe.py).
  if (args.find("num_experts") != nullptr && args.find("moe_train_capacity_factor") != nullptr &&
      !args.values.count("moe_expert_capacity_factor") && !flag(args, "disable_moe_token_dropping")) {
    rename("moe_train_capacity_factor", "moe_expert_capacity_factor");
    args.values["moe_pad_expert_input_to_capacity"] = PrintedArg{"True", 0};
  }
  if (flag(args, "checkpoint_activations") && args.find("recompute_granularity") == nullptr) {
    args.values["recompute_granularity"] = PrintedArg{"full", args.values["checkpoint_activations"].line};
    args.values["recompute_method"] = PrintedArg{"uniform", args.values["checkpoint_activations"].line};
  }
}

/// The run as a YAML mapping (so one reader checks every run).
YAML::Node run_node(const Args& args, const std::string& origin, double step_s) {
  YAML::Node model;
  model["source"] = utf8_or_replacement(origin) + " (Megatron arguments)";
  model["layers"] = need_int(args, "num_layers", origin);
  model["hidden"] = need_int(args, "hidden_size", origin);
  model["ffn_hidden"] = need_int(args, "ffn_hidden_size", origin);
  const int heads = need_int(args, "num_attention_heads", origin);
  model["heads"] = heads;
  model["kv_groups"] = flag(args, "group_query_attention") ? int_or(args, "num_query_groups", heads) : heads;
  // heads < 1 is refused by the model reader (with the field named); no division by it here.
  const int hidden = need_int(args, "hidden_size", origin);
  model["head_dim"] = int_or(args, "kv_channels", heads > 0 ? hidden / heads : 0);
  model["vocab"] = int_or(args, "padded_vocab_size", 0) > 0 ? int_or(args, "padded_vocab_size", 0)
                                                            : need_int(args, "padded_vocab_size", origin);
  model["max_positions"] = int_or(args, "max_position_embeddings", need_int(args, "seq_length", origin));
  model["gated_ffn"] = flag(args, "swiglu");
  model["linear_bias"] =
      !flag(args, "disable_bias_linear") && text_or(args, "add_bias_linear", "True") == "True";
  // Megatron-LM prints RMSNorm, Megatron-DeepSpeed rmsnorm.
  const std::string norm = text_or(args, "normalization", "LayerNorm");
  model["norm"] = norm == "RMSNorm" || norm == "rmsnorm" ? "rmsnorm" : "layernorm";
  model["position"] =
      text_or(args, "position_embedding_type", "learned_absolute") == "rope" ? "rope" : "learned";
  model["tied_embeddings"] = !flag(args, "untie_embeddings_and_output_weights");
  model["qk_norm"] = flag(args, "qk_layernorm");
  // The attention dropout (it costs time inside the fused attention kernel);
  // Megatron's defaults are 0.1 for both (arguments.py --attention-dropout,
  // --hidden-dropout).
  for (const char* key : {"attention_dropout", "hidden_dropout"}) {
    const double p = number_or(args, key, 0.1, origin);
    if (p < 0 || p > 1) args.fail(key, "must lie in [0, 1]");
  }
  model["dropout"] =
      number_or(args, "attention_dropout", number_or(args, "hidden_dropout", 0.1, origin), origin);
  const int experts = int_or(args, "num_experts", 0);
  if (experts > 0) model["moe"] = moe_node(args, origin, need_int(args, "num_layers", origin));
  YAML::Node models;
  models["megatron-log"] = model;

  YAML::Node config;
  config["tp"] = int_or(args, "tensor_model_parallel_size", 1);
  config["pp"] = int_or(args, "pipeline_model_parallel_size", 1);
  config["cp"] = int_or(args, "context_parallel_size", 1);
  config["vp"] = int_or(args, "virtual_pipeline_model_parallel_size", 1);
  // An uneven split (--decoder-first/last-pipeline-num-layers; None: even).
  for (const auto& [arg, key] : {std::pair{"decoder_first_pipeline_num_layers", "first_stage_layers"},
                                 std::pair{"decoder_last_pipeline_num_layers", "last_stage_layers"}})
    if (const int layers = int_or(args, arg, 0); layers > 0) config[key] = layers;
  config["mbs"] = need_int(args, "micro_batch_size", origin);
  config["sp"] = flag(args, "sequence_parallel");
  // Megatron FSDP (--use-custom-fsdp up to core_r0.13, --use-megatron-fsdp
  // after) shards by --data-parallel-sharding-strategy.
  // Megatron-DeepSpeed shards through DeepSpeed's --zero-stage instead.
  const bool deepspeed = flag(args, "deepspeed");
  int zero = deepspeed ? int_or(args, "zero_stage", 0) : flag(args, "use_distributed_optimizer") ? 1 : 0;
  if (flag(args, "use_megatron_fsdp") || flag(args, "use_custom_fsdp")) {
    const std::string strategy = text_or(args, "data_parallel_sharding_strategy", "no_shard");
    zero = strategy == "optim_grads_params" ? 3
           : strategy == "optim_grads"      ? 2
           : strategy == "optim"            ? 1
                                            : zero;
  }
  config["zero"] = zero;
  const std::string granularity = text_or(args, "recompute_granularity", "none");
  config["recompute"] = granularity == "full" ? "full" : granularity == "selective" ? "selective" : "none";
  // --recompute-method uniform recomputes every layer (recompute_num_layers
  // is then the layers per checkpointed group); block recomputes the first
  // recompute_num_layers of each chunk (transformer_block.py
  // _checkpointed_forward). A log without the method keeps the count.
  if (granularity == "full")
    config["recompute_layers"] =
        text_or(args, "recompute_method", "block") == "uniform" ? 0 : int_or(args, "recompute_num_layers", 0);
  const std::string backend = text_or(args, "attention_backend", "");
  const bool unfused = deepspeed ? !flag(args, "use_flash_attn_v2") && !flag(args, "use_flash_attn")
                                 : backend.find("unfused") != std::string::npos;
  config["attention"] = unfused ? "unfused" : "flash";
  config["overlap_grad_reduce"] = flag(args, "overlap_grad_reduce");
  config["overlap_p2p"] = flag(args, "overlap_p2p_comm");
  if (experts > 0) {
    config["ep"] = int_or(args, "expert_model_parallel_size", 1);
    // Megatron sets expert_tensor_parallel_size to the tp size when unset.
    config["etp"] =
        int_or(args, "expert_tensor_parallel_size", int_or(args, "tensor_model_parallel_size", 1));
    config["a2a_hierarchical"] = text_or(args, "moe_token_dispatcher_type", "allgather") == "flex";
    config["ep_overlap"] = flag(args, "overlap_moe_expert_parallel_comm");
  }

  YAML::Node run;
  // A file name need not be UTF-8; the run's name is printed and written to JSON.
  run["name"] = utf8_or_replacement(origin);
  run["model"] = "megatron-log";
  run["gpus"] = need_int(args, "world_size", origin);
  run["gbs"] = need_int(args, "global_batch_size", origin);
  run["seq"] = need_int(args, "seq_length", origin);
  run["precision"] = flag(args, "fp16") ? "fp16" : (text_or(args, "fp8", "None") != "None" ? "fp8" : "bf16");
  run["config"] = config;
  run["step_s"] = step_s;
  // The log is the engine's: its recipe (gradient-reduction schedule,
  // attention kernel, ZeRO-3 shard unit) is how the run ran.
  run["engine"] = deepspeed ? "megatron-deepspeed" : "megatron";
  if (flag(args, "tp_comm_overlap")) run["tp_comm_overlap"] = true;
  // --recompute-modules prints as a Python list (None: core_attn).
  const std::string modules = text_or(args, "recompute_modules", "");
  if (!deepspeed && granularity == "selective" && !modules.empty()) {
    std::string names;
    for (const char ch : modules)
      if (ch != '[' && ch != ']' && ch != '\'' && ch != '"') names += ch;
    run["recompute_modules"] = names.find_first_not_of(", ") == std::string::npos ? "none" : names;
  }
  // The gradient dtype as validate_args left it (the printed arguments come
  // after it): fp32 main grads where accumulate_allreduce_grads_in_fp32 is
  // True, else the training dtype (--grad-reduce-in-bf16 under --bf16).
  // Megatron-DeepSpeed's is its ds_config's, not printed here.
  if (!deepspeed && args.values.count("accumulate_allreduce_grads_in_fp32")) {
    if (flag(args, "accumulate_allreduce_grads_in_fp32"))
      run["grad_reduce_dtype"] = "fp32";
    else if (run["precision"].as<std::string>() != "fp16")
      run["grad_reduce_dtype"] = "bf16";
  }
  if (flag(args, "cross_entropy_loss_fusion") && text_or(args, "cross_entropy_fusion_impl", "native") == "te")
    run["cross_entropy"] = "te";
  if (run["precision"].as<std::string>() == "fp8")
    run["fp8_recipe"] = text_or(args, "fp8_recipe", "delayed") == "tensorwise" ? "current" : "delayed";
  if (experts > 0) {
    const std::string factor = text_or(args, "moe_expert_capacity_factor", "None");
    if (factor != "None") {
      run["moe_capacity_factor"] = number_or(args, "moe_expert_capacity_factor", 0, origin);
      run["moe_pad_to_capacity"] = flag(args, "moe_pad_expert_input_to_capacity");
    }
  }
  YAML::Node holder;
  holder["models"] = models;
  holder["run"] = run;
  return holder;
}
}  // namespace

namespace {
/// DeepSpeed's ZeRO++ settings as a Megatron-DeepSpeed run prints them at
/// engine start: DeepSpeedConfig.print writes `  zero_config ..... stage=3
/// ... zero_hpz_partition_size=8 zero_quantized_weights=False ...` (the
/// pydantic DeepSpeedZeroConfig as `key=value` words; deepspeed/runtime/
/// config.py print, runtime/zero/config.py @ v0.17.0). A log without that
/// line ran stock ZeRO. The settings go onto the run's config, which is
/// checked again.
void apply_deepspeed_zero_config(const std::string& text, const std::string& origin, FitRun& run) {
  static const std::regex kZeroConfig(R"(\bzero_config \.+ (.*)$)");
  static const std::regex kHpz(R"(\bzero_hpz_partition_size=(\S+))");
  static const std::regex kQwz(R"(\bzero_quantized_weights=(\S+))");
  static const std::regex kQgz(R"(\bzero_quantized_gradients=(\S+))");
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::smatch m;
    if (line.size() > kMaxMatchedLogLine || !std::regex_search(line, m, kZeroConfig)) continue;
    const std::string where = origin + ": line " + std::to_string(number) + ": DeepSpeed's zero_config";
    const std::string words = m.str(1);
    std::smatch v;
    int hpz = 1;
    if (std::regex_search(words, v, kHpz)) {
      const std::optional<int> size = parse_printed_int(v.str(1));
      if (!size || *size < 1)
        throw InputError(where + ": zero_hpz_partition_size '" + v.str(1) +
                         "' is not a positive whole number; give the log as DeepSpeed wrote it");
      hpz = *size;
    }
    const auto boolean = [&](const std::regex& key) {
      return std::regex_search(words, v, key) && v.str(1) == "True";
    };
    const bool qwz = boolean(kQwz), qgz = boolean(kQgz);
    if (hpz == 1 && !qwz && !qgz) return;
    ParallelConfig& c = run.config;
    if (c.zero != 3)
      throw InputError(where + " sets ZeRO++ (hpZ, qwZ, qgZ), which runs ZeRO stage 3, but zero_stage is " +
                       std::to_string(c.zero) + "; give the log as DeepSpeed wrote it");
    const long long dp_ranks = static_cast<long long>(c.dp) * c.cp;
    if (hpz > 1 && (dp_ranks % hpz != 0 || hpz > dp_ranks))
      throw InputError(where + ": zero_hpz_partition_size " + std::to_string(hpz) +
                       " does not divide the data-parallel group of " + std::to_string(dp_ranks) + " ranks");
    c.hpz_ranks = hpz;
    c.qwz = qwz;
    c.qgz = qgz;
    if (const char* problem = config_problem(run.model, run.job, c))
      throw InputError(where + ": the cost model cannot express this config: " + problem);
    return;
  }
}
}  // namespace

bool looks_like_megatron_log(const std::string& text) {
  return text.find("elapsed time per iteration (ms)") != std::string::npos ||
         text.find("elapsed time per iteration (s)") != std::string::npos ||
         text.find("------------------------ arguments ------------------------") != std::string::npos;
}

FitRun parse_megatron_log(const std::string& log_text, const std::string& origin,
                          const ClusterSpec& cluster) {
  const std::string text = without_rank_prefixes(complete_lines(log_text));
  std::vector<int> blocks;
  Args args = parse_arguments(text, origin, blocks);
  if (args.values.empty())
    throw InputError(origin +
                     ": no Megatron arguments block ('---- arguments ----'); the log must start at launch");
  if (flag(args, "multi_latent_attention"))
    throw InputError(origin +
                     ": multi-latent attention runs are not read from Megatron logs yet; give a run file");
  const long long full_batch = need_int(args, "global_batch_size", origin);
  MegatronIterationLines lines =
      read_megatron_iteration_lines(text, origin, int_or(args, "log_interval", 1), full_batch, blocks);
  std::vector<double>& times_ms = lines.times_ms;
  if (times_ms.empty() && lines.ramp_up_windows > 0 && lines.unclean_windows == 0)
    throw InputError(origin + ": no iteration ran the full global batch of " + std::to_string(full_batch) +
                     " (batch-size ramp-up); run past the ramp-up");
  if (times_ms.empty() && lines.unclean_windows > 0)
    throw InputError(origin +
                     ": every logged window after the warm-up has skipped or NaN iterations "
                     "(a skipped iteration runs no optimizer step); run longer, past the "
                     "loss-scale search (--train-iters 50), or with --log-interval 1");
  if (times_ms.empty())
    throw InputError(origin + ": no 'elapsed time per iteration (ms)' or '(s)' lines after the first " +
                     std::to_string(kWarmupIterations) +
                     " (warm-up) iterations; run longer (--train-iters 30)");
  std::sort(times_ms.begin(), times_ms.end());
  const std::size_t n = times_ms.size();
  const double median_ms = n % 2 ? times_ms[n / 2] : 0.5 * (times_ms[n / 2 - 1] + times_ms[n / 2]);
  if (flag(args, "deepspeed")) as_megatron_lm_names(args);
  YAML::Node holder = run_node(args, origin, median_ms / 1000.0);
  if (lines.peak_reserved_mib > 0) holder["run"]["peak_memory_gib"] = lines.peak_reserved_mib / 1024.0;
  FitRun run = parse_run_node(holder["run"], holder["models"], cluster, origin, origin);
  if (flag(args, "deepspeed")) apply_deepspeed_zero_config(text, origin, run);
  // Megatron's recipe costs cuDNN attention (auto picks it on Hopper, fused
  // forces it); --attention-backend flash forces Transformer Engine's
  // FlashAttention.
  if (!flag(args, "deepspeed") && text_or(args, "attention_backend", "") == "AttnBackend.flash")
    run.job.attention_kernel = AttentionKernel::kFlash2;
  run.name = origin.substr(origin.find_last_of('/') + 1);
  return run;
}

FitRun read_megatron_log(const std::string& path, const ClusterSpec& cluster) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read the log");
  std::stringstream text;
  text << in.rdbuf();
  return parse_megatron_log(text.str(), path, cluster);
}

}  // namespace parplan
