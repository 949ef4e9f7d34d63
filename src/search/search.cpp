#include "src/search/search.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "cost/collectives.h"
#include "cost/config_rules.h"
#include "cost/moe_dispatch.h"
#include "cost/stage_layout.h"
#include "cost/step_cost.h"
#include "solvers/stage_split.h"
#include "src/io/input_limits.h"
#include "src/search/sharding_choices.h"

namespace parplan {

using search_detail::kMaxShardingChoices;
using search_detail::named_levels;
using search_detail::sharding_choices;
using search_detail::ShardingChoice;

namespace {

std::vector<int> divisors(int n, int limit) {
  std::vector<int> out;
  for (int d = 1; d <= n && d <= limit; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

bool pinned_ok(const std::optional<int>& pin, int value) { return !pin || *pin == value; }

// One (tp, cp, pp) mesh shape; dp follows.
struct Mesh {
  int tp, cp, pp, dp;
};

// Keeps the k best (smallest step) configs.
struct TopK {
  std::vector<RankedConfig> items;
  int k = 5;
  double threshold() const {
    return static_cast<int>(items.size()) < k ? std::numeric_limits<double>::infinity()
                                              : items.back().cost.time.step_s;
  }
  void offer(const ParallelConfig& config, const CostReport& cost, int engine) {
    if (cost.time.step_s >= threshold()) return;
    RankedConfig entry{config, cost, engine};
    auto at = std::upper_bound(items.begin(), items.end(), cost.time.step_s,
                               [](double s, const RankedConfig& r) { return s < r.cost.time.step_s; });
    items.insert(at, entry);
    if (static_cast<int>(items.size()) > k) items.pop_back();
  }
};

struct Local {
  TopK top;
  SearchStats stats;
  double least_peak_bytes = std::numeric_limits<double>::infinity();
  ParallelConfig least_peak_config;
  int structural_ok = 0;
  bool searched = false;
  long engine_ok = 0;
  /// Shapes a pinned ZeRO stage > 0 met with nothing to shard over (dp x cp = 1).
  long unshardable = 0;
  /// Why the first selected engine rejected a candidate (a static sentence).
  const char* engine_reason = nullptr;
};

// One expert layout of a mesh: ep, etp and the all-to-all variant.
struct ExpertChoice {
  int ep = 1;
  int etp = 1;
  bool hierarchical = false;
};
constexpr int kMaxExpertChoices = 192;

// The expert layouts worth trying (pins respected): every etp dividing tp
// (Megatron runs any etp; an engine that runs only 1 or tp refuses the rest
// in the engine check), every ep dividing the experts whose expert grid folds
// into the stage (etp * ep divides tp * cp * dp), flat all-to-all, and
// hierarchical when the group spans nodes.
int expert_choices(const ModelSpec& model, const ClusterSpec& cluster, const SearchPins& pins,
                   const ParallelConfig& base, ExpertChoice out[kMaxExpertChoices]) {
  if (!model.is_moe()) {
    out[0] = ExpertChoice{};
    return 1;
  }
  const int stage_ranks = base.tp * base.cp * base.dp;
  int n = 0;
  // A pinned etp is tried as given, as estimate takes it (the validator's
  // rules only); free, the divisors of tp.
  for (int etp = pins.etp.value_or(1); etp <= pins.etp.value_or(base.tp); ++etp) {
    if ((!pins.etp && base.tp % etp != 0) || model.expert_ffn_hidden % etp != 0) continue;
    for (int ep = 1; ep <= model.experts && n + 2 <= kMaxExpertChoices; ++ep) {
      if (model.experts % ep != 0 || stage_ranks % (std::int64_t{etp} * ep) != 0 || !pinned_ok(pins.ep, ep))
        continue;
      ParallelConfig probe = base;
      probe.ep = ep;
      probe.etp = etp;
      // A pinned dispatch is the only one; free, hierarchical is tried only
      // where it can differ (the group spans nodes).
      if (!pins.a2a_hierarchical.value_or(false)) out[n++] = ExpertChoice{ep, etp, false};
      if (ep > 1 && pins.a2a_hierarchical.value_or(ep_spans_nodes(cluster, probe)))
        out[n++] = ExpertChoice{ep, etp, true};
    }
  }
  return n;
}

std::vector<Recompute> recompute_choices(const JobSpec& job) {
  if (job.pins.recompute) return {*job.pins.recompute};
  return {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
}

}  // namespace

const std::array<PartitionPlacement, 4>& hierarchical_placements() {
  using L = PartitionLevel;
  // The 3-level scheme (weights per package, gradients per node, optimizer
  // over the job); weights per node with a package secondary; weights and
  // gradients per node; and every state per node (MiCS-like: only the
  // gradient all-reduce crosses nodes, once per step).
  static const std::array<PartitionPlacement, 4> placements = {
      PartitionPlacement{L::kPackage, L::kPackage, L::kNode, L::kJob},
      PartitionPlacement{L::kNode, L::kPackage, L::kNode, L::kJob},
      PartitionPlacement{L::kNode, L::kNode, L::kNode, L::kJob},
      PartitionPlacement{L::kNode, L::kNode, L::kNode, L::kNode}};
  return placements;
}

bool apply_best_hierarchical_partition(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                       ParallelConfig& config) {
  bool found = false;
  bool found_fits = false;
  double best_s = 0;
  ParallelConfig best = config;
  for (const PartitionPlacement& placement : hierarchical_placements()) {
    ParallelConfig candidate = config;
    apply_hierarchical_partition(candidate, named_levels(cluster, config, placement));
    if (placement_problem(cluster, candidate) != nullptr || config_problem(model, job, candidate) != nullptr)
      continue;
    const CostReport cost = estimate_cost(model, cluster, job, candidate);
    const bool fits = cost.memory.fits;
    // Prefer placements that fit, then the fastest.
    if (!found || (fits && !found_fits) || (fits == found_fits && cost.time.step_s < best_s)) {
      found = true;
      found_fits = fits;
      best_s = cost.time.step_s;
      best = candidate;
    }
  }
  if (found) config = best;
  return found;
}

double shape_lower_bound_s(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                           ParallelConfig shape, int zero_max) {
  // DeepSpeed sums micro-batch gradients in passes whose cost depends on
  // the ZeRO stage (cost/grad_accumulation.h; ZeRO-0's bf16 optimizer pays
  // the most), so there the least over the stages; elsewhere the stage
  // changes only the data-parallel and optimizer terms left out.
  const int last = job.grad_accumulation == GradAccumulation::kDeepSpeed ? zero_max : 0;
  double bound_s = INFINITY;
  for (int zero = 0; zero <= last; ++zero) {
    shape.zero = zero;
    const TimeBreakdown bound = estimate_step_time(model, cluster, job, shape);
    bound_s = std::min(bound_s, bound.step_s - bound.dp_comm_s - bound.optimizer_s);
  }
  return bound_s;
}

SearchResult search_configs(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                            const SearchOptions& options) {
  bool engines_overlap = false;
  for (int e = 0; e < options.engines.count; ++e)
    engines_overlap = engines_overlap || engine_capabilities(options.engines.engines[e]).ep_overlap;
  const auto start = std::chrono::steady_clock::now();
  const SearchPins& pins = job.pins;
  const int world = job.gpus;
  // Tensor parallelism stays inside a node unless pinned wider.
  const int tp_limit = pins.tp.value_or(cluster.ranks_per_node);
  std::vector<Mesh> meshes;
  // Context parallelism up to 64, or up to a rank per 4096 tokens of the
  // sequence where that is more (million-token sequences), or as pinned.
  const int cp_limit = pins.cp.value_or(std::max(64, job.seq / 4096));
  for (int tp : divisors(world, tp_limit)) {
    if (!pinned_ok(pins.tp, tp) || tp_rule(model, tp)) continue;
    for (int cp : divisors(world / tp, cp_limit)) {
      if (!pinned_ok(pins.cp, cp) || cp_rule(job, cp)) continue;
      for (int pp : divisors(world / (tp * cp), model.layers)) {
        if (!pinned_ok(pins.pp, pp)) continue;
        const int dp = world / (tp * cp * pp);
        if (!pinned_ok(pins.dp, dp) || job.gbs % dp != 0) continue;
        // Heterogeneous clusters: a mesh whose tensor, context or data-parallel
        // groups cross node groups is searched too, those groups costed on the
        // link between groups (Holmes keeps them inside a group, which on a
        // slow group can cost more than one transport everywhere).
        meshes.push_back({tp, cp, pp, dp});
      }
    }
  }

  // One result per mesh shape, merged in mesh order: the pruning threshold
  // and the counters never depend on which thread finished first.
  std::vector<Local> locals(meshes.size());
  for (Local& l : locals) l.top.k = options.top_k;
  std::atomic<bool> stopped{false};
  const bool flash =
      pins.flash_attention.value_or(cluster.default_flash_attention || fused_attention_only(options.engines));
  const auto recomputes = recompute_choices(job);
  bool selects_megatron_deepspeed = false;
  for (int e = 0; e < options.engines.count; ++e)
    selects_megatron_deepspeed =
        selects_megatron_deepspeed || options.engines.engines[e] == Engine::kMegatronDeepSpeed;

  tbb::parallel_for(std::size_t{0}, meshes.size(), [&](std::size_t index) {
    if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) {
      stopped = true;
      return;
    }
    Local& local = locals[index];
    local.searched = true;
    const Mesh& mesh = meshes[index];
    const int per_replica = job.gbs / mesh.dp;
    for (int mbs : divisors(per_replica, pins.mbs.value_or(options.max_mbs))) {
      if (!pinned_ok(pins.mbs, mbs)) continue;
      const int m = per_replica / mbs;
      const int stage_layers = model.layers / mesh.pp;
      const int vp_max = std::max(1, std::min(stage_layers, pins.vp.value_or(kMaxSearchVp)));
      for (int vp = 1; vp <= vp_max; ++vp) {
        if (!pinned_ok(pins.vp, vp)) continue;
        if (vp > 1 && (mesh.pp < 2 || stage_layers % vp != 0 || m % mesh.pp != 0)) continue;
        ParallelConfig base;
        base.tp = mesh.tp;
        base.cp = mesh.cp;
        base.pp = mesh.pp;
        base.dp = mesh.dp;
        base.vp = vp;
        base.mbs = mbs;
        base.gbs = job.gbs;
        base.sp = pins.sp.value_or(mesh.tp > 1);
        base.flash_attention = flash;
        // Expert sizes (MoE parallel folding) and the all-to-all variant.
        ExpertChoice experts[kMaxExpertChoices];
        const int expert_count = expert_choices(model, cluster, pins, base, experts);
        for (int e = 0; e < expert_count; ++e) {
          ParallelConfig shape = base;
          shape.ep = experts[e].ep;
          shape.etp = experts[e].etp;
          shape.a2a_hierarchical = experts[e].hierarchical;
          // Allowed overlap for the bound; each recompute choice sets its own.
          const bool overlap_allowed = shape.ep > 1 && (shape.pp == 1 || shape.vp > 1);
          if (pins.ep_overlap.value_or(false) && !overlap_allowed) continue;
          // Free, the overlap only where an engine of the selection runs it:
          // otherwise every such candidate would be costed overlapped and
          // then dropped by the engine check, leaving no expert-parallel
          // plan without pipelining.
          shape.ep_overlap = overlap_allowed && pins.ep_overlap.value_or(engines_overlap);
          // Layouts: the even split when Megatron accepts it, and the fastest
          // uneven split (stage-split formulation, exact fast path) when it
          // differs; a candidate that does not fit on the layout holding the
          // fastest split is split again under its own memory (its ZeRO stage,
          // sharding and recomputation) below. A pinned first/last split is
          // the only layout.
          const bool pinned_split = pins.first_stage_layers.has_value() || pins.last_stage_layers.has_value();
          if (pinned_split) {
            shape.first_stage_layers = pins.first_stage_layers.value_or(0);
            shape.last_stage_layers = pins.last_stage_layers.value_or(0);
          }
          ParallelConfig fastest = shape;
          const bool free_split = !pinned_split && apply_stage_split(model, cluster, job, fastest, false);
          const bool has_uneven = free_split && !even_split(fastest);
          // A heterogeneous cluster's per-stage counts run on Megatron-LM's
          // own layout only as a first/last split: that one too, for the
          // engines without per-stage counts.
          ParallelConfig first_last = shape;
          const bool has_first_last = has_uneven && fastest.custom_split() &&
                                      apply_stage_split(model, cluster, job, first_last, false, true) &&
                                      !even_split(first_last) && !same_split(first_last, fastest);
          // Megatron-DeepSpeed runs layers that do not divide over pp as
          // DeepSpeed's partition splits them, whatever split is fastest.
          ParallelConfig deepspeed_split = shape;
          const bool has_deepspeed_split = !pinned_split && selects_megatron_deepspeed && mesh.pp > 1 &&
                                           vp == 1 && model.layers % mesh.pp != 0 &&
                                           apply_megatron_deepspeed_split(model, deepspeed_split) &&
                                           !(has_uneven && same_split(deepspeed_split, fastest)) &&
                                           !(has_first_last && same_split(deepspeed_split, first_last));
          for (int layout = 0; layout < 4; ++layout) {
            if (layout == 1 && !has_uneven) continue;
            if (layout == 2 && !has_first_last) continue;
            if (layout == 3 && !has_deepspeed_split) continue;
            if (layout == 1) shape = fastest;
            if (layout == 2) shape = first_last;
            if (layout == 3) shape = deepspeed_split;
            if (config_problem(model, job, shape) != nullptr) continue;
            ++local.structural_ok;
            const bool resplit = free_split && layout != 3 && (layout >= 1 || !has_uneven);
            // With pp > 1, the highest ZeRO stage an engine of the selection
            // runs beside a pipeline (torchtitan's FSDP2 + PP: 3).
            int zero_max = 3;
            if (mesh.pp > 1) {
              zero_max = 0;
              for (int e = 0; e < options.engines.count; ++e)
                zero_max =
                    std::max(zero_max, engine_capabilities(options.engines.engines[e]).max_zero_with_pp);
            }
            // A split solved under a memory cap is no faster than the
            // fastest one, so the shape's bound holds for it too.
            const double bound_s = shape_lower_bound_s(model, cluster, job, shape, zero_max);
            local.stats.evaluated += job.grad_accumulation == GradAccumulation::kDeepSpeed ? zero_max + 1 : 1;
            // Costs one candidate, keeping it when an engine runs it and it fits.
            enum class Outcome { kRefused, kNoFit, kKept };
            const auto evaluate = [&](ParallelConfig config) {
              if (config.recompute == Recompute::kFull) {
                if (pins.recompute_layers) {
                  config.recompute_layers = *pins.recompute_layers;
                } else {
                  const int k = min_recompute_layers(model, cluster, job, config);
                  config.recompute_layers = k < 0 ? max_chunk_layers(model.layers, config) : k;
                }
              }
              // The engines' spaces: a table lookup per engine, no allocation.
              auto engine_running = [&] {
                return first_engine_running(options.engines, model, job,
                                            options.allow_unreleased && config.hierarchical_partition
                                                ? released_part(config)
                                                : config);
              };
              int engine = engine_running();
              // An engine that recomputes every layer or none (DeepSpeed's
              // checkpointing) runs the config with every layer recomputed.
              if (engine < 0 && config.recompute == Recompute::kFull && !pins.recompute_layers &&
                  config.recompute_layers < max_chunk_layers(model.layers, config)) {
                config.recompute_layers = max_chunk_layers(model.layers, config);
                engine = engine_running();
              }
              if (engine < 0) {
                if (local.engine_reason == nullptr)
                  local.engine_reason =
                      capability_problem(engine_capabilities(options.engines.engines[0]), model, job, config);
                return Outcome::kRefused;
              }
              ++local.engine_ok;
              const MemoryBreakdown memory = estimate_memory(model, cluster, job, config);
              if (memory.peak_bytes < local.least_peak_bytes) {
                local.least_peak_bytes = memory.peak_bytes;
                local.least_peak_config = config;
              }
              if (!memory.fits) return Outcome::kNoFit;
              const CostReport cost = estimate_cost(model, cluster, job, config, memory);
              ++local.stats.evaluated;
              ++local.stats.feasible;
              local.top.offer(config, cost, engine);
              return Outcome::kKept;
            };
            const bool sharded_pin = pins.zeropp == true || pins.hierarchical_partition == true;
            for (int zero = sharded_pin ? 3 : 0; zero <= zero_max; ++zero) {
              if (!pinned_ok(pins.zero, zero)) continue;
              if (zero > 0 && mesh.dp * mesh.cp == 1) {  // nothing to shard over
                local.unshardable += pins.zero.has_value();
                continue;
              }
              ShardingChoice shardings[kMaxShardingChoices];
              const int sharding_count =
                  zero == 3 ? sharding_choices(cluster, job, options, shape, shardings) : 1;
              for (int variant = 0; variant < sharding_count; ++variant) {
                for (Recompute recompute : recomputes) {
                  // A pinned overlap runs without full recomputation only.
                  if (pins.ep_overlap.value_or(false) && recompute == Recompute::kFull) continue;
                  ++local.stats.candidates;
                  if (bound_s >= local.top.threshold()) continue;
                  ParallelConfig config = shape;
                  config.zero = zero;
                  if (zero == 3 && shardings[variant].zeropp) apply_zeropp(cluster, config);
                  if (zero == 3 && shardings[variant].hsdp_ranks > 0)
                    config.hpz_ranks = shardings[variant].hsdp_ranks;
                  if (zero == 3 && shardings[variant].hierarchical)
                    apply_hierarchical_partition(config, shardings[variant].placement);
                  if (zero == 3 && !shardings[variant].quantized) config.qwz = config.qgz = false;
                  config.recompute = recompute;
                  config.ep_overlap = shape.ep_overlap && recompute != Recompute::kFull;
                  if (evaluate(config) != Outcome::kNoFit || !resplit) continue;
                  // The fastest split does not fit this candidate: the fastest
                  // one that does under its own memory-saving options. The even
                  // layout, when it is one, was costed on its own.
                  ParallelConfig capped = config;
                  if (apply_stage_split(model, cluster, job, capped, true, layout == 2) &&
                      !same_split(capped, shape) && !even_split(capped) &&
                      config_problem(model, job, capped) == nullptr)
                    evaluate(capped);
                }
              }
            }
          }
        }
      }
    }
  });

  SearchResult result;
  TopK merged;
  merged.k = options.top_k;
  double least_peak = std::numeric_limits<double>::infinity();
  ParallelConfig least_config;
  int structural = 0;
  long engine_ok = 0;
  long unshardable = 0;
  const char* engine_reason = nullptr;
  for (const Local& local : locals) {
    engine_ok += local.engine_ok;
    unshardable += local.unshardable;
    if (engine_reason == nullptr) engine_reason = local.engine_reason;
    for (const auto& item : local.top.items) merged.offer(item.config, item.cost, item.engine);
    result.stats.candidates += local.stats.candidates;
    result.stats.evaluated += local.stats.evaluated;
    result.stats.feasible += local.stats.feasible;
    structural += local.structural_ok;
    result.stats.meshes_searched += local.searched ? 1 : 0;
    if (local.least_peak_bytes < least_peak)
      least_peak = local.least_peak_bytes, least_config = local.least_peak_config;
  }
  result.best = std::move(merged.items);
  result.stats.meshes = static_cast<long>(meshes.size());
  result.stopped_at_deadline = stopped;
  if (result.best.empty() && result.stopped_at_deadline) {
    result.infeasible_reason = "the time limit was reached before any config that fits was found (" +
                               std::to_string(result.stats.meshes_searched) + " of " +
                               std::to_string(result.stats.meshes) + " mesh shapes searched)";
  } else if (result.best.empty()) {
    char text[1024];
    result.no_valid_split = structural == 0;
    if (structural > 0 && engine_ok == 0 && pins.hsdp_shard) {
      std::snprintf(text, sizeof text,
                    "hsdp_shard: no split of %d GPUs has a data-parallel size that --hsdp-shard %d divides "
                    "and leaves replicas (dp a multiple of %d, at least %d); give another --hsdp-shard",
                    world, *pins.hsdp_shard, *pins.hsdp_shard, 2 * *pins.hsdp_shard);
    } else if (structural > 0 && engine_ok == 0 && unshardable > 0 && engine_reason == nullptr) {
      result.no_valid_split = true;  // the pins contradict each other, as a split that divides nothing
      std::snprintf(
          text, sizeof text,
          "zero: ZeRO-%d shards the model states over the data-parallel (x cp) ranks, and every split "
          "of %d GPUs the pinned sizes leave has dp x cp = 1; pin --zero 0 or leave ranks to data "
          "parallelism",
          *pins.zero, world);
    } else if (structural > 0 && engine_ok == 0) {
      result.engine_refusal = engine_reason ? engine_reason : "unsupported";
      std::snprintf(
          text, sizeof text, "engine: no config of the search space runs on %s (%s: %s); %s",
          options.engines.any ? "any released engine" : engine_capabilities(options.engines.engines[0]).name,
          engine_capabilities(options.engines.engines[0]).name, engine_reason ? engine_reason : "unsupported",
          // Unfused attention came from the profile's default, not a flag.
          !flash && !pins.flash_attention && engine_reason != nullptr &&
                  std::strstr(engine_reason, "flash") != nullptr
              ? "the cluster profile's attention default is unfused: add --attention flash"
              : "choose another --engine, or drop the option that asks for it");
    } else if (structural == 0 && job.pins.sp.value_or(false) && world < 2) {
      std::snprintf(
          text, sizeof text,
          "sequence parallelism (sp) needs tp > 1, and %d GPU allows only tp 1; drop sp or add GPUs", world);
    } else if (structural == 0) {
      // Name the pins: they are what the user can change.
      std::string pins;
      const SearchPins& p = job.pins;
      for (const auto& [name, value] :
           {std::pair{"tp", p.tp}, std::pair{"pp", p.pp}, std::pair{"vp", p.vp}, std::pair{"cp", p.cp},
            std::pair{"dp", p.dp}, std::pair{"mbs", p.mbs}, std::pair{"ep", p.ep}, std::pair{"etp", p.etp}})
        if (value) pins += std::string(pins.empty() ? "" : ", ") + name + " " + std::to_string(*value);
      // Sequence parallelism asked for rules out tp 1, the split every job
      // has: name it, or a single GPU looks as if it could not be split.
      if (p.sp.value_or(false)) pins += std::string(pins.empty() ? "" : ", ") + "sp, so tp > 1";
      // Forbidding sp rules out expert parallelism beside tp > 1
      // (moe_config_problem): name it, or the split looks merely indivisible.
      if (p.sp.has_value() && !*p.sp && model.is_moe())
        pins += std::string(pins.empty() ? "" : ", ") + "no sp, so ep 1 or tp 1";
      std::snprintf(
          text, sizeof text,
          "no split of %d GPUs divides the job: check that gbs %d, seq %d and the model's %d heads and "
          "%d layers admit tp * cp * pp * dp = %d with gbs divisible by dp%s%s%s",
          world, job.gbs, job.seq, model.heads, model.layers, world,
          pins.empty()
              ? ""
              : " and layers by pp * vp (with vp > 1, the micro-batches per replica, gbs / (dp * mbs), "
                "a multiple of pp), with the pinned sizes (",
          pins.c_str(), pins.empty() ? "" : ")");
    } else {
      // Sizes the user pinned bound the leanest config: unpinning them is
      // the first thing to try, before more GPUs.
      std::string pinned;
      const SearchPins& p = job.pins;
      for (const auto& [name, value] :
           {std::pair{"tp", p.tp}, std::pair{"pp", p.pp}, std::pair{"cp", p.cp}, std::pair{"dp", p.dp},
            std::pair{"mbs", p.mbs}, std::pair{"zero", p.zero}, std::pair{"ep", p.ep}})
        if (value)
          pinned += std::string(pinned.empty() ? "" : " ") + "--" + name + " " + std::to_string(*value);
      if (p.recompute && *p.recompute != Recompute::kFull)
        pinned += std::string(pinned.empty() ? "" : " ") + "--recompute " +
                  (*p.recompute == Recompute::kNone ? "none" : "selective");
      const std::string advice =
          pinned.empty()
              ? "add GPUs or shorten the sequence"
              : "unpin " + pinned + " (they bound the leanest config), add GPUs or shorten the sequence";
      std::snprintf(
          text, sizeof text,
          "memory: even the leanest config (tp %d%s, cp %d, pp %d, dp %d, zero %d, mbs %d, %s) needs "
          "%.1f GiB per device but the device has %.1f GiB usable after the memory headroom; %s",
          least_config.tp, least_config.sp ? " with sp" : "", least_config.cp, least_config.pp,
          least_config.dp, least_config.zero, least_config.mbs,
          least_config.recompute == Recompute::kFull        ? "full recompute"
          : least_config.recompute == Recompute::kSelective ? "selective recompute"
                                                            : "no recompute",
          least_peak / 1073741824.0,
          job.memory_budget_bytes(cluster.device.usable_hbm_bytes()) / 1073741824.0, advice.c_str());
    }
    result.infeasible_reason = text;
  }
  result.stats.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace parplan
