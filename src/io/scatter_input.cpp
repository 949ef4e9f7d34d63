// Readers for `parplan scatter`: lengths (text lines or JSON) and coefficients.
#include "src/io/scatter_input.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "src/io/input_error.h"
#include "src/io/input_file.h"
#include "src/io/printable_text.h"

namespace parplan {

namespace {

std::string read_text(const std::string& path, const std::string& flag) {
  return read_input_file(path, flag + " " + path,
                         flag == "--lengths" ? "a text or JSON file of lengths" : "a JSON file");
}

/// A length as decimal digits (no sign, no exponent, no leading-zero octal).
std::int64_t parse_length(const std::string& token, const std::string& where) {
  bool digits = !token.empty();
  for (char ch : token) digits = digits && ch >= '0' && ch <= '9';
  // A whole number too long to read is one out of range, not a malformed one.
  if (digits && token.size() > 12)
    throw InputError(where + ": sequence length " + printable_text(token) + " must be between 1 and " +
                     std::to_string(kMaxSequenceTokens) + " tokens");
  if (!digits) {
    throw InputError(where + ": sequence length '" + printable_text(token) +
                     "' is not a positive whole number of tokens (write e.g. 4096)");
  }
  const std::int64_t value = std::stoll(token, nullptr, 10);
  if (value <= 0 || value > kMaxSequenceTokens) {
    throw InputError(where + ": sequence length " + token + " must be between 1 and " +
                     std::to_string(kMaxSequenceTokens) + " tokens");
  }
  return value;
}

void check_step_size(std::size_t sequences, const std::string& where) {
  if (sequences > kMaxSequencesPerStep)
    throw InputError(where + ": " + std::to_string(sequences) + " sequences in one step, more than the " +
                     std::to_string(kMaxSequencesPerStep) + " a step may have: split it into several steps");
}

std::vector<std::vector<std::int64_t>> parse_json_lengths(const std::string& text,
                                                          const std::string& origin) {
  nlohmann::json doc;
  try {
    doc = parse_json_unique_keys(text, origin);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(origin + ": not valid JSON (" + json_error_text(e) + ")");
  }
  if (!doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array()) {
    throw InputError(origin + ": expected {\"steps\": [[length, ...], ...]}");
  }
  for (const auto& item : doc.items()) {
    if (item.key() != "steps")
      throw InputError(origin + ": unknown field \"" + item.key() + "\" (the only field is \"steps\")");
  }
  std::vector<std::vector<std::int64_t>> steps;
  for (size_t s = 0; s < doc["steps"].size(); ++s) {
    const auto& step = doc["steps"][s];
    const std::string where = origin + ": steps[" + std::to_string(s) + "]";
    if (!step.is_array()) throw InputError(where + " must be a list of sequence lengths");
    if (step.empty()) throw InputError(where + " is an empty step: give at least one sequence length");
    check_step_size(step.size(), where);
    std::vector<std::int64_t> lengths;
    for (size_t k = 0; k < step.size(); ++k) {
      const auto& v = step[k];
      const std::string at = where + "[" + std::to_string(k) + "]";
      if (v.is_number_unsigned() || v.is_number_integer()) {
        lengths.push_back(parse_length(v.dump(), at));
      } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
                 v.get<double>() == std::floor(v.get<double>()) && v.get<double>() >= 1 &&
                 v.get<double>() <= static_cast<double>(kMaxSequenceTokens)) {
        lengths.push_back(static_cast<std::int64_t>(v.get<double>()));
      } else {
        throw InputError(at + ": sequence length " + v.dump() + " is not a positive whole number of tokens");
      }
    }
    steps.push_back(std::move(lengths));
  }
  if (steps.empty()) throw InputError(origin + ": \"steps\" is empty: give at least one step");
  return steps;
}

double number_field(const nlohmann::json& doc, const std::string& key, const std::string& origin) {
  if (!doc.contains(key)) throw InputError(origin + ": missing field \"" + key + "\"");
  const auto& v = doc[key];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
    throw InputError(origin + ": \"" + key + "\" must be a number >= 0 (got " + v.dump() + ")");
  }
  return v.get<double>();
}

int size_value(const nlohmann::json& v, const std::string& where) {
  if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 1'000'000) {
    throw InputError(where + ": group size " + v.dump() + " must be a whole number between 1 and 1000000");
  }
  return static_cast<int>(v.get<long long>());
}

}  // namespace

std::vector<std::vector<std::int64_t>> parse_scatter_lengths(const std::string& text,
                                                             const std::string& origin) {
  refuse_byte_order_mark(text, origin);
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_json_lengths(text, origin);
  std::vector<std::vector<std::int64_t>> steps;
  std::istringstream lines(text);
  std::string line;
  int line_number = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const std::string where = origin + ":" + std::to_string(line_number);
    std::vector<std::int64_t> lengths;
    std::string token;
    // A comma separates two lengths, as in a CSV row: one with no length on
    // a side ("1,,2", a leading or trailing comma) is an empty field, a
    // length left out, not a separator to skip.
    bool comma_open = false;
    int empty_field = 0;  // 1-based field number of the first empty one
    int fields = 0;
    auto flush = [&]() {
      if (!token.empty()) {
        lengths.push_back(parse_length(token, where));
        comma_open = false;
      }
      token.clear();
    };
    for (char ch : line) {
      if (ch == ' ' || ch == '\t') {
        flush();
      } else if (ch == ',') {
        flush();
        ++fields;
        if ((lengths.empty() || comma_open) && empty_field == 0) empty_field = fields;
        comma_open = true;
      } else {
        token += ch;
      }
    }
    flush();
    if (comma_open && empty_field == 0) empty_field = fields + 1;
    if (lengths.empty()) throw InputError(where + ": empty step: give at least one sequence length");
    if (empty_field > 0)
      throw InputError(where + ": comma-separated field " + std::to_string(empty_field) +
                       " is empty: write its sequence length or remove the extra comma");
    check_step_size(lengths.size(), where);
    steps.push_back(std::move(lengths));
  }
  if (steps.empty()) throw InputError(origin + ": no steps: write one line of sequence lengths per step");
  return steps;
}

std::vector<std::vector<std::int64_t>> load_scatter_lengths(const std::string& path) {
  return parse_scatter_lengths(read_text(path, "--lengths"), path);
}

ScatterCoefficients parse_scatter_coefficients(const std::string& text, const std::string& origin,
                                               const std::vector<int>& sizes_override) {
  refuse_byte_order_mark(text, origin);
  nlohmann::json doc;
  try {
    doc = parse_json_unique_keys(text, origin);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(origin + ": not valid JSON (" + json_error_text(e) + ")");
  }
  if (!doc.is_object()) throw InputError(origin + ": expected a JSON object of coefficients");
  static const std::set<std::string> known = {
      "quadratic_ms",           "linear_ms",   "fixed_ms", "alltoall_ms_per_token",
      "token_capacity_per_gpu", "group_sizes", "source"};
  for (const auto& item : doc.items()) {
    if (!known.count(item.key())) {
      throw InputError(origin + ": unknown field \"" + item.key() +
                       "\" (expected quadratic_ms, linear_ms, fixed_ms, alltoall_ms_per_token, "
                       "token_capacity_per_gpu, group_sizes, source)");
    }
  }
  if (doc.contains("source") && !doc["source"].is_string())
    throw InputError(origin + ": \"source\" must be a string saying where the numbers come from (got " +
                     doc["source"].dump() + ")");
  ScatterCoefficients c;
  c.quadratic_ms = number_field(doc, "quadratic_ms", origin);
  c.linear_ms = number_field(doc, "linear_ms", origin);
  c.fixed_ms = number_field(doc, "fixed_ms", origin);
  c.token_capacity_per_gpu = number_field(doc, "token_capacity_per_gpu", origin);
  if (!doc.contains("group_sizes") || !doc["group_sizes"].is_array() || doc["group_sizes"].empty()) {
    throw InputError(origin + ": \"group_sizes\" must be a non-empty list such as [1, 2, 4, 8]");
  }
  std::map<int, double> alltoall;
  if (!doc.contains("alltoall_ms_per_token") || !doc["alltoall_ms_per_token"].is_object()) {
    throw InputError(origin +
                     ": \"alltoall_ms_per_token\" must be an object such as {\"2\": 0.008, \"4\": 0.005}");
  }
  std::map<int, std::string> spelled;  // the key each size was given as
  for (const auto& item : doc["alltoall_ms_per_token"].items()) {
    const std::string where = origin + ": alltoall_ms_per_token[\"" + item.key() + "\"]";
    // Digits only: stoi alone would also take " 8" and "+8", two more
    // spellings of one size.
    const std::string& key = item.key();
    const bool digits = !key.empty() && key.size() <= 7 &&
                        std::all_of(key.begin(), key.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    const int size = digits ? std::stoi(key) : 0;
    if (size < 1) throw InputError(where + ": the key must be a group size such as \"8\"");
    if (const auto seen = spelled.find(size); seen != spelled.end()) {
      throw InputError(where + ": group size " + std::to_string(size) + " is also given as \"" +
                       seen->second + "\"; keep one");
    }
    spelled[size] = key;
    if (!item.value().is_number() || !std::isfinite(item.value().get<double>()) ||
        item.value().get<double>() < 0) {
      throw InputError(where + " must be a number >= 0 (ms per token)");
    }
    alltoall[size] = item.value().get<double>();
  }
  for (size_t k = 0; k < doc["group_sizes"].size(); ++k) {
    const int p = size_value(doc["group_sizes"][k], origin + ": group_sizes[" + std::to_string(k) + "]");
    c.group_sizes.push_back(p);
  }
  if (!sizes_override.empty()) c.group_sizes = sizes_override;
  std::sort(c.group_sizes.begin(), c.group_sizes.end());
  for (int p : c.group_sizes) {
    const auto it = alltoall.find(p);
    if (it == alltoall.end() && p != 1) {
      throw InputError(origin + ": alltoall_ms_per_token has no value for group size " + std::to_string(p) +
                       ": add it or leave that size out");
    }
    c.alltoall_ms_per_token.push_back(it == alltoall.end() ? 0.0 : it->second);
  }
  return c;
}

ScatterCoefficients load_scatter_coefficients(const std::string& path,
                                              const std::vector<int>& sizes_override) {
  return parse_scatter_coefficients(read_text(path, "--coefficients"), path, sizes_override);
}

std::vector<int> parse_group_sizes(const std::string& text, const std::string& flag) {
  std::vector<int> sizes;
  std::string token;
  // A trailing comma is an empty last item, as 1,,2 holds one.
  if (!text.empty() && text.back() == ',')
    throw InputError(flag + ": '" + printable_text(text) + "' ends in an empty item (write e.g. 1,2,4,8)");
  std::istringstream in(text);
  while (std::getline(in, token, ',')) {
    bool digits = !token.empty() && token.size() <= 7;
    for (char ch : token) digits = digits && ch >= '0' && ch <= '9';
    if (!digits || std::stoi(token) < 1) {
      throw InputError(flag + ": '" + printable_text(token) + "' is not a group size (write e.g. 1,2,4,8)");
    }
    if (std::find(sizes.begin(), sizes.end(), std::stoi(token)) != sizes.end())
      throw InputError(flag + ": group size " + token + " is listed twice; list each size once");
    sizes.push_back(std::stoi(token));
  }
  if (sizes.empty()) throw InputError(flag + ": give at least one group size (e.g. 1,2,4,8)");
  return sizes;
}

}  // namespace parplan
