#include "src/report/pipeline_trace.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "src/report/json_text.h"

namespace parplan {

std::string pipeline_trace_json(const PipelineTimeline& timeline, const CostReport& cost,
                                const std::string& title) {
  const TimeBreakdown& time = cost.time;
  nlohmann::ordered_json other;
  other["title"] = title;
  other["step_s"] = time.step_s;
  other["pipeline_span_s"] = timeline.span_s;
  other["micro_batches"] = timeline.micro_batches;
  other["pp"] = timeline.pp;
  other["vp"] = timeline.vp;
  std::string o;
  o.reserve(160 * timeline.ops.size() + 1024);
  o += "{\"displayTimeUnit\":\"ms\",\"otherData\":" + json_text(other, -1) + ",\"traceEvents\":[\n";
  char buf[256];
  for (int r = 0; r < timeline.pp; ++r) {
    std::snprintf(
        buf, sizeof buf,
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,\"args\":{\"name\":\"stage %d\"}},\n", r,
        r);
    o += buf;
  }
  for (const PipelineOp& op : timeline.ops) {
    const char* kind = op.backward ? "backward" : "forward";
    std::snprintf(
        buf, sizeof buf,
        "{\"name\":\"%s %d.%d\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":0,\"tid\":%d,"
        "\"args\":{\"micro_batch\":%d,\"chunk\":%d}},\n",
        op.backward ? "B" : "F", op.micro_batch, op.chunk, kind, op.start_s * 1e6,
        (op.end_s - op.start_s) * 1e6, op.rank, op.micro_batch, op.chunk);
    o += buf;
  }
  const double tail_s = time.dp_comm_s + time.optimizer_s;
  for (int r = 0; r < timeline.pp; ++r) {
    std::snprintf(buf, sizeof buf,
                  "{\"name\":\"data-parallel exchange and optimizer step\",\"cat\":\"step\",\"ph\":\"X\","
                  "\"ts\":%.3f,\"dur\":%.3f,\"pid\":0,\"tid\":%d}%s\n",
                  timeline.span_s * 1e6, tail_s * 1e6, r, r + 1 < timeline.pp ? "," : "");
    o += buf;
  }
  o += "]}\n";
  return o;
}

}  // namespace parplan
