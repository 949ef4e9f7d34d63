// Reads a hardware profile (hardware-profiles/*.yaml or a path) into a
// ClusterSpec. Units in the file: TFLOP/s, GB, TB/s, GB/s, microseconds.
#pragma once

#include <string>

#include "cost/spec/cluster_spec.h"

namespace parplan {

ClusterSpec load_cluster(const std::string& name_or_path, const char* flag = "--cluster");

NicKind parse_nic(const std::string& text, const std::string& where);
const char* nic_name(NicKind nic);

}  // namespace parplan
