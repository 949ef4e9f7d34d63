// Human-readable tables for the terminal.
#pragma once

#include <string>
#include <vector>

#include "cost/cost_report.h"
#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"
#include "src/search/search.h"

namespace parplan {

/// One line: tp 8 pp 8 vp 2 dp 16 cp 1 sp zero 1 mbs 1 recompute selective;
/// ep, etp and the all-to-all where ep > 1 or the model is MoE (`moe`), so an
/// MoE plan with no expert parallelism says so. With the job, hpZ under
/// PyTorch FSDP is named as the engine runs it: HSDP.
std::string config_line(const ParallelConfig& config, bool moe = false, const JobSpec* job = nullptr);
/// The cost of one config: time, throughput, memory and what limits it.
/// With the job, also how far off parplan was on held-out published runs
/// like it (src/calibration/heldout_alike.h).
std::string cost_table(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& config,
                       const CostReport& cost, const JobSpec* job = nullptr);
/// Runners-up, one line each; ep and etp columns for an MoE model.
/// `job` (optional) tells HSDP from ZeRO++ in the layout column, shown when
/// a row has a layout beyond its columns (HSDP, ZeRO++, hierarchical
/// partition, hierarchical all-to-all, overlapped expert all-to-all).
std::string alternatives_table(const std::vector<RankedConfig>& ranked, bool moe = false,
                               const JobSpec* job = nullptr);

}  // namespace parplan

#include "solvers/certificate.h"

namespace parplan {
/// The solver certificates of a plan, one line each.
/// One line per certificate; unknown numbers print as n/a (never nan);
/// `timings` adds each solve's wall-clock time.
std::string certificates_table(const std::vector<SolverCertificate>& certificates, bool timings = true);
}  // namespace parplan
