// SVG picture of one step's scattering plan (`parplan scatter --svg`): the
// GPU ranks down, time across; each micro-batch a column as long as it
// lasts, each sequence-parallel group a block over its aligned ranks, its
// sequences one after another in the order they run.
#pragma once

#include <string>

#include "src/report/scatter_report.h"

namespace parplan {

/// Step `step` of `report` (0-based, a solved step): every group of every
/// micro-batch over its ranks, its fixed cost first and then each sequence
/// as wide as its time on that group ((a s^2 + b s) / p + c_p s), coloured
/// by group size; what a micro-batch's GPUs spend waiting for its slowest
/// group (or hold no group at all) in grey. Each sequence carries a tooltip
/// with its index, tokens, group and time.
std::string scatter_step_svg(const ScatterReport& report, int step);

}  // namespace parplan
