// Held-out validation: predicts published runs parplan was not calibrated on
// (calibration/heldout-published-runs.yaml) with a shipped profile, fitting
// nothing, and prints each run's step-time error and the mean and max per
// category (docs/heldout-runs.md).
// Usage: heldout_bench [RUN_FILE] [PROFILE] [--breakdown] [--memory]
// --breakdown: under each run, where the predicted step goes (compute,
// bubble, exposed communication per kind, optimizer) and the data-parallel
// bytes and seconds per network tier before overlap.
// --memory: the predicted memory of every run (by default only of runs that
// do not fit or that publish their peak).
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "cost/step_cost.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/run_file_reader.h"
#include "src/io/yaml_fields.h"

namespace {
struct Tally {
  double sum = 0, worst = 0;
  int count = 0;
  void add(double error) {
    sum += std::fabs(error);
    worst = std::fmax(worst, std::fabs(error));
    ++count;
  }
};
}  // namespace

int main(int argc, char** argv) {
  using namespace parplan;
  try {
    std::vector<std::string> positional;
    bool breakdown = false, memory = false;
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--breakdown")
        breakdown = true;
      else if (std::string(argv[i]) == "--memory")
        memory = true;
      else
        positional.emplace_back(argv[i]);
    }
    const std::string path = positional.size() > 0
                                 ? positional[0]
                                 : (data_dir() / "calibration/heldout-published-runs.yaml").string();
    const ClusterSpec cluster = load_cluster(positional.size() > 1 ? positional[1] : "dgx-h100");
    const std::vector<FitRun> runs = read_run_yaml(path, cluster);
    const YAML::Node nodes = load_yaml_file(path)["runs"];
    // Second tally: only runs on the hardware the profile describes (without
    // the h100-500w tag, torchtitan's 500 W HBM2e H100s, which are slower,
    // the h200 tag, runs on dgx-h200, the frontier tag, MI250X GCDs, and the
    // a100 tag, BLOOM's A100s on Jean Zay).
    std::map<std::string, Tally> by_category, same_hardware;
    Tally all, all_same_hardware;
    std::printf("%-36s %-32s %6s %4s %4s %10s %10s %8s\n", "run", "categories", "gpus", "vp", "mbs",
                "measured_s", "predicted_s", "error");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const FitRun& run = runs[i];
      const RunPrediction p = predict_run(run, cluster);
      // Positive: parplan predicts a longer step than measured (too slow).
      const double error = (p.step_s - run.measured_step_s) / run.measured_step_s;
      std::string tags;
      bool other_hardware = false;
      for (const auto& tag : nodes[i]["category"]) {
        const std::string t = tag.as<std::string>();
        tags += (tags.empty() ? "" : ",") + t;
        by_category[t].add(error);
        other_hardware = other_hardware || t == "h100-500w" || t == "h200" || t == "frontier" || t == "a100";
      }
      all.add(error);
      if (!other_hardware) {
        all_same_hardware.add(error);
        for (const auto& tag : nodes[i]["category"]) same_hardware[tag.as<std::string>()].add(error);
      }
      std::printf("%-36s %-32s %6d %4d %4d %10.3f %10.3f %+7.1f%%%s\n", run.name.c_str(), tags.c_str(),
                  run.job.gpus, p.vp, p.mbs, run.measured_step_s, p.step_s, 100 * error,
                  p.fits ? "" : " (OOM)");
      if (breakdown) {
        ParallelConfig c = run.config;
        c.vp = p.vp;
        c.mbs = p.mbs;
        const CostReport report = estimate_cost(run.model, run_cluster(run, cluster), run.job, c);
        const TimeBreakdown& t = report.time;
        std::printf(
            "  time s: compute %.3f bubble %.3f tp %.3f cp %.3f pp %.3f dp %.3f ep %.3f optimizer %.3f\n",
            t.compute_s, t.bubble_s, t.tp_comm_s, t.cp_comm_s, t.pp_comm_s, t.dp_comm_s, t.ep_comm_s,
            t.optimizer_s);
        std::printf("  dp traffic before overlap:");
        for (int tier = 0; tier < TierTraffic::kMaxTiers; ++tier)
          if (report.dp_traffic.bytes[tier] > 0)
            std::printf(" tier %d %.2f GB %.3f s", tier, report.dp_traffic.bytes[tier] / 1e9,
                        report.dp_traffic.seconds[tier]);
        std::printf("\n");
      }
      if (memory || !p.fits || run.measured_peak_bytes > 0) {
        // Where the memory goes on the busiest stage, for the config chosen,
        // against the run's own HBM where it names one, and the measured peak.
        ParallelConfig c = run.config;
        c.vp = p.vp;
        c.mbs = p.mbs;
        const MemoryBreakdown m = estimate_memory(run.model, run_cluster(run, cluster), run.job, c);
        const double gib = 1024.0 * 1024.0 * 1024.0;
        std::printf(
            "  memory GiB (stage %d): params %.2f grads %.2f optimizer %.2f activations %.2f "
            "buffers %.2f peak %.2f of %.2f",
            m.peak_stage, m.params_bytes / gib, m.grads_bytes / gib, m.optimizer_bytes / gib,
            m.activations_bytes / gib, m.buffers_bytes / gib, m.peak_bytes / gib, m.capacity_bytes / gib);
        if (run.measured_peak_bytes > 0)
          std::printf(", measured %.1f (%+.1f%%)", run.measured_peak_bytes / gib,
                      100 * (m.peak_bytes / run.measured_peak_bytes - 1.0));
        std::printf("\n");
      }
    }
    std::printf("\n%-12s %5s %10s %10s   %s\n", "category", "runs", "mean|err|", "max|err|",
                "without h100-500w, h200, frontier, a100: runs mean max");
    const auto row = [](const char* tag, const Tally& t, const Tally& s) {
      std::printf("%-12s %5d %9.1f%% %9.1f%%", tag, t.count, 100 * t.sum / t.count, 100 * t.worst);
      if (s.count > 0)
        std::printf("   %5d %9.1f%% %9.1f%%\n", s.count, 100 * s.sum / s.count, 100 * s.worst);
      else
        std::printf("   %5d %10s %10s\n", 0, "-", "-");
    };
    for (const auto& [tag, t] : by_category) row(tag.c_str(), t, same_hardware[tag]);
    row("all", all, all_same_hardware);
    std::printf("goal (issue 14): mean <= 5%%, max <= 10%% per category\n");
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
