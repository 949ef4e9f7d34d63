#include "src/report/table_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "src/calibration/heldout_alike.h"
#include "src/io/job_loader.h"
#include "src/report/error_band.h"
#include "src/report/json_report.h"

namespace parplan {

namespace {
std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, fmt, a, b, c);
  return buffer;
}
// Memory in GiB (device capacities are powers of two: an "80 GB" H100 has
// 80 GiB); network traffic in GB (10^9 bytes, as link rates are quoted).
double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }
double gb(double bytes) { return bytes / 1e9; }
}  // namespace

std::string config_line(const ParallelConfig& c, bool moe, const JobSpec* job) {
  std::ostringstream out;
  out << "tp " << c.tp << "  pp " << c.pp << "  vp " << c.vp << "  dp " << c.dp << "  cp " << c.cp << "  sp "
      << (c.sp ? "on" : "off") << "  zero " << c.zero << "  mbs " << c.mbs << "  recompute "
      << recompute_name(c.recompute);
  if (c.recompute == Recompute::kFull && c.recompute_layers > 0)
    out << " (" << c.recompute_layers << " layers/chunk)";
  if (c.first_stage_layers > 0 || c.last_stage_layers > 0)
    out << "  stages first/last " << c.first_stage_layers << "/" << c.last_stage_layers << " layers";
  if (c.custom_split()) {
    out << (c.pipeline_layout ? "  pipeline layout, rank layers" : "  stage layers");
    for (int i = 0; i < c.pp && i < ParallelConfig::kMaxSplitStages; ++i)
      out << (i ? "/" : " ") << c.stage_split[i];
  }
  if (job != nullptr && is_hsdp(c, *job))
    out << "  " << hsdp_label(c);
  else if (c.zeropp())
    out << "  ZeRO++ (hpZ " << c.hpz_ranks << (c.qwz ? ", qwZ" : "") << (c.qgz ? ", qgZ" : "") << ")";
  if (c.hierarchical_partition)
    out << "  hierarchical partition (weights " << partition_level_name(c.partition.params) << ", secondary "
        << partition_level_name(c.partition.params_secondary) << ", gradients "
        << partition_level_name(c.partition.grads) << ", optimizer "
        << partition_level_name(c.partition.optimizer) << ")";
  if (moe || c.ep > 1 || c.etp > 1)
    out << "  ep " << c.ep << "  etp " << c.etp << "  a2a " << (c.a2a_hierarchical ? "hierarchical" : "flat")
        << (c.ep_overlap ? " (overlapped)" : "");
  out << "  attention " << (c.flash_attention ? "flash" : "unfused");
  return out.str();
}

std::string cost_table(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& c,
                       const CostReport& r, const JobSpec* job) {
  std::ostringstream out;
  const TimeBreakdown& t = r.time;
  const auto share = [&](double s) { return format("%9.3f s  %5.1f%%", s, 100 * s / t.step_s); };
  out << "model    " << model.name << format("  (%.2f B parameters, ", r.params / 1e9) << model.layers
      << " layers, hidden " << model.hidden << ")\n";
  out << "cluster  " << cluster.name << "  (" << c.world() << " x " << cluster.device.name;
  // The peaks of a power-limited part are derived, not read: say from what.
  if (cluster.device.power_clock_ratio < 1)
    out << format(", %.0f W limit: compute at %.3f of the datasheet peak", cluster.device.power_limit_w,
                  cluster.device.power_clock_ratio);
  out << ")\n";
  out << "config   " << config_line(c, model.is_moe(), job) << "\n";
  // The attention work assumed of the data (JobSpec::document_tokens).
  if (job != nullptr && job->document_tokens > 0)
    out << "data     documents of " << format("%.0f", job->document_tokens)
        << " tokens, attention masked per document\n";
  out << "\n";
  out << "step time            " << format("%9.3f s", t.step_s) << "\n";
  out << "  error band         " << error_band_text(cluster) << "\n";
  if (job != nullptr)
    out << "  held-out runs      " << heldout_alike_text(heldout_alike(cluster, model, *job, c)) << "\n";
  out << "  compute            " << share(t.compute_s) << "\n";
  out << "  pipeline bubble    " << share(t.bubble_s) << "\n";
  out << "  tp communication   " << share(t.tp_comm_s) << "\n";
  out << "  cp communication   " << share(t.cp_comm_s) << "\n";
  if (t.ep_comm_s > 0) out << "  ep all-to-all      " << share(t.ep_comm_s) << "\n";
  out << "  pp communication   " << share(t.pp_comm_s) << "\n";
  out << "  dp communication   " << share(t.dp_comm_s) << "\n";
  out << "  optimizer step     " << share(t.optimizer_s) << "\n\n";
  const Throughput& p = r.throughput;
  out << "throughput           " << format("%.0f tokens/s", p.tokens_per_s) << "\n";
  out << "  per GPU            "
      << format("%.1f model TFLOP/s, %.1f hardware TFLOP/s", p.model_tflops_per_gpu,
                p.hardware_tflops_per_gpu)
      << "\n";
  out << "  MFU / HFU          " << format("%.1f %% / %.1f %%", 100 * p.mfu, 100 * p.hfu) << "\n\n";
  const MemoryBreakdown& m = r.memory;
  out << "memory per GPU       " << format("%.1f GiB of %.1f GiB", gib(m.peak_bytes), gib(m.capacity_bytes))
      << (m.fits ? "  (fits)" : "  (DOES NOT FIT)") << "  on pipeline stage " << m.peak_stage << "\n";
  out << "  parameters         " << format("%.2f GiB", gib(m.params_bytes)) << "\n";
  out << "  gradients          " << format("%.2f GiB", gib(m.grads_bytes)) << "\n";
  out << "  optimizer states   " << format("%.2f GiB", gib(m.optimizer_bytes)) << "\n";
  out << "  activations        "
      << format("%.2f GiB (%.3f GiB per layer per micro-batch)", gib(m.activations_bytes),
                gib(m.activations_per_layer_bytes))
      << "\n";
  out << "  buffers, runtime   " << format("%.2f GiB", gib(m.buffers_bytes)) << "\n";
  if (m.params_secondary_bytes > 0)
    out << "  (of parameters: secondary partition " << format("%.2f GiB", gib(m.params_secondary_bytes))
        << ")\n";
  out << "\n";
  bool any_traffic = false;
  for (double b : r.dp_traffic.bytes) any_traffic = any_traffic || b > 0;
  if (any_traffic) {
    out << "dp traffic per step  (per GPU, before overlap)\n";
    for (std::size_t i = 0; i < cluster.tiers.size() && i < r.dp_traffic.bytes.size(); ++i) {
      if (r.dp_traffic.bytes[i] <= 0) continue;
      out << "  " << cluster.tiers[i].name
          << std::string(cluster.tiers[i].name.size() < 17 ? 17 - cluster.tiers[i].name.size() : 1, ' ')
          << format("  %8.2f GB  %8.3f s", gb(r.dp_traffic.bytes[i]), r.dp_traffic.seconds[i]) << "\n";
    }
    out << "\n";
  }
  if (!m.fits) {
    out << "does not fit: needs " << format("%.1f GiB more per GPU", gib(m.peak_bytes - m.capacity_bytes))
        << "; try more recomputation, a higher ZeRO stage, or larger tp/pp\n";
  } else {
    out << "limited by           " << limiter_name(r.limiter) << "\n";
  }
  return out.str();
}

namespace {
// What tells apart rows that share every column: the sharding layout beyond
// the ZeRO stage, the hierarchical partition, the expert all-to-all.
std::string layout_tag(const ParallelConfig& c, const JobSpec* job, bool moe) {
  std::string tag;
  const auto add = [&](const std::string& part) { tag += (tag.empty() ? "" : ",") + part; };
  if (job != nullptr && is_hsdp(c, *job))
    add("hsdp/" + std::to_string(std::min(c.hpz_ranks, c.dp * c.cp)));
  else if (c.zeropp())
    add("zero++/hpz" + std::to_string(c.hpz_ranks) + (c.qwz ? "+qwz" : "") + (c.qgz ? "+qgz" : ""));
  if (c.hierarchical_partition) add("hier-partition");
  if (moe && c.a2a_hierarchical) add("a2a-hier");
  if (moe && c.ep_overlap) add("ep-overlap");
  return tag;
}
}  // namespace

std::string alternatives_table(const std::vector<RankedConfig>& ranked, bool moe, const JobSpec* job) {
  bool any_tag = false;
  for (const auto& r : ranked) any_tag = any_tag || !layout_tag(r.config, job, moe).empty();
  std::ostringstream out;
  out << "rank  tp  pp  vp    dp  cp" << (moe ? "  ep etp" : "")
      << "  sp  zero  mbs  recompute       step_s    MFU   memory_GiB limiter   engine"
      << (any_tag ? "             layout" : "") << "\n";
  int rank = 1;
  for (const auto& r : ranked) {
    const ParallelConfig& c = r.config;
    char line[256];
    std::string recompute = recompute_name(c.recompute);
    if (c.recompute == Recompute::kFull && c.recompute_layers > 0)
      recompute += "/" + std::to_string(c.recompute_layers);
    const char* engine = r.engine >= 0 ? engine_capabilities(static_cast<Engine>(r.engine)).name : "-";
    std::snprintf(line, sizeof line, "%4d %3d %3d %3d %5d %3d", rank++, c.tp, c.pp, c.vp, c.dp, c.cp);
    out << line;
    if (moe) {
      std::snprintf(line, sizeof line, " %3d %3d", c.ep, c.etp);
      out << line;
    }
    std::snprintf(line, sizeof line, " %3s %5d %4d  %-12s %9.3f %5.1f%% %10.1f  %-9s %s", c.sp ? "on" : "off",
                  c.zero, c.mbs, recompute.c_str(), r.cost.time.step_s, 100 * r.cost.throughput.mfu,
                  gib(r.cost.memory.peak_bytes), limiter_key(r.cost.limiter), engine);
    out << line;
    if (any_tag) {
      const std::string tag = layout_tag(c, job, moe);
      const std::size_t engine_width = std::string(engine).size();
      // 19: megatron-deepspeed, the longest engine name, and a space.
      out << std::string(engine_width < 19 ? 19 - engine_width : 1, ' ') << (tag.empty() ? "-" : tag);
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace parplan

namespace parplan {

namespace {
std::string number_or_na(double value, const char* format) {
  if (!std::isfinite(value)) return "n/a";
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}
}  // namespace

std::string certificates_table(const std::vector<SolverCertificate>& certificates, bool timings) {
  std::ostringstream out;
  out << "solver certificates\n";
  for (const auto& c : certificates) {
    char line[512];
    const std::string gap = std::isfinite(c.gap) ? number_or_na(100 * c.gap, "%.3g") + "%" : "n/a";
    char time_text[32] = "";
    if (timings) std::snprintf(time_text, sizeof time_text, ", %.3f s", c.time_s);
    std::snprintf(line, sizeof line, "  %-22s %-10s objective %s  bound %s  gap %s  (%s%s)%s%s\n",
                  c.name.c_str(), status_name(c.status), number_or_na(c.objective, "%.6g").c_str(),
                  number_or_na(c.best_bound, "%.6g").c_str(), gap.c_str(), c.backend.c_str(), time_text,
                  c.message.empty() ? "" : ": ", c.message.substr(0, 200).c_str());
    out << line;
  }
  return out.str();
}

}  // namespace parplan
