// Speed of `plan`'s joint search: the 1T model of Narayanan 2021 on 3072 A100
// GPUs (the target is <= 1 s on 2 cores) and GPT-3 175B on 1024. Prints the
// median over repetitions and its ratio to the target; asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <vector>

#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/plan/planner.h"

int main() {
  using namespace parplan;
  try {
    struct Case {
      const char* model;
      int gpus, gbs;
    };
    const ClusterSpec cluster = load_cluster("dgx-a100");
    std::printf("%-12s %6s %6s %10s %10s %12s %12s\n", "model", "gpus", "gbs", "median_s", "vs_1s",
                "candidates", "evaluated");
    for (const Case c :
         {Case{"gpt-1t", 3072, 3072}, Case{"gpt3-175b", 1024, 1536}, Case{"llama3-405b", 2048, 1024}}) {
      const ModelSpec model = load_model(c.model);
      JobSpec job;
      job.gpus = c.gpus, job.gbs = c.gbs, job.seq = 2048;
      std::vector<double> times;
      PlannerResult result;
      for (int rep = 0; rep < 15; ++rep) {
        const auto start = std::chrono::steady_clock::now();
        result = plan_job(model, cluster, job, PlannerOptions{});
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      std::sort(times.begin(), times.end());
      const double median = times[times.size() / 2];
      std::printf("%-12s %6d %6d %10.4f %9.1fx %12ld %12ld\n", c.model, c.gpus, c.gbs, median, 1.0 / median,
                  result.search.stats.candidates, result.search.stats.evaluated);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plan_speed_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
