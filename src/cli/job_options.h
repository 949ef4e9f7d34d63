// Flags every subcommand shares (model, cluster, size, batch, parallel
// sizes) and how they become a model, a cluster, a job and a config.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"
#include "src/cli/common_flags.h"
#include "src/plan/engine_plan.h"
#include "src/plan/planner.h"
#include "src/report/output_files.h"

namespace parplan {

struct JobFlags {
  CommonFlags common;
  /// --job: unset, or the path given (an empty path is an error).
  std::optional<std::string> job_file;
  std::string model, cluster, precision, optimizer;
  std::optional<int> gpus, nodes, gbs, seq;
  /// --power-limit W: the board power limit, for a profile with a power curve.
  std::optional<double> power_limit_w;
  // Parallel sizes: required by estimate, pins for plan.
  std::optional<int> tp, pp, vp, cp, mbs, zero, recompute_layers;
  /// Layers of the first and last pipeline stage (Megatron
  /// --decoder-first/last-pipeline-num-layers).
  std::optional<int> first_stage_layers, last_stage_layers;
  /// estimate and check: --pipeline-layout, Megatron-LM's custom pipeline
  /// layout text (as a job file's config: pipeline_layout, which it replaces).
  std::optional<std::string> pipeline_layout;
  /// Recipe inputs: --grad-reduce-dtype fp32|bf16, --cross-entropy fused|eager.
  std::string grad_reduce_dtype, cross_entropy, grad_sync;
  /// --recompute-modules (Megatron-LM's names, commas or spaces).
  std::string recompute_modules;
  bool precision_aware_optimizer = false;
  bool tp_comm_overlap = false;
  /// Expert-parallel and expert tensor-parallel sizes (MoE models).
  std::optional<int> ep, etp;
  /// --a2a flat|hierarchical, --ep-overlap on|off (empty: not given).
  std::string a2a, ep_overlap;
  /// MoE: max/mean load of the busiest expert-parallel rank (routing statistics).
  std::optional<double> moe_imbalance;
  /// MoE: routing statistics (the file `parplan experts` reads) that set
  /// the imbalance at each ep instead of moe_imbalance.
  std::string routing_stats;
  /// MoE: all-to-all compression ratio (LSH-MoE), allowed only with
  /// allow_lossy_comm.
  std::optional<double> a2a_compression;
  /// MoE token dropping: --moe-capacity-factor F, --moe-pad-to-capacity.
  std::optional<double> moe_capacity_factor;
  bool moe_pad_to_capacity = false;
  /// --fp8-recipe delayed | current (fp8 plans only).
  std::string fp8_recipe;
  /// --torch-compile on | off (torchtitan only; default on).
  std::string torch_compile;
  /// --fsdp-float8-all-gather (torchtitan, fp8): JobSpec::fsdp_fp8_all_gather.
  bool fsdp_float8_all_gather = false;
  /// estimate, plan and check: --timeline FILE.svg|FILE.json, the step's
  /// pipeline schedule.
  std::string timeline;
  /// --document-tokens N: tokens per document of the packed data
  /// (torchtitan main's per-document attention mask).
  std::optional<int> document_tokens;
  std::optional<std::string> recompute, attention;
  bool sp = false, no_sp = false, no_overlap = false;
  /// ZeRO-3 with ZeRO++ as DeepSpeed ships it (hpZ over a node, qwZ, qgZ),
  /// or the 3-level hierarchical partitioning (Xu et al. 2025).
  bool zeropp = false, hierarchical_partition = false;
  /// estimate and check: ZeRO-3 with hpZ alone over a node, exact
  /// collectives (DeepSpeed zero_hpz_partition_size; HSDP under PyTorch FSDP).
  bool hpz = false;
  /// estimate and check, torchtitan: --hsdp-shard N, FSDP2's hybrid
  /// sharding over data_parallel_shard_degree N (x cp), replicated across
  /// dp / N (torchtitan_job_options.h, apply_hsdp_shard).
  std::optional<int> hsdp_shard;
  /// Plans only: never choose the lossy int8-weight / int4-gradient
  /// collectives (ZeRO++ and the hierarchical scheme).
  bool no_quantized_comm = false;
  /// --engine: megatron | deepspeed | megatron-deepspeed | torchtitan | any.
  std::string engine = "any";
  /// Lossy collectives (qwZ, qgZ, int4 gradients) and unreleased schemes
  /// (the 3-level hierarchical partition) only when asked for.
  bool allow_lossy_comm = false, allow_unreleased = false;
  /// --memory-headroom: GiB ("4") or percent of usable HBM ("10%").
  std::optional<std::string> memory_headroom;
};

/// Adds --engine, --allow-lossy-comm, --allow-unreleased and
/// --memory-headroom (plan, check, estimate).
void add_engine_flags(CLI::App& app, JobFlags& flags);
/// The default --memory-headroom (docs/cost-model-engines.md, "Memory headroom").
inline constexpr const char* kDefaultMemoryHeadroom = "2%";
/// Sets job.memory_headroom_* from --memory-headroom ("10%", "4", "4GiB");
/// the default when absent. Throws InputError naming `field` (the flag, or
/// the job file's field), also when `device` is given and the headroom
/// leaves none of its usable HBM.
/// The files a job's flags read (--job, and --model / --cluster where they
/// are paths), for check_distinct_paths.
std::vector<NamedPath> job_input_paths(const JobFlags& f);

void apply_memory_headroom(const std::optional<std::string>& text, JobSpec& job,
                           const std::string& field = "--memory-headroom",
                           const DeviceSpec* device = nullptr);
/// The recipe inputs as given: flags over the job file's keys.
struct RecipeChoice {
  /// megatron | deepspeed | megatron-deepspeed | torchtitan | any.
  std::string engine = "any";
  std::string grad_reduce_dtype, cross_entropy, grad_sync;
  /// Megatron-LM's selective recomputation modules; empty: core_attn.
  std::string recompute_modules;
  /// Where recompute_modules came from, for messages.
  std::string recompute_modules_field = "--recompute-modules";
  bool precision_aware_optimizer = false;
  bool tp_comm_overlap = false;
};
/// Sets the recipe inputs (gradient-reduction dtype, loss kernel) from
/// `choice`, or from the engine's defaults where it names an engine and
/// leaves them open. Throws InputError naming the flag.
void apply_recipe_flags(const RecipeChoice& choice, JobSpec& job);

/// The planner options of the engine and policy flags for `engine` (the
/// resolved job's: --engine, else --emit, else the job file's); `emit`
/// (--emit E) implies --engine E. Throws InputError on an unknown or
/// conflicting engine.
PlannerOptions planner_options(const JobFlags& flags, const std::string& engine, const std::string& solver,
                               const std::string& emit = "");

/// Adds the shared flags; `config_flags` adds the parallel sizes too.
/// --power-limit W on a loaded cluster: the profile's measured power curve
/// re-clocks its compute peaks; a profile without one, or W outside the
/// board's settable range, is an InputError naming the flag.
void apply_power_limit(double limit_w, ClusterSpec& cluster);

void add_job_flags(CLI::App& app, JobFlags& flags, bool config_flags);

struct ResolvedJob {
  ModelSpec model;
  ClusterSpec cluster;
  JobSpec job;
  /// From `config:` in the job file, overridden by flags.
  std::optional<ParallelConfig> file_config;
  /// Its keys that plan leaves free (JobRequest::config_keys_unpinned).
  std::vector<std::string> file_config_keys_unpinned;
  bool file_sp_given = false, file_attention_given = false;
  /// `config: dp` from the job file, when given.
  std::optional<int> file_dp;
  /// Where the config's pipeline_layout was read (job.pipeline_layout holds
  /// it), and whether the config named vp beside it.
  std::string file_pipeline_layout_where;
  bool file_vp_given = false;
  /// `config: hsdp_shard` from the job file, when given.
  std::optional<int> file_hsdp_shard;
  /// The engine the job is planned for: --engine, else the engine of
  /// --emit, else the job file's `engine:`, else "any".
  std::string engine = "any";
};

/// One warning line on stderr when `model` has features parplan does not
/// model (sliding windows, soft-capping, ...); call after every input check.
void warn_unmodelled(const ModelSpec& model, int seq);
/// warn_unmodelled, and a job that fills part of a node (costed as placed,
/// but launch files start whole nodes).
void warn_unlaunchable(const ModelSpec& model, const JobSpec& job, const ClusterSpec& cluster);

/// Loads and checks everything; throws InputError naming the flag or field.
/// `emit` is plan's --emit ENGINE (it implies --engine ENGINE).
ResolvedJob resolve_job(const JobFlags& flags, const std::string& emit = "", bool warn = true);
/// The job as each engine runs it, for --engine any (plan_across_engines):
/// `flags` resolved again with --engine set to each engine, in the union's
/// order, silently; an engine that refuses one of the user's choices (a
/// Megatron-LM-only flag, say) is left out, with the reason in `refused`.
std::vector<EngineJob> jobs_per_engine(const JobFlags& flags, std::vector<EngineOptimum>* refused = nullptr);

/// The config for estimate/check: flags over the job file's `config:`;
/// throws InputError when the sizes do not divide.
ParallelConfig config_from_flags(const JobFlags& flags, const ResolvedJob& resolved);

/// --recompute-layers (or a job file's config: recompute_layers) against
/// the layers of the largest model chunk of `config` (an uneven first/last
/// split's or a custom pipeline layout's own); throws InputError naming the
/// flag. Nothing when the layout itself is invalid (refused on its own).
void check_recompute_layers(const ResolvedJob& resolved, const ParallelConfig& config);

/// Applies the parallel flags as search pins.
void apply_pins(const JobFlags& flags, JobSpec& job);

}  // namespace parplan
