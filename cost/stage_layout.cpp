#include "cost/stage_layout.h"

#include <algorithm>

namespace parplan {

int stage_layers(int layers, const ParallelConfig& config, int stage) {
  const int p = config.pp;
  if (p <= 1) return layers;
  if (config.custom_split()) return stage < ParallelConfig::kMaxSplitStages ? config.stage_split[stage] : 0;
  const bool uneven = config.first_stage_layers > 0 || config.last_stage_layers > 0;
  if (uneven) {
    const int first = config.first_stage_layers > 0 ? config.first_stage_layers : -1;
    const int last = config.last_stage_layers > 0 ? config.last_stage_layers : -1;
    int fixed_layers = 0;
    int fixed_stages = 0;
    if (first > 0) fixed_layers += first, ++fixed_stages;
    if (last > 0) fixed_layers += last, ++fixed_stages;
    if (stage == 0 && first > 0) return first;
    if (stage == p - 1 && last > 0) return last;
    const int rest_stages = p - fixed_stages;
    return rest_stages > 0 ? (layers - fixed_layers) / rest_stages : 0;
  }
  const int base = layers / p;
  int remainder = layers % p;
  if (remainder == 0) return base;
  // Remainder layers go to stages 1, 2, ... (then 0 and p-1 if it must).
  const int middle = p - 2;
  if (stage >= 1 && stage <= p - 2) return base + (stage <= remainder ? 1 : 0);
  remainder -= std::min(remainder, middle);
  if (stage == 0) return base + (remainder >= 1 ? 1 : 0);
  return base + (remainder >= 2 ? 1 : 0);
}

int max_chunk_layers(int layers, const ParallelConfig& config) {
  const int vp = std::max(1, config.vp);
  int largest = 0;
  // Outside a custom split the middle stages hold alike, but for the even
  // split's remainder, which goes to stage 1 first: the largest stage is
  // the first, the second or the last (the search asks for every candidate).
  if (config.custom_split()) {
    for (int s = 0; s < std::max(1, config.pp); ++s)
      largest = std::max(largest, stage_layers(layers, config, s));
  } else {
    for (int s : {0, 1, config.pp - 1})
      if (s >= 0 && s < config.pp) largest = std::max(largest, stage_layers(layers, config, s));
  }
  return config.pipeline_layout ? largest : (largest + vp - 1) / vp;
}

bool apply_pipeline_layout(const PipelineLayout& layout, ParallelConfig& config) {
  const int pp = config.pp;
  if (!layout.given() || pp < 1 || pp > ParallelConfig::kMaxSplitStages || layout.stages % pp != 0)
    return false;
  config.vp = layout.stages / pp;
  config.stage_split = {};
  for (int stage = 0; stage < layout.stages; ++stage)
    config.stage_split[stage % pp] =
        static_cast<std::uint16_t>(config.stage_split[stage % pp] + layout.decoder_layers[stage]);
  config.first_stage_layers = config.last_stage_layers = 0;
  config.pipeline_layout = true;
  return true;
}

bool layout_is_valid(int layers, const ParallelConfig& config) {
  if (config.custom_split() && config.pp > ParallelConfig::kMaxSplitStages) return false;
  const bool uneven = config.first_stage_layers > 0 || config.last_stage_layers > 0;
  if (!config.custom_split() && !uneven && layers % config.pp != 0) return false;
  if (!config.custom_split() && uneven) {
    int fixed_layers = config.first_stage_layers + config.last_stage_layers;
    int middle = config.pp - (config.first_stage_layers > 0) - (config.last_stage_layers > 0);
    if (middle > 0 && (layers - fixed_layers) % middle != 0) return false;
    if (middle == 0 && fixed_layers != layers) return false;
  }
  int total = 0;
  for (int s = 0; s < config.pp; ++s) {
    const int n = stage_layers(layers, config, s);
    if (n <= 0 || (!config.pipeline_layout && n % config.vp != 0)) return false;
    total += n;
  }
  return total == layers;
}

double in_flight_micro_batches(const ParallelConfig& config, int stage) {
  const int p = config.pp;
  const int v = config.vp;
  const int m = config.micro_batches();
  if (v <= 1) return std::min(p - stage, m);
  const int chunks = std::min(2 * (p - stage - 1) + (v - 1) * p + 1, m * v);
  return static_cast<double>(chunks) / v;
}

}  // namespace parplan
