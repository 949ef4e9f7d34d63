#include "src/calibration/heldout_alike.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include "cost/fitted_constants.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/run_file_reader.h"

namespace parplan {

namespace {

// The profile the held-out file's runs are predicted on unless a run names
// its own hardware (`cluster:`), as bench/heldout_bench does.
constexpr const char* kHeldoutDefaultProfile = "dgx-h100";

struct Traits {
  bool fp8 = false;
  bool moe = false;
  bool long_seq = false;
  bool sharded = false;
  bool eager = false;  // element-wise kernels unfused (JobSpec::fused_elementwise false)
};

Traits traits_of(const ModelSpec& model, const JobSpec& job, const ParallelConfig& config) {
  return {job.precision == Precision::kFp8, model.is_moe(), job.seq >= kHeldoutLongSeq, config.zero >= 3,
          !job.fused_elementwise};
}

struct HeldoutRun {
  Traits traits;
  double error = 0;  // predicted / measured step time - 1
};

struct HeldoutFile {
  ClusterSpec base;
  std::vector<FitRun> runs;
};

// Read once per process; an unreadable or stale file leaves the annotation
// out: it never stops a plan.
const HeldoutFile& heldout_file() {
  static std::once_flag once;
  static HeldoutFile file;
  std::call_once(once, [] {
    try {
      const auto path = data_dir() / "calibration" / "heldout-published-runs.yaml";
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec)) return;
      file.base = load_cluster(kHeldoutDefaultProfile);
      file.runs = read_run_yaml(path.string(), file.base);
    } catch (const std::exception&) {
      file.runs.clear();
    }
  });
  return file;
}

std::string run_profile(const FitRun& run, const ClusterSpec& base) {
  return run.own_cluster ? run.own_cluster->name : base.name;
}

// The runs on one profile, predicted once per process and profile.
std::vector<HeldoutRun> heldout_runs(const std::string& profile) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<HeldoutRun>> by_profile;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto found = by_profile.find(profile);
  if (found != by_profile.end()) return found->second;
  const HeldoutFile& file = heldout_file();
  std::vector<HeldoutRun> out;
  for (const FitRun& run : file.runs) {
    if (run_profile(run, file.base) != profile) continue;
    const RunPrediction p = predict_run(run, file.base);
    ParallelConfig c = run.config;
    c.vp = p.vp;
    c.mbs = p.mbs;
    out.push_back({traits_of(run.model, run.job, c), p.step_s / run.measured_step_s - 1.0});
  }
  by_profile[profile] = out;
  return out;
}

std::string describe(const Traits& t, bool with_precision, bool with_sharding) {
  std::string s;
  if (with_precision) s += t.fp8 ? "fp8, " : "16-bit, ";
  s += t.moe ? "MoE, " : "dense, ";
  s += t.long_seq ? "seq >= 32K" : "seq < 32K";
  if (with_sharding) s += t.sharded ? ", ZeRO-3/FSDP" : ", no ZeRO-3/FSDP";
  s += t.eager ? ", eager" : ", fused element-wise";
  return s;
}

// The shipped profile the held-out runs of `name` were predicted on, if any.
const ClusterSpec* shipped_profile(const std::string& name) {
  const HeldoutFile& file = heldout_file();
  if (file.base.name == name) return &file.base;
  for (const FitRun& run : file.runs)
    if (run.own_cluster && run.own_cluster->name == name) return &*run.own_cluster;
  return nullptr;
}

// Whether `cluster` prices as the shipped profile of its name: the same peaks
// and bandwidths and every constant calibrate can fit. A copy that keeps the
// name but changes a constant (or a power limit) was never checked on those
// runs.
bool prices_as_shipped(const ClusterSpec& cluster, const ClusterSpec& shipped) {
  const DeviceSpec &a = cluster.device, &b = shipped.device;
  if (a.peak_bf16_flops_per_s != b.peak_bf16_flops_per_s ||
      a.peak_fp8_flops_per_s != b.peak_fp8_flops_per_s || a.hbm_bytes_per_s != b.hbm_bytes_per_s ||
      a.hbm_usable_bytes != b.hbm_usable_bytes || cluster.tiers.size() != shipped.tiers.size() ||
      cluster.groups.size() != shipped.groups.size())
    return false;
  for (std::size_t i = 0; i < cluster.tiers.size(); ++i)
    if (cluster.tiers[i].bandwidth_bytes_per_s != shipped.tiers[i].bandwidth_bytes_per_s ||
        cluster.tiers[i].ranks != shipped.tiers[i].ranks)
      return false;
  for (const FittedConstant& c : fitted_constants(shipped))
    if (fitted_value(cluster, c) != fitted_value(shipped, c)) return false;
  return true;
}

}  // namespace

std::optional<HeldoutAlike> heldout_alike(const ClusterSpec& cluster, const ModelSpec& model,
                                          const JobSpec& job, const ParallelConfig& config) {
  if (const ClusterSpec* shipped = shipped_profile(cluster.name);
      shipped != nullptr && !prices_as_shipped(cluster, *shipped))
    return std::nullopt;
  const Traits want = traits_of(model, job, config);
  const std::vector<HeldoutRun> runs = heldout_runs(cluster.name);
  // Most alike first: every trait, then without the sharding, then without
  // the precision too.
  for (int level = 0; level < 3; ++level) {
    const bool precision = level < 2, sharding = level < 1;
    HeldoutAlike a;
    double sum_abs = 0, sum = 0;
    for (const HeldoutRun& r : runs) {
      if (r.traits.moe != want.moe || r.traits.long_seq != want.long_seq || r.traits.eager != want.eager)
        continue;
      if (precision && r.traits.fp8 != want.fp8) continue;
      if (sharding && r.traits.sharded != want.sharded) continue;
      ++a.runs;
      sum_abs += std::fabs(r.error);
      sum += r.error;
      a.max_abs_error = std::fmax(a.max_abs_error, std::fabs(r.error));
    }
    if (a.runs >= kHeldoutAlikeMinRuns) {
      a.mean_abs_error = sum_abs / a.runs;
      a.mean_error = sum / a.runs;
      a.alike = describe(want, precision, sharding);
      return a;
    }
  }
  return std::nullopt;
}

std::string heldout_alike_text(const std::optional<HeldoutAlike>& alike) {
  if (!alike) return "none like this on this profile";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%d like this (%s): mean |error| %.1f%%, worst %.1f%%, on average %.1f%% too %s", alike->runs,
                alike->alike.c_str(), 100 * alike->mean_abs_error, 100 * alike->max_abs_error,
                100 * std::fabs(alike->mean_error), alike->mean_error < 0 ? "fast" : "slow");
  return buf;
}

}  // namespace parplan
