#include "src/report/sweep_report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "cost/stage_layout.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/input_error.h"
#include "src/io/job_loader.h"
#include "src/report/counted.h"
#include "src/report/plan_report.h"
#include "src/report/wrap_text.h"
#include "src/report/xml_text.h"

namespace parplan {

namespace fs = std::filesystem;

namespace {

template <typename... Args>
std::string format(const char* pattern, Args... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, pattern, args...);
  return buffer;
}

// The table's model column: at most this many characters (the CSV and JSON
// keep the whole name), padded by characters, not bytes.
constexpr std::size_t kModelColumnChars = 40;

std::string model_cell(const std::string& name, std::size_t width) {
  std::string cell = shortened_text(name, kModelColumnChars);
  return cell + std::string(width - std::min(width, utf8_chars(cell)), ' ');
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string params_text(double params) {
  if (params >= 1e12) return format("%.2f T", params / 1e12);
  if (params >= 1e9) return format("%.1f B", params / 1e9);
  return format("%.0f M", params / 1e6);
}

std::string recompute_text(const ParallelConfig& c) {
  std::string text = recompute_name(c.recompute);
  if (c.recompute == Recompute::kFull && c.recompute_layers > 0)
    text += "/" + std::to_string(c.recompute_layers);
  return text;
}

/// "package" only where the cluster has a tier narrower than a node (two
/// GCDs of an MI250X); elsewhere the innermost partition level is the node.
const char* level_name(PartitionLevel level, const ClusterSpec& cluster) {
  bool package = false;
  for (const NetworkTier& tier : cluster.tiers)
    package = package || (tier.ranks > 1 && tier.ranks < cluster.ranks_per_node);
  if (level == PartitionLevel::kPackage) return package ? "package" : "node";
  return level == PartitionLevel::kNode ? "node" : "job";
}

/// The ZeRO stage, marked + for ZeRO++ and h for hierarchical partitioning
/// (and * when its collectives are lossy).
std::string zero_text(const ParallelConfig& c) {
  std::string text = std::to_string(c.zero);
  if (c.hierarchical_partition)
    text += "h";
  else if (c.zeropp())
    text += "+";
  if (c.qwz || c.qgz) text += "*";
  return text;
}

// torchtitan runs hpZ as HSDP (cost/step_internal.h, hsdp_shard_ranks).
const char* zero_variant(const ParallelConfig& c, int engine) {
  if (c.zero == 0) return "none";
  if (c.hierarchical_partition) return "hierarchical";
  if (c.zeropp() && c.zero >= 3 && engine == static_cast<int>(Engine::kTorchtitan)) return "hsdp";
  return c.zeropp() ? "zeropp" : "flat";
}

/// One point as an object keyed by sweep_columns(), null where it has no plan.
nlohmann::ordered_json sweep_row(const SweepGrid& grid, const SweepOutcome& o) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["model"] = sweep_model(grid, o).name;
  j["params"] = o.params;
  j["gpus"] = o.point.job.gpus;
  j["gbs"] = o.point.job.gbs;
  j["seq"] = o.point.job.seq;
  j["feasible"] = o.feasible;
  if (!o.feasible) {
    for (const std::string& key : sweep_columns())
      if (!j.contains(key)) j[key] = nullptr;
    j["reason"] = o.reason;
    return j;
  }
  const ParallelConfig& c = o.config;
  const CostReport& cost = o.cost;
  j["engine"] = o.engine >= 0 ? Json(engine_capabilities(static_cast<Engine>(o.engine)).name) : Json(nullptr);
  j["tp"] = c.tp;
  j["pp"] = c.pp;
  j["vp"] = c.vp;
  j["dp"] = c.dp;
  j["cp"] = c.cp;
  j["ep"] = c.ep;
  j["etp"] = c.etp;
  j["sp"] = c.sp;
  j["zero"] = c.zero;
  j["zero_variant"] = zero_variant(c, o.engine);
  j["partition"] = c.hierarchical_partition
                       ? Json(std::string(level_name(c.partition.params, grid.cluster)) + "/" +
                              level_name(c.partition.params_secondary, grid.cluster) + "/" +
                              level_name(c.partition.grads, grid.cluster) + "/" +
                              level_name(c.partition.optimizer, grid.cluster))
                       : Json(nullptr);
  j["hpz_ranks"] = c.hpz_ranks;
  j["qwz"] = c.qwz;
  j["qgz"] = c.qgz;
  j["lossy_comm"] = c.qwz || c.qgz;
  j["mbs"] = c.mbs;
  j["recompute"] = recompute_name(c.recompute);
  j["recompute_layers"] = c.recompute_layers;
  j["first_stage_layers"] = c.first_stage_layers;
  j["last_stage_layers"] = c.last_stage_layers;
  // Every rank's layers: a split no first/last pair states (Megatron-
  // DeepSpeed's partition, a heterogeneous cluster's) is visible too.
  j["stage_layers"] = Json::array();
  for (int s = 0; s < c.pp; ++s) j["stage_layers"].push_back(stage_layers(sweep_model(grid, o).layers, c, s));
  j["attention"] = c.flash_attention ? "flash" : "unfused";
  j["step_s"] = cost.time.step_s;
  j["tokens_per_s"] = cost.throughput.tokens_per_s;
  j["mfu"] = cost.throughput.mfu;
  j["hfu"] = cost.throughput.hfu;
  j["peak_memory_bytes"] = cost.memory.peak_bytes;
  j["memory_fraction"] = cost.memory.capacity_bytes > 0
                             ? Json(cost.memory.peak_bytes / cost.memory.capacity_bytes)
                             : Json(nullptr);
  j["limiter"] = limiter_key(cost.limiter);
  j["reason"] = nullptr;
  return j;
}

/// A CSV field: empty for null; numbers rounded per column (the JSON keeps them whole).
std::string csv_value(const std::string& column, const nlohmann::ordered_json& value) {
  if (value.is_null()) return "";
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_string()) return csv_field(value.get<std::string>());
  if (value.is_array()) {  // stage_layers: "6/6/5"
    std::string text;
    for (const auto& item : value) text += (text.empty() ? "" : "/") + std::to_string(item.get<long long>());
    return text;
  }
  if (value.is_number_integer()) return std::to_string(value.get<long long>());
  const double v = value.get<double>();
  if (column == "step_s") return format("%.6g", v);
  if (column == "tokens_per_s") return format("%.1f", v);
  if (column == "mfu" || column == "hfu" || column == "memory_fraction") return format("%.4f", v);
  return format("%.0f", v);
}

}  // namespace

const std::vector<std::string>& sweep_columns() {
  static const std::vector<std::string> columns = {"model",
                                                   "params",
                                                   "gpus",
                                                   "gbs",
                                                   "seq",
                                                   "feasible",
                                                   "engine",
                                                   "tp",
                                                   "pp",
                                                   "vp",
                                                   "dp",
                                                   "cp",
                                                   "ep",
                                                   "etp",
                                                   "sp",
                                                   "zero",
                                                   "zero_variant",
                                                   "partition",
                                                   "hpz_ranks",
                                                   "qwz",
                                                   "qgz",
                                                   "lossy_comm",
                                                   "mbs",
                                                   "recompute",
                                                   "recompute_layers",
                                                   "first_stage_layers",
                                                   "last_stage_layers",
                                                   "stage_layers",
                                                   "attention",
                                                   "step_s",
                                                   "tokens_per_s",
                                                   "mfu",
                                                   "hfu",
                                                   "peak_memory_bytes",
                                                   "memory_fraction",
                                                   "limiter",
                                                   "reason"};
  return columns;
}

std::string sweep_table(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes,
                        std::optional<double> time_s) {
  std::size_t name_width = 5;
  for (const ModelSpec& m : grid.models)
    name_width = std::max(name_width, utf8_chars(shortened_text(m.name, kModelColumnChars)));
  std::ostringstream out;
  out << format("%5s  %s %9s %6s %6s ", "#", model_cell("model", name_width).c_str(), "params", "gpus", "gbs")
      << "  tp  pp  vp    dp  cp  ep  sp  zero  mbs  recompute     step_s    tokens/s     MFU  mem_GiB  "
         "limiter    engine\n";
  int feasible = 0;
  for (const SweepOutcome& o : outcomes) {
    const std::string head = format("%5d  %s %9s %6d %6d ", o.point.index,
                                    model_cell(sweep_model(grid, o).name, name_width).c_str(),
                                    params_text(o.params).c_str(), o.point.job.gpus, o.point.job.gbs);
    out << head;
    if (!o.feasible) {
      // Wrapped under the plan's columns, so the table stays readable.
      out << "  " << wrapped_words("no plan: " + o.reason, utf8_chars(head) + 2, utf8_chars(head) + 2, 160)
          << "\n";
      continue;
    }
    ++feasible;
    const ParallelConfig& c = o.config;
    char line[256];
    std::snprintf(line, sizeof line,
                  "%4d %3d %3d %5d %3d %3d %3s %5s %4d  %-10s %9.3f %11.0f %5.1f %% %7.1f  %-10s %s\n", c.tp,
                  c.pp, c.vp, c.dp, c.cp, c.ep, c.sp ? "on" : "off", zero_text(c).c_str(), c.mbs,
                  recompute_text(c).c_str(), o.cost.time.step_s, o.cost.throughput.tokens_per_s,
                  100 * o.cost.throughput.mfu, o.cost.memory.peak_bytes / (1024.0 * 1024.0 * 1024.0),
                  limiter_key(o.cost.limiter),
                  o.engine >= 0 ? engine_capabilities(static_cast<Engine>(o.engine)).name : "-");
    out << line;
  }
  out << counted(static_cast<long long>(outcomes.size()), "point") << " (" << feasible << " with a plan) on "
      << grid.cluster.name << ", seq " << grid.seq << ", " << precision_name(grid.precision);
  if (time_s) out << "; planned in " << human_duration(*time_s);
  out << "\n";
  return out.str();
}

std::string sweep_csv(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes) {
  std::ostringstream out;
  const auto& columns = sweep_columns();
  for (std::size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i];
  out << "\n";
  for (const SweepOutcome& o : outcomes) {
    const nlohmann::ordered_json row = sweep_row(grid, o);
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (i) out << ",";
      out << csv_value(columns[i], row.at(columns[i]));
    }
    out << "\n";
  }
  return out.str();
}

nlohmann::ordered_json sweep_json(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes,
                                  std::optional<double> time_s) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  int feasible = 0;
  for (const SweepOutcome& o : outcomes) {
    feasible += o.feasible ? 1 : 0;
    rows.push_back(sweep_row(grid, o));
  }
  nlohmann::ordered_json out;
  out["sweep"] = {{"cluster", grid.cluster.name},
                  {"seq", grid.seq},
                  {"precision", precision_name(grid.precision)},
                  {"points", outcomes.size()},
                  {"feasible", feasible}};
  if (time_s) out["sweep"]["time_s"] = *time_s;
  out["points"] = std::move(rows);
  return out;
}

}  // namespace parplan
