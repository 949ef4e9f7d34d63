// What each released training engine can run, one table per engine with the
// engine source each entry was read from; the search keeps to an engine's
// space through capability_problem(). Depends on the specs only, so the
// search can read it (DESIGN.md: "one table per engine in src/emit, read by
// search").
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

enum class Engine : std::uint8_t { kMegatron, kDeepSpeed, kMegatronDeepSpeed, kTorchtitan };
inline constexpr int kEngineCount = 4;

/// One row of an engine's table: a capability, what the engine has, and
/// where in its source that was read: `path:line` or `path:first-last` at
/// the commit the table's revision names.
struct CapabilitySource {
  const char* feature;
  const char* value;
  const char* source;
};

struct EngineCapabilities {
  Engine engine;
  const char* name;
  /// The revision the table was read at: a tag or a short commit hash.
  const char* revision;
  // Parallel dimensions.
  bool tp, cp, pp, ep;
  /// Sequence parallelism may be on with tp > 1 / must be on with tp > 1.
  bool sp, sp_required;
  /// Largest model chunks per pipeline rank (1: no interleaving).
  int max_vp;
  /// Expert tensor-parallel size: any divisor, or only 1 and tp.
  bool etp_any;
  bool a2a_hierarchical, ep_overlap;
  // Data-parallel sharding: ZeRO stage s allowed; the highest stage with pp > 1.
  bool zero[4];
  int max_zero_with_pp;
  /// Stage 0 (DDP) only as 1-D data parallelism (torchtitan).
  bool zero0_only_1d;
  /// ZeRO++ hpZ (secondary weight partition / HSDP shard group), qwZ, qgZ.
  bool hpz, qwz, qgz;
  /// The Frontier 3-level hierarchical partition (Xu et al. 2025).
  bool hierarchical_partition;
  // Recomputation: selective, full, full on only some layers per chunk.
  bool recompute_selective, recompute_full, recompute_partial;
  /// First/last pipeline stage layer counts; an arbitrary split per stage.
  bool uneven_first_last, custom_split;
  // Overlap switches the launch files can set.
  bool overlap_grad_reduce, overlap_param_gather, tp_comm_overlap;
  /// fp8 training (Transformer Engine recipes; torchtitan: torchao's Float8
  /// tensorwise, written for v0.2.x) and fp16 as parplan writes them.
  bool fp8, fp16;
  /// Gradients reduced in bf16 (besides fp32 main grads).
  bool grad_reduce_bf16;
  bool moe, sgd;
  std::span<const CapabilitySource> sources;
  /// First/last stages may only hold fewer layers than the middle ones
  /// (torchtitan's pipeline_parallel_*_stage_less_layers take layers away).
  bool uneven_fewer_only = false;
  /// Expert tensor parallelism must be 1 once ep > 1 (torchtitan main shards
  /// routed experts over ep only).
  bool etp_one_with_ep = false;
  /// 2-byte master-weight remainders (Megatron's precision-aware optimizer).
  bool precision_aware_optimizer = false;
  /// MoE token dropping at a capacity factor (JobSpec::capacity_factor):
  /// each expert runs only the tokens it keeps, or every expert's input is
  /// padded to its capacity (JobSpec::pad_to_capacity).
  bool moe_drop_unpadded = false;
  bool moe_drop_padded = false;
  /// Megatron's custom pipeline layout (JobSpec::pipeline_layout).
  bool pipeline_layout = false;
  /// Layers that do not divide over pp run as DeepSpeed's PipelineModule
  /// splits them by type (megatron_deepspeed_split), with no flag.
  bool deepspeed_type_split = false;
};

/// The split DeepSpeed's PipelineModule makes of the transformer layers
/// under partition_method "type:transformer" (Megatron-DeepSpeed's
/// GPTModelPipe, megatron/model/gpt_model.py; deepspeed/runtime/pipe/
/// module.py:409-414 @ v0.17.0): partition_balanced, a dynamic program over
/// the pipe's items (the layers weigh 1, the casts, embedding, norm and
/// head 0) that minimises the heaviest stage less the lightest, later
/// boundaries winning ties (deepspeed/runtime/utils.py:583-622; the greedy
/// probe it replaced, #4312 in v0.12.5, filled the first stages and could
/// leave the last ones empty). For 0/1 weights its split is the first
/// layers % pp stages with one layer more. Set into `config.stage_split`
/// where the layers do not divide over pp (vp 1); false where pp exceeds the
/// layers or the stages a split holds (32). Even splits are left as they are
/// (true).
bool apply_megatron_deepspeed_split(const ModelSpec& model, ParallelConfig& config);

/// For `engine` (a name, as --engine gives it) "megatron-deepspeed" and a
/// config that gives no split of its own: the split above; why it cannot be
/// costed (more stages than a split holds), or "" (also for other engines).
std::string engine_layer_split(const std::string& engine, const ModelSpec& model, ParallelConfig& config);

/// Whether `config`'s per-stage split is that one.
bool is_megatron_deepspeed_split(const ModelSpec& model, const ParallelConfig& config);

const EngineCapabilities& engine_capabilities(Engine engine);

/// Why the engine cannot run `config` (a static sentence), or nullptr.
/// Allocation-free: the search calls it per candidate.
const char* capability_problem(const EngineCapabilities& engine, const ModelSpec& model, const JobSpec& job,
                               const ParallelConfig& config);

/// The part of capability_problem that no config changes: why the engine
/// cannot run the job's MoE token dropping as asked, or nullptr. A job
/// pinned to one engine is refused with it before the search.
const char* token_drop_problem(const EngineCapabilities& engine, const ModelSpec& model, const JobSpec& job);

/// Engines a plan may be run on: `--engine E` is {E}; `any` is every
/// released engine, in the order candidates are tagged.
struct EngineSelection {
  Engine engines[kEngineCount] = {Engine::kMegatron, Engine::kTorchtitan, Engine::kMegatronDeepSpeed,
                                  Engine::kDeepSpeed};
  int count = kEngineCount;
  bool any = true;
};

/// Whether every engine of the selection runs attention fused only:
/// torchtitan's attention is FlexAttention (main) or SDPA's fused kernels
/// (v0.2), with no unfused path a launch file could choose, so a profile's
/// `attention: unfused` default does not apply to it.
inline bool fused_attention_only(const EngineSelection& selection) {
  for (int e = 0; e < selection.count; ++e)
    if (selection.engines[e] != Engine::kTorchtitan) return false;
  return selection.count > 0;
}

/// The selection of one engine.
inline EngineSelection single_engine(Engine engine) {
  EngineSelection s;
  s.any = false;
  s.count = 1;
  s.engines[0] = engine;
  return s;
}

/// "megatron" | "deepspeed" | "megatron-deepspeed" | "torchtitan" | "any";
/// throws InputError naming `flag` and the choices.
EngineSelection parse_engine_selection(const std::string& name, const char* flag = "--engine");

/// The recipe inputs an engine fixes unless the user sets them: the
/// gradient-reduction dtype and the loss kernel. `any` and the
/// Megatron-family engines: Megatron-LM's (fp32 main grads under bf16 with
/// ZeRO <= 1, fused vocab-parallel cross-entropy); torchtitan: fp32
/// reduction (FSDP2 mixed_precision_reduce), an eager fp32-upcast loss
/// (a plan with torch.compile on takes the compiled one: resolve_job) and
/// grouped-mm experts.
struct EngineRecipe {
  GradReduceDtype grad_reduce = GradReduceDtype::kEngineDefault;
  CrossEntropy cross_entropy = CrossEntropy::kFused;
  SelectiveCheckpoint selective_checkpoint = SelectiveCheckpoint::kAttentionCore;
  ContextParallelExchange cp_exchange = ContextParallelExchange::kRingOverlapped;
  /// How --tp-comm-overlap overlaps (torchtitan: Async TP).
  TpOverlapMechanism tp_overlap = TpOverlapMechanism::kUserbuffers;
  /// fp8 linear layers save the fp8 cast of their input (JobSpec::fp8_saves_cast).
  bool fp8_saves_cast = true;
  /// Transformer Engine's LayerNormLinear (JobSpec::te_layernorm_linear).
  bool te_layernorm_linear = false;
  /// When gradients are reduced (cost/grad_sync_schedule.h).
  GradSyncSchedule grad_sync = GradSyncSchedule::kEngineDefault;
  /// How micro-batch gradients are summed (cost/grad_accumulation.h).
  GradAccumulation grad_accumulation = GradAccumulation::kFused;
  /// The attention kernel the engine runs (kProfile: not known).
  AttentionKernel attention_kernel = AttentionKernel::kProfile;
  /// Full recomputation's checkpoints split over tp (Megatron-DeepSpeed).
  bool partition_activations = false;
  /// MoE stage boundaries sent whole by every tp rank (JobSpec::
  /// moe_pipe_unpartitioned; Megatron-DeepSpeed).
  bool moe_pipe_unpartitioned = false;
  ShardUnit shard_unit = ShardUnit::kBuckets;
  /// DeepSpeed-MoE pads every expert to the busiest one's count when it
  /// drops nothing (JobSpec::moe_pads_to_busiest_expert).
  bool moe_pads_to_busiest_expert = false;
  /// torchtitan's experts: one torch._grouped_mm per weight, bf16 operands
  /// (JobSpec::moe_grouped_mm).
  bool moe_grouped_mm = false;
  /// Routing probabilities applied in the experts' activation
  /// (JobSpec::moe_probs_in_activation).
  bool moe_probs_in_activation = false;
  /// FSDP2's copy-out after every all-gather (JobSpec::fsdp_copy_out).
  bool fsdp_copy_out = false;
  /// JobSpec::sharded_grad_passes.
  ShardedGradPasses sharded_grad_passes = ShardedGradPasses::kNone;
  /// Gate and up projections as separate matmuls (JobSpec::separate_gate_up).
  bool separate_gate_up = false;
  /// fp8 tp all-gathers (JobSpec::fp8_tp_all_gather).
  bool fp8_tp_all_gather = false;
  /// PyTorch's non-reentrant checkpoint (JobSpec::checkpoint_early_stop).
  bool checkpoint_early_stop = false;
};
EngineRecipe engine_recipe_defaults(const EngineSelection& selection);
/// Copies the recipe inputs an engine fixes for every job (not the gradient
/// schedule or the attention kernel, which commands set on their own).
void apply_engine_recipe(const EngineRecipe& recipe, JobSpec& job);
/// The recipe of the engine named as --engine spells it ("megatron", ...),
/// applied to `job`. Throws InputError on an unknown name.
void apply_engine_recipe(const std::string& engine, JobSpec& job);
/// A job of `selection` as plan costs it when no flag names a recipe input:
/// the engine's recipe, and under torchtitan with torch.compile on (the
/// default) the compiled loss.
void apply_engine_defaults(const EngineSelection& selection, JobSpec& job);

/// Megatron-LM's --attention-backend for a plan costed with this kernel:
/// "unfused", "fused" (Transformer Engine's cuDNN attention) or "flash".
const char* megatron_attention_backend(const JobSpec& job, const ParallelConfig& config);

/// `config` without its unreleased part: the hierarchical partition as the
/// flat ZeRO-3 an engine would extend (--allow-unreleased plans are tagged
/// with the engine that runs the rest).
ParallelConfig released_part(const ParallelConfig& config);

/// The first engine of `selection` that runs `config`; -1 when none does.
int first_engine_running(const EngineSelection& selection, const ModelSpec& model, const JobSpec& job,
                         const ParallelConfig& config);

}  // namespace parplan
