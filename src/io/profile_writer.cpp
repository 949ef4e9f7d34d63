#include "src/io/profile_writer.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "src/io/input_error.h"

namespace parplan {

ProfileKey profile_key_of(const std::string& fitted_key) {
  // The one place that spells profile keys for fitted constants (the
  // loader, src/io/cluster_loader.cpp, reads the same names).
  static const struct {
    const char* fitted;
    const char* key;
    double scale;
    const char* old_key = nullptr;  // the deprecated spelling the loader still reads
  } kDevice[] = {
      {"gemm_efficiency_max", "gemm_efficiency_max", 1},
      {"gemm_half_dim", "gemm_half_dim", 1},
      {"gemm_half_flops", "gemm_half_gflop", 1e-9},
      {"flash_attention_efficiency", "flash_attention_efficiency", 1},
      {"attention_half_seq", "attention_half_seq", 1},
      {"memory_bound_efficiency", "memory_bound_efficiency", 1},
      {"overlap_compute_slowdown", "overlap_compute_slowdown", 1},
      {"layer_overhead_s", "layer_overhead_us", 1e6},
      {"reserved_bytes", "reserved_gib", 1.0 / (1024.0 * 1024.0 * 1024.0), "reserved_gb"},
  };
  for (const auto& d : kDevice)
    if (fitted_key == d.fitted) return {"device", -1, d.key, d.scale, d.old_key ? d.old_key : ""};
  static const std::regex kTier(R"(tiers\[(\d+)\]\.(efficiency|latency_s))");
  std::smatch m;
  if (std::regex_match(fitted_key, m, kTier)) {
    const bool latency = m[2] == "latency_s";
    return {"tiers", std::stoi(m[1]), latency ? "latency_us" : "efficiency", latency ? 1e6 : 1.0, ""};
  }
  throw std::invalid_argument("no profile key for fitted constant " + fitted_key);
}

namespace {
int indent_of(const std::string& line) {
  const auto p = line.find_first_not_of(' ');
  return p == std::string::npos ? -1 : static_cast<int>(p);
}
bool is_content(const std::string& line) {
  const int i = indent_of(line);
  return i >= 0 && line[i] != '#';
}
/// `text` as a YAML double-quoted scalar: any name or path reads back as
/// written (a plain scalar would turn "a: b", "#x", "[a" or "- a" into
/// other YAML or none).
std::string yaml_double_quoted(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}
std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// [begin, end) of the lines of a top-level section's body.
bool section_range(const std::vector<std::string>& lines, const std::string& section, std::size_t* begin,
                   std::size_t* end) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(section + ":", 0) != 0) continue;
    std::size_t j = i + 1;
    // A block list may sit at the key's own column ("tiers:" then "- name:").
    while (j < lines.size() && (!is_content(lines[j]) || indent_of(lines[j]) > 0 || lines[j][0] == '-')) ++j;
    // Trailing comments and blank lines belong to what follows.
    while (j > i + 1 && !is_content(lines[j - 1])) --j;
    *begin = i + 1;
    *end = j;
    return true;
  }
  return false;
}

/// Narrows [begin, end) to the `tier`-th list entry.
bool tier_range(const std::vector<std::string>& lines, int tier, std::size_t* begin, std::size_t* end) {
  int seen = -1;
  int dash_indent = -1;
  std::size_t start = 0;
  for (std::size_t i = *begin; i < *end; ++i) {
    const int ind = indent_of(lines[i]);
    if (!is_content(lines[i]) || lines[i][ind] != '-') continue;
    if (dash_indent < 0) dash_indent = ind;
    if (ind != dash_indent) continue;
    ++seen;
    if (seen == tier) start = i;
    if (seen == tier + 1) {
      *begin = start;
      *end = i;
      return true;
    }
  }
  if (seen < tier) return false;
  *begin = start;
  return true;
}

// Replaces the line of `key` (or of its deprecated spelling `old_key`) in
// [begin, end), or inserts one at `default_indent`.
void set_key(std::vector<std::string>& lines, std::size_t begin, std::size_t end, const std::string& key,
             const std::string& old_key, const std::string& value, const std::string& comment,
             int default_indent) {
  const std::regex line_re("^(\\s*(?:- )?)(?:" + key + (old_key.empty() ? "" : "|" + old_key) + "):.*$");
  for (std::size_t i = begin; i < end; ++i) {
    std::smatch m;
    if (std::regex_match(lines[i], m, line_re)) {
      lines[i] = m[1].str() + key + ": " + value + "  # " + comment;
      return;
    }
  }
  std::size_t at = end;
  while (at > begin && !is_content(lines[at - 1])) --at;
  lines.insert(lines.begin() + at, std::string(default_indent, ' ') + key + ": " + value + "  # " + comment);
}

// The column of a mapping's keys: the first content line's in [begin, end)
// (after its dash, for a list entry), or `fallback`.
int key_column(const std::vector<std::string>& lines, std::size_t begin, std::size_t end, int fallback) {
  for (std::size_t i = begin; i < end; ++i) {
    if (!is_content(lines[i])) continue;
    const std::string& line = lines[i];
    std::size_t at = static_cast<std::size_t>(indent_of(line));
    if (line[at] == '-') at = line.find_first_not_of(' ', at + 1);
    return at == std::string::npos ? fallback : static_cast<int>(at);
  }
  return fallback;
}
// The loader must read back what was fitted: a layout the line edits above
// miss (flow style, a section they cannot find) is refused, not written with
// the old values under a calibration block that claims the new ones.
void check_written(const std::string& text, const std::vector<FittedValue>& values) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(std::string("the calibrated profile would not be valid YAML (") + e.what() +
                     "); write the profile in block style, one key per line");
  }
  for (const auto& v : values) {
    const ProfileKey k = profile_key_of(v.key);
    // (Not `node = node[i]`: yaml-cpp's assignment writes into the node.)
    const YAML::Node section = root[k.section];
    const YAML::Node node =
        k.tier < 0
            ? section
            : (section && section.IsSequence() ? section[static_cast<std::size_t>(k.tier)] : YAML::Node());
    bool ok = node && node.IsMap() && node[k.key] && node[k.key].IsScalar() &&
              (k.old_key.empty() || !node[k.old_key]);
    if (ok) {
      try {
        const double written = node[k.key].as<double>();
        ok = std::abs(written - std::stod(number(v.after * k.scale))) <= 1e-12 * std::abs(written);
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok)
      throw InputError("cannot write the fitted " + v.key + " into the profile's layout (flow style, or " +
                       k.section +
                       " not found as a block); write the profile in block style, one key per line");
  }
}
}  // namespace

std::string calibrated_profile_text(const std::string& original, const std::vector<FittedValue>& values,
                                    const CalibrationBlock& block, const std::string& name) {
  std::vector<std::string> lines;
  std::istringstream in(original);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files are written with LF
    lines.push_back(line);
  }
  // Drop an earlier calibration block: the new one replaces it.
  std::size_t cb = 0, ce = 0;
  if (section_range(lines, "calibration", &cb, &ce))
    lines.erase(lines.begin() + (cb - 1), lines.begin() + ce);
  if (!name.empty()) {
    for (auto& line : lines)
      if (line.rfind("name:", 0) == 0) {
        line = "name: " + yaml_double_quoted(name);
        break;
      }
  }
  for (const auto& v : values) {
    const ProfileKey k = profile_key_of(v.key);
    std::size_t begin = 0, end = 0;
    if (!section_range(lines, k.section, &begin, &end)) continue;
    if (k.tier >= 0 && !tier_range(lines, k.tier, &begin, &end)) continue;
    const int indent = key_column(lines, begin, end, 2);
    set_key(lines, begin, end, k.key, k.old_key, number(v.after * k.scale),
            "fitted by parplan calibrate " + (block.date.empty() ? "" : block.date + " ") + "(was " +
                number(v.before * k.scale) + ")",
            indent);
  }
  std::ostringstream out;
  for (const auto& line : lines) out << line << "\n";
  out << "calibration:\n";
  if (!block.date.empty()) out << "  date: \"" << block.date << "\"\n";
  out << "  tool: parplan calibrate\n";
  out << "  objective: " << block.objective << "\n";
  out << "  sources:\n";
  for (const auto& s : block.sources) out << "    - " << yaml_double_quoted(s) << "\n";
  out << "  runs: " << block.runs.size() << "\n";
  out << "  fitted: [";
  for (std::size_t i = 0; i < values.size(); ++i) {
    const ProfileKey k = profile_key_of(values[i].key);
    out << (i ? ", " : "") << "\"" << (k.tier >= 0 ? "tiers[" + std::to_string(k.tier) + "]." : "device.")
        << k.key << "\"";
  }
  out << "]\n";
  out << "  mean_step_error: " << number(block.mean_error)
      << "    # held-in, |predicted - measured| / measured\n";
  out << "  max_step_error: " << number(block.max_error) << "\n";
  if (!std::isnan(block.cv_mean_error)) {
    out << "  cv_mean_step_error: " << number(block.cv_mean_error) << "  # leave-one-out\n";
    out << "  cv_max_step_error: " << number(block.cv_max_error) << "\n";
  }
  check_written(out.str(), values);
  return out.str();
}

}  // namespace parplan
