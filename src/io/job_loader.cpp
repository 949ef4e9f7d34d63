#include "src/io/job_loader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "src/io/config_keys.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/moe_fp8_recipe.h"
#include "src/io/yaml_fields.h"

namespace parplan {

Recompute parse_recompute(const std::string& text, const std::string& where) {
  if (text == "none") return Recompute::kNone;
  if (text == "selective") return Recompute::kSelective;
  if (text == "full") return Recompute::kFull;
  throw InputError(where + " must be none, selective or full (got '" + text + "')");
}

const char* recompute_name(Recompute recompute) {
  switch (recompute) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "none";
}

RecomputeModules parse_recompute_modules(const std::string& text, const std::string& where) {
  // Items separated by commas, names within an item by spaces (Megatron's
  // flag takes a space-separated list): an empty item, a repeated name or
  // "none" beside a module is refused rather than read one way or another.
  std::vector<std::string> names;
  std::string item;
  const auto close_item = [&](bool comma_follows) {
    std::istringstream words(item);
    std::string word;
    int count = 0;
    while (words >> word) names.push_back(word), ++count;
    if (count == 0 && (comma_follows || text.find(',') != std::string::npos))
      throw InputError(where + ": has an empty item between commas; remove the extra comma");
    item.clear();
  };
  for (const char ch : text) {
    if (ch == ',')
      close_item(true);
    else
      item += ch;
  }
  close_item(false);
  RecomputeModules modules;
  modules.core_attn = false;
  const std::pair<const char*, bool RecomputeModules::*> known[] = {
      {"core_attn", &RecomputeModules::core_attn},
      {"layernorm", &RecomputeModules::layernorm},
      {"moe_act", &RecomputeModules::moe_act},
      {"mlp", &RecomputeModules::mlp},
      {"moe", &RecomputeModules::moe},
      {"mla_up_proj", &RecomputeModules::mla_up_proj}};
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    for (std::size_t j = 0; j < i; ++j)
      if (names[j] == name) throw InputError(where + ": lists '" + name + "' twice; name each module once");
    if (name == "none") {
      if (names.size() > 1)
        throw InputError(where + ": 'none' excludes every module; give none or the modules");
      continue;
    }
    bool found = false;
    for (const auto& [known_name, member] : known)
      if (name == known_name) modules.*member = found = true;
    if (!found)
      throw InputError(where + ": unknown module '" + name +
                       "'; choose from core_attn, layernorm, moe_act, mlp, moe, mla_up_proj");
  }
  return modules;
}

std::string recompute_modules_text(const RecomputeModules& modules) {
  std::string out;
  const auto add = [&](bool on, const char* name) {
    if (on) out += (out.empty() ? "" : " ") + std::string(name);
  };
  add(modules.core_attn, "core_attn");
  add(modules.layernorm, "layernorm");
  add(modules.moe_act, "moe_act");
  add(modules.mlp, "mlp");
  add(modules.moe, "moe");
  add(modules.mla_up_proj, "mla_up_proj");
  return out;
}

std::string recompute_modules_field(const YamlFields& f) {
  const YAML::Node node = f.node("recompute_modules");
  if (!node.IsSequence()) return f.text("recompute_modules");
  std::string out;
  for (const auto& item : node) {
    if (!item.IsScalar()) f.fail("recompute_modules", "must be a list of module names");
    out += (out.empty() ? "" : ",") + item.as<std::string>();
  }
  return out.empty() ? "none" : out;
}

Precision parse_precision(const std::string& text, const std::string& where) {
  if (text == "bf16") return Precision::kBf16;
  if (text == "fp16") return Precision::kFp16;
  if (text == "fp8") return Precision::kFp8;
  throw InputError(where + " must be bf16, fp16 or fp8 (got '" + text + "')");
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp8:
      return "fp8";
  }
  return "bf16";
}

namespace {
// The bound of the flag of the same name (src/io/input_limits.h), stated in
// the message: tp, cp, ep, etp and dp at most the GPUs, pp and vp the
// layers, mbs the global batch.
std::int64_t job_size_bound(const std::string& key) {
  if (key == "pp" || key == "vp") return kMaxLayers;
  if (key == "mbs") return kMaxGbs;
  return kMaxGpus;
}

int job_size(const YamlFields& f, const char* key, int fallback) {
  return static_cast<int>(f.integer(key, 1, job_size_bound(key)).value_or(fallback));
}

// A ZeRO stage: 0..3 and a whole number (1.5 is refused, not truncated).
int zero_stage(const YamlFields& f, int fallback) {
  const double stage = f.number_in("zero", 0, 3, fallback);
  if (stage != std::floor(stage)) f.fail("zero", "must be 0, 1, 2 or 3");
  return static_cast<int>(stage);
}

// The run files' config keys, and what only a job's config gives.
std::vector<std::string> run_config_keys_and_job_only() {
  std::vector<std::string> keys = run_config_keys();
  keys.insert(keys.end(), {"dp", "zeropp", "hpz", "hierarchical_partition"});
  return keys;
}

ParallelConfig read_config(const YamlFields& f, JobRequest& request) {
  f.allow_only(run_config_keys_and_job_only());
  ParallelConfig c;
  c.tp = job_size(f, "tp", 1);
  c.pp = job_size(f, "pp", 1);
  c.vp = job_size(f, "vp", 1);
  request.config_vp_given = f.has("vp");
  if (f.has("pipeline_layout")) {
    request.config_pipeline_layout = f.text("pipeline_layout");
    request.config_pipeline_layout_where = f.where() + ": field '" + f.full("pipeline_layout") + "'";
  }
  c.cp = job_size(f, "cp", 1);
  c.ep = job_size(f, "ep", 1);
  c.etp = job_size(f, "etp", 1);
  // `plan` searches the other sizes around the expert sizes the file gives.
  if (f.has("ep")) request.job.pins.ep = c.ep;
  if (f.has("etp")) request.job.pins.etp = c.etp;
  // The expert all-to-all as the file runs it, the run files' keys (plan
  // keeps it; estimate and check cost it).
  if (f.has("a2a_hierarchical")) request.job.pins.a2a_hierarchical = f.boolean("a2a_hierarchical", false);
  if (f.has("ep_overlap")) request.job.pins.ep_overlap = f.boolean("ep_overlap", true);
  c.mbs = job_size(f, "mbs", 1);
  c.zero = zero_stage(f, 0);
  // dp follows from the GPUs and tp * pp * cp; when given, it is checked.
  if (f.has("dp")) request.config_dp = job_size(f, "dp", 0);
  c.sp = f.boolean("sp", false);
  request.config_sp_given = f.has("sp");
  c.recompute =
      parse_recompute(f.text("recompute", "none"), f.where() + ": field '" + f.full("recompute") + "'");
  c.recompute_layers = f.non_negative_int("recompute_layers", 0);
  if (f.has("attention")) {
    const std::string a = f.text("attention");
    if (a != "flash" && a != "unfused") f.fail("attention", "must be flash or unfused");
    c.flash_attention = a == "flash";
    request.config_attention_given = true;
  }
  c.overlap_grad_reduce = f.boolean("overlap_grad_reduce", true);
  c.overlap_p2p = f.boolean("overlap_p2p", true);
  c.first_stage_layers = f.non_negative_int("first_stage_layers", 0);
  c.last_stage_layers = f.non_negative_int("last_stage_layers", 0);
  // ZeRO++ (qwZ, qgZ and hpZ) or hpZ alone: hpz_ranks is set to a node's
  // ranks once the cluster is known (config_from_flags).
  const bool zeropp = f.boolean("zeropp", false), hpz = f.boolean("hpz", false);
  c.hierarchical_partition = f.boolean("hierarchical_partition", false);
  if (zeropp + hpz + c.hierarchical_partition > 1)
    f.fail(zeropp ? "zeropp" : "hpz", "zeropp, hpz and hierarchical_partition are alternatives; keep one");
  if ((zeropp || hpz) && f.has("zero") && c.zero != 3)
    f.fail(zeropp ? "zeropp" : "hpz", "runs ZeRO stage 3; set zero: 3 or drop it");
  if (zeropp || hpz) c.zero = 3, c.hpz_ranks = 2, c.qwz = c.qgz = zeropp;
  if (f.has("hsdp_shard")) {
    request.config_hsdp_shard = static_cast<int>(f.integer("hsdp_shard", 2, kMaxGpus).value_or(2));
    if (zeropp || hpz || c.hierarchical_partition)
      f.fail("hsdp_shard", "is an alternative to zeropp, hpz and hierarchical_partition; keep one");
    if (f.has("zero") && c.zero != 3) f.fail("hsdp_shard", "runs ZeRO stage 3; set zero: 3 or drop it");
    c.zero = 3;
  }
  return c;
}
}  // namespace

namespace {
// A size both `constraints:` and `config:` give must be the same: otherwise
// plan would take one and estimate the other without a word.
void check_constraints_agree(const YamlFields& f, const JobRequest& r) {
  if (!f.has("constraints")) return;
  const YamlFields constraints = f.child("constraints");
  const YamlFields config = f.child("config");
  const SearchPins& p = r.job.pins;
  const ParallelConfig& c = *r.config;
  const std::pair<const char*, std::pair<std::optional<int>, int>> sizes[] = {
      {"tp", {p.tp, c.tp}}, {"pp", {p.pp, c.pp}},    {"vp", {p.vp, c.vp}},
      {"cp", {p.cp, c.cp}}, {"mbs", {p.mbs, c.mbs}}, {"zero", {p.zero, c.zero}},
      {"ep", {p.ep, c.ep}}, {"etp", {p.etp, c.etp}}, {"dp", {p.dp, r.config_dp.value_or(0)}}};
  for (const auto& [key, values] : sizes) {
    if (!constraints.has(key) || !config.has(key) || values.first == values.second) continue;
    throw InputError(f.where() + ": constraints." + key + " " + std::to_string(values.first.value_or(0)) +
                     " and config." + key + " " + std::to_string(values.second) +
                     " disagree; keep one of them");
  }
  if (constraints.has("recompute") && config.has("recompute") && p.recompute != c.recompute)
    throw InputError(f.where() + ": constraints.recompute " +
                     recompute_name(p.recompute.value_or(c.recompute)) + " and config.recompute " +
                     recompute_name(c.recompute) + " disagree; keep one of them");
}
}  // namespace

namespace {
// A file named by a job file is read from the job file's folder, as a user
// who keeps the job beside its model or profile expects, else from the
// current directory (as before); a catalog name stays a name.
std::string job_relative_path(const YamlFields& f, const char* key, const std::string& job_path) {
  const std::string value = f.text(key, "");
  namespace fs = std::filesystem;
  const fs::path as_path(value);
  const std::string ext = as_path.extension().string();
  const bool looks_like_path =
      value.find('/') != std::string::npos || ext == ".yaml" || ext == ".yml" || ext == ".json";
  if (value.empty() || !looks_like_path || as_path.is_absolute()) return value;
  std::error_code ec;
  const fs::path beside = fs::path(job_path).parent_path() / as_path;
  if (fs::exists(beside, ec)) return beside.string();
  if (fs::exists(as_path, ec)) return value;
  f.fail(key, "names '" + value + "', which is neither beside the job file (" + beside.string() +
                  ") nor in the current directory; fix the path");
}
}  // namespace

JobRequest load_job_file(const std::string& path) {
  // Only a regular file: a FIFO would block the read forever and a directory
  // fails deep inside the stream library.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      throw InputError("--job " + path + ": the file does not exist; check the path");
    throw InputError("--job " + path + ": cannot be read: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    throw InputError("--job " + path + ": is not a regular file (" +
                     (S_ISDIR(st.st_mode)    ? "a directory"
                      : S_ISFIFO(st.st_mode) ? "a pipe"
                                             : "a special file") +
                     "); give a job.yaml");
  if (st.st_size > kMaxInputFileBytes)
    throw InputError("--job " + path + ": is " + std::to_string(st.st_size) +
                     " bytes; a job file has at most " + std::to_string(kMaxInputFileBytes));
  const YAML::Node root = load_yaml_file(path);
  try {
    YamlFields f(root, path);
    f.allow_only({"model",
                  "cluster",
                  "gpus",
                  "nodes",
                  "gbs",
                  "seq",
                  "precision",
                  "optimizer",
                  "constraints",
                  "config",
                  "name",
                  "description",
                  "engine",
                  "grad_reduce_dtype",
                  "cross_entropy",
                  "grad_sync",
                  "precision_aware_optimizer",
                  "tp_comm_overlap",
                  "recompute_modules",
                  "memory_headroom",
                  "moe_capacity_factor",
                  "moe_pad_to_capacity",
                  "fp8_recipe",
                  "torch_compile",
                  "document_tokens",
                  "fsdp_float8_all_gather"});
    JobRequest r;
    // Free text for people, but one string: a list or a mapping is a
    // mistake in the file.
    if (f.has("name")) (void)f.text("name");
    if (f.has("description")) (void)f.text("description");
    r.model = job_relative_path(f, "model", path);
    r.cluster = job_relative_path(f, "cluster", path);
    // The bounds of --gpus, --nodes, --gbs and --seq (src/io/input_limits.h).
    r.gpus = static_cast<int>(f.integer("gpus", 1, kMaxGpus).value_or(0));
    r.nodes = static_cast<int>(f.integer("nodes", 1, kMaxNodes).value_or(0));
    r.job.gbs = static_cast<int>(f.integer("gbs", 1, kMaxGbs).value_or(0));
    r.job.seq = static_cast<int>(f.integer("seq", 1, kMaxSeq).value_or(0));
    r.job.precision = parse_precision(f.text("precision", "bf16"), path + ": field 'precision'");
    const std::string optimizer = f.text("optimizer", "adam");
    if (optimizer != "adam" && optimizer != "sgd") f.fail("optimizer", "must be adam or sgd");
    r.job.optimizer = optimizer == "adam" ? Optimizer::kAdam : Optimizer::kSgd;
    // The same words as the flags of the same names (which override them).
    if (f.has("engine"))
      r.engine = f.choice("engine", {"any", "megatron", "deepspeed", "megatron-deepspeed", "torchtitan"});
    if (f.has("grad_reduce_dtype")) r.grad_reduce_dtype = f.choice("grad_reduce_dtype", {"fp32", "bf16"});
    if (f.has("cross_entropy"))
      r.cross_entropy = f.choice("cross_entropy", {"fused", "eager", "te", "compiled"});
    if (f.has("grad_sync"))
      r.grad_sync = f.choice("grad_sync", {"every-micro-batch", "last-micro-batch", "after-backward"});
    if (f.has("precision_aware_optimizer"))
      r.precision_aware_optimizer = f.boolean("precision_aware_optimizer", false);
    if (f.has("tp_comm_overlap")) r.tp_comm_overlap = f.boolean("tp_comm_overlap", false);
    if (f.has("recompute_modules")) {
      r.recompute_modules = recompute_modules_field(f);
      parse_recompute_modules(r.recompute_modules, path + ": field 'recompute_modules'");
    }
    if (f.has("memory_headroom")) r.memory_headroom = f.text("memory_headroom");
    // Checked against the model and precision once flags are applied
    // (resolve_job, src/io/moe_fp8_recipe.h).
    if (f.has("moe_capacity_factor"))
      r.moe_capacity_factor =
          f.number_in("moe_capacity_factor", kMinCapacityFactor, kMaxCapacityFactor, kMinCapacityFactor);
    if (f.has("moe_pad_to_capacity")) r.moe_pad_to_capacity = f.boolean("moe_pad_to_capacity", false);
    if (f.has("fp8_recipe"))
      r.fp8_recipe = parse_fp8_recipe(f.text("fp8_recipe"), path + ": field 'fp8_recipe'");
    if (f.has("torch_compile")) r.torch_compile = f.boolean("torch_compile", true);
    if (f.has("fsdp_float8_all_gather"))
      r.fsdp_float8_all_gather = f.boolean("fsdp_float8_all_gather", false);
    if (f.has("document_tokens")) {
      r.document_tokens = f.positive_int("document_tokens");
      if (*r.document_tokens > kMaxSeq)
        f.fail("document_tokens", "must be at most " + std::to_string(kMaxSeq) + " tokens");
    }
    if (f.has("constraints")) {
      const YamlFields c = f.child("constraints");
      c.allow_only({"tp", "pp", "vp", "cp", "dp", "mbs", "zero", "recompute", "ep", "etp", "sp"});
      SearchPins& pins = r.job.pins;
      const auto size = [&](const char* key) {
        return c.has(key) ? std::optional<int>(job_size(c, key, 0)) : std::nullopt;
      };
      pins.tp = size("tp");
      pins.pp = size("pp");
      pins.vp = size("vp");
      pins.cp = size("cp");
      pins.dp = size("dp");
      pins.mbs = size("mbs");
      pins.ep = size("ep");
      pins.etp = size("etp");
      if (c.has("zero")) pins.zero = zero_stage(c, 0);
      // Megatron sequence parallelism: true as --sp, false as --no-sp.
      if (c.has("sp")) pins.sp = c.boolean("sp", false);
      if (c.has("recompute"))
        pins.recompute =
            parse_recompute(c.text("recompute"), c.where() + ": field '" + c.full("recompute") + "'");
    }
    if (f.has("config")) {
      r.config = read_config(f.child("config"), r);
      const YamlFields config = f.child("config");
      const bool constrained = f.has("constraints");
      for (const std::string& key : run_config_keys_and_job_only()) {
        if (!config.has(key.c_str()) || key == "ep" || key == "etp" || key == "a2a_hierarchical" ||
            key == "ep_overlap")
          continue;
        if (constrained && f.child("constraints").has(key.c_str())) continue;
        r.config_keys_unpinned.push_back(key);
      }
    }
    if (r.config) check_constraints_agree(f, r);
    return r;
  } catch (const YAML::Exception& e) {
    throw InputError(path + ": malformed job at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

}  // namespace parplan
