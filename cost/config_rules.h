// The one validator of parallel configs: the model rules every engine shares,
// one function per family (mesh, batch, layout, sharding, experts,
// recomputation). A violation carries the rule and its numbers and costs no
// allocation, so the search can call it per candidate; describe() words it.
// Pins (partial configs) are checked by the same per-dimension rules, so plan,
// estimate and check reject the same size with the same message.
#pragma once

#include <cstdint>
#include <string>

#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

enum class ConfigRule : std::uint8_t {
  kOk,
  kSizeBelowOne,         // a = the smallest size
  kSizeTooLarge,         // a = the size, b = the limit
  kMbsTooLarge,          // a = the micro-batch size, b = the limit
  kTpHeads,              // a = tp, b = heads
  kTpKvGroups,           // a = tp, b = kv groups
  kTpFfn,                // a = tp, b = ffn width
  kCpSeq,                // a = cp, b = seq
  kPpLayers,             // a = pp, b = layers
  kModelRanksGpus,       // a = tp * cp * pp, b = gpus
  kWorld,                // a = tp * cp * pp * dp, b = gpus
  kMbsGbs,               // a = mbs, b = gbs
  kGbsDivisible,         // a = gbs, b = mbs, c = dp
  kSpNeedsTp,            //
  kLayout,               // a = layers, b = pp, c = vp
  kStageLayers,          // a = first stage layers, b = last stage layers, c = layers
  kInterleave,           // a = pp, b = micro-batches
  kZeroRange,            // a = zero
  kQuantizedNeedsZero3,  //
  kHpzRanks,             // a = hpz ranks
  kPartitionNesting,     //
  kEpDense,              // a = ep
  kEpExperts,            // a = ep, b = experts
  kEpShard,              // a = etp * ep, b = tp * cp * dp
  kEtpDense,             // a = etp
  kDispatchDense,        // an all-to-all choice pinned for a dense model
  kEtpFfn,               // a = etp, b = expert FFN width
  kEpTpNeedsSp,          //
  kEpFp16,               //
  kEpOverlap,            //
  kRouteGroups,          // a = routing groups, b = experts
  kRecomputeLayers,      // a = recompute layers per chunk, b = layers per chunk
};

struct ConfigViolation {
  ConfigRule rule = ConfigRule::kOk;
  std::int64_t a = 0, b = 0, c = 0;
  explicit operator bool() const { return rule != ConfigRule::kOk; }
};

/// Per-dimension rules (also used for pins).
ConfigViolation tp_rule(const ModelSpec& model, int tp);
ConfigViolation cp_rule(const JobSpec& job, int cp);
ConfigViolation pp_rule(const ModelSpec& model, int pp);
ConfigViolation ep_rule(const ModelSpec& model, int ep);

/// Families of rules over a whole config.
ConfigViolation mesh_rules(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c);
ConfigViolation batch_rules(const ParallelConfig& c);
ConfigViolation layout_rules(const ModelSpec& model, const ParallelConfig& c);
ConfigViolation sharding_rules(const ParallelConfig& c);
ConfigViolation expert_rules(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c);
ConfigViolation recompute_rules(const ModelSpec& model, const ParallelConfig& c);

/// Every family in order; the first violation.
ConfigViolation validate_config(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c);
/// The pinned sizes of job.pins against the per-dimension rules and the
/// job's GPUs and batch.
ConfigViolation validate_pins(const ModelSpec& model, const JobSpec& job);

/// One sentence with the numbers ("tp 3 must divide the model's 96
/// attention heads").
std::string describe(const ConfigViolation& violation);

}  // namespace parplan
