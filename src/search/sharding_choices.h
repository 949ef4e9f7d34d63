// The ways the search shards a ZeRO-3 candidate's states: flat, ZeRO++'s
// hpZ (under PyTorch FSDP: HSDP, over one node or several), with or without
// the quantized collectives, and the hierarchical placements.
#pragma once

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/parallel_config.h"
#include "src/search/search.h"

namespace parplan::search_detail {

// How ZeRO-3 shards: flat, ZeRO++ (DeepSpeed), or a hierarchical placement;
// `quantized`: with the int8-weight / int4-gradient collectives.
struct ShardingChoice {
  bool zeropp = false;
  /// PyTorch FSDP's HSDP over this many ranks of the dp x cp group (more
  /// than a node's); 0: the zeropp choice's node-sized group.
  int hsdp_ranks = 0;
  bool hierarchical = false;
  bool quantized = false;
  PartitionPlacement placement;
};
constexpr int kMaxShardingChoices = 16;

// A "package" (devices sharing one socket, as the two GCDs of an MI250X)
// exists only where a tier is narrower than a node: elsewhere the package
// level holds the same ranks as the node, and the plan names it the node
// (no Frontier wording on a DGX).
PartitionPlacement named_levels(const ClusterSpec& cluster, const ParallelConfig& base, PartitionPlacement p);

// The sharding variants of a ZeRO-3 candidate worth trying on this cluster
// and mesh (pins and the lossy/unreleased policy respected), without
// duplicates: placements whose level groups coincide (a cluster without a
// package tier, a data-parallel group inside one node) are tried once.
int sharding_choices(const ClusterSpec& cluster, const JobSpec& job, const SearchOptions& options,
                     const ParallelConfig& base, ShardingChoice out[kMaxShardingChoices]);

}  // namespace parplan::search_detail
