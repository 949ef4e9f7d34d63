// Multi-head latent attention (DeepSeek-V2/V3): the projection GEMMs of one
// layer, low-rank query and joint key/value compression with a decoupled
// rope key (DeepSeek-V2 report, sec. 2.1), as Megatron-Core splits them.
#pragma once

#include "cost/spec/cluster_spec.h"
#include "cost/spec/model_spec.h"

namespace parplan {

/// Forward time of the attention projections of one MLA layer for `tokens`
/// tokens on one of `tp` ranks: the down projections (h -> q_lora_rank and
/// h -> kv_lora_rank + rope) are replicated over tp (Megatron-Core's
/// MLASelfAttention keeps them whole); the up projections and the output
/// projection are split by heads.
double mla_projection_s(const ModelSpec& model, const DeviceSpec& device, double peak_flops_per_s,
                        double tokens, int tp);

/// Forward time of the query and key/value up projections alone (what
/// Megatron's mla_up_proj recomputation runs again), on one of `tp` ranks.
double mla_up_projection_s(const ModelSpec& model, const DeviceSpec& device, double peak_flops_per_s,
                           double tokens, int tp);

/// Forward FLOPs of those projections for `tokens` tokens (all ranks).
double mla_projection_flops(const ModelSpec& model, double tokens);

}  // namespace parplan
