// --routing-stats FILE on estimate, plan and check: measured expert loads
// (the file `parplan experts` reads) become the MoE imbalance the cost
// model uses at each expert-parallel size.
#pragma once

#include <string>
#include <vector>

#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "src/io/expert_loads.h"

namespace parplan {

/// Imbalance of one layer's per-GPU loads: max / mean (1 without tokens).
double load_imbalance(const std::vector<double>& gpu_load);

/// The imbalance of `ep` ranks that hold the experts contiguously (rank r
/// holds experts r E/ep ... (r+1) E/ep - 1, Megatron's layout without a
/// balancer), per layer max rank load / mean, averaged over the layers.
/// The mean, not the max: every MoE layer synchronises the ep group in its
/// all-to-all, so each layer runs at its own slowest rank and the step sums
/// the layers; the cost model prices one representative MoE layer, so the
/// mean per-layer excess gives the summed time (the time is linear in the
/// load). The max would price every layer like the worst one.
/// `ep` must divide the expert count.
double contiguous_ep_imbalance(const ExpertLoads& loads, int ep);

/// Reads FILE and fills job.measured_ep_imbalance for every divisor of the
/// model's expert count (clearing job.moe_imbalance). InputError (naming
/// --routing-stats) for a bad file, a dense model or an expert count that
/// differs from the model's.
void apply_routing_stats(const std::string& path, const ModelSpec& model, JobSpec& job);

}  // namespace parplan
