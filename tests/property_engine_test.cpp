// Property: `--engine E` never returns a plan E rejects. On random jobs
// (seeded) over every shipped profile, the optimum for each engine passes
// that engine's capability table and its own argument checks
// (src/emit/engine_rules.cpp), and under `any` the engine a plan is tagged
// with accepts it.
#include <gtest/gtest.h>

#include <sstream>

#include "src/emit/emit.h"
#include "tests/property_support.h"

namespace parplan {
namespace {

TEST(PropertyEngine, EveryEngineAcceptsItsOwnOptimum) {
  unsigned seed = 4242;
  int planned = 0;
  for (const std::string& profile : catalog_names("hardware-profiles")) {
    const ClusterSpec cluster = load_cluster(profile);
    for (const property::RandomJob& r : property::random_jobs(cluster, 2, seed++)) {
      const ModelSpec model = load_model(r.model);
      std::ostringstream what;
      what << profile << ": " << r.model << " on " << r.job.gpus << " GPUs, gbs " << r.job.gbs << ", seq "
           << r.job.seq;
      EngineSelection any;
      const RankedConfig best = property::optimum(model, cluster, r.job, any);
      if (best.engine >= 0) {
        const Plan plan{model, cluster, r.job, best.config, best.cost};
        const Engine tagged = static_cast<Engine>(best.engine);
        EXPECT_EQ(capability_problem(engine_capabilities(tagged), model, r.job, best.config), nullptr)
            << what.str();
        EXPECT_TRUE(engine_rule_violations(plan, tagged).empty()) << what.str() << " (any)";
      }
      for (int e = 0; e < kEngineCount; ++e) {
        const Engine engine = static_cast<Engine>(e);
        const EngineSelection one = parse_engine_selection(engine_capabilities(engine).name);
        const RankedConfig ranked = property::optimum(model, cluster, r.job, one);
        if (ranked.engine < 0) continue;  // the engine has no plan for the job
        ++planned;
        EXPECT_EQ(ranked.engine, e) << what.str();
        EXPECT_EQ(capability_problem(engine_capabilities(engine), model, r.job, ranked.config), nullptr)
            << what.str() << " (" << engine_capabilities(engine).name << ")";
        const std::vector<std::string> violations =
            engine_rule_violations(Plan{model, cluster, r.job, ranked.config, ranked.cost}, engine);
        EXPECT_TRUE(violations.empty()) << what.str() << " (" << engine_capabilities(engine).name
                                        << "): " << (violations.empty() ? "" : violations.front());
        // Lossy collectives and the unreleased scheme only when asked for.
        EXPECT_FALSE(ranked.config.qwz || ranked.config.qgz || ranked.config.hierarchical_partition)
            << what.str();
      }
    }
  }
  EXPECT_GT(planned, 0);
}

}  // namespace
}  // namespace parplan
