// The ranked plans are distinct configs: a ZeRO++ hpZ choice whose node
// holds one data-parallel rank (tp x cp fill it) is plain ZeRO-3 and is not
// offered twice (src/search/sharding_choices.cpp).
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/search/search.h"
#include "tests/tune_support.h"

namespace parplan {
namespace search_distinct_plans_test {

TEST(SearchDistinctPlans, NoConfigIsRankedTwice) {
  const ModelSpec model = load_model("gpt3-175b");
  const ClusterSpec cluster = load_cluster("dgx-a100");
  for (const char* engine : {"megatron-deepspeed", "deepspeed", "torchtitan"}) {
    const JobSpec job = test::recipe_job(engine, 1024, 1536, 2048);
    SearchOptions options;
    options.top_k = 20;
    options.engines = parse_engine_selection(engine);
    const SearchResult r = search_configs(model, cluster, job, options);
    ASSERT_FALSE(r.best.empty()) << engine;
    std::set<std::tuple<int, int, int, int, int, bool, int, int, int, int, int, bool, bool, bool, int>> seen;
    for (const auto& ranked : r.best) {
      const ParallelConfig& c = ranked.config;
      const auto key = std::make_tuple(c.tp, c.pp, c.vp, c.dp, c.cp, c.sp, c.zero, c.mbs,
                                       static_cast<int>(c.recompute), c.recompute_layers, c.hpz_ranks, c.qwz,
                                       c.qgz, c.hierarchical_partition, c.stage_split[0]);
      EXPECT_TRUE(seen.insert(key).second) << engine << ": tp " << c.tp << " pp " << c.pp << " dp " << c.dp
                                           << " zero " << c.zero << " mbs " << c.mbs;
    }
  }
}

// An hpZ (HSDP) shard group as large as the data-parallel group (dp 1 and
// cp 4 inside one node) shards like plain ZeRO-3: the same cost and the
// same launch files, so it is not a plan of its own.
TEST(SearchDistinctPlans, AShardGroupOfTheWholeDataParallelGroupIsPlainZero3) {
  const ModelSpec model = load_model("llama3.1-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const JobSpec job = test::recipe_job("torchtitan", 8, 8, 65536);
  SearchOptions options;
  options.top_k = 20;
  options.engines = parse_engine_selection("torchtitan");
  const SearchResult r = search_configs(model, cluster, job, options);
  ASSERT_FALSE(r.best.empty());
  std::set<std::tuple<int, int, int, int, int, bool, int, int, int, int, bool, bool>> seen;
  for (const auto& ranked : r.best) {
    const ParallelConfig& c = ranked.config;
    const int group = c.dp * c.cp;
    EXPECT_TRUE(c.hpz_ranks < group || c.hpz_ranks == 1) << "hpZ over " << c.hpz_ranks << " of " << group;
    const auto key = std::make_tuple(c.tp, c.pp, c.vp, c.dp, c.cp, c.sp, c.zero, c.mbs,
                                     static_cast<int>(c.recompute), c.recompute_layers, c.qwz, c.qgz);
    const bool sharded_twice = c.zero == 3 && !seen.insert(key).second;
    EXPECT_FALSE(sharded_twice) << "tp " << c.tp << " cp " << c.cp << " dp " << c.dp << " ranked twice";
  }
}

}  // namespace search_distinct_plans_test
}  // namespace parplan
