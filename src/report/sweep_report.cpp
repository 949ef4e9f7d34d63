#include "src/report/sweep_report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "src/io/input_error.h"
#include "src/io/job_loader.h"

namespace parplan {

namespace fs = std::filesystem;

namespace {

template <typename... Args>
std::string format(const char* pattern, Args... args) {
  char buffer[128];
  std::snprintf(buffer, sizeof buffer, pattern, args...);
  return buffer;
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

std::string human_params(double params) {
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

const ModelSpec& model_of(const SweepGrid& grid, const SweepOutcome& o) {
  return grid.models.at(static_cast<std::size_t>(o.point.model_index));
}

}  // namespace

const std::vector<std::string>& sweep_columns() {
  static const std::vector<std::string> columns = {"model",  "params",       "gpus",      "gbs",
                                                   "seq",    "feasible",     "tp",        "pp",
                                                   "vp",     "dp",           "cp",        "sp",
                                                   "zero",   "mbs",          "recompute", "recompute_layers",
                                                   "step_s", "tokens_per_s", "mfu",       "peak_memory_bytes",
                                                   "reason"};
  return columns;
}

std::string sweep_table(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes,
                        std::optional<double> time_s) {
  std::size_t name_width = 5;
  for (const ModelSpec& m : grid.models) name_width = std::max(name_width, m.name.size());
  const int w = static_cast<int>(name_width);
  std::ostringstream out;
  out << format("%5s  %-*s %9s %6s %6s ", "#", w, "model", "params", "gpus", "gbs")
      << "  tp  pp  vp    dp  cp  sp  zero  mbs  recompute     step_s    tokens/s    MFU  mem_GiB\n";
  int feasible = 0;
  for (const SweepOutcome& o : outcomes) {
    out << format("%5d  %-*s %9s %6d %6d ", o.point.index, w, model_of(grid, o).name.c_str(),
                  human_params(o.params).c_str(), o.point.job.gpus, o.point.job.gbs);
    if (!o.feasible) {
      out << "  no plan: " << o.reason << "\n";
      continue;
    }
    ++feasible;
    const ParallelConfig& c = o.config;
    char line[256];
    std::snprintf(line, sizeof line, "%4d %3d %3d %5d %3d %3s %5d %4d  %-10s %9.3f %11.0f %5.1f%% %7.1f\n",
                  c.tp, c.pp, c.vp, c.dp, c.cp, c.sp ? "on" : "off", c.zero, c.mbs, recompute_text(c).c_str(),
                  o.cost.time.step_s, o.cost.throughput.tokens_per_s, 100 * o.cost.throughput.mfu,
                  o.cost.memory.peak_bytes / (1024.0 * 1024.0 * 1024.0));
    out << line;
  }
  out << outcomes.size() << " points (" << feasible << " with a plan) on " << grid.cluster.name << ", seq "
      << grid.seq << ", " << precision_name(grid.precision);
  if (time_s) out << "; planned in " << format("%.2f", *time_s) << " s";
  out << "\n";
  return out.str();
}

std::string sweep_csv(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes) {
  std::ostringstream out;
  const auto& columns = sweep_columns();
  for (std::size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i];
  out << "\n";
  for (const SweepOutcome& o : outcomes) {
    out << csv_field(model_of(grid, o).name) << "," << format("%.0f", o.params) << "," << o.point.job.gpus
        << "," << o.point.job.gbs << "," << o.point.job.seq << "," << (o.feasible ? "true" : "false") << ",";
    if (o.feasible) {
      const ParallelConfig& c = o.config;
      out << c.tp << "," << c.pp << "," << c.vp << "," << c.dp << "," << c.cp << ","
          << (c.sp ? "true" : "false") << "," << c.zero << "," << c.mbs << "," << recompute_name(c.recompute)
          << "," << c.recompute_layers << "," << format("%.6g", o.cost.time.step_s) << ","
          << format("%.1f", o.cost.throughput.tokens_per_s) << "," << format("%.4f", o.cost.throughput.mfu)
          << "," << format("%.0f", o.cost.memory.peak_bytes) << ",\n";
    } else {
      out << ",,,,,,,,,,,,,," << csv_field(o.reason) << "\n";
    }
  }
  return out.str();
}

nlohmann::ordered_json sweep_json(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes,
                                  std::optional<double> time_s) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  int feasible = 0;
  for (const SweepOutcome& o : outcomes) {
    nlohmann::ordered_json j;
    j["model"] = model_of(grid, o).name;
    j["params"] = o.params;
    j["gpus"] = o.point.job.gpus;
    j["gbs"] = o.point.job.gbs;
    j["seq"] = o.point.job.seq;
    j["feasible"] = o.feasible;
    if (o.feasible) {
      ++feasible;
      const ParallelConfig& c = o.config;
      j["tp"] = c.tp;
      j["pp"] = c.pp;
      j["vp"] = c.vp;
      j["dp"] = c.dp;
      j["cp"] = c.cp;
      j["sp"] = c.sp;
      j["zero"] = c.zero;
      j["mbs"] = c.mbs;
      j["recompute"] = recompute_name(c.recompute);
      j["recompute_layers"] = c.recompute_layers;
      j["step_s"] = o.cost.time.step_s;
      j["tokens_per_s"] = o.cost.throughput.tokens_per_s;
      j["mfu"] = o.cost.throughput.mfu;
      j["peak_memory_bytes"] = o.cost.memory.peak_bytes;
      j["reason"] = nullptr;
    } else {
      for (const char* key : {"tp", "pp", "vp", "dp", "cp", "sp", "zero", "mbs", "recompute",
                              "recompute_layers", "step_s", "tokens_per_s", "mfu", "peak_memory_bytes"})
        j[key] = nullptr;
      j["reason"] = o.reason;
    }
    rows.push_back(std::move(j));
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
