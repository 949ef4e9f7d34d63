// Reads a profile's `calibration:` block (written by parplan calibrate) into
// the error band `plan` prints.
#pragma once

#include "cost/spec/cluster_spec.h"
#include "src/io/yaml_fields.h"

namespace parplan {

ProfileCalibration read_calibration_block(const YamlFields& f);

}  // namespace parplan
