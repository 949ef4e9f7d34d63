// Bad input in the heterogeneous-cluster and collective fields of a hardware
// profile: one clear error naming the file and the field.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

const char* kHead = R"(name: bad
ranks_per_node: 8
device:
  name: A100
  peak_bf16_tflops: 312
  hbm_gib: 80
  hbm_tb_per_s: 2
tiers:
  - name: nvlink
    ranks: 8
    bandwidth_gb_per_s: 300
  - name: ethernet
    bandwidth_gb_per_s: 1.5
    nic: ethernet
)";

const char* kGroups = R"(groups:
  - name: ib
    nodes: 4
    nic: ib
    bandwidth_gb_per_s: 12.5
  - name: roce
    nodes: 4
    nic: roce
    bandwidth_gb_per_s: 6.25
)";

const char* kInterGroup = R"(inter_group:
  name: ethernet
  bandwidth_gb_per_s: 1.5
  nic: ethernet
)";

std::string write_profile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name + "_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << text;
  return path;
}

struct BadProfile {
  const char* name;
  std::string text;
  const char* must_mention;
};

class TopologyBadProfile : public ::testing::TestWithParam<BadProfile> {};

TEST_P(TopologyBadProfile, IsRejectedNamingTheField) {
  const BadProfile& bad = GetParam();
  const std::string path = write_profile(std::string("topology_") + bad.name, bad.text);
  try {
    load_cluster(path);
    FAIL() << "accepted " << bad.name;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(bad.must_mention), std::string::npos) << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

std::vector<BadProfile> bad_profiles() {
  const std::string head = kHead;
  const std::string groups = kGroups;
  const std::string inter = kInterGroup;
  std::string unknown_nic = groups;
  unknown_nic.replace(unknown_nic.find("nic: roce"), 9, "nic: omnipath");
  std::string negative = groups;
  negative.replace(negative.find("bandwidth_gb_per_s: 6.25"), 24, "bandwidth_gb_per_s: -3");
  std::string zero_nodes = groups;
  zero_nodes.replace(zero_nodes.find("nodes: 4"), 8, "nodes: 0");
  std::string no_name = groups;
  no_name.replace(no_name.find("  - name: roce\n"), 15, "  - ");
  std::string twice = groups;
  twice.replace(twice.find("  - name: roce\n"), 15, "  - name: ib\n");
  return {
      {"DuplicateGroupName", head + twice + inter, "names an earlier group too"},
      {"InterGroupWithoutGroups", head + inter, "has no 'groups'"},
      {"NodesDisagreeWithGroups", "nodes: 10\n" + head + groups + inter, "nodes"},
      {"UnknownNic", head + unknown_nic + inter, "omnipath"},
      {"NegativeGroupBandwidth", head + negative + inter, "bandwidth_gb_per_s"},
      {"GroupWithoutNodes", head + zero_nodes + inter, "nodes"},
      {"GroupsWithoutInterGroup", head + groups, "inter_group"},
      {"EmptyGroups", head + "groups: []\n" + inter, "groups"},
      {"UnknownGroupField", head + groups + "    fabric: ib\n" + inter, "fabric"},
      {"UnknownCollectives", "collectives: tree\n" + head, "collectives"},
      {"NegativeCollectiveLatency", "collectives: ring\ncollective_latency_us: -1\n" + head,
       "collective_latency_us"},
  };
}

INSTANTIATE_TEST_SUITE_P(Topology, TopologyBadProfile, ::testing::ValuesIn(bad_profiles()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(TopologyProfiles, AGoodHeterogeneousProfileLoads) {
  const std::string path = write_profile("topology_good", std::string(kHead) + kGroups + kInterGroup);
  const ClusterSpec c = load_cluster(path);
  ASSERT_TRUE(c.heterogeneous());
  EXPECT_EQ(c.nodes, 8);
  EXPECT_EQ(c.groups[1].fabric.nic, NicKind::kRoce);
  EXPECT_DOUBLE_EQ(c.groups[1].fabric.bandwidth_bytes_per_s, 6.25e9);
  EXPECT_FALSE(c.ring_collectives);
}

TEST(TopologyProfiles, EveryShippedProfileLoads) {
  for (const char* name :
       {"frontier", "holmes-mixed", "holmes-ib", "holmes-ethernet", "dgx-a100", "dgx-h100"}) {
    EXPECT_NO_THROW(load_cluster(name)) << name;
  }
  EXPECT_TRUE(load_cluster("frontier").ring_collectives);
  // NCCL and RCCL run all-gather and reduce-scatter only as rings.
  EXPECT_TRUE(load_cluster("dgx-a100").ring_collectives);
  EXPECT_TRUE(load_cluster("dgx-h100").ring_collectives);
}

}  // namespace
}  // namespace parplan
