// The engines of a selection that run a config, and the released part of a
// config (engine_capabilities.h).
#include "src/emit/engine_capabilities.h"

namespace parplan {

ParallelConfig released_part(const ParallelConfig& config) {
  ParallelConfig out = config;
  if (out.hierarchical_partition) {
    out.hierarchical_partition = false;
    out.partition = PartitionPlacement{};
    out.hpz_ranks = 1;
  }
  return out;
}

int first_engine_running(const EngineSelection& selection, const ModelSpec& model, const JobSpec& job,
                         const ParallelConfig& config) {
  for (int i = 0; i < selection.count; ++i)
    if (capability_problem(engine_capabilities(selection.engines[i]), model, job, config) == nullptr)
      return static_cast<int>(selection.engines[i]);
  return -1;
}

}  // namespace parplan
