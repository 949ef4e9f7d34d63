// The parallel-config keys a run file's `config:` (and a CSV run file's
// columns) and a job file's `config:` share: one list, so a key the run
// files learn the job files learn too.
#pragma once

#include <string>
#include <vector>

namespace parplan {

inline const std::vector<std::string>& run_config_keys() {
  static const std::vector<std::string> keys = {"tp",
                                                "pp",
                                                "vp",
                                                "cp",
                                                "ep",
                                                "etp",
                                                "sp",
                                                "mbs",
                                                "zero",
                                                "recompute",
                                                "recompute_layers",
                                                "attention",
                                                "overlap_grad_reduce",
                                                "overlap_p2p",
                                                "ep_overlap",
                                                "a2a_hierarchical",
                                                "pipeline_layout",
                                                "first_stage_layers",
                                                "last_stage_layers",
                                                "hsdp_shard"};
  return keys;
}

}  // namespace parplan
