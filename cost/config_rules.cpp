// The one validator of parallel configs (see config_rules.h).
#include "cost/config_rules.h"

#include "cost/stage_layout.h"
#include "cost/step_cost.h"

namespace parplan {

namespace {
// Larger sizes than any cluster has; keeps every product of sizes in 64 bits
// (and tp * cp * pp * dp in an int) whatever the input.
constexpr std::int64_t kMaxSize = 1 << 20;
// A micro-batch is sequences, bounded as the global batch is (docs/errors.md).
constexpr std::int64_t kMaxMbs = 1 << 24;

ConfigViolation violated(ConfigRule rule, std::int64_t a = 0, std::int64_t b = 0, std::int64_t c = 0) {
  return ConfigViolation{rule, a, b, c};
}
}  // namespace

ConfigViolation tp_rule(const ModelSpec& model, int tp) {
  if (model.heads % tp != 0) return violated(ConfigRule::kTpHeads, tp, model.heads);
  // Megatron TransformerConfig: num_query_groups % tp == 0 (Megatron-Core
  // releases, Megatron-DeepSpeed; torchtitan shards KV heads the same way).
  if (!model.uses_mla() && model.kv_groups % tp != 0)
    return violated(ConfigRule::kTpKvGroups, tp, model.kv_groups);
  if (model.ffn_hidden % tp != 0) return violated(ConfigRule::kTpFfn, tp, model.ffn_hidden);
  return {};
}

ConfigViolation cp_rule(const JobSpec& job, int cp) {
  // Megatron splits the sequence into 2 cp chunks (load-balanced causal ring).
  if (cp > 1 && job.seq % (2 * cp) != 0) return violated(ConfigRule::kCpSeq, cp, job.seq);
  return {};
}

ConfigViolation pp_rule(const ModelSpec& model, int pp) {
  if (pp > model.layers) return violated(ConfigRule::kPpLayers, pp, model.layers);
  return {};
}

ConfigViolation ep_rule(const ModelSpec& model, int ep) {
  if (ep > 1 && !model.is_moe()) return violated(ConfigRule::kEpDense, ep);
  if (model.is_moe() && model.experts % ep != 0) return violated(ConfigRule::kEpExperts, ep, model.experts);
  return {};
}

ConfigViolation mesh_rules(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c) {
  const int sizes[] = {c.tp, c.pp, c.cp, c.dp, c.vp, c.ep, c.etp, c.mbs};
  for (int size : sizes)
    if (size < 1) return violated(ConfigRule::kSizeBelowOne, size);
  for (int size : {c.tp, c.pp, c.cp, c.dp, c.vp, c.ep, c.etp})
    if (size > kMaxSize) return violated(ConfigRule::kSizeTooLarge, size, kMaxSize);
  if (c.mbs > kMaxMbs) return violated(ConfigRule::kMbsTooLarge, c.mbs, kMaxMbs);
  if (auto v = tp_rule(model, c.tp)) return v;
  if (auto v = cp_rule(job, c.cp)) return v;
  if (auto v = pp_rule(model, c.pp)) return v;
  const std::int64_t model_ranks = std::int64_t{c.tp} * c.cp * c.pp;
  if (job.gpus % model_ranks != 0) return violated(ConfigRule::kModelRanksGpus, model_ranks, job.gpus);
  const std::int64_t world = model_ranks * c.dp;
  if (world != job.gpus) return violated(ConfigRule::kWorld, world, job.gpus);
  if (c.sp && c.tp == 1) return violated(ConfigRule::kSpNeedsTp);
  return {};
}

ConfigViolation batch_rules(const ParallelConfig& c) {
  if (c.gbs % c.mbs != 0) return violated(ConfigRule::kMbsGbs, c.mbs, c.gbs);
  if (c.gbs % (std::int64_t{c.mbs} * c.dp) != 0)
    return violated(ConfigRule::kGbsDivisible, c.gbs, c.mbs, c.dp);
  return {};
}

ConfigViolation layout_rules(const ModelSpec& model, const ParallelConfig& c) {
  const bool uneven = c.first_stage_layers > 0 || c.last_stage_layers > 0;
  if (uneven && std::int64_t{c.first_stage_layers} + c.last_stage_layers + (c.pp - 2) > model.layers)
    return violated(ConfigRule::kStageLayers, c.first_stage_layers, c.last_stage_layers, model.layers);
  if (!layout_is_valid(model.layers, c)) return violated(ConfigRule::kLayout, model.layers, c.pp, c.vp);
  if (c.vp > 1 && (c.pp < 2 || c.micro_batches() % c.pp != 0))
    return violated(ConfigRule::kInterleave, c.pp, c.micro_batches());
  return {};
}

ConfigViolation sharding_rules(const ParallelConfig& c) {
  if (c.zero < 0 || c.zero > 3) return violated(ConfigRule::kZeroRange, c.zero);
  // ZeRO-2/3 with pipeline parallelism is an engine question (torchtitan's
  // FSDP2 + PP runs it, DeepSpeed's pipeline engine does not): the engines'
  // capability tables decide (src/emit/engine_capabilities.cpp).
  if ((c.zeropp() || c.hierarchical_partition) && c.zero != 3)
    return violated(ConfigRule::kQuantizedNeedsZero3);
  if (c.hpz_ranks < 1) return violated(ConfigRule::kHpzRanks, c.hpz_ranks);
  if (c.hierarchical_partition) {
    const PartitionPlacement& p = c.partition;
    if (p.params_secondary > p.params || p.grads > p.optimizer || p.params > p.optimizer)
      return violated(ConfigRule::kPartitionNesting);
  }
  return {};
}

// Expert parallelism: Megatron-LM's MoE parallel folding
// (megatron/core/parallel_state.py initialize_model_parallel builds the
// expert grid etp x ep x edp over the same ranks as tp x cp x dp of a
// pipeline stage) and validate_args / TransformerConfig checks.
ConfigViolation expert_rules(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c) {
  if (auto v = ep_rule(model, c.ep)) return v;
  if (!model.is_moe()) return c.etp > 1 ? violated(ConfigRule::kEtpDense, c.etp) : ConfigViolation{};
  const std::int64_t stage_ranks = std::int64_t{c.tp} * c.cp * c.dp;
  if (stage_ranks % (std::int64_t{c.etp} * c.ep) != 0)
    return violated(ConfigRule::kEpShard, std::int64_t{c.etp} * c.ep, stage_ranks);
  if (model.expert_ffn_hidden % c.etp != 0)
    return violated(ConfigRule::kEtpFfn, c.etp, model.expert_ffn_hidden);
  if (c.ep > 1 && c.tp > 1 && !c.sp) return violated(ConfigRule::kEpTpNeedsSp);
  if (c.ep > 1 && job.precision == Precision::kFp16) return violated(ConfigRule::kEpFp16);
  if (c.ep_overlap && (c.ep < 2 || (c.pp > 1 && c.vp < 2) || c.recompute == Recompute::kFull))
    return violated(ConfigRule::kEpOverlap);
  if (model.route_groups > 0 && model.experts % model.route_groups != 0)
    return violated(ConfigRule::kRouteGroups, model.route_groups, model.experts);
  return {};
}

ConfigViolation recompute_rules(const ModelSpec& model, const ParallelConfig& c) {
  // A count above a chunk's layers recomputes the whole chunk (Megatron's
  // block method stops at the chunk's end); only a count no chunk could
  // hold in any layout is refused here. The CLI holds a given config to its
  // own largest chunk (src/cli/recompute_layers_check.cpp).
  if (c.recompute == Recompute::kFull && c.recompute_layers * std::int64_t{c.vp} > model.layers)
    return violated(ConfigRule::kRecomputeLayers, c.recompute_layers, max_chunk_layers(model.layers, c));
  return {};
}

ConfigViolation validate_config(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c) {
  if (auto v = mesh_rules(model, job, c)) return v;
  if (auto v = batch_rules(c)) return v;
  if (auto v = layout_rules(model, c)) return v;
  if (auto v = sharding_rules(c)) return v;
  if (auto v = expert_rules(model, job, c)) return v;
  return recompute_rules(model, c);
}

ConfigViolation validate_pins(const ModelSpec& model, const JobSpec& job) {
  const SearchPins& p = job.pins;
  for (const std::optional<int>& size : {p.tp, p.pp, p.vp, p.cp, p.dp, p.ep, p.etp})
    if (size && *size > kMaxSize) return violated(ConfigRule::kSizeTooLarge, *size, kMaxSize);
  if (p.mbs && *p.mbs > kMaxMbs) return violated(ConfigRule::kMbsTooLarge, *p.mbs, kMaxMbs);
  if (p.tp)
    if (auto v = tp_rule(model, *p.tp)) return v;
  if (p.cp)
    if (auto v = cp_rule(job, *p.cp)) return v;
  if (p.pp)
    if (auto v = pp_rule(model, *p.pp)) return v;
  const std::int64_t model_ranks = std::int64_t{p.tp.value_or(1)} * p.cp.value_or(1) * p.pp.value_or(1);
  if (job.gpus % model_ranks != 0) return violated(ConfigRule::kModelRanksGpus, model_ranks, job.gpus);
  if (p.dp && model_ranks * *p.dp > job.gpus)
    return violated(ConfigRule::kWorld, model_ranks * *p.dp, job.gpus);
  if (p.mbs && job.gbs % *p.mbs != 0) return violated(ConfigRule::kMbsGbs, *p.mbs, job.gbs);
  if (p.ep)
    if (auto v = ep_rule(model, *p.ep)) return v;
  if (p.etp && *p.etp > 1 && !model.is_moe()) return violated(ConfigRule::kEtpDense, *p.etp);
  if ((p.a2a_hierarchical || p.ep_overlap.value_or(false)) && !model.is_moe())
    return violated(ConfigRule::kDispatchDense);
  if (p.ep_overlap.value_or(false) && p.ep && *p.ep < 2) return violated(ConfigRule::kEpOverlap);
  if (p.etp && model.is_moe() && model.expert_ffn_hidden % *p.etp != 0)
    return violated(ConfigRule::kEtpFfn, *p.etp, model.expert_ffn_hidden);
  const std::int64_t expert_ranks = std::int64_t{p.ep.value_or(1)} * p.etp.value_or(1);
  const int stage_gpus = job.gpus / p.pp.value_or(1);
  if (expert_ranks > 1 && stage_gpus % expert_ranks != 0)
    return violated(ConfigRule::kEpShard, expert_ranks, stage_gpus);
  return {};
}

std::string describe(const ConfigViolation& v) {
  const auto n = [](std::int64_t x) { return std::to_string(x); };
  switch (v.rule) {
    case ConfigRule::kOk:
      return "";
    case ConfigRule::kSizeBelowOne:
      return "every parallel size (tp, pp, cp, dp, vp, ep, etp) and the micro-batch size must be at least 1 "
             "(got " +
             n(v.a) + ")";
    case ConfigRule::kSizeTooLarge:
      return "a parallel size of " + n(v.a) + " exceeds parplan's limit of " + n(v.b) +
             "; give a smaller size";
    case ConfigRule::kMbsTooLarge:
      return "a micro-batch of " + n(v.a) + " sequences exceeds parplan's limit of " + n(v.b) +
             "; give a smaller --mbs";
    case ConfigRule::kTpHeads:
      return "tp " + n(v.a) + " must divide the model's " + n(v.b) + " attention heads";
    case ConfigRule::kTpKvGroups:
      return "tp " + n(v.a) + " must divide the model's " + n(v.b) +
             " key/value groups (Megatron requires num_query_groups % tp == 0)";
    case ConfigRule::kTpFfn:
      return "tp " + n(v.a) + " must divide the model's FFN width " + n(v.b);
    case ConfigRule::kCpSeq:
      return "cp " + n(v.a) + " needs seq divisible by 2 * cp = " + n(2 * v.a) + " (got seq " + n(v.b) + ")";
    case ConfigRule::kPpLayers:
      return "pp " + n(v.a) + " exceeds the model's " + n(v.b) + " layers";
    case ConfigRule::kModelRanksGpus:
      return "tp * cp * pp = " + n(v.a) + " must divide the " + n(v.b) + " GPUs";
    case ConfigRule::kWorld:
      return "tp * cp * pp * dp = " + n(v.a) + " must equal the " + n(v.b) + " GPUs";
    case ConfigRule::kMbsGbs:
      return "mbs " + n(v.a) + " must divide gbs " + n(v.b);
    case ConfigRule::kGbsDivisible:
      return "gbs " + n(v.a) + " must be divisible by mbs * dp = " + n(v.b) + " * " + n(v.c);
    case ConfigRule::kSpNeedsTp:
      return "sequence parallelism needs tp > 1";
    case ConfigRule::kLayout:
      return "the model's " + n(v.a) + " layers must split evenly over pp " + n(v.b) + " stages and vp " +
             n(v.c) + " chunks (or give first/last stage layers that leave whole chunks)";
    case ConfigRule::kStageLayers:
      return "first_stage_layers " + n(v.a) + " and last_stage_layers " + n(v.b) +
             " leave no layer for the middle stages of the model's " + n(v.c) +
             " layers; give smaller values";
    case ConfigRule::kInterleave:
      return "the interleaved schedule (vp > 1) needs pp > 1 and micro-batches divisible by pp (pp " +
             n(v.a) + ", " + n(v.b) + " micro-batches)";
    case ConfigRule::kZeroRange:
      return "zero must be 0, 1, 2 or 3 (got " + n(v.a) + ")";
    case ConfigRule::kQuantizedNeedsZero3:
      return "ZeRO++ (hpZ, qwZ, qgZ) and hierarchical partitioning need ZeRO stage 3";
    case ConfigRule::kHpzRanks:
      return "the hpZ partition size must be at least 1 (got " + n(v.a) + ")";
    case ConfigRule::kPartitionNesting:
      return "hierarchical partitions must nest: secondary weights inside the primary, weights and gradients "
             "inside the optimizer partition";
    case ConfigRule::kEpDense:
      return "ep " + n(v.a) + " needs a mixture-of-experts model; this model is dense (use ep 1)";
    case ConfigRule::kEpExperts:
      return "ep " + n(v.a) + " must divide the model's " + n(v.b) + " experts";
    case ConfigRule::kEpShard:
      return "etp * ep = " + n(v.a) + " must divide tp * cp * dp = " + n(v.b) +
             " (MoE parallel folding: the expert grid etp x ep x edp spans a pipeline stage's ranks)";
    case ConfigRule::kEtpDense:
      return "etp " + n(v.a) + " needs a mixture-of-experts model; this model is dense (use etp 1)";
    case ConfigRule::kDispatchDense:
      return "the expert all-to-all (a2a, ep_overlap) needs a mixture-of-experts model; this model is dense";
    case ConfigRule::kEtpFfn:
      return "etp " + n(v.a) + " must divide the expert FFN width " + n(v.b);
    case ConfigRule::kEpTpNeedsSp:
      return "expert and tensor parallelism together need sequence parallelism (Megatron validate_args)";
    case ConfigRule::kEpFp16:
      return "expert parallelism does not run with fp16 (use bf16)";
    case ConfigRule::kEpOverlap:
      return "the overlapped expert-parallel all-to-all needs ep > 1, pp == 1 or vp > 1, and no full "
             "recomputation";
    case ConfigRule::kRouteGroups:
      return "the " + n(v.a) + " routing groups must divide the " + n(v.b) + " experts";
    case ConfigRule::kRecomputeLayers:
      return "recompute layers " + n(v.a) + " exceed the " + n(v.b) + " layers of the largest model chunk";
  }
  return "invalid config";
}

const char* config_problem(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c) {
  // Static texts for callers that only need to know whether (the search);
  // describe(validate_config(...)) gives the numbers.
  switch (validate_config(model, job, c).rule) {
    case ConfigRule::kOk:
      return nullptr;
    case ConfigRule::kSizeBelowOne:
    case ConfigRule::kSizeTooLarge:
    case ConfigRule::kMbsTooLarge:
      return "every parallel size must be between 1 and parplan's limit";
    case ConfigRule::kTpHeads:
      return "tp must divide the attention heads";
    case ConfigRule::kTpKvGroups:
      return "tp must divide the key/value groups";
    case ConfigRule::kTpFfn:
      return "tp must divide the FFN width";
    case ConfigRule::kCpSeq:
      return "seq must be divisible by 2 * cp";
    case ConfigRule::kPpLayers:
      return "pp must not exceed the layers";
    case ConfigRule::kModelRanksGpus:
    case ConfigRule::kWorld:
      return "tp * cp * pp * dp must equal the number of GPUs";
    case ConfigRule::kMbsGbs:
    case ConfigRule::kGbsDivisible:
      return "gbs must be divisible by mbs * dp";
    case ConfigRule::kSpNeedsTp:
      return "sequence parallelism needs tp > 1";
    case ConfigRule::kLayout:
      return "layers must split evenly over pp stages and vp chunks (or give first/last stage layers)";
    case ConfigRule::kStageLayers:
      return "first/last stage layers leave no layer for the middle stages";
    case ConfigRule::kInterleave:
      return "the interleaved schedule (vp > 1) needs pp > 1 and micro-batches divisible by pp";
    case ConfigRule::kZeroRange:
      return "zero must be 0, 1, 2 or 3";
    case ConfigRule::kQuantizedNeedsZero3:
      return "ZeRO++ (hpZ, qwZ, qgZ) and hierarchical partitioning need ZeRO stage 3";
    case ConfigRule::kHpzRanks:
      return "hpZ partition size must be at least 1";
    case ConfigRule::kPartitionNesting:
      return "hierarchical partitions must nest";
    case ConfigRule::kEpDense:
      return "ep > 1 needs a mixture-of-experts model";
    case ConfigRule::kEpExperts:
      return "ep must divide the experts";
    case ConfigRule::kEpShard:
      return "etp * ep must divide tp * cp * dp";
    case ConfigRule::kEtpDense:
      return "etp > 1 needs a mixture-of-experts model";
    case ConfigRule::kDispatchDense:
      return "the expert all-to-all needs a mixture-of-experts model";
    case ConfigRule::kEtpFfn:
      return "etp must divide the expert FFN width";
    case ConfigRule::kEpTpNeedsSp:
      return "expert and tensor parallelism together need sequence parallelism";
    case ConfigRule::kEpFp16:
      return "expert parallelism does not run with fp16";
    case ConfigRule::kEpOverlap:
      return "the overlapped expert-parallel all-to-all needs ep > 1, pp == 1 or vp > 1, and no full "
             "recomputation";
    case ConfigRule::kRouteGroups:
      return "the routing groups must divide the experts";
    case ConfigRule::kRecomputeLayers:
      return "recompute layers exceed the layers of the largest model chunk";
  }
  return "invalid config";
}

}  // namespace parplan
