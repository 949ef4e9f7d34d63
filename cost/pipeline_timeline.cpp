#include "cost/pipeline_timeline.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include "cost/step_internal.h"

namespace parplan {

namespace {

// (micro-batch, chunk) of the k-th forward virtual micro-batch: Megatron's
// get_schedule_table, chunks taking turns in groups of pp micro-batches.
std::pair<int, int> forward_slot(int k, int pp, int vp) {
  const int within = k % (pp * vp);
  return {k / (pp * vp) * pp + within % pp, within / pp};
}

}  // namespace

std::vector<ScheduledPass> megatron_pass_order(int pp, int vp, int micro_batches, int rank) {
  if (pp < 1 || vp < 1 || micro_batches < 1 || rank < 0 || rank >= pp)
    throw std::invalid_argument("megatron_pass_order: pp, vp, micro-batches >= 1 and 0 <= rank < pp");
  // As Megatron-LM (and config_rules.cpp) require of the interleaved schedule.
  if (vp > 1 && (pp < 2 || micro_batches % pp != 0))
    throw std::invalid_argument("megatron_pass_order: vp > 1 needs pp > 1 and micro-batches divisible by pp");
  const int total = micro_batches * vp;
  int warmup = 0;
  if (pp > 1) warmup = vp == 1 ? pp - rank - 1 : 2 * (pp - rank - 1) + (vp - 1) * pp;
  warmup = std::min(warmup, total);
  const auto pass = [&](int k, bool backward) {
    const auto [micro_batch, chunk] = forward_slot(k, pp, vp);
    // The backward walks the chunks the other way (get_model_chunk_id).
    return ScheduledPass{backward ? vp - 1 - chunk : chunk, micro_batch, backward};
  };
  std::vector<ScheduledPass> order;
  order.reserve(2 * static_cast<std::size_t>(total));
  for (int k = 0; k < warmup; ++k) order.push_back(pass(k, false));
  for (int k = 0; k < total - warmup; ++k) {
    order.push_back(pass(k + warmup, false));
    order.push_back(pass(k, true));
  }
  for (int k = total - warmup; k < total; ++k) order.push_back(pass(k, true));
  return order;
}

PipelineTimeline simulate_pipeline(int pp, int vp, int micro_batches, const StagePassTimes& times,
                                   double hop_s) {
  if (pp < 1 || vp < 1 || micro_batches < 1)
    throw std::invalid_argument("simulate_pipeline: pp, vp and micro-batches must be at least 1");
  if (static_cast<int>(times.forward_s.size()) != pp * vp ||
      static_cast<int>(times.backward_s.size()) != pp * vp)
    throw std::invalid_argument("simulate_pipeline: one forward and one backward time per virtual stage");
  PipelineTimeline out;
  out.pp = pp, out.vp = vp, out.micro_batches = micro_batches;
  const int stages = pp * vp;  // virtual stages: chunk c of rank r is stage c pp + r
  constexpr double kNotYet = std::numeric_limits<double>::infinity();
  // End of each (virtual stage, micro-batch) forward and backward.
  std::vector<double> forward_end(static_cast<std::size_t>(stages) * micro_batches, kNotYet);
  std::vector<double> backward_end(forward_end.size(), kNotYet);
  const auto at = [&](int stage, int micro_batch) {
    return static_cast<std::size_t>(stage) * micro_batches + micro_batch;
  };
  std::vector<std::vector<ScheduledPass>> orders(pp);
  for (int r = 0; r < pp; ++r) orders[r] = megatron_pass_order(pp, vp, micro_batches, r);
  std::vector<std::size_t> next(pp, 0);
  std::vector<double> free_at(pp, 0.0);
  out.ops.reserve(2 * static_cast<std::size_t>(stages) * micro_batches);
  // Each sweep runs every rank as far as its inputs allow; the schedule is
  // deadlock-free, so every sweep makes progress until all passes ran.
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < pp; ++r) {
      for (; next[r] < orders[r].size(); ++next[r]) {
        const ScheduledPass& p = orders[r][next[r]];
        const int stage = p.chunk * pp + r;
        double ready = 0;
        if (!p.backward && stage > 0) ready = forward_end[at(stage - 1, p.micro_batch)] + hop_s;
        if (p.backward)
          ready = stage + 1 < stages ? backward_end[at(stage + 1, p.micro_batch)] + hop_s
                                     : forward_end[at(stage, p.micro_batch)];
        if (ready == kNotYet) break;
        const double start = std::max(ready, free_at[r]);
        const double end = start + (p.backward ? times.backward_s[stage] : times.forward_s[stage]);
        (p.backward ? backward_end : forward_end)[at(stage, p.micro_batch)] = end;
        free_at[r] = end;
        out.ops.push_back(PipelineOp{r, p.chunk, p.micro_batch, p.backward, start, end});
        out.span_s = std::max(out.span_s, end);
        progress = true;
      }
    }
  }
  for (int r = 0; r < pp; ++r)
    if (next[r] != orders[r].size())
      throw std::logic_error("simulate_pipeline: the schedule stalled (a pass waits on one never run)");
  return out;
}

PipelineTimeline pipeline_timeline(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                   const ParallelConfig& config) {
  using namespace detail;
  const int pp = config.pp, vp = config.vp;
  StagePassTimes times;
  times.forward_s.assign(static_cast<std::size_t>(pp) * vp, 0.0);
  times.backward_s.assign(times.forward_s.size(), 0.0);
  for (int rank = 0; rank < pp; ++rank) {
    const PerLayerCosts costs = per_layer_costs(model, cluster, job, config, rank);
    const StageLoad load = stage_load(model, job, config, rank);
    const StageTime t = stage_time(config, costs, load);
    // What the cost model charges per micro-batch beside compute
    // (communication left after overlap, the pipeline hop), split as the
    // compute is.
    const double backward_compute_s = t.compute_s - t.forward_s;
    const double forward_share = t.compute_s > 0 ? t.forward_s / t.compute_s : 1.0 / 3.0;
    const double comm_s = t.total() - t.compute_s;
    const double first_s = load.first ? costs.edges.embedding_s : 0.0;
    const double head_forward_s = load.last ? costs.edges.head_forward_s : 0.0;
    const double head_backward_s = load.last ? costs.edges.head_backward_s : 0.0;
    const double layers_forward_s = t.forward_s - first_s - head_forward_s + comm_s * forward_share;
    const double layers_backward_s =
        backward_compute_s - first_s - head_backward_s + comm_s * (1.0 - forward_share);
    for (int chunk = 0; chunk < vp; ++chunk) {
      const std::size_t stage = static_cast<std::size_t>(chunk) * pp + rank;
      times.forward_s[stage] =
          layers_forward_s / vp + (chunk == 0 ? first_s : 0.0) + (chunk == vp - 1 ? head_forward_s : 0.0);
      times.backward_s[stage] =
          layers_backward_s / vp + (chunk == 0 ? first_s : 0.0) + (chunk == vp - 1 ? head_backward_s : 0.0);
    }
  }
  return simulate_pipeline(pp, vp, config.micro_batches(), times, 0.0);
}

}  // namespace parplan
