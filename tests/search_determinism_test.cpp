// The search's counters and ranking depend only on the input: a run on one
// thread and a run on many give the same numbers (issue 17, item 12).
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/search/search.h"

namespace parplan {
namespace {

SearchResult search_on(int threads, const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job) {
  tbb::task_arena arena(threads);
  SearchOptions options;
  options.top_k = 5;
  return arena.execute([&] { return search_configs(model, cluster, job, options); });
}

TEST(SearchDeterminism, CountersAndRankingIgnoreThreadCount) {
  const ModelSpec model = load_model("gpt3-175b");
  const ClusterSpec cluster = load_cluster("dgx-a100");
  JobSpec job;
  job.gpus = 1024;
  job.gbs = 1536;
  job.seq = 2048;
  const SearchResult one = search_on(1, model, cluster, job);
  const SearchResult many = search_on(4, model, cluster, job);
  EXPECT_EQ(one.stats.candidates, many.stats.candidates);
  EXPECT_EQ(one.stats.evaluated, many.stats.evaluated);
  EXPECT_EQ(one.stats.feasible, many.stats.feasible);
  EXPECT_EQ(one.stats.meshes, many.stats.meshes);
  EXPECT_EQ(one.stats.meshes_searched, one.stats.meshes);
  ASSERT_EQ(one.best.size(), many.best.size());
  for (std::size_t i = 0; i < one.best.size(); ++i) {
    EXPECT_EQ(one.best[i].cost.time.step_s, many.best[i].cost.time.step_s);
    EXPECT_EQ(one.best[i].config.tp, many.best[i].config.tp);
    EXPECT_EQ(one.best[i].config.pp, many.best[i].config.pp);
    EXPECT_EQ(one.best[i].config.mbs, many.best[i].config.mbs);
  }
  EXPECT_FALSE(one.stopped_at_deadline);
}

TEST(SearchDeterminism, APassedDeadlineStopsAtOnce) {
  const ModelSpec model = load_model("gpt3-175b");
  const ClusterSpec cluster = load_cluster("dgx-a100");
  JobSpec job;
  job.gpus = 1024;
  job.gbs = 1536;
  job.seq = 2048;
  SearchOptions options;
  options.deadline = std::chrono::steady_clock::now();
  const SearchResult r = search_configs(model, cluster, job, options);
  EXPECT_TRUE(r.stopped_at_deadline);
  EXPECT_EQ(r.stats.meshes_searched, 0);
  EXPECT_TRUE(r.best.empty());
  EXPECT_FALSE(r.no_valid_split);
  EXPECT_NE(r.infeasible_reason.find("time limit"), std::string::npos);
}

}  // namespace
}  // namespace parplan
