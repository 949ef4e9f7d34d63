// --recompute-layers against the model chunk it applies to (declared in
// job_options.h).
#include <algorithm>
#include <string>

#include "cost/stage_layout.h"
#include "src/cli/job_options.h"
#include "src/io/input_error.h"

namespace parplan {

void check_recompute_layers(const ResolvedJob& r, const ParallelConfig& c) {
  if (c.recompute != Recompute::kFull || c.recompute_layers <= 0) return;
  const int layers = r.model.layers;
  const auto n = [](std::int64_t x) { return std::to_string(x); };
  // Megatron's block method recomputes the first --recompute-num-layers
  // layers of every model chunk (transformer_block.py, _checkpointed_forward),
  // so the largest chunk bounds a count that means anything: with an uneven
  // split or a custom layout that is more than layers / (pp x vp).
  int largest = 0;
  std::string where;
  const PipelineLayout& layout = r.job.pipeline_layout;
  if (c.pipeline_layout && layout.given()) {
    for (int s = 0; s < layout.stages; ++s) largest = std::max<int>(largest, layout.decoder_layers[s]);
    where = "the largest virtual stage of " + r.file_pipeline_layout_where;
  } else {
    // An invalid split is refused later, naming the split itself.
    if (!layout_is_valid(layers, c)) return;
    largest = max_chunk_layers(layers, c);
    if (c.first_stage_layers > 0 || c.last_stage_layers > 0) {
      where = n(layers) + " layers over pp " + n(c.pp) + ": first stage " + n(stage_layers(layers, c, 0)) +
              (c.pp > 2 ? ", middle stages " + n(stage_layers(layers, c, 1)) : "") + ", last stage " +
              n(stage_layers(layers, c, c.pp - 1)) + (c.vp > 1 ? ", each in vp " + n(c.vp) + " chunks" : "");
    } else {
      where = n(layers) + " layers / (pp " + n(c.pp) + " x vp " + n(c.vp) + ")";
    }
  }
  if (c.recompute_layers > largest)
    throw InputError("--recompute-layers " + n(c.recompute_layers) + " exceeds the " + n(largest) +
                     " layers of the largest model chunk (" + where + "); give at most " + n(largest));
}

}  // namespace parplan
