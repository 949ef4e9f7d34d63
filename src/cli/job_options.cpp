#include "src/cli/job_options.h"

#include <iostream>
#include <sstream>

#include "cost/config_rules.h"
#include "cost/moe_dispatch.h"
#include "cost/power_cap.h"
#include "cost/step_cost.h"
#include "src/cli/job_input_name.h"
#include "src/cli/torchtitan_job_options.h"
#include "src/emit/emit.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/job_loader.h"
#include "src/io/model_loader.h"
#include "src/io/moe_fp8_recipe.h"
#include "src/io/pipeline_layout_text.h"
#include "src/io/routing_stats.h"
#include "src/search/search.h"

namespace parplan {

void add_job_flags(CLI::App& app, JobFlags& f, bool config_flags) {
  add_common_flags(app, f.common);
  app.add_option("--job", f.job_file, "job.yaml with model, cluster, gpus, gbs, seq (flags override it)");
  app.add_option("--model", f.model, "catalog name (see models/), model YAML or Hugging Face config.json");
  app.add_option("--cluster", f.cluster, "hardware profile name (see hardware-profiles/) or YAML path");
  // The H100 SXM5's settable range (apply_power_limit checks it against the
  // profile's curve too).
  add_number_option(
      app, "--power-limit", f.power_limit_w,
      "board power limit in W (200-700) for a profile with a measured power curve (dgx-h100, dgx-h200, "
      "dgx-h800, grand-teton-h100): compute at the clock it allows",
      200.0, 700.0);
  add_int_option(app, "--gpus", f.gpus, "number of GPUs (ranks)", 1, kMaxGpus);
  add_int_option(app, "--nodes", f.nodes, "number of nodes (instead of --gpus)", 1, kMaxNodes);
  add_int_option(app, "--gbs", f.gbs, "global batch size in sequences", 1, kMaxGbs);
  add_int_option(app, "--seq", f.seq, "sequence length in tokens", 1, kMaxSeq);
  app.add_option("--precision", f.precision, "bf16 | fp16 | fp8 (default bf16)");
  app.add_option("--optimizer", f.optimizer, "adam | sgd (default adam)");
  const char* what = config_flags ? "" : " (pins the search)";
  add_int_option(app, "--tp", f.tp, std::string("tensor-parallel size") + what, 1, kMaxGpus);
  add_int_option(app, "--pp", f.pp, std::string("pipeline-parallel size") + what, 1, kMaxLayers);
  add_int_option(app, "--vp", f.vp, std::string("virtual stages per pipeline rank") + what, 1, kMaxLayers);
  add_int_option(app, "--cp", f.cp, std::string("context-parallel size") + what, 1, kMaxGpus);
  add_int_option(app, "--mbs", f.mbs, std::string("micro-batch size") + what, 1, kMaxGbs);
  add_int_option(app, "--zero", f.zero, std::string("ZeRO stage 0..3") + what, 0, 3);
  add_int_option(app, "--ep", f.ep, std::string("expert-parallel size (MoE)") + what, 1, kMaxGpus);
  add_int_option(app, "--etp", f.etp,
                 std::string("expert tensor-parallel size (MoE; plan tries each divisor of tp)") + what, 1,
                 kMaxGpus);
  app.add_option(
      "--a2a", f.a2a,
      std::string("flat | hierarchical: the expert all-to-all (MoE; Megatron's alltoall dispatcher, "
                  "or DeepEP / HybridEP through the flex dispatcher); default: hierarchical where "
                  "the expert-parallel group spans nodes") +
          what);
  app.add_option(
      "--ep-overlap", f.ep_overlap,
      std::string("on | off: the expert all-to-all overlapped with the other micro-batch's compute "
                  "(MoE; Megatron's --overlap-moe-expert-parallel-comm: ep > 1, pp 1 or vp > 1, no "
                  "full recomputation); default: on where allowed and an engine of the selection runs it "
                  "(the released "
                  "engines parplan writes do not: Megatron-LM core_r0.13.0 has no such flag), so off") +
          what);
  add_number_option(app, "--moe-imbalance", f.moe_imbalance,
                    "MoE: load of the busiest expert-parallel rank over the mean (>= 1; default from the "
                    "model's balancing scheme, see docs/cost-model-moe.md)",
                    1.0, 1000.0);
  app.add_option("--routing-stats", f.routing_stats,
                 "MoE: measured tokens per expert per layer (JSON or CSV, as `parplan experts --loads`); "
                 "sets the imbalance of each ep from the loads (see docs/cost-model-moe.md)");
  // 0 itself is refused with the job (resolve_job) in the words of the ratio.
  add_number_option(app, "--a2a-compression", f.a2a_compression,
                    "MoE: bytes of the expert all-to-all over the uncompressed volume, 0 < R <= 1 (LSH-MoE "
                    "style token compression; lossy, needs --allow-lossy-comm)",
                    0.0, 1.0);
  add_number_option(app, "--moe-capacity-factor", f.moe_capacity_factor,
                    "MoE token dropping: tokens an expert takes over its fair share before it drops the rest "
                    "(Megatron --moe-expert-capacity-factor; default: dropless)",
                    kMinCapacityFactor, kMaxCapacityFactor);
  app.add_flag("--moe-pad-to-capacity", f.moe_pad_to_capacity,
               "MoE: pad every expert's input to its capacity (Megatron --moe-pad-expert-input-to-capacity; "
               "needs --moe-capacity-factor)");
  app.add_option("--fp8-recipe", f.fp8_recipe,
                 "delayed | current: Transformer Engine's fp8 scaling (Megatron --fp8-recipe delayed or "
                 "tensorwise; default delayed; fp8 plans only)");
  app.add_option("--torch-compile", f.torch_compile,
                 "on | off: torchtitan compiles the model and loss (torch.compile: fused element-wise "
                 "kernels; [compile] enable in the emitted config); off prices eager PyTorch (default on; "
                 "torchtitan only)");
  app.add_flag("--fsdp-float8-all-gather", f.fsdp_float8_all_gather,
               "torchtitan, fp8: FSDP gathers the Float8 linears' weights in fp8 under ZeRO-3 (torchtitan's "
               "float8 enable_fsdp_float8_all_gather; written by --emit torchtitan --engine-version 0.2)");
  add_int_option(app, "--document-tokens", f.document_tokens,
                 "tokens per document of the packed training data (for mixed lengths the token-weighted "
                 "mean, E[L^2]/E[L]): torchtitan main masks attention per document, so a sequence costs "
                 "its documents' causal squares (default: one document per sequence; torchtitan only)",
                 1, kMaxSeq);
  add_int_option(app, "--first-stage-layers", f.first_stage_layers,
                 std::string("layers of the first pipeline stage (Megatron "
                             "--decoder-first-pipeline-num-layers; default: an even split)") +
                     what,
                 1, kMaxLayers);
  add_int_option(app, "--last-stage-layers", f.last_stage_layers,
                 std::string("layers of the last pipeline stage (Megatron "
                             "--decoder-last-pipeline-num-layers; default: an even split)") +
                     what,
                 1, kMaxLayers);
  if (config_flags)
    app.add_option(
        "--pipeline-layout", f.pipeline_layout,
        "Megatron-LM's custom pipeline layout (--pipeline-model-parallel-layout), e.g. "
        "\"Et|(tt|)*30mL\": virtual stages split by |, E the embedding, t a layer, m an MTP layer, "
        "L the loss; vp follows from it (megatron only; docs/cli.md)");
  app.add_option("--grad-reduce-dtype", f.grad_reduce_dtype,
                 "fp32 | bf16: the dtype gradients are accumulated and reduced in (default: the engine's; "
                 "Megatron-LM keeps fp32 main grads under bf16, see docs/cost-model-engines.md)");
  app.add_option("--grad-sync", f.grad_sync,
                 "every-micro-batch | last-micro-batch | after-backward: when data parallelism reduces the "
                 "gradients (default: the engine's; DeepSpeed ZeRO-2 every micro-batch, Megatron-LM with the "
                 "last one's backward, torchtitan + PP after it; docs/cost-model-engines.md)");
  app.add_flag("--precision-aware-optimizer", f.precision_aware_optimizer,
               "Megatron-LM's --use-precision-aware-optimizer: bf16 plans keep 2-byte master remainders "
               "(Adam states 10 bytes per parameter instead of 12); megatron, zero 1 only");
  app.add_flag("--tp-comm-overlap", f.tp_comm_overlap,
               "tp traffic overlaps the linear layers' GEMMs (needs --sp): Megatron-LM's --tp-comm-overlap "
               "(Transformer Engine userbuffers) or torchtitan's Async TP (with --torch-compile on)");
  app.add_option(
      "--cross-entropy", f.cross_entropy,
      "fused | eager | te | compiled: the loss kernel, which sets the logits' memory and the loss's time "
      "(default: the engine's; fused for Megatron-LM; for torchtitan compiled with torch.compile on, else "
      "eager fp32-upcast; te: Transformer Engine's in-place kernel, Megatron's cross_entropy_fusion_impl "
      "te)");
  app.add_option("--recompute", f.recompute, std::string("none | selective | full") + what);
  app.add_option(
      "--recompute-modules", f.recompute_modules,
      "what selective recomputation redoes, Megatron-LM's --recompute-modules: core_attn, layernorm (an "
      "MoE layer's pre-MLP norm), moe_act (the experts' activation), mlp, moe, mla_up_proj (MLA's up "
      "projections), comma-separated (default core_attn; megatron only)");
  add_int_option(app, "--recompute-layers", f.recompute_layers,
                 "layers per model chunk fully recomputed (with full)", 0, kMaxLayers);
  app.add_option("--attention", f.attention, "flash | unfused (default: the cluster profile's)");
  auto* sp = app.add_flag("--sp", f.sp, "Megatron sequence parallelism");
  app.add_flag("--zeropp", f.zeropp,
               std::string("ZeRO-3 with ZeRO++ as DeepSpeed ships it: hpZ over a node, qwZ, qgZ") + what);
  app.add_flag(
      "--hierarchical-partition", f.hierarchical_partition,
      std::string("ZeRO-3 with 3-level hierarchical partitioning (weights per package, gradients per "
                  "node, optimizer over the job; quantized collectives)") +
          what);
  if (config_flags)
    app.add_flag("--hpz", f.hpz,
                 "ZeRO-3 with ZeRO++'s hpZ alone: a node's ranks gather the weights, exact collectives "
                 "(DeepSpeed zero_hpz_partition_size without qwZ/qgZ; under torchtitan HSDP, sharded over a "
                 "node and replicated across nodes); plan shows it as ZeRO++ (hpZ N), under torchtitan HSDP");
  add_int_option(app, "--hsdp-shard", f.hsdp_shard,
                 "torchtitan: ZeRO-3 as FSDP2's hybrid sharding, the model states sharded over N "
                 "data-parallel ranks (x cp) and replicated across dp/N (data_parallel_shard_degree N, "
                 "data_parallel_replicate_degree dp/N); N divides dp" +
                     std::string(config_flags ? "" : " (pins the search)"),
                 2, kMaxGpus);
  if (!config_flags) app.add_flag("--no-sp", f.no_sp, "forbid sequence parallelism")->excludes(sp);
  if (config_flags)
    app.add_flag("--no-overlap", f.no_overlap,
                 "overlap neither data-parallel nor pipeline point-to-point communication with compute");
}

namespace {
MoeFp8RecipeFields recipe_fields(const JobFlags& f) {
  return {input_name(f, f.moe_capacity_factor.has_value(), "--moe-capacity-factor", "moe_capacity_factor"),
          input_name(f, f.moe_pad_to_capacity, "--moe-pad-to-capacity", "moe_pad_to_capacity"),
          input_name(f, !f.fp8_recipe.empty(), "--fp8-recipe", "fp8_recipe")};
}

// MoE token dropping and the fp8 recipe: flags over the job file's keys,
// then the rules the run files keep too (src/io/moe_fp8_recipe.h).
void apply_moe_fp8_recipe(const JobFlags& f, const JobRequest& request, ResolvedJob& out) {
  const MoeFp8RecipeFields fields = recipe_fields(f);
  if (f.moe_capacity_factor)
    out.job.capacity_factor = *f.moe_capacity_factor;
  else if (request.moe_capacity_factor)
    out.job.capacity_factor = *request.moe_capacity_factor;
  if (f.moe_pad_to_capacity)
    out.job.pad_to_capacity = true;
  else if (request.moe_pad_to_capacity)
    out.job.pad_to_capacity = *request.moe_pad_to_capacity;
  if (!f.fp8_recipe.empty())
    out.job.fp8_scaling = parse_fp8_recipe(f.fp8_recipe, fields.fp8_recipe);
  else if (request.fp8_recipe)
    out.job.fp8_scaling = *request.fp8_recipe;
  check_moe_fp8_recipe(out.model, out.job, !f.fp8_recipe.empty() || request.fp8_recipe.has_value(), fields);
}

// A job pinned to one engine that cannot drop tokens as asked is refused
// here, naming the input, rather than by an empty search.
void check_token_drop_engine(const JobFlags& f, const ResolvedJob& r) {
  const EngineSelection engines = parse_engine_selection(r.engine);
  if (engines.any) return;
  const EngineCapabilities& engine = engine_capabilities(engines.engines[0]);
  if (const char* problem = token_drop_problem(engine, r.model, r.job)) {
    const MoeFp8RecipeFields fields = recipe_fields(f);
    const bool padding_helps = engine.moe_drop_padded && !r.job.pad_to_capacity;
    throw InputError(fields.capacity_factor + ": engine " + engine.name + " cannot run it: " + problem +
                     (padding_helps ? "; add --moe-pad-to-capacity (moe_pad_to_capacity: true)"
                                    : "; leave it out or choose another engine"));
  }
}
}  // namespace

ResolvedJob resolve_job(const JobFlags& f, const std::string& emit, bool warn) {
  JobRequest request;
  if (f.job_file) {
    if (f.job_file->empty()) throw InputError("--job is empty: give the path of a job.yaml");
    request = load_job_file(*f.job_file);
  }
  if (!f.model.empty()) request.model = f.model;
  if (!f.cluster.empty()) request.cluster = f.cluster;
  if (f.gpus || f.nodes) request.gpus = 0, request.nodes = 0;
  if (f.gpus) request.gpus = *f.gpus;
  if (f.nodes) request.nodes = *f.nodes;
  if (f.gbs) request.job.gbs = *f.gbs;
  if (f.seq) request.job.seq = *f.seq;
  if (f.moe_imbalance) request.job.moe_imbalance = *f.moe_imbalance;
  if (!f.precision.empty()) request.job.precision = parse_precision(f.precision, "--precision");
  if (!f.optimizer.empty()) {
    if (f.optimizer != "adam" && f.optimizer != "sgd") throw InputError("--optimizer must be adam or sgd");
    request.job.optimizer = f.optimizer == "adam" ? Optimizer::kAdam : Optimizer::kSgd;
  }
  if (request.model.empty())
    throw InputError("--model is required (a catalog name, a YAML or a config.json)");
  if (request.cluster.empty()) throw InputError("--cluster is required (e.g. dgx-a100, dgx-h100, frontier)");
  ResolvedJob out;
  out.model = load_model(request.model);
  out.cluster = load_cluster(request.cluster);
  if (f.power_limit_w) apply_power_limit(*f.power_limit_w, out.cluster);
  out.job = request.job;
  if (f.a2a_compression) {
    const double r = *f.a2a_compression;
    if (!(r > 0 && r <= 1))
      throw InputError("--a2a-compression must be in (0, 1] (the sent bytes over the uncompressed volume)");
    if (!f.allow_lossy_comm)
      throw InputError(
          "--a2a-compression is lossy (tokens merged before the all-to-all); add --allow-lossy-comm "
          "to accept it");
    out.job.a2a_compression = r;
  }
  // The expert flags change nothing on a dense model: a typo of the model,
  // not a request to ignore.
  if (!out.model.is_moe()) {
    if (f.moe_imbalance)
      throw InputError("--moe-imbalance: model " + out.model.name +
                       " is dense (no experts); it applies to mixture-of-experts models");
    if (f.a2a_compression)
      throw InputError("--a2a-compression: model " + out.model.name +
                       " is dense; the expert all-to-all needs a mixture-of-experts model");
  }
  apply_moe_fp8_recipe(f, request, out);
  if (!f.routing_stats.empty()) {
    if (f.moe_imbalance)
      throw InputError("--routing-stats and --moe-imbalance both set the MoE imbalance; give one of them");
    apply_routing_stats(f.routing_stats, out.model, out.job);
  }
  // 64-bit products, bounded before they become an int.
  const std::int64_t node_gpus = static_cast<std::int64_t>(request.nodes) * out.cluster.ranks_per_node;
  if (request.gpus > 0 && request.nodes > 0 && request.gpus != node_gpus)
    throw InputError(
        (f.gpus || f.nodes ? "--gpus and --nodes" : f.job_file.value_or("") + ": gpus and nodes") +
        " disagree: " + std::to_string(request.nodes) + " nodes hold " + std::to_string(node_gpus) +
        " GPUs, not " + std::to_string(request.gpus) + "; give one of them");
  const std::int64_t gpus = request.gpus > 0 ? request.gpus : node_gpus;
  if (gpus <= 0) throw InputError("--gpus or --nodes is required and must be positive");
  if (gpus > kMaxGpus)
    throw InputError("the job has " + std::to_string(gpus) + " GPUs" +
                     (request.gpus > 0 ? std::string()
                                       : " (" + std::to_string(request.nodes) + " nodes x " +
                                             std::to_string(out.cluster.ranks_per_node) + " GPUs per node)") +
                     "; parplan accepts at most " + std::to_string(kMaxGpus));
  out.job.gpus = static_cast<int>(gpus);
  // --nodes on a uniform cluster sizes the cluster too (a profile names one
  // installation, but the same nodes come in larger ones).
  if (request.nodes > 0 && !out.cluster.heterogeneous() && out.cluster.nodes > 0 &&
      request.nodes > out.cluster.nodes)
    out.cluster.nodes = request.nodes;
  const std::int64_t capacity = static_cast<std::int64_t>(out.cluster.nodes) * out.cluster.ranks_per_node;
  if (out.cluster.nodes > 0 && out.job.gpus > capacity)
    throw InputError("--gpus " + std::to_string(out.job.gpus) + " exceeds cluster " + out.cluster.name +
                     " (" + std::to_string(capacity) + " GPUs)");
  if (out.job.gbs <= 0)
    throw InputError("--gbs (global batch in sequences) is required and must be positive");
  if (out.job.seq <= 0) throw InputError("--seq (sequence length) is required and must be positive");
  if (out.model.position == PositionKind::kLearned && out.model.max_positions > 0 &&
      out.job.seq > out.model.max_positions)
    throw InputError("--seq " + std::to_string(out.job.seq) + " exceeds the model's learned positions (" +
                     std::to_string(out.model.max_positions) + "); use a shorter sequence");
  check_input_limits(out.model, out.cluster, out.job);
  if (f.memory_headroom || !request.memory_headroom)
    apply_memory_headroom(f.memory_headroom, out.job, "--memory-headroom", &out.cluster.device);
  else
    apply_memory_headroom(request.memory_headroom, out.job, *f.job_file + ": field 'memory_headroom'",
                          &out.cluster.device);
  RecipeChoice recipe;
  recipe.engine = f.engine != "any"        ? f.engine
                  : !emit.empty()          ? emit
                  : request.engine.empty() ? "any"
                                           : request.engine;
  recipe.grad_reduce_dtype = f.grad_reduce_dtype.empty() ? request.grad_reduce_dtype : f.grad_reduce_dtype;
  recipe.cross_entropy = f.cross_entropy.empty() ? request.cross_entropy : f.cross_entropy;
  recipe.grad_sync = f.grad_sync.empty() ? request.grad_sync : f.grad_sync;
  recipe.precision_aware_optimizer = f.precision_aware_optimizer || request.precision_aware_optimizer;
  recipe.tp_comm_overlap = f.tp_comm_overlap || request.tp_comm_overlap;
  recipe.recompute_modules = f.recompute_modules.empty() ? request.recompute_modules : f.recompute_modules;
  if (f.recompute_modules.empty() && !request.recompute_modules.empty())
    recipe.recompute_modules_field = *f.job_file + ": field 'recompute_modules'";
  apply_recipe_flags(recipe, out.job);
  out.engine = recipe.engine;
  check_token_drop_engine(f, out);
  // Transformer Engine's scaling recipe: torchtitan's torchao Float8 scales
  // dynamically per tensor, and nothing else parplan writes runs fp8.
  if ((!f.fp8_recipe.empty() || request.fp8_recipe) && out.engine == "torchtitan")
    throw InputError(
        recipe_fields(f).fp8_recipe +
        " chooses Transformer Engine's fp8 scaling (Megatron-LM); torchtitan's Float8 scales each "
        "tensor dynamically: leave it out");
  apply_torchtitan_choices(f, request, !recipe.cross_entropy.empty(), out);
  out.file_config = request.config;
  out.file_config_keys_unpinned = request.config_keys_unpinned;
  out.file_sp_given = request.config_sp_given;
  out.file_attention_given = request.config_attention_given;
  out.file_dp = request.config_dp;
  out.file_hsdp_shard = request.config_hsdp_shard;
  // --pipeline-layout replaces the job file's layout, as flags do.
  out.file_pipeline_layout_where =
      f.pipeline_layout ? "--pipeline-layout" : request.config_pipeline_layout_where;
  const std::string layout = f.pipeline_layout.value_or(request.config_pipeline_layout);
  if (f.pipeline_layout || !layout.empty())
    out.job.pipeline_layout =
        parse_pipeline_layout(layout, f.pp.value_or(request.config ? request.config->pp : 1), out.model,
                              out.file_pipeline_layout_where);
  out.file_vp_given = request.config_vp_given;
  // After every input check, so a bad flag stays one line on stderr; under
  // --emit the refusal names what the warnings would (one line).
  if (warn && emit.empty()) warn_unlaunchable(out.model, out.job, out.cluster);
  return out;
}

std::vector<EngineJob> jobs_per_engine(const JobFlags& flags, std::vector<EngineOptimum>* refused) {
  std::vector<EngineJob> jobs;
  const EngineSelection all;
  for (int i = 0; i < all.count; ++i) {
    JobFlags each = flags;
    each.engine = engine_name(all.engines[i]);
    try {
      ResolvedJob resolved = resolve_job(each, "", false);
      apply_pins(each, resolved.job);
      jobs.push_back({all.engines[i], resolved.job});
    } catch (const InputError& error) {
      // A choice this engine does not take: it is not searched.
      if (refused != nullptr)
        refused->push_back({all.engines[i], {}, std::string("not searched: ") + error.what()});
    }
  }
  return jobs;
}

namespace {
bool parse_attention(const std::string& text) {
  if (text != "flash" && text != "unfused")
    throw InputError("--attention must be flash or unfused (got '" + text + "')");
  return text == "flash";
}

// Sizes from the job file's `config:` have no flag bound; and flags that
// contradict each other are refused rather than one silently winning.
void check_config_flags(const ResolvedJob& r, const ParallelConfig& c) {
  const auto bounded = [](int value, std::int64_t min, std::int64_t max, const char* name) {
    if (value < min || value > max)
      throw InputError(std::string(name) + " must be an integer from " + std::to_string(min) + " to " +
                       std::to_string(max) + " (got " + std::to_string(value) + ")");
  };
  bounded(c.tp, 1, kMaxGpus, "tp");
  bounded(c.pp, 1, kMaxLayers, "pp");
  bounded(c.cp, 1, kMaxGpus, "cp");
  bounded(c.vp, 1, kMaxLayers, "vp");
  bounded(c.mbs, 1, kMaxGbs, "mbs");
  // The flag or the job file's config: either way the count means nothing
  // without full recomputation, and modules nothing without selective.
  if (c.recompute_layers > 0 && c.recompute != Recompute::kFull)
    throw InputError("--recompute-layers " + std::to_string(c.recompute_layers) +
                     " applies only with --recompute full (the config recomputes " +
                     recompute_name(c.recompute) + ")");
  if (r.job.tp_comm_overlap && !(c.tp > 1 && c.sp))
    throw InputError("--tp-comm-overlap needs tp > 1 and --sp (the config has tp " + std::to_string(c.tp) +
                     ", sp " + (c.sp ? "on" : "off") + "); drop it or give both");
  if (r.job.recompute_modules != RecomputeModules{} && c.recompute != Recompute::kSelective)
    throw InputError("--recompute-modules applies only with --recompute selective (the config recomputes " +
                     std::string(recompute_name(c.recompute)) +
                     "); drop the modules or recompute selectively");
  check_recompute_layers(r, c);
}
}  // namespace

namespace {
std::optional<bool> parse_a2a_flag(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (text != "flat" && text != "hierarchical")
    throw InputError("--a2a must be flat or hierarchical (got '" + text + "')");
  return text == "hierarchical";
}

std::optional<bool> parse_ep_overlap_flag(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (text != "on" && text != "off") throw InputError("--ep-overlap must be on or off (got '" + text + "')");
  return text == "on";
}

// A given dispatch (flag, or the job file's config: a2a_hierarchical /
// ep_overlap) over the defaults apply_moe_defaults chose; validate_config
// then refuses an overlap the config cannot run.
void apply_dispatch_choices(const JobFlags& f, const ResolvedJob& r, ParallelConfig& c) {
  // The defaults only where an engine of the selection runs them (no
  // released engine overlaps the expert all-to-all yet), so a plain config
  // is costed as the engines run it.
  const EngineSelection engines = parse_engine_selection(r.engine);
  bool engine_overlap = false, engine_hierarchical = false;
  for (int e = 0; e < engines.count; ++e) {
    engine_overlap = engine_overlap || engine_capabilities(engines.engines[e]).ep_overlap;
    engine_hierarchical = engine_hierarchical || engine_capabilities(engines.engines[e]).a2a_hierarchical;
  }
  c.ep_overlap = c.ep_overlap && engine_overlap;
  c.a2a_hierarchical = c.a2a_hierarchical && engine_hierarchical;
  std::optional<bool> hierarchical = parse_a2a_flag(f.a2a);
  std::optional<bool> overlap = parse_ep_overlap_flag(f.ep_overlap);
  const std::string a2a_name = hierarchical ? "--a2a" : "config: a2a_hierarchical";
  const std::string overlap_name = overlap ? "--ep-overlap" : "config: ep_overlap";
  if (!hierarchical) hierarchical = r.job.pins.a2a_hierarchical;
  if (!overlap) overlap = r.job.pins.ep_overlap;
  if ((hierarchical || overlap) && !r.model.is_moe())
    throw InputError((hierarchical ? a2a_name : overlap_name) + ": model " + r.model.name +
                     " is dense; the expert all-to-all needs a mixture-of-experts model");
  if (hierarchical && c.ep < 2)
    throw InputError(a2a_name + " sets the expert all-to-all: give ep 2 or more with it");
  if (hierarchical) c.a2a_hierarchical = *hierarchical;
  if (overlap && *overlap && f.no_overlap)
    throw InputError("--ep-overlap on and --no-overlap contradict each other; give one of them");
  if (overlap) c.ep_overlap = *overlap;
}
}  // namespace

ParallelConfig config_from_flags(const JobFlags& f, const ResolvedJob& r) {
  ParallelConfig c = r.file_config.value_or(ParallelConfig{});
  if (!r.file_config && !(f.tp && f.pp))
    throw InputError("--tp and --pp are required (or a config: section in --job)");
  if (!r.file_attention_given)
    c.flash_attention =
        r.cluster.default_flash_attention || fused_attention_only(parse_engine_selection(r.engine));
  if (f.tp) c.tp = *f.tp;
  if (f.pp) c.pp = *f.pp;
  if (f.vp) c.vp = *f.vp;
  if (f.cp) c.cp = *f.cp;
  if (f.mbs) c.mbs = *f.mbs;
  if (f.ep) c.ep = *f.ep;
  if (f.etp) c.etp = *f.etp;
  if (f.zero) c.zero = *f.zero;
  if (f.recompute) c.recompute = parse_recompute(*f.recompute, "--recompute");
  if (f.recompute_layers) c.recompute_layers = *f.recompute_layers;
  if (f.attention) c.flash_attention = parse_attention(*f.attention);
  if (f.sp) c.sp = true;
  if (f.first_stage_layers) c.first_stage_layers = *f.first_stage_layers;
  if (f.last_stage_layers) c.last_stage_layers = *f.last_stage_layers;
  if ((f.first_stage_layers || f.last_stage_layers) && c.pp < 2)
    throw InputError(std::string(f.first_stage_layers ? "--first-stage-layers" : "--last-stage-layers") +
                     " sets a pipeline stage's layers: give --pp 2 or more with it");
  c.gbs = r.job.gbs;
  if (r.job.pipeline_layout.given())
    lay_out_config(r.job.pipeline_layout, r.file_pipeline_layout_where, r.file_vp_given || f.vp, c);
  check_config_flags(r, c);
  // The same per-dimension rules, in the same order, as plan's pins.
  JobSpec as_pins = r.job;
  as_pins.pins.tp = c.tp, as_pins.pins.pp = c.pp, as_pins.pins.cp = c.cp, as_pins.pins.mbs = c.mbs;
  if (const ConfigViolation v = validate_pins(r.model, as_pins))
    throw InputError("config rejected: " + describe(v));
  const std::int64_t ranks = model_ranks(c.tp, c.pp, c.cp);
  if (r.job.gpus % ranks != 0)
    throw InputError("tp * pp * cp = " + std::to_string(ranks) + " does not divide the job's " +
                     std::to_string(r.job.gpus) + " GPUs");
  c.dp = static_cast<int>(r.job.gpus / ranks);
  // The cost model forms mbs * dp in int: refuse before it could overflow.
  if (static_cast<std::int64_t>(c.mbs) * c.dp > c.gbs)
    throw InputError("mbs " + std::to_string(c.mbs) + " x dp " + std::to_string(c.dp) +
                     " exceeds the global batch " + std::to_string(c.gbs) +
                     "; every data-parallel rank needs at least one micro-batch");
  if (r.file_dp && *r.file_dp != c.dp)
    throw InputError("config: dp " + std::to_string(*r.file_dp) + " disagrees with the job: " +
                     std::to_string(r.job.gpus) + " GPUs / (tp * pp * cp = " + std::to_string(ranks) +
                     ") = " + std::to_string(c.dp) + "; drop dp or fix it");
  if (c.ep > 1 && r.model.experts == 0)
    throw InputError("ep " + std::to_string(c.ep) + ": model " + r.model.name +
                     " is dense (no experts); expert parallelism needs a mixture-of-experts model");
  apply_moe_defaults(r.model, r.cluster, c);
  apply_dispatch_choices(f, r, c);
  if (f.no_overlap) c.overlap_grad_reduce = c.overlap_p2p = c.ep_overlap = false;
  if (f.zeropp + f.hpz + f.hierarchical_partition > 1)
    throw InputError("--zeropp, --hpz and --hierarchical-partition are alternatives; give one of them");
  // A job file's `zeropp: true` / `hpz: true` (read as hpz_ranks > 1) is
  // laid on the cluster's nodes as the flags are, unless a flag replaces it.
  const bool file_hpz =
      !f.zeropp && !f.hpz && !f.hierarchical_partition && !c.hierarchical_partition && c.hpz_ranks > 1;
  const bool zeropp = f.zeropp || (file_hpz && c.qwz);
  const bool hpz = f.hpz || (file_hpz && !c.qwz);
  if (zeropp || hpz || f.hierarchical_partition) {
    const char* flag = f.zeropp                   ? "--zeropp"
                       : f.hpz                    ? "--hpz"
                       : f.hierarchical_partition ? "--hierarchical-partition"
                       : zeropp                   ? "config: zeropp"
                                                  : "config: hpz";
    if (f.zero && *f.zero != 3)
      throw InputError(std::string(flag) + " runs ZeRO stage 3; drop --zero " + std::to_string(*f.zero) +
                       " or give --zero 3");
    if (c.pp > 1)
      throw InputError(std::string(flag) +
                       " runs ZeRO stage 3, which cannot run with pipeline parallelism; use "
                       "--pp 1");
    c.zero = 3;
    if (zeropp || hpz) {
      apply_zeropp(r.cluster, c);
      if (hpz) c.qwz = c.qgz = false;
    } else if (!apply_best_hierarchical_partition(r.model, r.cluster, r.job, c)) {
      throw InputError(
          "--hierarchical-partition: no partition level groups tile the data-parallel group of " +
          std::to_string(c.dp * c.cp) + " ranks on " + r.cluster.name);
    }
  }
  apply_hsdp_shard(f, r, c);
  // A job file's `hierarchical_partition: true` gets the fastest placement too.
  if (!f.hierarchical_partition && c.hierarchical_partition && c.zero == 3 && c.pp == 1)
    apply_best_hierarchical_partition(r.model, r.cluster, r.job, c);
  if (const char* problem = placement_problem(r.cluster, c))
    throw InputError(std::string("config rejected: ") + problem);
  // Megatron-DeepSpeed splits layers that do not divide over pp itself.
  if (const std::string why = engine_layer_split(r.engine, r.model, c); !why.empty())
    throw InputError("config rejected: " + why);
  if (const ConfigViolation v = validate_config(r.model, r.job, c))
    throw InputError("config rejected: " + describe(v));
  return c;
}

void apply_pins(const JobFlags& f, JobSpec& job) {
  SearchPins& p = job.pins;
  if (job.tp_comm_overlap && (f.no_sp || (f.tp && *f.tp == 1)))
    throw InputError(std::string("--tp-comm-overlap needs tp > 1 and sequence parallelism; drop it or ") +
                     (f.no_sp ? "--no-sp" : "--tp 1"));
  if (const auto a2a = parse_a2a_flag(f.a2a)) p.a2a_hierarchical = a2a;
  if (const auto overlap = parse_ep_overlap_flag(f.ep_overlap)) p.ep_overlap = overlap;
  if (f.tp) p.tp = *f.tp;
  if (f.pp) p.pp = *f.pp;
  if (f.vp) p.vp = *f.vp;
  if (f.cp) p.cp = *f.cp;
  if (f.mbs) p.mbs = *f.mbs;
  if (f.ep) p.ep = *f.ep;
  if (f.etp) p.etp = *f.etp;
  if (f.zero) p.zero = *f.zero;
  if (f.recompute) p.recompute = parse_recompute(*f.recompute, "--recompute");
  if (f.recompute_layers) p.recompute_layers = *f.recompute_layers;
  if (f.attention) p.flash_attention = parse_attention(*f.attention);
  if (f.sp) p.sp = true;
  if (f.no_sp) p.sp = false;
  if (f.first_stage_layers || f.last_stage_layers) {
    if (!f.pp || *f.pp < 2)
      throw InputError(std::string(f.first_stage_layers ? "--first-stage-layers" : "--last-stage-layers") +
                       " sets a pipeline stage's layers: give --pp 2 or more with it");
    p.first_stage_layers = f.first_stage_layers;
    p.last_stage_layers = f.last_stage_layers;
  }
  if (f.zeropp && f.hierarchical_partition)
    throw InputError("--zeropp and --hierarchical-partition are alternatives; give one of them");
  if (f.no_quantized_comm && (f.zeropp || f.hierarchical_partition))
    throw InputError(std::string("--no-quantized-comm excludes ") +
                     (f.zeropp ? "--zeropp" : "--hierarchical-partition") +
                     " (both quantize weights and gradients); give one of them");
  if (f.zeropp || f.hierarchical_partition) {
    const char* flag = f.zeropp ? "--zeropp" : "--hierarchical-partition";
    if (f.zero && *f.zero != 3)
      throw InputError(std::string(flag) + " runs ZeRO stage 3; drop --zero " + std::to_string(*f.zero));
    if (f.pp && *f.pp > 1)
      throw InputError(std::string(flag) +
                       " runs ZeRO stage 3, which cannot run with pipeline parallelism; use "
                       "--pp 1");
    p.zero = 3;
    p.pp = 1;
    p.zeropp = f.zeropp;
    p.hierarchical_partition = f.hierarchical_partition;
  }
  pin_hsdp_shard(f, job);
}

}  // namespace parplan
