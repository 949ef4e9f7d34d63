// Reads a profile's `batch_limits:` block: the batch partition and its
// wall-time limit per node count (the site's scheduling policy), which caps
// the `#SBATCH -t` of emitted Slurm scripts.
#pragma once

#include "cost/spec/cluster_spec.h"
#include "src/io/yaml_fields.h"

namespace parplan {

/// Throws InputError naming the field when a bin is malformed, the bins
/// overlap or leave a gap, or no source is given.
BatchLimits read_batch_limits_block(const YamlFields& f);

}  // namespace parplan
