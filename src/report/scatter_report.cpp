// JSON, table and --out lines of `parplan scatter`.
#include "src/report/scatter_report.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "src/report/json_text.h"

namespace parplan {

namespace {

/// JSON has no infinity or NaN: they become null.
nlohmann::ordered_json number(double value) {
  if (std::isfinite(value)) return value;
  return nullptr;
}

nlohmann::ordered_json group_json(const ScatterGroup& g) {
  nlohmann::ordered_json j;
  j["size"] = g.size;
  j["ranks"] = {g.first_rank, g.first_rank + g.size};
  j["sequences"] = g.sequences;
  j["tokens"] = static_cast<std::int64_t>(g.tokens);
  j["time_ms"] = number(g.time_ms);
  return j;
}

nlohmann::ordered_json micro_batches_json(const ScatterPlan& plan) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ScatterMicroBatch& mb : plan.micro_batches) {
    nlohmann::ordered_json groups = nlohmann::ordered_json::array();
    for (const ScatterGroup& g : mb.groups) groups.push_back(group_json(g));
    list.push_back({{"groups", groups}, {"time_ms", number(mb.time_ms)}});
  }
  return list;
}

double speedup(const ScatterStepResult& r) {
  return r.static_size > 0 ? r.static_time_ms / r.plan.time_ms : std::nan("");
}

/// A speedup for the table: "-" where it is undefined (0 ms over 0 ms, as
/// JSON's null).
std::string ratio_text(double ratio) {
  if (!std::isfinite(ratio)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", ratio);
  return buf;
}

/// "64x1 + 8x4 | 2x32": the micro-batches' groups as size x count.
std::string shape(const ScatterPlan& plan) {
  std::string text;
  for (const ScatterMicroBatch& mb : plan.micro_batches) {
    std::map<int, int, std::greater<>> count;
    for (const ScatterGroup& g : mb.groups) ++count[g.size];
    if (!text.empty()) text += " | ";
    bool first = true;
    for (const auto& [size, n] : count) {
      text += (first ? "" : " + ") + std::to_string(size) + "x" + std::to_string(n);
      first = false;
    }
  }
  return text;
}

struct Totals {
  double adaptive_ms = 0, static_ms = 0, worst_gap = 0, solve_ms = 0;
  bool static_all = true;
};

Totals totals(const ScatterReport& r) {
  Totals t;
  for (const ScatterStepResult& s : r.results) {
    t.adaptive_ms += s.plan.time_ms;
    t.static_ms += s.static_time_ms;
    t.static_all = t.static_all && s.static_size > 0;
    t.worst_gap = std::max(t.worst_gap, s.certificate.gap);
    t.solve_ms += s.solve_ms;
  }
  return t;
}

}  // namespace

nlohmann::ordered_json scatter_coefficients_json(const ScatterCoefficients& c) {
  nlohmann::ordered_json j;
  j["quadratic_ms"] = c.quadratic_ms;
  j["linear_ms"] = c.linear_ms;
  j["fixed_ms"] = c.fixed_ms;
  nlohmann::ordered_json alltoall = nlohmann::ordered_json::object();
  for (size_t i = 0; i < c.group_sizes.size(); ++i) {
    alltoall[std::to_string(c.group_sizes[i])] = c.alltoall_ms_per_token[i];
  }
  j["alltoall_ms_per_token"] = alltoall;
  j["token_capacity_per_gpu"] = c.token_capacity_per_gpu;
  j["group_sizes"] = c.group_sizes;
  return j;
}

nlohmann::ordered_json scatter_json(const ScatterReport& r) {
  nlohmann::ordered_json doc;
  doc["gpus"] = r.gpus;
  doc["coefficients_source"] = r.coefficients_source;
  doc["coefficients"] = scatter_coefficients_json(r.coefficients);
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.results.size(); ++i) {
    const ScatterStepResult& s = r.results[i];
    nlohmann::ordered_json step;
    step["step"] = i;
    step["sequences"] = r.steps[i].size();
    step["micro_batches"] = micro_batches_json(s.plan);
    step["time_ms"] = number(s.plan.time_ms);
    if (s.static_size > 0) {
      step["static"] = {{"size", s.static_size}, {"time_ms", number(s.static_time_ms)}};
    } else {
      step["static"] = nullptr;
    }
    step["speedup"] = number(speedup(s));
    nlohmann::ordered_json cert;
    cert["status"] = status_name(s.certificate.status);
    cert["objective"] = number(s.certificate.objective);
    cert["bound"] = number(s.certificate.best_bound);
    cert["gap"] = number(s.certificate.gap);
    cert["backend"] = s.certificate.backend;
    cert["message"] = s.certificate.message;
    if (r.timings) cert["time_s"] = s.certificate.time_s;
    step["certificate"] = cert;
    if (r.timings) step["solve_ms"] = s.solve_ms;
    steps.push_back(step);
  }
  doc["steps"] = steps;
  const Totals t = totals(r);
  nlohmann::ordered_json summary;
  summary["steps"] = r.results.size();
  summary["time_ms"] = number(t.adaptive_ms);
  summary["static_time_ms"] = t.static_all ? number(t.static_ms) : nullptr;
  summary["speedup"] = t.static_all ? number(t.static_ms / t.adaptive_ms) : nullptr;
  summary["worst_gap"] = number(t.worst_gap);
  if (r.timings) {
    summary["solve_ms"] = t.solve_ms;
    summary["wall_ms"] = r.wall_ms;
  }
  doc["summary"] = summary;
  return doc;
}

std::string scatter_out_lines(const ScatterReport& r) {
  std::string out;
  for (size_t i = 0; i < r.results.size(); ++i) {
    nlohmann::ordered_json line;
    line["step"] = i;
    line["time_ms"] = number(r.results[i].plan.time_ms);
    nlohmann::ordered_json mbs = nlohmann::ordered_json::array();
    for (const ScatterMicroBatch& mb : r.results[i].plan.micro_batches) {
      nlohmann::ordered_json groups = nlohmann::ordered_json::array();
      for (const ScatterGroup& g : mb.groups) {
        groups.push_back(
            {{"size", g.size}, {"ranks", {g.first_rank, g.first_rank + g.size}}, {"sequences", g.sequences}});
      }
      mbs.push_back({{"groups", groups}});
    }
    line["micro_batches"] = mbs;
    out += json_text(line, -1) + "\n";
  }
  return out;
}

std::string scatter_table(const ScatterReport& r) {
  std::ostringstream out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%5s %5s %4s  %-34s %11s %13s %8s %7s %s\n", "step", "seqs", "mbs",
                "groups per micro-batch (size x n)", "time_ms", "static_ms(p)", "speedup", "gap%", "status");
  out << buf;
  for (size_t i = 0; i < r.results.size(); ++i) {
    const ScatterStepResult& s = r.results[i];
    std::string groups = shape(s.plan);
    if (groups.size() > 34) groups = groups.substr(0, 31) + "...";
    const std::string static_text =
        s.static_size > 0 ? std::to_string(static_cast<long long>(std::llround(s.static_time_ms))) + "(" +
                                std::to_string(s.static_size) + ")"
                          : "-";
    std::snprintf(buf, sizeof buf, "%5zu %5zu %4zu  %-34s %11.1f %13s %8s %7.2f %s\n", i, r.steps[i].size(),
                  s.plan.micro_batches.size(), groups.c_str(), s.plan.time_ms, static_text.c_str(),
                  ratio_text(speedup(s)).c_str(), 100 * s.certificate.gap, status_name(s.certificate.status));
    out << buf;
  }
  const Totals t = totals(r);
  out << "\nsummary: " << r.results.size() << " steps, " << std::llround(t.adaptive_ms) << " ms adaptive";
  if (t.static_all) {
    std::snprintf(buf, sizeof buf, ", %lld ms static, speedup %s",
                  static_cast<long long>(std::llround(t.static_ms)),
                  ratio_text(t.static_ms / t.adaptive_ms).c_str());
    out << buf;
  }
  std::snprintf(buf, sizeof buf, ", worst gap %.2f %%", 100 * t.worst_gap);
  out << buf;
  if (r.timings) {
    std::snprintf(buf, sizeof buf, ", solved in %.1f ms", r.wall_ms);
    out << buf;
  }
  out << "\ncoefficients (" << r.coefficients_source << "): a=" << r.coefficients.quadratic_ms
      << " ms/token^2, b=" << r.coefficients.linear_ms << " ms/token, d=" << r.coefficients.fixed_ms
      << " ms, K=" << r.coefficients.token_capacity_per_gpu << " tokens/GPU\n";
  return out.str();
}

}  // namespace parplan
