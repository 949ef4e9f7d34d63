#include "src/search/sharding_choices.h"

#include "cost/step_cost.h"

namespace parplan::search_detail {

namespace {
constexpr int kPlacements = 4;
// HSDP shard groups tried beyond one node: 2, 4, ... nodes, at most this many.
constexpr int kMaxMultiNodeHsdp = 4;
}  // namespace

// A "package" (devices sharing one socket, as the two GCDs of an MI250X)
// exists only where a tier is narrower than a node: elsewhere the package
// level holds the same ranks as the node, and the plan names it the node
// (no Frontier wording on a DGX).
PartitionPlacement named_levels(const ClusterSpec& cluster, const ParallelConfig& base,
                                PartitionPlacement p) {
  bool package = false;
  for (const NetworkTier& tier : cluster.tiers)
    package = package || (tier.ranks > 1 && tier.ranks < cluster.ranks_per_node);
  if (package || partition_ranks(cluster, base, PartitionLevel::kPackage) !=
                     partition_ranks(cluster, base, PartitionLevel::kNode))
    return p;
  for (PartitionLevel* level : {&p.params, &p.params_secondary, &p.grads, &p.optimizer})
    if (*level == PartitionLevel::kPackage) *level = PartitionLevel::kNode;
  return p;
}

// The sharding variants of a ZeRO-3 candidate worth trying on this cluster
// and mesh (pins and the lossy/unreleased policy respected), without
// duplicates: placements whose level groups coincide (a cluster without a
// package tier, a data-parallel group inside one node) are tried once.
int sharding_choices(const ClusterSpec& cluster, const JobSpec& job, const SearchOptions& options,
                     const ParallelConfig& base, ShardingChoice out[kMaxShardingChoices]) {
  const SearchPins& pins = job.pins;
  if (pins.hsdp_shard) {
    // The pinned group only, where the mesh's dp has room for it.
    const int shard = *pins.hsdp_shard;
    if (base.dp % shard != 0 || shard >= base.dp) return 0;
    out[0].zeropp = true;
    out[0].hsdp_ranks = shard * base.cp;
    return 1;
  }
  int n = 0;
  const bool pinned_zeropp = pins.zeropp == true;
  const bool pinned_hier = pins.hierarchical_partition == true;
  // A pin asks for the scheme as it was published, quantized collectives included.
  const bool lossy = options.allow_lossy_comm || pinned_zeropp || pinned_hier;
  if (!pinned_zeropp && !pinned_hier) out[n++] = ShardingChoice{};
  if (!pinned_hier && pins.zeropp != false) {
    ShardingChoice z;
    z.zeropp = true;
    // hpZ alone is exact; qwZ/qgZ only when lossy collectives are allowed.
    // With one data-parallel rank per node (tp x cp filling it) its
    // secondary partition is one rank, and with the whole data-parallel
    // group inside one node it is the group: plain ZeRO-3 either way,
    // already a choice (the same cost and launch files twice otherwise).
    const int node = partition_ranks(cluster, base, PartitionLevel::kNode);
    const int group = base.dp * base.cp;
    if (!pinned_zeropp && node > 1 && node < group) out[n++] = z;
    // PyTorch FSDP runs the exact variant as HSDP: a model too large for
    // one node's shard fits in a few nodes' and still keeps most gathers
    // off the slowest tier (torchtitan's data_parallel_shard_degree).
    if (!pinned_zeropp && job.pytorch_fsdp() && node > 1) {
      for (int ranks = 2 * node, k = 0; ranks < group && k < kMaxMultiNodeHsdp; ranks *= 2, ++k) {
        if (group % ranks != 0 || ranks % base.cp != 0) continue;
        ShardingChoice h;
        h.zeropp = true;
        h.hsdp_ranks = ranks;
        out[n++] = h;
      }
    }
    if (lossy) {
      z.quantized = true;
      out[n++] = z;
    }
  }
  if (pinned_zeropp || pins.hierarchical_partition == false) return n;
  if (!options.allow_unreleased && !pinned_hier) return n;
  const auto& placements = hierarchical_placements();
  int seen[kPlacements][4] = {};
  int distinct = 0;
  for (const PartitionPlacement& p : placements) {
    const int ranks[4] = {
        partition_ranks(cluster, base, p.params), partition_ranks(cluster, base, p.params_secondary),
        partition_ranks(cluster, base, p.grads), partition_ranks(cluster, base, p.optimizer)};
    // Nothing hierarchical about it when the partitions span the group.
    const int shard = base.dp * base.cp;
    if (ranks[0] == shard && ranks[1] == shard && ranks[2] == shard && ranks[3] == shard) continue;
    bool duplicate = false;
    for (int i = 0; i < distinct; ++i)
      duplicate = duplicate || (seen[i][0] == ranks[0] && seen[i][1] == ranks[1] && seen[i][2] == ranks[2] &&
                                seen[i][3] == ranks[3]);
    if (duplicate) continue;
    for (int k = 0; k < 4; ++k) seen[distinct][k] = ranks[k];
    ++distinct;
    ParallelConfig probe = base;
    apply_hierarchical_partition(probe, p);
    if (placement_problem(cluster, probe) != nullptr) continue;
    ShardingChoice h;
    h.hierarchical = true;
    h.quantized = lossy;
    h.placement = named_levels(cluster, base, p);
    out[n++] = h;
  }
  return n;
}

}  // namespace parplan::search_detail
