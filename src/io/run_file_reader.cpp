#include "src/io/run_file_reader.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "cost/step_cost.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/config_keys.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/job_loader.h"
#include "src/io/measured_figure.h"
#include "src/io/model_loader.h"
#include "src/io/moe_fp8_recipe.h"
#include "src/io/pipeline_layout_text.h"
#include "src/io/yaml_fields.h"

namespace parplan {

namespace {
constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

/// vp and mbs accept "best": the run was tuned and does not say.
int int_or_best(const YamlFields& f, const char* key, bool* best) {
  if (f.has(key) && f.node(key).IsScalar() && f.node(key).as<std::string>() == "best") {
    *best = true;
    return 1;
  }
  return f.positive_int(key, 1);
}

ParallelConfig read_run_config(const YamlFields& f, FitRun& run) {
  f.allow_only(run_config_keys());
  ParallelConfig c;
  c.tp = f.positive_int("tp", 1);
  c.pp = f.positive_int("pp", 1);
  c.vp = int_or_best(f, "vp", &run.best_vp);
  c.cp = f.positive_int("cp", 1);
  c.ep = f.positive_int("ep", 1);
  c.etp = f.positive_int("etp", 1);
  c.mbs = int_or_best(f, "mbs", &run.best_mbs);
  // A stage, as a job file's config reads it: 1.5 is no stage to round.
  const double zero = f.number_in("zero", 0, 3, 0);
  if (zero != std::floor(zero)) f.fail("zero", "must be 0, 1, 2 or 3");
  c.zero = static_cast<int>(zero);
  c.sp = f.boolean("sp", false);
  c.recompute = parse_recompute(f.text("recompute", "none"), f.where() + ": field 'recompute'");
  c.recompute_layers = f.non_negative_int("recompute_layers", 0);
  const std::string attention = f.text("attention", "flash");
  if (attention != "flash" && attention != "unfused") f.fail("attention", "must be flash or unfused");
  c.flash_attention = attention == "flash";
  c.overlap_grad_reduce = f.boolean("overlap_grad_reduce", true);
  c.overlap_p2p = f.boolean("overlap_p2p", true);
  // The expert all-to-all overlapped with the other micro-batch's compute
  // (Megatron's --overlap-moe-expert-parallel-comm; Megatron-Bridge's
  // moe_a2a_overlap): only where the run's recipe says so.
  c.ep_overlap = f.boolean("ep_overlap", false);
  // Intra-node first, one copy per destination node across nodes: DeepEP's
  // and HybridEP's dispatch (Megatron's --moe-token-dispatcher-type flex);
  // only where the run's recipe names such a backend.
  c.a2a_hierarchical = f.boolean("a2a_hierarchical", false);
  // PyTorch FSDP's hybrid sharding (torchtitan's data_parallel_shard_degree
  // beside a replicate degree): the shard group is that many dp ranks x cp.
  if (f.has("hsdp_shard")) {
    const int shard = static_cast<int>(f.integer("hsdp_shard", 2, kMaxGpus).value_or(2));
    if (!run.job.pytorch_fsdp())
      f.fail("hsdp_shard", "is PyTorch FSDP's hybrid sharding; set engine: torchtitan");
    if (f.has("zero") && c.zero != 3) f.fail("hsdp_shard", "runs ZeRO stage 3; set zero: 3 or drop it");
    const std::int64_t dp = run.job.gpus / (std::int64_t{c.tp} * c.cp * c.pp);
    if (dp % shard != 0 || shard >= dp)
      f.fail("hsdp_shard", "must divide dp (" + std::to_string(dp) + ") and be less than it");
    c.zero = 3;
    c.hpz_ranks = shard * c.cp;
  }
  // Megatron's uneven split (--decoder-first/last-pipeline-num-layers).
  c.first_stage_layers = f.non_negative_int("first_stage_layers", 0);
  c.last_stage_layers = f.non_negative_int("last_stage_layers", 0);
  // Megatron's custom pipeline layout (--pipeline-model-parallel-layout).
  if (f.has("pipeline_layout") && run.best_vp) f.fail("pipeline_layout", "fixes vp; drop `vp: best`");
  if (f.has("pipeline_layout"))
    apply_pipeline_layout_text(f.text("pipeline_layout"),
                               f.where() + ": field '" + f.full("pipeline_layout") + "'", f.has("vp"),
                               run.model, run.job, c);
  return c;
}

MeasuredFigure read_measured(const YamlFields& f) {
  f.allow_only({"unit", "value", "formula", "padded_vocab", "peak_tflops", "source"});
  MeasuredFigure m;
  m.unit = parse_figure_unit(f.text("unit"), f.where() + ": field 'unit'");
  m.value = f.positive_number("value");
  // An MFU above 1 is refused (as a percentage) where the step is computed.
  if (m.unit != FigureUnit::kMfu && m.value > figure_ceiling(m.unit)) {
    char ceiling[32];
    std::snprintf(ceiling, sizeof ceiling, "%g", figure_ceiling(m.unit));
    f.fail("value", "is above " + std::string(ceiling) + " " + f.text("unit") +
                        ", no plausible figure of one GPU (docs/calibrate.md, \"Measured figures\"); check "
                        "the value and its unit");
  }
  if ((m.unit == FigureUnit::kTflopsPerGpu || m.unit == FigureUnit::kMfu) && !f.has("formula"))
    f.fail("formula", "is required for " + f.text("unit") +
                          ": megatron, megatron_causal or narayanan (the FLOP count behind it)");
  if (f.has("formula")) m.formula = parse_flop_formula(f.text("formula"), f.where() + ": field 'formula'");
  m.padded_vocab = f.number_in("padded_vocab", 0, 1e9, 0);
  m.peak_tflops = f.number_in("peak_tflops", 0, 1e6, 0);
  return m;
}
}  // namespace

void check_run_expressible(const FitRun& run, const ClusterSpec& cluster, const std::string& where) {
  check_precision_supported(cluster, run.job.precision, where + ": precision");
  try {
    check_input_limits(run.model, cluster, run.job);
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  const ParallelConfig& c = run.config;
  // Each size may be up to 2e9: the product needs 64 bits.
  const std::int64_t model_ranks = std::int64_t{c.tp} * c.cp * c.pp;
  if (run.job.gpus % model_ranks != 0)
    throw InputError(where + ": tp x cp x pp = " + std::to_string(model_ranks) + " does not divide " +
                     std::to_string(run.job.gpus) + " GPUs; give a config the job can run");
  if (!run.best_vp && !run.best_mbs) {
    if (const char* problem = config_problem(run.model, run.job, c))
      throw InputError(where + ": the cost model cannot express this config: " + problem);
    return;
  }
  if (predict_run(run, cluster).step_s <= 0)
    throw InputError(where + ": no vp/mbs makes this config valid for the model; give them explicitly");
}

namespace {
// Two runs of one name in a file are one run entered twice (it would weigh
// double in the fit) or two the report could not tell apart.
void check_new_name(const std::vector<FitRun>& runs, const std::string& where) {
  for (std::size_t i = 0; i + 1 < runs.size(); ++i)
    if (runs[i].name == runs.back().name)
      throw InputError(where + ": field 'name': '" + runs.back().name +
                       "' names an earlier run too; give each run once, under its own name");
}
}  // namespace

namespace {
// Profiles and models parsed once per file: a file's runs share a few of
// each, and parsing them again per run dominated reading the file.
struct RunParseCache {
  std::map<std::string, ClusterSpec> clusters;
  std::map<std::string, ModelSpec> models;
};
FitRun parse_run_node_cached(const YAML::Node& node, const YAML::Node& models, const ClusterSpec& profile,
                             const std::string& where, const std::string& default_source,
                             RunParseCache* cache);
}  // namespace

FitRun parse_run_node(const YAML::Node& node, const YAML::Node& models, const ClusterSpec& profile,
                      const std::string& where, const std::string& default_source) {
  return parse_run_node_cached(node, models, profile, where, default_source, nullptr);
}

namespace {
FitRun parse_run_node_cached(const YAML::Node& node, const YAML::Node& models, const ClusterSpec& profile,
                             const std::string& where, const std::string& default_source,
                             RunParseCache* cache) {
  YamlFields f(node, where);
  f.allow_only({"name",
                "model",
                "gpus",
                "gbs",
                "seq",
                "precision",
                "config",
                "measured",
                "step_s",
                "peak_memory_gib",
                "source",
                "notes",
                "assumed",
                "gpu",
                "attention_kernel",
                "fused_elementwise",
                "rms_norm_kernel",
                "engine",
                "moe_imbalance",
                "moe_capacity_factor",
                "moe_pad_to_capacity",
                "moe_host_launch_us",
                "fp8_recipe",
                "fsdp_float8_all_gather",
                "category",
                "separate_qkv",
                "sp_sequence_dim_copies",
                "unpadded_attention",
                "optimizer_kernels",
                "tp_comm_overlap",
                "recompute_modules",
                "transformer_engine",
                "hbm_gib",
                "cross_entropy",
                "grad_reduce_dtype",
                "fsdp_copy_out",
                "fsdp_version",
                "partition_activations",
                "cluster"});
  FitRun run;
  run.name = f.text("name", where);
  // The hardware the run used, where it is not the profile's (torchtitan's
  // Grand Teton H100s beside the DGX H100 rows of a held-out file).
  if (f.has("cluster")) {
    try {
      const std::string name = f.text("cluster");
      const auto hit = cache ? cache->clusters.find(name) : decltype(cache->clusters)::iterator{};
      if (cache && hit != cache->clusters.end()) {
        run.own_cluster = hit->second;
      } else {
        run.own_cluster = load_cluster(name);
        if (cache) cache->clusters.emplace(name, *run.own_cluster);
      }
    } catch (const InputError& e) {
      f.fail("cluster", std::string("does not name a usable profile: ") + e.what());
    }
  }
  const ClusterSpec& cluster = run.own_cluster ? *run.own_cluster : profile;
  run.source = f.text("source", default_source);
  const std::string model = f.text("model");
  const auto cached = cache ? cache->models.find(model) : decltype(cache->models)::iterator{};
  if (cache && cached != cache->models.end()) {
    run.model = cached->second;
  } else if (models && models.IsMap() && models[model]) {
    std::stringstream text;
    text << models[model];
    run.model = parse_model_yaml(text.str(), where + ": models." + model, model);
  } else {
    // The catalog's message names --model; here the run names it.
    try {
      run.model = load_model(model);
    } catch (const InputError& e) {
      std::string what = e.what();
      if (what.rfind("--model ", 0) == 0) what = what.substr(8);
      f.fail("model", what);
    }
  }
  if (cache) cache->models.emplace(model, run.model);
  if (!f.has("gpus")) f.fail("gpus", "is missing; add the run's GPU count");
  run.job.gpus = static_cast<int>(*f.integer("gpus", 1, kMaxGpus));
  run.job.gbs = f.positive_int("gbs");
  run.job.seq = f.positive_int("seq");
  run.job.precision = parse_precision(f.text("precision", "bf16"), where + ": field 'precision'");
  // `engine:` sets the recipe inputs the engine fixes (gradient-reduction
  // dtype and schedule, loss kernel, ZeRO-3 shard unit, context-parallel
  // exchange, attention kernel), as `plan --engine` does; without it a run
  // keeps the JobSpec defaults.
  if (f.has("engine")) {
    const EngineRecipe recipe = engine_recipe_defaults(
        parse_engine_selection(f.text("engine"), (where + ": field 'engine'").c_str()));
    apply_engine_recipe(recipe, run.job);
  }
  // The engine's attention kernel (cost/attention_kernels.h) and whether it
  // fuses element-wise operators (eager PyTorch does not).
  if (f.has("attention_kernel") || !f.has("engine")) {
    const std::string kernel = f.text("attention_kernel", "profile");
    if (kernel != "profile" && kernel != "fa2" && kernel != "fa3" && kernel != "cudnn" && kernel != "flex" &&
        kernel != "triton")
      f.fail("attention_kernel", "must be profile, fa2, fa3, cudnn, flex or triton");
    run.job.attention_kernel = kernel == "fa2"      ? AttentionKernel::kFlash2
                               : kernel == "fa3"    ? AttentionKernel::kFlash3
                               : kernel == "cudnn"  ? AttentionKernel::kCudnn
                               : kernel == "flex"   ? AttentionKernel::kFlex
                               : kernel == "triton" ? AttentionKernel::kTritonFlash
                                                    : AttentionKernel::kProfile;
  }
  run.job.fused_elementwise = f.boolean("fused_elementwise", true);
  // Which eager RMSNorm ran (JobSpec::composed_rms_norm).
  if (f.has("rms_norm_kernel"))
    run.job.composed_rms_norm = f.choice("rms_norm_kernel", {"fused", "composed"}) == "composed";
  // FSDP2 copies every gathered parameter out of the all-gather buffer
  // (torchtitan's recipe sets it); FSDP1's flat parameters are views of that
  // buffer, so a run of an FSDP1 engine (llm-foundry / Composer) says false.
  // DeepSpeed's activation checkpointing splits each checkpoint over the
  // tensor-parallel ranks (partition_activations); a run that did not set
  // it says false (the megatron-deepspeed recipe sets it, as parplan's
  // launch files do).
  run.job.partition_activations = f.boolean("partition_activations", run.job.partition_activations);
  run.job.fsdp_copy_out = f.boolean("fsdp_copy_out", run.job.fsdp_copy_out);
  // Which PyTorch FSDP ran the ZeRO stage: 2 copies out of the gather
  // buffer, 1 casts and divides each unit's gradients before reducing them.
  if (f.has("fsdp_version")) {
    if (f.has("fsdp_copy_out"))
      f.fail("fsdp_version",
             "give fsdp_version or fsdp_copy_out, not both (version 2 copies out, 1 does not)");
    const int version = static_cast<int>(*f.integer("fsdp_version", 1, 2));
    run.job.fsdp_copy_out = version == 2;
    if (version == 1) run.job.sharded_grad_passes = ShardedGradPasses::kFsdp1;
  }
  // The loss kernel where the recipe names one other than the engine's
  // (Megatron-Bridge's performance scripts: cross_entropy_fusion_impl "te").
  if (f.has("cross_entropy")) {
    const std::string loss = f.choice("cross_entropy", {"fused", "eager", "te", "compiled"});
    run.job.cross_entropy = loss == "eager"      ? CrossEntropy::kEager
                            : loss == "te"       ? CrossEntropy::kTeInPlace
                            : loss == "compiled" ? CrossEntropy::kCompiled
                                                 : CrossEntropy::kFused;
  }
  // The dtype the run reduced its gradients in, where not its engine's
  // default (Megatron's --grad-reduce-in-bf16; plan's --grad-reduce-dtype).
  if (f.has("grad_reduce_dtype")) {
    run.job.grad_reduce = f.choice("grad_reduce_dtype", {"fp32", "bf16"}) == "fp32" ? GradReduceDtype::kFp32
                                                                                    : GradReduceDtype::kBf16;
    if (run.job.grad_reduce == GradReduceDtype::kBf16 && run.job.precision == Precision::kFp16)
      f.fail("grad_reduce_dtype", "bf16 needs precision bf16 or fp8 (the run trains in fp16)");
  }
  // MoE: the busiest expert-parallel rank's load over the mean (1 = balanced,
  // as benchmarks that force-balance routing state); absent: the model's default.
  run.job.moe_imbalance = f.number_in("moe_imbalance", 1.0, 1e3, 0.0);
  const auto field = [&](const char* key) { return where + ": field '" + f.full(key) + "'"; };
  // MoE token dropping (Megatron's --moe-expert-capacity-factor, and
  // --moe-pad-expert-input-to-capacity: Megatron-Bridge's
  // apply_moe_token_drop sets both); absent: dropless.
  run.job.capacity_factor = f.number_in("moe_capacity_factor", kMinCapacityFactor, kMaxCapacityFactor, 0.0);
  run.job.pad_to_capacity = f.boolean("moe_pad_to_capacity", false);
  // Host time per kernel launch after the dropless dispatcher's host wait,
  // in microseconds (cost/moe_host_sync.h); absent: not priced.
  run.job.moe_host_launch_s = 1e-6 * f.number_in("moe_host_launch_us", 0.0, 1e4, 0.0);
  // Transformer Engine's fp8 scaling (Megatron's --fp8-recipe): delayed
  // (default) or current (tensorwise; Megatron-Bridge's FP8-CS).
  if (f.has("fp8_recipe")) run.job.fp8_scaling = parse_fp8_recipe(f.text("fp8_recipe"), field("fp8_recipe"));
  // The rules a job file and the flags keep too (src/io/moe_fp8_recipe.h).
  check_moe_fp8_recipe(run.model, run.job, f.has("fp8_recipe"),
                       {field("moe_capacity_factor"), field("moe_pad_to_capacity"), field("fp8_recipe")});
  // torchtitan before fused QKV became its default (v0.2.x and older) runs
  // wq, wk, wv as three matmuls (JobSpec::separate_qkv).
  run.job.separate_qkv = f.boolean("separate_qkv", false);
  // torchtitan before the batch fold (v0.2.x and older) shards [b, s, h] on
  // the sequence dim, and each tp collective copies the activation
  // (JobSpec::sp_sequence_dim_copies).
  run.job.sp_sequence_dim_copies = f.boolean("sp_sequence_dim_copies", run.job.sp_sequence_dim_copies);
  // llm-foundry's flash path unpads q, k, v and pads the output back
  // (JobSpec::unpadded_attention).
  run.job.unpadded_attention = f.boolean("unpadded_attention", false);
  // Composer's DecoupledAdamW runs one operator per update term
  // (JobSpec::optimizer_kernels).
  if (f.has("optimizer_kernels"))
    run.job.optimizer_kernels = f.choice("optimizer_kernels", {"fused", "per-operator"}) == "fused"
                                    ? OptimizerKernels::kFused
                                    : OptimizerKernels::kPerOperator;
  // Megatron-LM's --tp-comm-overlap (NeMo's performance recipes turn it on)
  // or torchtitan's Async TP, which torchtitan runs only compiled.
  run.job.tp_comm_overlap = f.boolean("tp_comm_overlap", false);
  if (run.job.tp_comm_overlap && run.job.tp_overlap_mechanism == TpOverlapMechanism::kMicroPipeline &&
      !run.job.fused_elementwise)
    f.fail("tp_comm_overlap",
           "is torchtitan's Async TP here, which runs only compiled: set fused_elementwise: true");
  // Megatron-LM's --recompute-modules (what selective recomputation redoes).
  if (f.has("recompute_modules")) {
    if (f.text("engine", "") != "megatron")
      f.fail("recompute_modules", "is Megatron-LM's --recompute-modules; set engine: megatron");
    run.job.recompute_modules =
        parse_recompute_modules(recompute_modules_field(f), where + ": field 'recompute_modules'");
  }
  // The Transformer Engine release whose context-parallel ring the run used
  // (cost/cp_merge_passes.h): main (default) or 1.8.
  const std::string te = f.text("transformer_engine", "main");
  if (te != "main" && te != "1.8") f.fail("transformer_engine", "must be main or 1.8");
  run.job.transformer_engine =
      te == "1.8" ? TransformerEngineVersion::kV1_8 : TransformerEngineVersion::kMain;
  run.config = f.has("config") ? read_run_config(f.child("config"), run) : ParallelConfig{};
  // torchtitan's float8 enable_fsdp_float8_all_gather (JobSpec::fsdp_fp8_all_gather).
  run.job.fsdp_fp8_all_gather = f.boolean("fsdp_float8_all_gather", false);
  if (run.job.fsdp_fp8_all_gather && (run.job.precision != Precision::kFp8 || run.config.zero < 3))
    f.fail("fsdp_float8_all_gather",
           "gathers fp8 weights under ZeRO-3 / FSDP: it needs precision: fp8 and config zero: 3");
  run.config.gbs = run.job.gbs;
  run.config.dp =
      static_cast<int>(run.job.gpus / (std::int64_t{run.config.tp} * run.config.cp * run.config.pp));
  // Megatron-DeepSpeed ran layers that do not divide over pp as DeepSpeed's
  // PipelineModule split them (a layout or first/last counts say otherwise).
  if (f.text("engine", "") == "megatron-deepspeed" && !run.config.custom_split() &&
      run.config.first_stage_layers + run.config.last_stage_layers == 0 && run.config.pp > 0 &&
      run.model.layers > 0)
    apply_megatron_deepspeed_split(run.model, run.config);
  check_run_expressible(run, cluster, where);
  MeasuredFigure figure;
  if (f.has("measured") == f.has("step_s"))
    f.fail("measured", "give exactly one measured figure: `step_s: S` or `measured: {unit, value, formula}`");
  if (f.has("step_s"))
    figure.value = f.number_in("step_s", kMinStepSeconds, kMaxStepSeconds, 0);
  else
    figure = read_measured(f.child("measured"));
  // An MFU is quoted against the datasheet peak, also on a power-limited part.
  run.measured_step_s = step_seconds(
      figure, run.model, run.job,
      cluster.device.peak_flops_per_s(run.job.precision) / cluster.device.power_clock_ratio, where);
  // The HBM of the GPUs the run used, where its source states one that
  // differs from the profile's (torchtitan's Grand Teton H100s: 96 GB):
  // only the memory check uses it.
  if (f.has("hbm_gib")) run.hbm_bytes = f.number_in("hbm_gib", 1.0, 1e6, 0.0) * kGib;
  if (f.has("peak_memory_gib")) {
    // A peak above the GPU's memory is no measurement of this GPU.
    const double hbm_gib = (run.hbm_bytes > 0 ? run.hbm_bytes : cluster.device.hbm_bytes) / kGib;
    run.measured_peak_bytes = f.positive_number("peak_memory_gib") * kGib;
    if (run.measured_peak_bytes / kGib > hbm_gib) {
      char text[96];
      std::snprintf(text, sizeof text, "is above the GPU's %.1f GiB of memory", hbm_gib);
      f.fail("peak_memory_gib", std::string(text) + "; give the peak in GiB (hbm_gib: if the GPUs had more)");
    }
  }
  return run;
}
}  // namespace

std::vector<FitRun> read_run_yaml(const std::string& path, const ClusterSpec& cluster) {
  const YAML::Node root = load_yaml_file(path);
  try {
    YamlFields f(root, path);
    f.allow_only({"runs", "models", "source", "cluster", "notes"});
    const YAML::Node runs = f.node("runs");
    if (!runs.IsSequence() || runs.size() == 0) f.fail("runs", "must be a non-empty list of measured runs");
    const std::string source = f.text("source", path);
    const YAML::Node models = root["models"];
    std::vector<FitRun> out;
    RunParseCache cache;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::string where = path + ": runs[" + std::to_string(i) + "]";
      out.push_back(parse_run_node_cached(runs[i], models, cluster, where, source, &cache));
      check_new_name(out, where);
    }
    return out;
  } catch (const YAML::Exception& e) {
    throw InputError(path + ": malformed run file at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

namespace {
/// Throws a bare InputError on a quote left open (the caller names the line).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (ch == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"')
      cell += '"', ++i;  // RFC 4180: "" inside a quoted field is one quote
    else if (ch == '"')
      quoted = !quoted;
    else if (ch == ',' && !quoted)
      cells.push_back(cell), cell.clear();
    else if (ch != '\r')
      cell += ch;
  }
  if (quoted) throw InputError("a quoted field is not closed (a '\"' is missing); close it");
  cells.push_back(cell);
  for (auto& c : cells) {
    const auto b = c.find_first_not_of(" \t"), e = c.find_last_not_of(" \t");
    c = b == std::string::npos ? "" : c.substr(b, e - b + 1);
  }
  return cells;
}
}  // namespace

std::vector<FitRun> read_run_csv(const std::string& path, const ClusterSpec& cluster) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read the run file");
  static const char* kMeasuredColumns[] = {"unit", "value", "formula", "padded_vocab", "peak_tflops"};
  std::string line;
  std::vector<std::string> header;
  std::vector<FitRun> out;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    // Excel's "CSV UTF-8" starts with a byte-order mark; Windows ends lines
    // with CR LF.
    if (line_number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    try {
      cells = split_csv(line);
    } catch (const InputError& e) {
      throw InputError(path + ": line " + std::to_string(line_number) + ": " + e.what());
    }
    if (header.empty()) {
      // A file without its header row would otherwise be read with the first
      // run's values as column names ("column '1' is given twice").
      for (const std::string& c : cells)
        if (c.empty() || std::isdigit(static_cast<unsigned char>(c[0])) || c[0] == '+' || c[0] == '-' ||
            c[0] == '.')
          throw InputError(path + ": line " + std::to_string(line_number) +
                           ": the first row must name the columns (" +
                           "name,model,gpus,gbs,seq,precision,tp,pp,...,unit,value), found '" + c +
                           "'; add the header row");
      for (std::size_t i = 0; i < cells.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (cells[i] == cells[j])
            throw InputError(path + ": line " + std::to_string(line_number) + ": column '" + cells[i] +
                             "' is given twice in the header; keep one");
      header = cells;
      continue;
    }
    const std::string where = path + ": line " + std::to_string(line_number);
    if (cells.size() != header.size())
      throw InputError(where + ": has " + std::to_string(cells.size()) + " cells, the header " +
                       std::to_string(header.size()));
    // Each row becomes the YAML mapping a run file would hold.
    YAML::Node node, config, measured;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (cells[i].empty()) continue;
      bool placed = false;
      for (const std::string& k : run_config_keys())
        if (header[i] == k) config[header[i]] = cells[i], placed = true;
      for (const char* k : kMeasuredColumns)
        if (header[i] == k) measured[header[i]] = cells[i], placed = true;
      if (!placed) node[header[i]] = cells[i];
    }
    if (config.size() > 0) node["config"] = config;
    if (measured.size() > 0) node["measured"] = measured;
    out.push_back(parse_run_node(node, YAML::Node(), cluster, where, path));
    check_new_name(out, where);
  }
  if (out.empty()) throw InputError(path + ": no runs (a header row, then one row per run)");
  return out;
}

}  // namespace parplan
