// JSON and CSV readers of per-layer expert loads, with one-line errors.
#include "src/io/expert_loads.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "src/io/input_error.h"
#include "src/io/input_file.h"
#include "src/io/input_limits.h"
#include "src/io/printable_text.h"

namespace parplan {

namespace {

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const auto end = s.find_last_not_of(" \t\r\n");
  return s.substr(begin, end - begin + 1);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::stringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(trim(field));
  if (!line.empty() && line.back() == ',') fields.push_back("");
  return fields;
}

std::string where(const std::string& source, int layer, int expert) {
  return source + ": layer " + std::to_string(layer) + ", expert " + std::to_string(expert);
}

void check_value(double v, const std::string& source, int layer, int expert) {
  if (std::isnan(v) || std::isinf(v)) {
    throw InputError(where(source, layer, expert) +
                     ": load is not a finite number; give tokens routed (>= 0)");
  }
  if (v < 0) {
    throw InputError(where(source, layer, expert) + ": load is negative; give tokens routed (>= 0)");
  }
}

/// A decimal number (no hex, a leading zero is not octal); false when the
/// field is not entirely a number. Out of range, it is read as the JSON
/// reader reads it (strtod): too large becomes infinity (refused by
/// check_value), too small rounds to 0 or the nearest subnormal, so that
/// 1e-400 means the same in a CSV as in a JSON file.
bool parse_number(const std::string& field, double& value) {
  if (field.empty()) return false;
  const char* begin = field.data();
  if (*begin == '+') ++begin;
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value, std::chars_format::general);
  if (ptr != end) return false;
  if (ec == std::errc::result_out_of_range) value = std::strtod(std::string(begin, end).c_str(), nullptr);
  return ec == std::errc() || ec == std::errc::result_out_of_range;
}

void check_shape(const ExpertLoads& out, const std::string& source) {
  if (out.loads.empty())
    throw InputError(source + ": no MoE layer found; give one row of expert loads per layer");
  for (size_t l = 0; l < out.loads.size(); ++l) {
    if (out.loads[l].empty())
      throw InputError(source + ": layer " + std::to_string(l) + " has no expert loads");
    if (out.loads[l].size() != out.loads.front().size()) {
      throw InputError(source + ": layer " + std::to_string(l) + " has " +
                       std::to_string(out.loads[l].size()) + " expert loads but layer 0 has " +
                       std::to_string(out.loads.front().size()) + "; every layer needs one load per expert");
    }
    const double total = std::accumulate(out.loads[l].begin(), out.loads[l].end(), 0.0);
    if (!std::isfinite(total)) {
      throw InputError(source + ": layer " + std::to_string(l) +
                       " loads sum beyond the largest number; scale them down");
    }
    if (total <= 0) {
      throw InputError(source + ": layer " + std::to_string(l) +
                       " routes no tokens (all loads are 0); drop the layer");
    }
  }
}

ExpertLoads parse_json(const std::string& text, const std::string& source) {
  nlohmann::json doc;
  try {
    doc = parse_json_unique_keys(text, source);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(source + ": not valid JSON (" + json_error_text(e) +
                     "); expected {\"loads\": [[tokens per expert] per layer]}");
  } catch (const nlohmann::json::exception&) {
    // The parser reports a number beyond double's range (1e400) as out_of_range.
    throw InputError(source + ": a number is beyond the largest double; give tokens routed (>= 0)");
  }
  if (doc.is_array()) {
    throw InputError(source +
                     ": the file is a bare list; wrap it as {\"loads\": [[tokens per expert] per layer]}");
  }
  if (!doc.is_object() || !doc.contains("loads") || !doc["loads"].is_array()) {
    throw InputError(
        source +
        ": field 'loads' missing or not a list; expected {\"loads\": [[tokens per expert] per layer]}");
  }
  for (const auto& item : doc.items()) {
    if (item.key() != "loads")
      throw InputError(source + ": unknown field \"" + item.key() + "\" (the only field is \"loads\")");
  }
  ExpertLoads out;
  const auto& layers = doc["loads"];
  for (size_t l = 0; l < layers.size(); ++l) {
    if (!layers[l].is_array()) {
      throw InputError(source + ": loads[" + std::to_string(l) +
                       "] is not a list of numbers (one per expert)");
    }
    std::vector<double> row;
    for (size_t e = 0; e < layers[l].size(); ++e) {
      const auto& v = layers[l][e];
      if (!v.is_number()) {
        throw InputError(where(source, static_cast<int>(l), static_cast<int>(e)) +
                         ": load is not a number; give tokens routed (>= 0)");
      }
      const double x = v.get<double>();
      check_value(x, source, static_cast<int>(l), static_cast<int>(e));
      row.push_back(x);
    }
    out.loads.push_back(std::move(row));
  }
  check_shape(out, source);
  return out;
}

ExpertLoads parse_csv(const std::string& text, const std::string& source) {
  ExpertLoads out;
  std::stringstream in(text);
  std::string line;
  bool first = true;
  size_t header_names = 0;  // 0: no header row
  while (std::getline(in, line)) {
    if (trim(line).empty()) continue;
    const std::vector<std::string> fields = split(trim(line));
    double value = 0;
    // A header's first field is not a number and does not start with a digit.
    if (first && !parse_number(fields.front(), value) && !fields.front().empty() &&
        !std::isdigit(static_cast<unsigned char>(fields.front().front()))) {
      first = false;
      header_names = fields.size();
      continue;
    }
    first = false;
    const int layer = static_cast<int>(out.loads.size());
    // A header that names fewer or more experts than a row loads says the
    // columns are not the ones the user meant.
    if (header_names != 0 && fields.size() != header_names)
      throw InputError(source + ": the header names " + std::to_string(header_names) + " experts but layer " +
                       std::to_string(layer) + " has " + std::to_string(fields.size()) +
                       " loads; give one header name per expert column");
    std::vector<double> row;
    for (size_t e = 0; e < fields.size(); ++e) {
      if (!parse_number(fields[e], value)) {
        throw InputError(where(source, layer, static_cast<int>(e)) + ": '" + printable_text(fields[e]) +
                         "' is not a decimal number; give tokens routed (>= 0)");
      }
      check_value(value, source, layer, static_cast<int>(e));
      row.push_back(value);
    }
    out.loads.push_back(std::move(row));
  }
  check_shape(out, source);
  return out;
}

}  // namespace

ExpertLoads parse_expert_loads(const std::string& text, const std::string& source) {
  refuse_byte_order_mark(text, source);
  const std::string body = trim(text);
  if (body.empty())
    throw InputError(source + ": file is empty; give {\"loads\": [[...], ...]} or CSV rows of loads");
  // A CSV row starts with a number or a header name, never a bracket: a
  // leading '[' is JSON (a bare list of layers), read as JSON so its error
  // says what the JSON format wants.
  const bool json = body.front() == '{' || body.front() == '[';
  ExpertLoads loads = json ? parse_json(body, source) : parse_csv(text, source);
  // The limits docs/experts.md and docs/errors.md state: a model's layers
  // (published MoE models have at most a few hundred MoE layers; each layer
  // takes its share of --time-limit) and every width.
  if (loads.layers() > kMaxLayers)
    throw InputError(source + ": " + std::to_string(loads.layers()) + " MoE layers, over " +
                     std::to_string(kMaxLayers) + "; give at most that many (split the file)");
  if (loads.experts() > kMaxWidth)
    throw InputError(source + ": " + std::to_string(loads.experts()) + " experts per layer, over " +
                     std::to_string(kMaxWidth) + "; give at most that many");
  return loads;
}

ExpertLoads read_expert_loads(const std::string& path, const std::string& flag) {
  return parse_expert_loads(read_input_file(path, flag + " " + path, "a JSON or CSV file"),
                            flag + " " + path);
}

RoutingImbalance routing_imbalance(const ExpertLoads& loads) {
  RoutingImbalance r;
  if (loads.loads.empty()) return r;
  double sum = 0;
  r.max = 0;
  for (const auto& row : loads.loads) {
    const double total = std::accumulate(row.begin(), row.end(), 0.0);
    const double mean = total / row.size();
    const double peak = *std::max_element(row.begin(), row.end());
    const double x = mean > 0 ? peak / mean : 1.0;
    r.per_layer.push_back(x);
    sum += x;
    r.max = std::max(r.max, x);
  }
  r.mean = sum / loads.loads.size();
  return r;
}

}  // namespace parplan
