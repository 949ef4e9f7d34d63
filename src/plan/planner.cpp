#include "src/plan/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "cost/config_rules.h"
#include "cost/stage_layout.h"
#include "cost/step_cost.h"
#include "solvers/recompute_split.h"
#include "solvers/solve.h"
#include "solvers/stage_split.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/plan/placement.h"
#include "src/plan/plan.h"
#include "src/search/search.h"

namespace parplan {

namespace {
// Pins come from flags (--tp) or a job file's `constraints:` (tp): the
// messages name both.
std::string pin(const char* name, int value) {
  return std::string("the pinned ") + name + " " + std::to_string(value) + " (--" + name +
         " or constraints: " + name + ")";
}

}  // namespace

void check_plan_pins(const ModelSpec& model, const JobSpec& job) {
  if (const ConfigViolation v = validate_pins(model, job)) {
    const char* field = nullptr;
    switch (v.rule) {
      case ConfigRule::kTpHeads:
      case ConfigRule::kTpKvGroups:
      case ConfigRule::kTpFfn:
        field = "tp";
        break;
      case ConfigRule::kCpSeq:
        field = "cp";
        break;
      case ConfigRule::kPpLayers:
        field = "pp";
        break;
      case ConfigRule::kMbsGbs:
        field = "mbs";
        break;
      case ConfigRule::kEpDense:
      case ConfigRule::kEpExperts:
        field = "ep";
        break;
      case ConfigRule::kEtpDense:
      case ConfigRule::kEtpFfn:
        field = "etp";
        break;
      default:
        break;
    }
    // The same sentence estimate and check give; the source of the pin after it.
    throw InputError("config rejected: " + describe(v) +
                     (field ? std::string("; pinned by --") + field + " or constraints: " + field : ""));
  }
  const SearchPins& p = job.pins;
  const auto need = [&](bool ok, const std::string& text) {
    if (!ok) throw InputError(text);
  };
  if (p.dp)
    need(job.gpus % *p.dp == 0,
         pin("dp", *p.dp) + " does not divide the job's " + std::to_string(job.gpus) + " GPUs");
  if (p.vp)
    need(*p.vp <= model.layers,
         pin("vp", *p.vp) + " exceeds the model's " + std::to_string(model.layers) + " layers");
  if (p.recompute_layers) {
    need(*p.recompute_layers <= model.layers, "--recompute-layers " + std::to_string(*p.recompute_layers) +
                                                  " exceeds the model's " + std::to_string(model.layers) +
                                                  " layers");
    need(*p.recompute_layers <= 0 || !p.recompute || *p.recompute == Recompute::kFull,
         "--recompute-layers " + std::to_string(*p.recompute_layers) + " applies only with --recompute full");
  }
  // A pinned first/last split the other stages cannot take would leave the
  // search nothing to try: say which flag, not "no split divides the job".
  if ((p.first_stage_layers.value_or(0) > 0 || p.last_stage_layers.value_or(0) > 0) && p.pp && *p.pp >= 2) {
    const int first = p.first_stage_layers.value_or(0), last = p.last_stage_layers.value_or(0);
    const int others = *p.pp - (first > 0) - (last > 0);
    const int left = model.layers - first - last;
    const auto n = [](int x) { return std::to_string(x); };
    std::string flags = first > 0 ? "--first-stage-layers " + n(first) : "";
    if (last > 0) flags += (flags.empty() ? "" : " and ") + std::string("--last-stage-layers ") + n(last);
    const std::string verb = first > 0 && last > 0 ? " leave " : " leaves ";
    const std::string job_text = "the model's " + n(model.layers) + " layers with --pp " + n(*p.pp);
    const std::string stages = others == 1 ? " pipeline stage" : " pipeline stages";
    need(others > 0 || left == 0, flags + " must add up to " + job_text + " (they sum to " + n(first + last) +
                                      "); give values that sum to " + n(model.layers));
    need(left >= others, flags + verb + n(std::max(0, left)) + " of " + job_text + " for the other " +
                             n(others) + stages + ", and every stage needs a layer: give at most " +
                             n(model.layers - others) + " layers to the first and last stage together");
    need(others == 0 || left % others == 0,
         flags + verb + n(left) + " of " + job_text + " for the other " + n(others) + stages +
             ", which must hold equal counts (Megatron's middle stages): give values that "
             "leave a multiple of " +
             n(others));
  }
  // The hierarchical all-to-all is a way of exchanging tokens between
  // expert-parallel ranks; ep 1 has none to exchange.
  if (p.a2a_hierarchical.value_or(false) && p.ep && *p.ep < 2)
    throw InputError("--a2a hierarchical sets the expert all-to-all, which --ep " + std::to_string(*p.ep) +
                     " does not have; give --ep 2 or more, or drop --a2a hierarchical");
}

double solve_time_limit_s(const PlannerOptions& options) {
  double limit_s = options.solver_time_limit_s;
  if (options.deadline) {
    const double left_s =
        std::chrono::duration<double>(*options.deadline - std::chrono::steady_clock::now()).count();
    limit_s = std::min(limit_s, left_s);
  }
  return std::max(0.01, limit_s);
}

std::string time_limit_note(const SearchResult& search) {
  if (!search.stopped_at_deadline) return "";
  return "--time-limit reached: this is the best plan of the " +
         std::to_string(search.stats.meshes_searched) + " of " + std::to_string(search.stats.meshes) +
         " mesh shapes searched, not proven best (gap to the optimum unknown)";
}

std::vector<std::string> certificate_warnings(const std::vector<SolverCertificate>& certificates) {
  std::vector<std::string> lines;
  for (const SolverCertificate& c : certificates) {
    if (c.status == SolveStatus::kOptimal) continue;
    char text[400];
    if (c.status == SolveStatus::kFeasible) {
      std::snprintf(text, sizeof text,
                    "warning: %s is not proven optimal (%s stopped at its time limit with a gap of %.2f %%); "
                    "raise --solver-time-limit to close it",
                    c.name.c_str(), c.backend.c_str(), 100.0 * c.gap);
    } else {
      std::snprintf(text, sizeof text, "warning: %s was not certified (%s: %s%s%s)", c.name.c_str(),
                    c.backend.c_str(), status_name(c.status), c.message.empty() ? "" : ": ",
                    c.message.c_str());
    }
    lines.push_back(text);
  }
  return lines;
}

std::vector<SolverCertificate> certify(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                       const ParallelConfig& config, SolverBackend backend,
                                       double time_limit_s) {
  std::vector<SolverCertificate> certificates;
  SolveOptions options;
  options.time_limit_s = time_limit_s;
  // Megatron-DeepSpeed's own partition (PipelineModule's uniform split,
  // middle stages unequal) is the engine's, not a choice parplan made: the
  // split MILP, whose middle stages are equal on a uniform cluster, has
  // nothing to certify there (it read "infeasible").
  bool equal_middle = true;
  for (int s = 2; s + 1 < config.pp; ++s)
    equal_middle =
        equal_middle && stage_layers(model.layers, config, s) == stage_layers(model.layers, config, 1);
  if (config.pp > 1 && config.vp == 1 && (equal_middle || cluster.heterogeneous())) {
    // The layer-to-stage split of the plan, solved as a MILP over every
    // stage's own coefficients.
    const StageSplitInput input = stage_split_input(model, cluster, job, config, true);
    certificates.push_back(stage_split_milp(input, backend, options).certificate);
  }
  if (config.recompute == Recompute::kFull) {
    RecomputeSplitInput input;
    ParallelConfig stored = config;
    stored.recompute = Recompute::kNone;
    for (int s = 0; s < config.pp; ++s) {
      const int layers = stage_layers(model.layers, config, s);
      const StageCoefficients k = stage_coefficients(model, cluster, job, stored, s);
      input.layers_per_stage.push_back(layers);
      input.base_time_s.push_back(k.extra_time_s + layers * k.layer_time_s);
      input.recompute_time_s.push_back(k.recompute_time_s);
      input.memory_bytes.push_back(std::max(0.0, k.fixed_memory_bytes + layers * k.layer_memory_bytes));
      input.saved_bytes_per_layer.push_back(std::max(0.0, k.recompute_saved_bytes));
      input.memory_cap_bytes.push_back(job.memory_budget_bytes(cluster.device.usable_hbm_bytes()));
    }
    certificates.push_back(recompute_split_milp(input, backend, options).certificate);
  }
  return certificates;
}

namespace {
std::string fmt(const char* format, double a = 0, double b = 0, double c = 0, double d = 0, double e = 0) {
  char text[512];
  std::snprintf(text, sizeof text, format, a, b, c, d, e);
  return text;
}

// Bytes (or seconds) per GPU per step over the tiers outside a node.
double cross_node(const ClusterSpec& cluster, const CostReport& cost, bool seconds) {
  double sum = 0;
  for (std::size_t i = 0; i < cluster.tiers.size() && i < cost.dp_traffic.bytes.size(); ++i)
    if (cluster.tiers[i].ranks == 0 || cluster.tiers[i].ranks > cluster.ranks_per_node)
      sum += seconds ? cost.dp_traffic.seconds[i] : cost.dp_traffic.bytes[i];
  return sum;
}
double cross_node_bytes(const ClusterSpec& cluster, const CostReport& cost) {
  return cross_node(cluster, cost, false);
}

// A "package" (several devices sharing one socket, as the two GCDs of an
// MI250X) exists only where a tier is narrower than a node.
bool has_package_tier(const ClusterSpec& cluster) {
  for (const auto& tier : cluster.tiers)
    if (tier.ranks > 1 && tier.ranks < cluster.ranks_per_node) return true;
  return false;
}

const char* level(PartitionLevel l, const ClusterSpec& cluster) {
  if (l == PartitionLevel::kPackage) return has_package_tier(cluster) ? "package" : "node";
  return l == PartitionLevel::kNode ? "node" : "job";
}
}  // namespace

std::vector<std::string> plan_notes(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                    const ParallelConfig& c, const CostReport& cost) {
  std::vector<std::string> notes;
  if (c.zero == 3 && (c.hierarchical_partition || c.zeropp())) {
    ParallelConfig flat = c;
    flat.hierarchical_partition = false;
    flat.hpz_ranks = 1;
    flat.qwz = flat.qgz = false;
    ParallelConfig zpp = flat;
    apply_zeropp(cluster, zpp);
    const CostReport flat_cost = estimate_cost(model, cluster, job, flat);
    const CostReport zpp_cost = estimate_cost(model, cluster, job, zpp);
    const double t = cost.throughput.model_tflops_per_gpu;
    if (c.hierarchical_partition) {
      notes.push_back(
          "hierarchical partitioning (weights per " + std::string(level(c.partition.params, cluster)) +
          ", backward copy per " + level(c.partition.params_secondary, cluster) + ", gradients per " +
          level(c.partition.grads, cluster) + ", optimizer per " + level(c.partition.optimizer, cluster) +
          "): " +
          fmt("%.1f TFLOP/s per GPU against %.1f with ZeRO++ and %.1f with ZeRO-3 on the same "
              "mesh (%.2fx over ZeRO++)",
              t, zpp_cost.throughput.model_tflops_per_gpu, flat_cost.throughput.model_tflops_per_gpu,
              t / std::max(1e-12, zpp_cost.throughput.model_tflops_per_gpu)));
      notes.push_back(
          std::string(has_package_tier(cluster) ? "why: the per-micro-batch gathers and reduce-scatters stay "
                                                  "inside the package/node and "
                                                : "why: the per-micro-batch gathers and reduce-scatters stay "
                                                  "inside the node and ") +
          fmt("only the exchange between partition replicas crosses nodes, once per step: %.2f GB per GPU "
              "per step against %.2f GB with ZeRO++ and %.2f GB with ZeRO-3",
              cross_node_bytes(cluster, cost) / 1e9, cross_node_bytes(cluster, zpp_cost) / 1e9,
              cross_node_bytes(cluster, flat_cost) / 1e9) +
          fmt(", %.2f s of cross-node transfers and ring latency against %.2f s and %.2f s; "
              "data-parallel time left exposed %.3f s against %.3f s with ZeRO++",
              cross_node(cluster, cost, true), cross_node(cluster, zpp_cost, true),
              cross_node(cluster, flat_cost, true), cost.time.dp_comm_s, zpp_cost.time.dp_comm_s) +
          fmt(" (memory %.1f GB per GPU against %.1f GB with ZeRO++)", cost.memory.peak_bytes / 1e9,
              zpp_cost.memory.peak_bytes / 1e9));
    } else if (is_hsdp(c, job)) {
      notes.push_back(hsdp_label(c) +
                      fmt(": %.1f TFLOP/s per GPU against %.1f with FSDP over all %.0f ranks; cross-node "
                          "traffic %.2f GB per GPU per step against %.2f GB",
                          t, flat_cost.throughput.model_tflops_per_gpu, double(c.dp * c.cp),
                          cross_node_bytes(cluster, cost) / 1e9, cross_node_bytes(cluster, flat_cost) / 1e9));
    } else {
      notes.push_back(fmt("ZeRO++ (hpZ over %.0f ranks", c.hpz_ranks) + (c.qwz ? ", qwZ" : "") +
                      (c.qgz ? ", qgZ" : "") +
                      fmt("): %.1f TFLOP/s per GPU against %.1f with ZeRO-3; cross-node traffic %.2f GB per "
                          "GPU per step against %.2f GB",
                          t, flat_cost.throughput.model_tflops_per_gpu, cross_node_bytes(cluster, cost) / 1e9,
                          cross_node_bytes(cluster, flat_cost) / 1e9));
    }
  }
  if ((c.qwz || c.qgz) && job.pins.zeropp != true && job.pins.hierarchical_partition != true) {
    // Quantized collectives were the planner's choice, not the user's: say
    // what they change and what the exact alternative costs.
    JobSpec exact = job;
    exact.pins.zeropp = exact.pins.hierarchical_partition = false;
    SearchOptions one;
    one.top_k = 1;
    const SearchResult alt = search_configs(model, cluster, exact, one);
    std::string note = "quantized collectives (int8 weights, int4 gradients) change the numerics of training";
    if (!alt.best.empty()) {
      const ParallelConfig& a = alt.best.front().config;
      const double step_s = alt.best.front().cost.time.step_s;
      note += fmt("; with exact collectives (without --allow-lossy-comm) the best plan is tp %.0f pp %.0f dp "
                  "%.0f "
                  "zero %.0f",
                  a.tp, a.pp, a.dp, a.zero) +
              fmt(" at %.3f s per step (%+.1f%%)", step_s, 100.0 * (step_s / cost.time.step_s - 1.0));
    }
    notes.push_back(note);
  }
  if (cluster.heterogeneous()) {
    const Placement placement = place_groups(cluster, c);
    const bool inside = collectives_inside_node_groups(placement, cluster);
    std::string stages;
    const int stride = c.tp * c.cp * c.dp;
    for (int s = 0; s < c.pp; ++s) {
      stages += (s ? ", " : "") + std::string("stage ") + std::to_string(s) + " (" +
                std::to_string(stage_layers(model.layers, c, s)) + " layers) on " +
                node_group_name(cluster, s * stride);
    }
    notes.push_back(
        std::string(inside ? "placement: every tp and dp group stays inside one node group; only "
                             "pipeline point-to-point traffic crosses groups"
                           : "placement: some tp or dp groups span node groups and run at the speed of "
                             "the link between groups") +
        "; " + stages);
    if (c.custom_split())
      notes.push_back(
          "layers split unevenly by the stage-split formulation (per-stage speed from each node group's "
          "fabric): slower stages get fewer layers; Megatron expresses only first/last stage counts");
  }
  return notes;
}

PlannerResult plan_job(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                       const PlannerOptions& options) {
  SolverBackend backend;
  try {
    backend = parse_backend(options.solver);
  } catch (const std::invalid_argument&) {
    throw InputError("--solver must be cbc, glpk or exhaustive (got '" + options.solver + "')");
  }
  check_input_limits(model, cluster, job);
  check_plan_pins(model, job);
  PlannerResult result;
  SearchOptions search;
  search.top_k = options.top_k;
  search.deadline = options.deadline;
  search.engines = options.engines;
  search.allow_lossy_comm = options.allow_lossy_comm;
  search.allow_unreleased = options.allow_unreleased;
  result.search = search_configs(model, cluster, job, search);
  result.ranked = result.search.best;
  if (!result.ranked.empty()) {
    result.certificates =
        certify(model, cluster, job, result.ranked.front().config, backend, solve_time_limit_s(options));
    result.notes = plan_notes(model, cluster, job, result.ranked.front().config, result.ranked.front().cost);
  }
  return result;
}

}  // namespace parplan
