// A fast path for the large number matrices of a YAML input written as a
// block list of flow rows, the form parplan's examples and generators use:
//
//   latency_ms:
//     - [0, 20, 30]
//     - [20, 0, 1]
//
// yaml-cpp builds a node per number, which takes seconds on the two million
// numbers of a 1024-node skip-paths network; this reads them in one pass.
// Only that exact form is taken (a key at column 0, given once, rows of one
// indentation holding plain decimal numbers); anything else stays in the
// text for the YAML parser, so what it accepts and how it words an error do
// not change.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace parplan {

struct FlowRowExtraction {
  /// The input with each taken block replaced by `key: []` and as many
  /// empty lines as it had rows (the parser's line numbers stay right).
  std::string text;
  /// The rows of each taken key, as written (not checked for shape).
  std::map<std::string, std::vector<std::vector<double>>> matrices;
};

FlowRowExtraction extract_flow_row_matrices(const std::string& text, const std::vector<std::string>& keys);

}  // namespace parplan
