// Launch files for heterogeneous clusters (node groups with different NICs):
// a hostfile in rank order, group by group, and the NCCL environment of each
// group (NCCL's documented variables: NCCL_NET, NCCL_IB_HCA,
// NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME, NCCL_IB_DISABLE).
#include <sstream>

#include "cost/collectives.h"
#include "src/emit/emit_internal.h"
#include "src/io/cluster_loader.h"

namespace parplan::emit_detail {

namespace {
// The NCCL settings a node group's processes need, as bash export lines.
std::vector<std::string> group_env(const NodeGroup& group) {
  switch (group.nic) {
    case NicKind::kInfiniBand:
      return {"export NCCL_NET=IB", "export NCCL_IB_DISABLE=0",
              "export NCCL_IB_HCA=\"${PARPLAN_IB_HCA:-mlx5}\"  # the group's HCAs (ibv_devices)"};
    case NicKind::kRoce:
      // RoCE v2 addresses are GIDs; index 3 is RoCE v2 over IPv4 on a
      // default Mellanox/NVIDIA stack (show_gids lists them).
      return {"export NCCL_NET=IB", "export NCCL_IB_DISABLE=0",
              "export NCCL_IB_HCA=\"${PARPLAN_ROCE_HCA:-mlx5}\"  # the group's RoCE NICs (ibv_devices)",
              "export NCCL_IB_GID_INDEX=\"${PARPLAN_ROCE_GID_INDEX:-3}\"  # RoCE v2 GID (show_gids)"};
    case NicKind::kEthernet:
      return {"export NCCL_NET=Socket", "export NCCL_IB_DISABLE=1"};
    case NicKind::kSlingshot:
      return {"export NCCL_NET=OFI  # libfabric plugin (aws-ofi-nccl / aws-ofi-rccl)"};
    case NicKind::kIntraNode:
      break;
  }
  return {};
}

// Whether a tensor, context or data-parallel group (the ranks of one
// pipeline stage) spans node groups: those collectives were costed on the
// link between groups, so every node speaks its transport.
bool stage_groups_cross(const Plan& plan) {
  const int stage_ranks = plan.config.tp * plan.config.cp * plan.config.dp;
  for (int s = 0; s < plan.config.pp; ++s)
    if (node_group_of_rank(plan.cluster, s * stage_ranks) !=
        node_group_of_rank(plan.cluster, (s + 1) * stage_ranks - 1))
      return true;
  return false;
}
}  // namespace

bool nccl_env_per_group(const Plan& plan) {
  return plan.cluster.heterogeneous() && !stage_groups_cross(plan);
}

std::string rank_order_hostfile(const Plan& plan, const Layout& layout) {
  std::ostringstream text;
  if (!plan.cluster.heterogeneous()) {
    for (int node = 0; node < layout.nnodes; ++node)
      text << "worker-" << node << " slots=" << layout.nproc_per_node << "\n";
    return text.str();
  }
  text << "# Rank order is node group by node group (parplan's placement): rename the hosts, keep the "
          "order.\n";
  int node = 0;
  for (const NodeGroup& group : plan.cluster.groups) {
    if (node >= layout.nnodes) break;
    text << "# group " << group.name << " (" << nic_name(group.nic) << ")\n";
    for (int k = 0; k < group.nodes && node < layout.nnodes; ++k, ++node)
      text << group.name << "-node-" << k << " slots=" << layout.nproc_per_node << "\n";
  }
  return text.str();
}

std::string nccl_env_script(const Plan& plan, const Layout& layout) {
  std::ostringstream s;
  s << "# NCCL environment per node group, written by parplan; sourced by the launch script.\n";
  s << "# PARPLAN-EDIT: the interface of the network between groups.\n";
  s << "export NCCL_SOCKET_IFNAME=\"${PARPLAN_SOCKET_IFNAME:-eth0}\"\n";
  if (stage_groups_cross(plan)) {
    // Stock NCCL takes one transport per process and a communicator's ranks
    // must agree on it: with data-parallel groups across node groups, every
    // node uses the link between groups, as the plan was costed.
    s << "# Data-parallel groups span node groups: every node uses the link between groups ("
      << nic_name(plan.cluster.inter_group.nic) << "), as costed.\n";
    NodeGroup between;
    between.nic = plan.cluster.inter_group.nic;
    for (const std::string& line : group_env(between)) s << line << "\n";
    return s.str();
  }
  s << "# Node ranks follow the hostfile: group by group. Tensor and data-parallel groups stay inside\n";
  s << "# one node group; only pipeline point-to-point traffic crosses groups ("
    << nic_name(plan.cluster.inter_group.nic) << "): stock NCCL needs one transport on a\n";
  s << "# communicator, so mixed transports need a communicator set-up such as Holmes'.\n";
  s << "PARPLAN_NODE_RANK=\"${NODE_RANK:-${SLURM_NODEID:-0}}\"\n";
  s << "case \"$PARPLAN_NODE_RANK\" in\n";
  int first = 0;
  for (const NodeGroup& group : plan.cluster.groups) {
    if (first >= layout.nnodes) break;
    const int last = std::min(layout.nnodes, first + group.nodes) - 1;
    std::string pattern;
    for (int n = first; n <= last; ++n) pattern += (n > first ? "|" : "") + str(n);
    s << "  " << pattern << ")  # group " << group.name << "\n";
    s << "    export PARPLAN_NODE_GROUP=" << group.name << "\n";
    for (const std::string& line : group_env(group)) s << "    " << line << "\n";
    s << "    ;;\n";
    first = last + 1;
  }
  s << "  *) echo \"nccl_env.sh: node rank $PARPLAN_NODE_RANK is not in the plan\" >&2; exit 1 ;;\n";
  s << "esac\n";
  return s.str();
}

}  // namespace parplan::emit_detail
