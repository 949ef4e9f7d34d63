#include "src/io/torchtitan_log_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <vector>

#include "src/emit/emit.h"
#include "src/io/input_error.h"
#include "src/io/log_lines.h"
#include "src/io/measured_figure.h"
#include "src/io/megatron_log_reader.h"
#include "src/io/model_loader.h"
#include "src/io/printable_text.h"
#include "src/io/run_file_reader.h"
#include "src/io/torchtitan_python_config.h"

namespace parplan {

namespace {
namespace fs = std::filesystem;
/// "section.key" -> value (quotes removed), the TOML subset torchtitan's
/// train_configs use: [section] headers and one-line key = value pairs.
using Config = std::map<std::string, std::string>;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string unquote(std::string v) {
  v = trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    return v.substr(1, v.size() - 2);
  return v;
}

Config parse_toml(const std::string& text, const std::string& origin) {
  Config out;
  std::istringstream in(text);
  std::string line, section;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    // A '#' outside quotes starts a comment.
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '"') quoted = !quoted;
      if (line[i] == '#' && !quoted) {
        line.resize(i);
        break;
      }
    }
    line = trim(line);
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']')
        throw InputError(origin + ":" + std::to_string(number) + ": a TOML section header must end with ']'");
      section = trim(line.substr(1, line.size() - 2));
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      throw InputError(origin + ":" + std::to_string(number) + ": expected 'key = value' (torchtitan TOML)");
    out[section + "." + trim(line.substr(0, eq))] = unquote(line.substr(eq + 1));
  }
  return out;
}

/// `--section.key value` / `--section.key=value` flags (torchtitan's CLI
/// overrides) and torchrun's `--nnodes` / `--nproc_per_node`.
Config parse_flags(const std::string& text) {
  Config out;
  std::istringstream in(text);
  std::vector<std::string> tokens;
  for (std::string t; in >> t;)
    if (t != "\\") tokens.push_back(unquote(t));
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t.rfind("--", 0) != 0) continue;
    std::string key = t.substr(2);
    std::string value = "true";
    const auto eq = key.find('=');
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key.resize(eq);
    } else if (i + 1 < tokens.size() && tokens[i + 1].rfind("--", 0) != 0) {
      value = tokens[++i];
    }
    std::replace(key.begin(), key.end(), '-', '_');
    out[key] = value;
  }
  return out;
}

std::string get(const Config& c, const std::string& key, const std::string& fallback) {
  const auto it = c.find(key);
  return it == c.end() ? fallback : it->second;
}

// Whether any key starts with `prefix` ("compile.": the [compile] section).
bool has_section(const Config& c, const std::string& prefix) {
  const auto it = c.lower_bound(prefix);
  return it != c.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

int get_int(const Config& c, const std::string& key, int fallback, const std::string& origin) {
  const auto it = c.find(key);
  if (it == c.end()) return fallback;
  try {
    std::size_t used = 0;
    const int v = std::stoi(it->second, &used);
    if (used == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  throw InputError(origin + ": '" + key + "' must be a whole number (got '" + it->second + "')");
}

// torchtitan/models/llama3/__init__.py llama3_configs: dim, n_layers,
// n_heads, n_kv_heads and the FFN width that ffn_dim_multiplier and
// multiple_of give; vocabulary 128256 (the Llama 3 tokenizer).
struct Flavor {
  const char* name;
  int layers, hidden, heads, kv, ffn;
};
constexpr Flavor kLlama3Flavors[] = {
    {"8B", 32, 4096, 32, 8, 14336}, {"70B", 80, 8192, 64, 8, 28672}, {"405B", 126, 16384, 128, 8, 53248}};

YAML::Node model_node(const Config& c, const std::string& origin) {
  const std::string name = get(c, "model.name", "");
  const std::string flavor = get(c, "model.flavor", "");
  if (name != "llama3")
    throw InputError(
        origin + ": model.name '" + name +
        "' is not read from torchtitan configs (llama3 is); give a run file (docs/calibrate.md)");
  for (const Flavor& f : kLlama3Flavors) {
    if (flavor != f.name) continue;
    YAML::Node m;
    m["source"] = "torchtitan llama3 flavor " + flavor + " (torchtitan/models/llama3/__init__.py)";
    m["layers"] = f.layers;
    m["hidden"] = f.hidden;
    m["ffn_hidden"] = f.ffn;
    m["heads"] = f.heads;
    m["kv_groups"] = f.kv;
    m["head_dim"] = f.hidden / f.heads;
    m["vocab"] = 128256;
    m["max_positions"] = std::max(8192, get_int(c, "training.seq_len", 8192, origin));
    m["gated_ffn"] = true;
    m["linear_bias"] = false;
    // Older torchtitan (and forks) take model.norm_type; rmsnorm by default.
    m["norm"] =
        get(c, "model.norm_type", "rmsnorm").find("layernorm") != std::string::npos ? "layernorm" : "rmsnorm";
    m["position"] = "rope";
    m["tied_embeddings"] = false;
    // torchtitan's Llama has no dropout (models/llama3/model: SDPA with
    // dropout_p 0); the catalog's default (0.1, GPT's) would price one.
    m["dropout"] = 0.0;
    return m;
  }
  throw InputError(origin + ": llama3 flavor '" + flavor + "' is not known (8B, 70B, 405B); give a run file");
}

int world_size(const Config& c, const std::string& log_text, const std::string& origin) {
  const int nodes = get_int(c, "nnodes", 0, origin);
  const int per_node = get_int(c, "nproc_per_node", 0, origin);
  if (nodes > 0 && per_node > 0) return nodes * per_node;
  // torchtitan/distributed/parallel_dims.py: "Building N-D device mesh with
  // [names], [sizes]".
  static const std::regex kMesh(R"(device mesh with \[[^\]]*\], \[([0-9, ]+)\])");
  std::smatch m;
  std::istringstream log_lines(log_text);
  std::string line;
  bool found = false;
  while (!found && std::getline(log_lines, line))
    found = line.size() <= kMaxMatchedLogLine && line.find("device mesh with") != std::string::npos &&
            std::regex_search(line, m, kMesh);
  if (found) {
    std::istringstream sizes(m[1].str());
    long long world = 1;
    for (std::string s; std::getline(sizes, s, ',');) {
      const std::optional<int> size = parse_printed_int(trim(s));
      if (!size || *size < 1)
        throw InputError(origin + ": the device mesh sizes [" + m[1].str() +
                         "] are not positive whole numbers; give the log as torchtitan wrote it");
      // Capped so the product cannot overflow; a world this large is refused below.
      world = std::min(world * *size, 1LL << 30);
    }
    if (world > 0 && world < (1LL << 30)) return static_cast<int>(world);
  }
  const int shard = get_int(c, "parallelism.data_parallel_shard_degree", -1, origin);
  if (shard > 0)
    return shard * get_int(c, "parallelism.data_parallel_replicate_degree", 1, origin) *
           get_int(c, "parallelism.tensor_parallel_degree", 1, origin) *
           get_int(c, "parallelism.pipeline_parallel_degree", 1, origin) *
           get_int(c, "parallelism.context_parallel_degree", 1, origin);
  throw InputError(origin +
                   ": the world size is not known: give --nnodes and --nproc_per_node in the .flags file, "
                   "or data_parallel_shard_degree in the job file");
}

struct Metrics {
  std::vector<double> tps;
  double peak_gib = 0;
};

/// torchtitan's tps is `round(tps):,` (an int with thousands commas); the
/// whole token is read, never a prefix of it ("1e4" is not 1).
std::optional<double> printed_tps(std::string token) {
  static const std::regex kGrouped(R"(\d{1,3}(,\d{3})*|\d+)");
  if (token.size() > 32 || !std::regex_match(token, kGrouped)) return std::nullopt;
  token.erase(std::remove(token.begin(), token.end(), ','), token.end());
  return parse_printed_number(token);
}

Metrics read_metrics(const std::string& text, const std::string& origin) {
  static const std::regex kAnsi("\x1b\\[[0-9;]*m");
  static const std::regex kStep(R"(step:\s*(\d+)\s+loss:)");
  static const std::regex kMemory(R"(memory:\s*(\S*?)GiB)");
  static const std::regex kTps(R"(\btps:\s*(\S*))");
  Metrics out;
  std::istringstream in(text);
  std::string line;
  // A launch: the steps since the process started (a run resumed from a
  // checkpoint starts again, with its own warm-up, after a new device-mesh
  // line or at a step no later than the last one logged).
  long long launch_base = 0, previous_step = 0;
  bool launch_logged = false, any_logged = false;
  std::optional<std::string> chosen_rank;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.size() > kMaxMatchedLogLine) continue;  // not a metrics line
    line = std::regex_replace(line, kAnsi, "");
    // srun --label's task number, then torchrun's `[rankN]:` prefix: every
    // rank logs its own metrics, and a log may hold several ranks' lines,
    // one after another or interleaved; the first rank's are read.
    const std::size_t label = srun_label_length(line);
    const std::string rank =
        line.substr(0, label) +
        (line.compare(label, 5, "[rank") == 0 ? line.substr(label, line.find(']', label) + 1 - label) : "");
    // Validation metrics (torchtitan's log_validation: "validate step: N
    // loss: ... tps: ...", at step 1 and every freq steps) are not a
    // training step.
    if (line.find("validate step:") != std::string::npos) continue;
    if (chosen_rank && rank != *chosen_rank) continue;
    if (line.find("device mesh with") != std::string::npos) {
      launch_logged = false;
      continue;
    }
    std::smatch step, tps;
    if (!std::regex_search(line, step, kStep) || !std::regex_search(line, tps, kTps)) continue;
    chosen_rank = rank;
    const auto bad = [&](const std::string& what) {
      return InputError(origin + ": line " + std::to_string(number) + ": " + what +
                        "; give the log as torchtitan wrote it");
    };
    // A step number beyond long long saturates (it is past the warm-up either way).
    const long long at = std::strtoll(step.str(1).c_str(), nullptr, 10);
    // Step 1 again is a second run from the start, not a resumed one.
    if (any_logged && at == 1)
      throw InputError(origin + ": line " + std::to_string(number) + ": step 1 again after step " +
                       std::to_string(previous_step) + ": the log holds two runs; give each run its own log");
    if (launch_logged && at <= previous_step) launch_logged = false;
    if (!launch_logged) launch_base = at - 1, launch_logged = true, previous_step = at - 1;
    any_logged = true;
    // tps is averaged over the steps since the last metrics line: skip
    // windows that reach into the launch's warm-up steps (the first
    // window of a launch counts from its first step logged, at least).
    const bool warm = previous_step - launch_base >= kWarmupIterations;
    previous_step = at;
    if (!warm) continue;
    const std::optional<double> rate = printed_tps(tps.str(1));
    if (!rate || *rate <= 0) throw bad("tps '" + tps.str(1) + "' is not a positive whole number of tokens/s");
    if (*rate > kMaxTokensPerSecondPerGpu) {
      char ceiling[32];
      std::snprintf(ceiling, sizeof ceiling, "%g", kMaxTokensPerSecondPerGpu);
      throw bad("tps " + tps.str(1) + " is above " + ceiling +
                " tokens/s of one GPU, no plausible figure (docs/calibrate.md, \"Measured figures\")");
    }
    out.tps.push_back(*rate);
    std::smatch memory;
    if (std::regex_search(line, memory, kMemory)) {
      const std::optional<double> gib = parse_printed_number(memory.str(1));
      if (!gib || *gib < 0) throw bad("memory '" + memory.str(1) + "GiB' is not a number of GiB");
      out.peak_gib = std::max(out.peak_gib, *gib);
    }
  }
  return out;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in)
    throw InputError(path.string() + ": cannot be read (" + std::strerror(errno) +
                     "); check its permissions");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

bool looks_like_torchtitan_log(const std::string& text) {
  static const std::regex kLine(R"(step:\s*\d+\s+loss:.*tps:)");
  std::istringstream in(text);
  std::string line;
  static const std::regex kAnsi("\x1b\\[[0-9;]*m");
  while (std::getline(in, line))
    if (line.size() <= kMaxMatchedLogLine && line.find("tps:") != std::string::npos &&
        std::regex_search(std::regex_replace(line, kAnsi, ""), kLine))
      return true;
  return false;
}

// torchtitan's Float8 linears as the job file turns them on: the converter
// "float8" (until pytorch/torchtitan#1763, 2025-09-30: [float8] section,
// Float8 tensor parallelism with tensorwise scaling), "quantize.linear.float8"
// (v0.2.x TOML: [quantize.linear.float8]; its llama3 parallelize looks for
// "float8", models/llama3/infra/parallelize.py:77 @ v0.2.2, so the tp
// all-gathers stay 16-bit), the 2024 switch float8.enable_float8_linear, or
// or a Python config's Float8LinearConverter (main applies Float8 tensor
// parallelism with tensorwise scaling: find_float8_linear_config).
// parplan prices tensorwise scaling only: rowwise recipes are refused.
namespace {
struct Float8Linears {
  bool on = false;
  bool tp_gathers_fp8 = false;
  bool fsdp_fp8_all_gather = false;
};

Float8Linears read_float8(const Config& c, const std::string& origin) {
  Float8Linears f;
  std::string list = get(c, "model.converters", "");
  for (char& ch : list)
    if (ch == '[' || ch == ']' || ch == '"' || ch == '\'' || ch == ',') ch = ' ';
  std::istringstream names(list);
  bool renamed = false;
  for (std::string name; names >> name;) {
    if (name == "float8") f.on = f.tp_gathers_fp8 = true;
    if (name == "quantize.linear.float8") f.on = renamed = true;
  }
  if (get(c, "float8.enable_float8_linear", "false") == "true") f.on = f.tp_gathers_fp8 = true;
  if (!f.on) return f;
  if (renamed) f.tp_gathers_fp8 = false;
  for (const char* section : {"float8.", "quantize.linear.float8."}) {
    const std::string recipe = get(c, std::string(section) + "recipe_name", "");
    if (!recipe.empty() && recipe != "tensorwise")
      throw InputError(
          origin + ": Float8 recipe_name '" + recipe +
          "': parplan prices tensorwise Float8 only (rowwise scaling is not modelled); calibrate "
          "on bf16 or tensorwise Float8 runs");
    if (get(c, std::string(section) + "enable_fsdp_float8_all_gather", "false") == "true")
      f.fsdp_fp8_all_gather = true;
  }
  return f;
}
}  // namespace

FitRun parse_torchtitan_log(const std::string& log_text, const std::string& job_text,
                            const std::string& flags_text, const std::string& origin,
                            const ClusterSpec& cluster, TorchtitanJobFormat format,
                            const std::string& job_origin) {
  const bool python = format == TorchtitanJobFormat::kPython;
  const std::string job_name = job_origin.empty() ? origin + " (job file)" : job_origin;
  Config c = python ? parse_torchtitan_python_config(job_text, job_name) : parse_toml(job_text, job_name);
  for (const auto& [k, v] : parse_flags(flags_text)) c[k] = v;

  const Metrics metrics = read_metrics(complete_lines(log_text), origin);
  if (metrics.tps.empty())
    throw InputError(origin +
                     ": no torchtitan metrics lines ('step: N  loss: ...  tps: ...') after the first " +
                     std::to_string(kWarmupIterations) +
                     " (warm-up) steps; run longer or log more often (--metrics.log_freq)");
  std::vector<double> tps = metrics.tps;
  std::sort(tps.begin(), tps.end());
  const std::size_t n = tps.size();
  const double median_tps = n % 2 ? tps[n / 2] : 0.5 * (tps[n / 2 - 1] + tps[n / 2]);

  const int world = world_size(c, log_text, origin);
  const int tp = get_int(c, "parallelism.tensor_parallel_degree", 1, origin);
  const int pp = get_int(c, "parallelism.pipeline_parallel_degree", 1, origin);
  const int cp = get_int(c, "parallelism.context_parallel_degree", 1, origin);
  const int replicate = get_int(c, "parallelism.data_parallel_replicate_degree", 1, origin);
  int shard = get_int(c, "parallelism.data_parallel_shard_degree", -1, origin);
  // -1: the shard degree takes what the other degrees leave (torchtitan).
  if (shard < 0) shard = world / std::max(1, replicate * tp * pp * cp);
  if (shard < 1 || replicate * shard * tp * pp * cp != world)
    throw InputError(origin + ": the parallel degrees (replicate " + std::to_string(replicate) + " x shard " +
                     std::to_string(shard) + " x tp " + std::to_string(tp) + " x pp " + std::to_string(pp) +
                     " x cp " + std::to_string(cp) + ") do not multiply to the world size " +
                     std::to_string(world));
  const int dp = replicate * shard;
  // FSDP2's reshard_after_forward: "default" reshards (ZeRO-3) unless a
  // pipeline runs (torchtitan/distributed: then ZeRO-2); DDP shards nothing.
  const std::string reshard = get(c, "parallelism.fsdp_reshard_after_forward", "default");
  // FSDP shards over dp_shard x cp (torchtitan's fsdp mesh), so cp alone
  // shards too.
  const int zero = shard * cp <= 1 ? 0 : reshard == "always" ? 3 : reshard == "never" ? 2 : pp > 1 ? 2 : 3;
  // HSDP (both degrees > 1): FSDP over data_parallel_shard_degree x cp,
  // replicated across the rest; parplan costs it resharding after forward.
  const bool hsdp = replicate > 1 && shard > 1;
  if (hsdp && zero != 3)
    throw InputError(
        origin +
        ": HSDP (data_parallel_replicate_degree and data_parallel_shard_degree both > 1) without "
        "resharding after forward (fsdp_reshard_after_forward never, or the default beside a "
        "pipeline) cannot be expressed; give a run file");

  const int local_batch =
      get_int(c, "training.local_batch_size", get_int(c, "training.batch_size", 8, origin), origin);
  const int global_batch = get_int(c, "training.global_batch_size", -1, origin);
  const int gbs = global_batch > 0 ? global_batch : local_batch * dp;
  const int mbs =
      pp > 1 ? get_int(c, "parallelism.pipeline_parallel_microbatch_size", 1, origin) : local_batch;
  const int seq = get_int(c, "training.seq_len", 2048, origin);

  const std::string mode = get(c, "activation_checkpoint.mode", "selective");
  const std::string option = get(c, "activation_checkpoint.selective_ac_option", "2");
  if (mode == "selective" && option != "op")
    throw InputError(
        origin + ": activation_checkpoint.selective_ac_option '" + option +
        "' (every N-th layer) cannot be expressed; use 'op', 'full' or 'none', or give a run file");
  const Float8Linears float8 = read_float8(c, origin);
  const bool fp8 = float8.on;

  YAML::Node models;
  std::string model_name = "torchtitan-log";
  // llama3 flavors are built from their dimensions; other families' flavors
  // (Qwen3) are the catalog model of the same shape.
  if (get(c, "model.name", "") == "llama3") {
    models["torchtitan-log"] = model_node(c, origin);
  } else {
    const std::string catalog =
        torchtitan_catalog_model(get(c, "model.name", ""), get(c, "model.flavor", ""));
    if (catalog.empty())
      throw InputError(origin + ": torchtitan model '" + get(c, "model.name", "") + "' flavor '" +
                       get(c, "model.flavor", "") +
                       "' is not read from torchtitan configs (llama3 8B/70B/405B, and the flavors of the "
                       "catalog's models, are); give a run file (docs/calibrate.md)");
    model_name = catalog;
  }
  const int model_layers =
      model_name == "torchtitan-log" ? models[model_name]["layers"].as<int>() : load_model(model_name).layers;
  YAML::Node config;
  config["tp"] = tp;
  config["pp"] = pp;
  config["cp"] = cp;
  if (hsdp) config["hsdp_shard"] = shard;
  // Looped schedules (Interleaved1F1B, LoopedBFS, InterleavedZeroBubble)
  // run two stages per rank by default (torchtitan pipeline_parallel.py).
  const std::string schedule = get(c, "parallelism.pipeline_parallel_schedule", "1F1B");
  const int vp = pp > 1 && (schedule.find("Interleaved") != std::string::npos ||
                            schedule.find("Looped") != std::string::npos)
                     ? 2
                     : 1;
  config["vp"] = vp;
  // The uneven split: the first/last stage carries that many layers fewer
  // than the others (generate_llm_fqn_per_model_part), with vp 1.
  int first_stage_layers = 0, last_stage_layers = 0;
  const int less_first = get_int(c, "parallelism.pipeline_parallel_first_stage_less_layers", 0, origin);
  const int less_last = get_int(c, "parallelism.pipeline_parallel_last_stage_less_layers", 0, origin);
  if (pp > 1 && (less_first > 0 || less_last > 0)) {
    const int layers = model_layers;
    const int stages = pp * vp;
    const int effective = layers + less_first + less_last;
    if (vp > 1 || layers <= 0 || effective % stages != 0)
      throw InputError(
          origin + ": pipeline_parallel_first/last_stage_less_layers (" + std::to_string(less_first) + ", " +
          std::to_string(less_last) +
          ") do not split the layers evenly over the other stages: not expressible; give a run file");
    const int middle = effective / stages;
    if (less_first > 0) first_stage_layers = middle - less_first;
    if (less_last > 0) last_stage_layers = middle - less_last;
  }
  // In the config the run is validated with, not only set afterwards.
  if (first_stage_layers > 0) config["first_stage_layers"] = first_stage_layers;
  if (last_stage_layers > 0) config["last_stage_layers"] = last_stage_layers;
  config["mbs"] = mbs;
  // torchtitan's tensor parallelism shards the norms' activations over the
  // sequence (SequenceParallel) whenever tp > 1.
  config["sp"] = tp > 1;
  config["zero"] = zero;
  config["recompute"] = mode == "full" ? "full" : mode == "selective" ? "selective" : "none";
  config["attention"] = "flash";
  config["overlap_grad_reduce"] = true;
  // PyTorch's pipeline schedules post their sends and receives and compute
  // meanwhile, as plans for torchtitan are costed (it matters with vp > 1).
  config["overlap_p2p"] = true;
  // MoE: routed experts sharded over expert_parallel_degree (torchtitan
  // borrows it from dp_shard * cp * tp), one expert-tensor rank.
  const int ep = get_int(c, "parallelism.expert_parallel_degree", 1, origin);
  if (ep > 1) config["ep"] = ep;

  YAML::Node run;
  // A file name need not be UTF-8; the run's name is printed and written to JSON.
  run["name"] = utf8_or_replacement(origin);
  run["model"] = model_name;
  run["gpus"] = world;
  run["gbs"] = gbs;
  run["seq"] = seq;
  run["precision"] = fp8 ? "fp8" : "bf16";
  // FSDP gathers the Float8 weights in fp8 (ZeRO-3 as costed; a run that
  // keeps its weights gathered through the backward gathers once a step).
  if (float8.fsdp_fp8_all_gather && zero == 3) run["fsdp_float8_all_gather"] = true;
  run["config"] = config;
  // torchtitan's recipe: per-layer FSDP units, fp32 gradient reduction, its
  // grad-sync schedule and context-parallel all-gather, as `plan --engine
  // torchtitan` costs them.
  run["engine"] = "torchtitan";
  // A TOML job file is torchtitan v0.2.x or older, whose Llama runs wq, wk,
  // wv as separate Linears (fused QKV came with the Python configs).
  run["separate_qkv"] = !python;
  // Async TP: the key moved from [experimental] (2024, config_manager.py @
  // 9dec370) to [parallelism] (v0.2.x) to [compile] (main @ b5bcd76c).
  run["tp_comm_overlap"] = get(c, "experimental.enable_async_tensor_parallel", "false") == "true" ||
                           get(c, "parallelism.enable_async_tensor_parallel", "false") == "true" ||
                           get(c, "compile.enable_async_tensor_parallel", "false") == "true";
  // tps = tokens of one data-parallel rank / (window seconds x tp*cp*pp)
  // (torchtitan metrics.py): gbs * seq / world tokens per device per step.
  run["step_s"] = static_cast<double>(gbs) * seq / (static_cast<double>(world) * median_tps);
  if (metrics.peak_gib > 0) run["peak_memory_gib"] = metrics.peak_gib;
  FitRun fit = parse_run_node(run, models, cluster, origin, origin);
  // The attention kernel by release: main's model_registry builds
  // FlexAttention (its default attn_backend, as `--emit torchtitan` writes
  // and costs it); v0.2.x's ScaledDotProductAttentionWrapper runs SDPA with
  // cuDNN first (sdpa_kernel([CUDNN_ATTENTION, FLASH_ATTENTION, MATH],
  // set_priority=True), models/attention.py @ v0.2.0 and v0.2.2), as
  // `--engine-version 0.2` costs it; v0.1.0 and the 2024 releases put cuDNN
  // first only on B200 (has_cuda_capability(10, 0)), so an H100 ran SDPA's
  // flash path, FlashAttention-2. A v0.2 TOML has a [compile] section (v0.1
  // and older: training.compile; `--emit torchtitan --engine-version 0.2`
  // always writes one).
  const bool v02_toml = !python && (has_section(c, "compile.") || has_section(c, "quantize."));
  fit.job.attention_kernel = python     ? AttentionKernel::kFlex
                             : v02_toml ? AttentionKernel::kCudnn
                                        : AttentionKernel::kFlash2;
  fit.job.fp8_tp_all_gather = float8.tp_gathers_fp8;
  // TOML-era torchtitan keeps [b, s, h] hidden states and runs sequence
  // parallelism on dim 1 (JobSpec::sp_sequence_dim_copies); the Python
  // configs' releases fold batch and sequence.
  fit.job.sp_sequence_dim_copies = !python;
  // The run file's config has no split keys: set as read.
  fit.config.first_stage_layers = first_stage_layers;
  fit.config.last_stage_layers = last_stage_layers;
  // Without torch.compile every element-wise operator is its own kernel
  // (compile.enable, training.compile before v0.2, default false).
  fit.job.fused_elementwise =
      get(c, "compile.enable", "false") == "true" || get(c, "training.compile", "false") == "true";
  if (fit.job.tp_comm_overlap && !fit.job.fused_elementwise)
    throw InputError(
        origin + ": enable_async_tensor_parallel needs compile.enable = true (torchtitan raises without it)");
  // The loss is compiled when the job file lists it (compile.components;
  // torchtitan releases without the key compile the model blocks only).
  if (fit.job.fused_elementwise && get(c, "compile.components", "").find("loss") != std::string::npos)
    fit.job.cross_entropy = CrossEntropy::kCompiled;
  fit.name = origin.substr(origin.find_last_of('/') + 1);
  return fit;
}

FitRun read_torchtitan_log(const std::string& path, const ClusterSpec& cluster) {
  const fs::path log(path);
  std::error_code ec;
  fs::path job;
  for (const char* ext : {".toml", ".py"}) {
    const fs::path beside = fs::path(log).replace_extension(ext);
    if (job.empty() && fs::is_regular_file(beside, ec)) job = beside;
  }
  if (job.empty()) {
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(log.parent_path().empty() ? "." : log.parent_path(), ec))
      if (entry.is_regular_file() &&
          (entry.path().extension() == ".toml" || entry.path().extension() == ".py"))
        found.push_back(entry.path());
    if (found.size() != 1)
      throw InputError(
          path + ": a torchtitan log needs its job file beside it (" +
          fs::path(log).replace_extension(".toml").filename().string() + " or " +
          fs::path(log).replace_extension(".py").filename().string() +
          ", or the one .toml or .py in its folder): the log does not print the parallel config");
    job = found.front();
  }
  const fs::path flags = fs::path(log).replace_extension(".flags");
  return parse_torchtitan_log(
      read_text(log), read_text(job), fs::is_regular_file(flags, ec) ? read_text(flags) : std::string(), path,
      cluster, job.extension() == ".py" ? TorchtitanJobFormat::kPython : TorchtitanJobFormat::kToml,
      job.string());
}

}  // namespace parplan
