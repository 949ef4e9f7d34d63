#include "src/tune/trials.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cost/step_cost.h"
#include "solvers/profile_fit.h"
#include "src/search/search.h"

namespace parplan {

std::vector<FittedConstant> tune_constants(const ClusterSpec& cluster) {
  std::vector<FittedConstant> out;
  for (const auto& c : fitted_constants(cluster)) {
    if (c.memory_only || c.key == "gemm_half_dim" || c.key == "gemm_half_flops" ||
        c.key.find("latency") != std::string::npos || c.key == "memory_bound_efficiency")
      continue;
    out.push_back(c);
  }
  return out;
}

std::vector<Trial> top_plan_trials(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                   int top, const TrialSearchLimit& limit) {
  SearchOptions options;
  options.top_k = top;
  options.deadline = limit.deadline;
  options.engines = limit.engines;
  const SearchResult result = search_configs(model, cluster, job, options);
  if (limit.stopped_at_deadline && result.stopped_at_deadline) *limit.stopped_at_deadline = true;
  if (limit.infeasible_reason) *limit.infeasible_reason = result.infeasible_reason;
  if (limit.no_valid_split) *limit.no_valid_split = result.no_valid_split;
  std::vector<Trial> out;
  for (std::size_t i = 0; i < result.best.size(); ++i) {
    Trial t;
    t.name = "plan-" + std::to_string(i + 1);
    t.why = "plan #" + std::to_string(i + 1);
    t.job = job;
    t.config = result.best[i].config;
    t.predicted_step_s = result.best[i].cost.time.step_s;
    out.push_back(t);
  }
  return out;
}

namespace {
// ", predicted 6.1 % slower": within the held-out MoE error, a layout
// trial is worth its run.
std::string slower_text(double step_s, double best_step_s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, ", predicted %.1f %% slower", 100.0 * (step_s / best_step_s - 1.0));
  return buf;
}
}  // namespace

std::vector<Trial> expert_layout_trials(const ModelSpec& model, const ClusterSpec& cluster,
                                        const JobSpec& job, const Trial& best,
                                        const std::vector<int>& skip_ep, int count,
                                        const TrialSearchLimit& limit) {
  std::vector<Trial> out;
  if (!model.is_moe() || job.pins.ep || count <= 0) return out;
  for (int ep = 1; ep <= model.experts && ep <= job.gpus; ++ep) {
    if (model.experts % ep != 0 || ep == best.config.ep ||
        std::find(skip_ep.begin(), skip_ep.end(), ep) != skip_ep.end())
      continue;
    JobSpec pinned = job;
    pinned.pins.ep = ep;
    SearchOptions options;
    options.top_k = 1;
    options.deadline = limit.deadline;
    options.engines = limit.engines;
    const SearchResult result = search_configs(model, cluster, pinned, options);
    if (limit.stopped_at_deadline && result.stopped_at_deadline) *limit.stopped_at_deadline = true;
    if (result.best.empty()) continue;
    Trial t;
    t.name = "layout-ep" + std::to_string(ep);
    t.why = "expert layout: the best plan at ep " + std::to_string(ep) + " (plan #1 runs ep " +
            std::to_string(best.config.ep) + ")";
    t.job = job;  // the pin chose the layout; the trial runs the job as given
    t.config = result.best.front().config;
    t.predicted_step_s = result.best.front().cost.time.step_s;
    t.expert_layout = true;
    out.push_back(t);
  }
  for (Trial& t : out) t.why += slower_text(t.predicted_step_s, best.predicted_step_s);
  std::sort(out.begin(), out.end(),
            [](const Trial& a, const Trial& b) { return a.predicted_step_s < b.predicted_step_s; });
  if (static_cast<int>(out.size()) > count) out.resize(static_cast<std::size_t>(count));
  return out;
}

namespace {
bool add_if_valid(const ModelSpec& model, const ClusterSpec& cluster, Trial t, std::vector<Trial>& out) {
  t.config.gbs = t.job.gbs;
  t.config.dp = t.job.gpus / (t.config.tp * t.config.cp * t.config.pp);
  if (t.config.dp < 1 || t.config.world() != t.job.gpus) return false;
  if (config_problem(model, t.job, t.config) != nullptr) return false;
  const CostReport cost = estimate_cost(model, cluster, t.job, t.config);
  // A probe is a measurement, not the run to train with: one within 5 % of
  // the memory limit would run out of memory on a cluster whose reserve is
  // a little larger than the uncalibrated profile's, measuring nothing.
  constexpr double kProbeMemoryMargin = 0.95;
  if (!cost.memory.fits || cost.memory.peak_bytes > kProbeMemoryMargin * cost.memory.capacity_bytes)
    return false;
  t.predicted_step_s = cost.time.step_s;
  out.push_back(t);
  return true;
}
}  // namespace

std::vector<Trial> candidate_trials(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                    const TrialSearchLimit& limit) {
  std::vector<Trial> out = top_plan_trials(model, cluster, job, 8, limit);
  if (out.empty()) return out;
  const Trial best = out.front();
  if (model.is_moe() && !job.pins.ep) {
    // The best plan of each other expert-parallel size: a top plan when one
    // runs it (the first one is that size's best), else a pinned search.
    // The fastest is always measured (choose_trials), the others when the
    // design wants them.
    std::vector<int> seen;
    for (Trial& t : out) {
      if (t.config.ep == best.config.ep || std::find(seen.begin(), seen.end(), t.config.ep) != seen.end())
        continue;
      seen.push_back(t.config.ep);
      t.expert_layout = true;
      t.why += ", the best at ep " + std::to_string(t.config.ep) + " (plan #1 runs ep " +
               std::to_string(best.config.ep) + ")" + slower_text(t.predicted_step_s, best.predicted_step_s);
    }
    const int more = std::max(0, 2 - static_cast<int>(seen.size()));
    for (Trial& t : expert_layout_trials(model, cluster, job, best, seen, more, limit))
      out.push_back(std::move(t));
  }
  auto probe = [&](const std::string& name, const std::string& why) {
    Trial t = best;
    t.name = "probe-" + name;
    t.why = "probe: " + why;
    return t;
  };
  {
    Trial t =
        probe("no-overlap", "gradient reduction not overlapped (network efficiency apart from the slowdown)");
    t.config.overlap_grad_reduce = false;
    add_if_valid(model, cluster, t, out);
  }
  for (int factor : {2, 4}) {
    Trial t = probe("mbs-x" + std::to_string(factor), "micro-batch x" + std::to_string(factor) +
                                                          " (per-layer overhead apart from GEMM efficiency)");
    t.config.mbs *= factor;
    add_if_valid(model, cluster, t, out);
    Trial d = probe("mbs-div" + std::to_string(factor), "micro-batch / " + std::to_string(factor));
    if (best.config.mbs % factor == 0) {
      d.config.mbs /= factor;
      add_if_valid(model, cluster, d, out);
    }
  }
  for (int factor : {4, 2}) {
    Trial t = probe("seq-div" + std::to_string(factor),
                    "sequence / " + std::to_string(factor) + ", same tokens per step (attention curve)");
    if (job.seq % factor != 0) continue;
    t.job.seq = job.seq / factor;
    t.job.gbs = job.gbs * factor;
    add_if_valid(model, cluster, t, out);
  }
  for (int factor : {2, 4}) {
    Trial t = probe("seq-x" + std::to_string(factor),
                    "sequence x" + std::to_string(factor) + ", same tokens per step (attention curve)");
    if (job.seq * factor > model.max_positions || job.gbs % factor != 0) continue;
    t.job.seq = job.seq * factor;
    t.job.gbs = job.gbs / factor;
    add_if_valid(model, cluster, t, out);
  }
  {
    // One node (or one model replica when that is larger): no inter-node
    // data-parallel traffic. The batch per replica stays the same.
    const int replica = best.config.tp * best.config.cp * best.config.pp;
    const int gpus = std::max(replica, cluster.ranks_per_node);
    if (gpus < job.gpus && gpus % replica == 0) {
      Trial t = probe("one-node", "one node: no inter-node gradient traffic");
      const int dp = gpus / replica;
      t.job.gpus = gpus;
      t.job.gbs = std::max(1, job.gbs / best.config.dp) * dp;
      // Sharded over fewer ranks, the states may not fit: recomputing the
      // forward frees the activations and keeps what the probe measures.
      if (!add_if_valid(model, cluster, t, out) && t.config.recompute != Recompute::kFull) {
        t.why += ", full recomputation to fit";
        t.config.recompute = Recompute::kFull;
        t.config.recompute_layers = 0;
        add_if_valid(model, cluster, t, out);
      }
    }
  }
  {
    Trial t = probe("recompute-full", "full recomputation (repeats the forward pass)");
    t.config.recompute = Recompute::kFull;
    t.config.recompute_layers = 0;
    add_if_valid(model, cluster, t, out);
  }
  return out;
}

std::vector<FitRun> trial_runs(const ModelSpec& model, const std::vector<Trial>& trials) {
  std::vector<FitRun> runs;
  for (const auto& t : trials) {
    FitRun r;
    r.name = t.name;
    r.model = model;
    r.job = t.job;
    r.config = t.config;
    r.measured_step_s = t.predicted_step_s;
    runs.push_back(r);
  }
  return runs;
}

namespace {
/// log det(A) of a small symmetric positive definite matrix (Cholesky).
double log_det(std::vector<std::vector<double>> a) {
  const std::size_t n = a.size();
  double sum = 0;
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j][j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j][k] * a[j][k];
    if (d <= 0) return -1e300;
    const double l = std::sqrt(d);
    a[j][j] = l;
    sum += 2 * std::log(l);
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i][j];
      for (std::size_t k = 0; k < j; ++k) s -= a[i][k] * a[j][k];
      a[i][j] = s / l;
    }
  }
  return sum;
}
}  // namespace

std::vector<Trial> choose_trials(const ModelSpec& model, const ClusterSpec& cluster,
                                 const std::vector<Trial>& candidates,
                                 const std::vector<FittedConstant>& constants, int k) {
  if (candidates.empty() || k <= 0) return {};
  const auto rows = fit_sensitivities(cluster, trial_runs(model, candidates), constants);
  const std::size_t m = constants.size();
  // A small ridge keeps log det finite while the design is still rank
  // deficient, so each pick first raises the rank, then the precision.
  constexpr double kRidge = 1e-6;
  std::vector<std::vector<double>> info(m, std::vector<double>(m, 0));
  for (std::size_t j = 0; j < m; ++j) info[j][j] = kRidge;
  std::vector<bool> taken(candidates.size(), false);
  std::vector<Trial> chosen;
  auto take = [&](std::size_t i) {
    // A probe can land on a top plan's config: the same run twice would
    // waste a trial and give calibrate two identical logs.
    for (std::size_t j = 0; j < candidates.size(); ++j)
      taken[j] =
          taken[j] ||
          (candidates[j].config == candidates[i].config && candidates[j].job.gpus == candidates[i].job.gpus &&
           candidates[j].job.gbs == candidates[i].job.gbs && candidates[j].job.seq == candidates[i].job.seq);
    chosen.push_back(candidates[i]);
    for (std::size_t a = 0; a < m; ++a)
      for (std::size_t b = 0; b < m; ++b) info[a][b] += rows[i][a] * rows[i][b];
  };
  take(0);  // the best plan: the run the user wants anyway
  // The fastest other expert layout (candidates list them fastest first):
  // which layout wins is what a MoE job's trials must settle first.
  for (std::size_t i = 1; i < candidates.size() && static_cast<int>(chosen.size()) < k; ++i) {
    if (!candidates[i].expert_layout || taken[i]) continue;
    take(i);
    break;
  }
  while (static_cast<int>(chosen.size()) < k) {
    double best_score = -1e301;
    std::size_t best = candidates.size();
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (taken[i]) continue;
      auto trial = info;
      for (std::size_t a = 0; a < m; ++a)
        for (std::size_t b = 0; b < m; ++b) trial[a][b] += rows[i][a] * rows[i][b];
      const double score = log_det(trial);
      if (score > best_score) best_score = score, best = i;
    }
    if (best == candidates.size()) break;
    take(best);
  }
  return chosen;
}

}  // namespace parplan
