// The single-GPU measurements in calibration/h100-kernels/ as rows of
// named fields, for the tests that check curves against them.
#pragma once

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "src/io/data_paths.h"

namespace parplan::test {

using CsvRow = std::map<std::string, std::string>;

// RFC 4180 fields: a quoted field may hold commas.
inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      fields.emplace_back();
    else if (c != '\r')
      fields.back() += c;
  }
  return fields;
}

inline std::vector<CsvRow> read_kernel_csv(const std::string& name) {
  std::ifstream in(data_dir() / "calibration/h100-kernels" / name);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split_csv_line(line);
  std::vector<CsvRow> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = split_csv_line(line);
    CsvRow row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

inline double csv_number(const CsvRow& row, const char* key) { return std::stod(row.at(key)); }

/// The largest ratio of the caching allocator's reserved peak to its
/// allocated peak over the steady steps (2 on) of the FSDP2 training loops
/// measured on an H100 (memory_fsdp.csv): what a reserved-memory reading
/// such as torchtitan's logged memory may hold beyond the allocated peak.
inline double most_reserved_over_allocated() {
  double most = 0;
  for (const CsvRow& row : read_kernel_csv("memory_fsdp.csv")) {
    const std::string& step = row.at("step");
    if (row.at("case").rfind("fsdp2", 0) != 0 || step.empty() || step.find(' ') != std::string::npos ||
        std::stoi(step) < 2)
      continue;
    most = std::max(most, csv_number(row, "peak_reserved_bytes") / csv_number(row, "peak_allocated_bytes"));
  }
  return most;
}

}  // namespace parplan::test
