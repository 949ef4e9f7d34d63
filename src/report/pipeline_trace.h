// A pipeline timeline in Chrome's trace event format, for a zoomable view of
// long steps in Perfetto (ui.perfetto.dev) or chrome://tracing
// (`--timeline FILE.json`).
#pragma once

#include <string>

#include "cost/cost_report.h"
#include "cost/pipeline_timeline.h"

namespace parplan {

/// One complete ("X") event per pass on a thread per pipeline stage, times in
/// microseconds from the step's start, then the data-parallel exchange and
/// optimizer step of `cost` on every stage; `title` and the step's times go
/// in "otherData".
std::string pipeline_trace_json(const PipelineTimeline& timeline, const CostReport& cost,
                                const std::string& title);

}  // namespace parplan
