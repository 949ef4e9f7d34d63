// SVG timeline of one training step's pipeline schedule (`plan --timeline`,
// `estimate --timeline`): each pipeline rank's forward and backward passes,
// the bubble, and the data-parallel exchange and optimizer step after them.
#pragma once

#include <string>

#include "cost/cost_report.h"
#include "cost/pipeline_timeline.h"

namespace parplan {

/// `title` names the model and config (a line per '\n'); `cost` is the step the timeline
/// belongs to (its data-parallel and optimizer time close the step).
std::string pipeline_svg(const PipelineTimeline& timeline, const CostReport& cost, const std::string& title);

/// The most passes (2 x micro-batches x vp x pp) a timeline simulates: far
/// above real steps (4096 micro-batches through 32 stages of 8 chunks is 2.1
/// million), low enough that the replay's memory stays under a gigabyte.
constexpr double kMaxTimelinePasses = 4e6;

/// The timeline of `config` (cost/pipeline_timeline.h), titled with the
/// model, cluster and config, as the text of the file `path`: Chrome trace
/// JSON (src/report/pipeline_trace.h) when it ends in ".json", else SVG.
/// Throws InputError naming --timeline when the step has more than
/// kMaxTimelinePasses passes.
std::string pipeline_timeline_text(const std::string& path, const ModelSpec& model,
                                   const ClusterSpec& cluster, const JobSpec& job,
                                   const ParallelConfig& config, const CostReport& cost);

}  // namespace parplan
