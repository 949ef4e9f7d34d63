// SkipPipe partition local search: it scores no partition twice (scores are
// remembered, still counted as evaluations) and ends on the least score it saw.
#include "solvers/skip_partition_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <mutex>

namespace parplan {
namespace {

/// A pure, bumpy function of the partition: many local optima.
double bumpy_score(const SkipPartition& p) {
  double total = 0;
  for (std::size_t s = 0; s < p.size(); ++s)
    for (int node : p[s]) total += std::sin(1.7 * node * (s + 1) + 0.3 * s) + 0.01 * node * s;
  return 100 + total;
}

TEST(SkipPartitionSearch, ScoresEachPartitionOnceAndEndsOnTheLeastSeen) {
  for (int limit : {30, 120, 400}) {
    std::mutex lock;
    std::map<SkipPartition, int> calls;
    double least_seen = INFINITY;
    auto counted = [&](const SkipPartition& p) {
      const double v = bumpy_score(p);
      std::lock_guard<std::mutex> guard(lock);
      ++calls[p];
      least_seen = std::min(least_seen, v);
      return v;
    };
    const SkipPartition start = block_partition({4, 3, 3, 2});
    const PartitionSearchResult r = local_search_partition(start, counted, limit, steady_now_s(), 1e9);
    for (const auto& [partition, count] : calls) EXPECT_EQ(count, 1);
    EXPECT_EQ(r.makespan_s, least_seen);
    EXPECT_EQ(r.makespan_s, bumpy_score(r.best));
    EXPECT_LE(r.evaluations, limit);
    EXPECT_LE(static_cast<int>(calls.size()), r.evaluations);
  }
}

}  // namespace
}  // namespace parplan
