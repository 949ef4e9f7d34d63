// The Frontier profile's price of a tensor-parallel all-gather over the 8
// GCDs of one node stays between what RCCL is measured to reach on the same
// node design and what the Infinity Fabric links allow. Guards against
// pricing tp 8 as one ring at its slowest (one-link, 50 GB/s) hop: RCCL runs
// several rings at once over disjoint links (ROCm/rccl
// src/graph/rome_models.cc @ 0cbce2a, rome_model_74: Frontier's bus ids
// c1000..de000, four distinct rings, each crossing four one-link hops).
#include <gtest/gtest.h>

#include "cost/collectives.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"

namespace parplan {
namespace {

TEST(FrontierTpBandwidth, EightGcdAllGatherMatchesMeasuredRcclBusBandwidth) {
  const ClusterSpec frontier = load_cluster((data_dir() / "hardware-profiles/frontier.yaml").string());
  const double bytes = 512e6;  // DeepSpeed's communication benchmark, 512 MB
  const GroupSpan node = group_span(frontier, 8, 1, 8);
  const double bus_gb_per_s = 7.0 / 8.0 * bytes / all_gather_s(frontier, node, bytes) / 1e9;
  // Measured on LUMI-G (the same node: 4 MI250X, the same xGMI links, 4
  // Slingshot-11 NICs), two nodes, 16 GCDs (Lumi-supercomputer/
  // lumi-reframe-tests): rccl-tests all_reduce_perf at 128 MiB, bus
  // bandwidth 85 GB/s with -5 % allowed (checks/microbenchmarks/gpu/
  // rccl_test.py @ 071c2a3); torch all_gather at 512 MB, 775 Gb/s with -10 %
  // allowed (checks/microbenchmarks/torch/torch_comm_coll.py @ 18a02ee). A
  // ring across two nodes runs through each node's own rings, so one node
  // is at least as fast.
  EXPECT_GE(bus_gb_per_s, 85.0 * 0.95);
  // Ceiling: four rings, each bound by one Infinity Fabric link of 50 GB/s
  // per direction (ROCm mi250.md: 25 GT/s x 16 wide; OLCF Frontier User
  // Guide: 50-100 GB/s between GCDs of different packages).
  EXPECT_LE(bus_gb_per_s, 4 * 50.0);
}

}  // namespace
}  // namespace parplan
