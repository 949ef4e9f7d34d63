#include "src/io/input_limits.h"

#include <cmath>
#include <string>

#include "src/io/input_error.h"

namespace parplan {

namespace {

void at_most(std::int64_t value, std::int64_t limit, const std::string& what) {
  if (value > limit)
    throw InputError(what + " is " + std::to_string(value) + "; parplan accepts at most " +
                     std::to_string(limit));
}

// A positive finite number; a profile value scaled to infinity (1e308 GB)
// would make every capacity check pass.
void finite_positive(double value, const std::string& cluster, const std::string& field) {
  if (!std::isfinite(value) || value <= 0)
    throw InputError("cluster " + cluster + ": " + field +
                     " must be a positive finite number (after scaling to bytes and FLOP/s it is " +
                     std::to_string(value) + ")");
}

}  // namespace

void check_input_limits(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job) {
  const std::string m = "model " + model.name + ": ";
  at_most(model.layers, kMaxLayers, m + "layers");
  at_most(model.hidden, kMaxWidth, m + "hidden");
  at_most(model.ffn_hidden, kMaxWidth, m + "ffn_hidden");
  at_most(model.heads, kMaxWidth, m + "heads");
  at_most(model.kv_groups, kMaxWidth, m + "kv_groups");
  at_most(model.head_dim, kMaxWidth, m + "head_dim");
  at_most(model.experts, kMaxWidth, m + "experts");
  at_most(model.expert_ffn_hidden, kMaxWidth, m + "expert_ffn_hidden");
  at_most(model.vocab, std::int64_t{1} << 30, m + "vocab");

  at_most(cluster.nodes, kMaxNodes, "cluster " + cluster.name + ": nodes");
  at_most(cluster.ranks_per_node, kMaxGpus, "cluster " + cluster.name + ": GPUs per node");
  at_most(static_cast<std::int64_t>(cluster.nodes) * cluster.ranks_per_node, kMaxGpus,
          "cluster " + cluster.name + ": nodes x GPUs per node");
  const DeviceSpec& d = cluster.device;
  finite_positive(d.hbm_bytes, cluster.name, "HBM capacity");
  finite_positive(d.hbm_bytes_per_s, cluster.name, "HBM bandwidth");
  finite_positive(d.peak_bf16_flops_per_s, cluster.name, "peak bf16 FLOP/s");
  if (!std::isfinite(d.peak_fp16_flops_per_s) || !std::isfinite(d.peak_fp8_flops_per_s))
    finite_positive(INFINITY, cluster.name, "peak fp16/fp8 FLOP/s");
  for (const NetworkTier& tier : cluster.tiers)
    finite_positive(tier.bandwidth_bytes_per_s, cluster.name, "bandwidth of tier " + tier.name);

  check_precision_supported(cluster, job.precision, "precision");

  at_most(job.gpus, kMaxGpus, "the job's GPU count");
  // A size on the outermost tier bounds what the profile describes: beyond
  // it no tier prices the traffic, which would run at that tier's speed.
  if (!cluster.tiers.empty() && cluster.tiers.back().ranks > 0 && job.gpus > cluster.tiers.back().ranks)
    throw InputError("the job's " + std::to_string(job.gpus) + " GPUs exceed cluster " + cluster.name +
                     "'s outermost tier " + cluster.tiers.back().name + " (" +
                     std::to_string(cluster.tiers.back().ranks) +
                     " ranks); add the tier that links those groups to the profile, or use fewer GPUs");
  at_most(job.gbs, kMaxGbs, "the global batch (gbs)");
  at_most(job.seq, kMaxSeq, "the sequence length (seq)");
}

void check_precision_supported(const ClusterSpec& cluster, Precision precision, const std::string& where) {
  if (precision != Precision::kFp8 || cluster.device.peak_fp8_flops_per_s > 0) return;
  throw InputError(
      where + " fp8: cluster " + cluster.name + "'s " + cluster.device.name +
      " has no fp8 peak (peak_fp8_tflops) in its profile, and the engines run fp8 only on "
      "fp8 tensor cores (Hopper, Ada, MI300); train in bf16, or add peak_fp8_tflops to the profile");
}

}  // namespace parplan
