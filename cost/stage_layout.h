// How transformer layers are laid over pipeline stages, and how many
// micro-batches each stage holds in flight under 1F1B and interleaved 1F1B.
#pragma once

#include "cost/spec/parallel_config.h"
#include "cost/spec/pipeline_layout.h"

namespace parplan {

/// Layers of pipeline stage `stage` (0-based). A custom split
/// (config.stage_split) is taken as given. With first/last_stage_layers
/// set, the middle stages split the rest evenly (Megatron's uneven split);
/// otherwise all stages get layers / pp, and a remainder goes one layer each
/// to the middle stages first (which carry neither embedding nor head).
int stage_layers(int layers, const ParallelConfig& config, int stage);

/// Layers of the largest model chunk (virtual stage) of `config`: the
/// most layers one chunk can recompute in full (Megatron's --recompute-method
/// block counts --recompute-num-layers per chunk). An uneven first/last
/// split counts its largest stage. Under a custom pipeline layout the config
/// keeps only each rank's total, so that total (an upper bound on any of its
/// chunks) stands for the largest chunk.
int max_chunk_layers(int layers, const ParallelConfig& config);

/// Lays `config` out as the custom pipeline layout: vp from the layout's
/// virtual stages over config.pp, each rank's layers (the sum of its
/// chunks') in stage_split, config.pipeline_layout set. False, config
/// unchanged, when the stages are not a multiple of pp or pp exceeds
/// ParallelConfig::kMaxSplitStages.
bool apply_pipeline_layout(const PipelineLayout& layout, ParallelConfig& config);

/// Whether Megatron accepts this layout: every stage and virtual chunk gets
/// whole, non-zero layers (under a custom pipeline layout: every rank at
/// least one layer, its chunks as the layout gives them).
bool layout_is_valid(int layers, const ParallelConfig& config);

/// Micro-batch-chunks of `stage` whose activations are alive at its peak,
/// in units of "one micro-batch through all of this stage's layers"
/// (1F1B: min(p - stage, m); interleaved: Megatron's warm-up count
/// 2 (p - stage - 1) + (v - 1) p + 1 chunks, each 1/v of the stage).
double in_flight_micro_batches(const ParallelConfig& config, int stage);

}  // namespace parplan
