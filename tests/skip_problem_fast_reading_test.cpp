// The skip-paths reader's fast path for N x N matrices written as block
// lists of flow rows (src/io/flow_row_matrix.h): the problem it reads is the
// one the YAML parser reads, every error is the YAML reading's word for
// word, and anything outside the exact form is left to the parser.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/io/flow_row_matrix.h"
#include "src/io/input_error.h"
#include "src/io/skip_problem_loader.h"
#include "src/io/yaml_fields.h"
#include "tests/cli_support.h"

namespace parplan {
namespace skip_fast_reading_test {

const std::vector<std::string> kKeys = {"latency_ms", "bandwidth_gb_per_s", "transfer_s"};

const std::string kHead =
    "nodes: 3\nstage_sizes: [1, 2]\npath_length: 2\nmemory: 1\nmicro_batches_per_source: 2\n"
    "stage_forward_s: 1\nactivation_bytes: 1e9\n";

std::string network(const std::string& latency_rows, const std::string& bandwidth_rows) {
  return "latency_ms:\n" + latency_rows + "bandwidth_gb_per_s:\n" + bandwidth_rows;
}
const std::string kLatency = "  - [0, 20, 30]\n  - [20, 0, 1.5]\n  - [30, 1.5, 0]\n";
const std::string kBandwidth = "  - [2, 0.02, 0.03]\n  - [0.02, 2, 1e1]\n  - [0.03, 1e1, 2]\n";

int lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

TEST(FlowRowMatrix, TakesTheBlockOfFlowRowsAndKeepsTheLineCount) {
  const std::string text = kHead + network(kLatency, kBandwidth) + "message_overhead_s: 0\n";
  const FlowRowExtraction fast = extract_flow_row_matrices(text, kKeys);
  ASSERT_EQ(fast.matrices.size(), 2u);
  EXPECT_EQ(fast.matrices.at("latency_ms")[1], (std::vector<double>{20, 0, 1.5}));
  EXPECT_EQ(fast.matrices.at("bandwidth_gb_per_s")[2], (std::vector<double>{0.03, 10, 2}));
  EXPECT_EQ(lines(fast.text), lines(text));
  const YAML::Node root = load_yaml_text(fast.text, "x");
  EXPECT_TRUE(root["latency_ms"].IsSequence() && root["latency_ms"].size() == 0);
  EXPECT_EQ(root["message_overhead_s"].as<std::string>(), "0");
  // At the end of a file with or without its last newline.
  const std::string last = kHead + "transfer_s:\n  - [0, 1, 1]\n  - [1, 0, 1]\n  - [1, 1, 0]";
  EXPECT_EQ(lines(extract_flow_row_matrices(last, kKeys).text), lines(last));
  EXPECT_EQ(lines(extract_flow_row_matrices(last + "\n", kKeys).text), lines(last + "\n"));
}

TEST(FlowRowMatrix, LeavesEveryOtherFormToTheParser) {
  const auto untouched = [](const std::string& text) {
    const FlowRowExtraction fast = extract_flow_row_matrices(text, kKeys);
    EXPECT_TRUE(fast.matrices.count("latency_ms") == 0) << text;
  };
  const std::string b = "bandwidth_gb_per_s:\n" + kBandwidth;
  untouched(kHead + "latency_ms: [[0, 1, 1], [1, 0, 1], [1, 1, 0]]\n" + b);  // flow matrix
  untouched(kHead + "latency_ms:\n  - [0, 1, 1]  # c\n  - [1, 0, 1]\n  - [1, 1, 0]\n" + b);
  untouched(kHead + "latency_ms:\n  - [0, 1, 1]\n\n  - [1, 0, 1]\n  - [1, 1, 0]\n" + b);  // blank line
  untouched(kHead + "latency_ms:\n  - [0, +1, 1]\n  - [1, 0, 1]\n  - [1, 1, 0]\n" + b);
  untouched(kHead + "latency_ms:\n  - [0, 1, .inf]\n  - [1, 0, 1]\n  - [1, 1, 0]\n" + b);
  untouched(kHead + "latency_ms:\n  - [0, 1, 1,]\n  - [1, 0, 1]\n  - [1, 1, 0]\n" + b);
  untouched(kHead + "latency_ms:\n  - [0, 1, 1]\n   - [1, 0, 1]\n  - [1, 1, 0]\n" + b);  // indentation
  untouched(kHead + "latency_ms:\n- [0, 1, 1]\n- [1, 0, 1]\n- [1, 1, 0]\n" + b);         // column 0
  untouched(kHead + "latency_ms:\n  - [0, \"1\", 1]\n  - [1, 0, 1]\n  - [1, 1, 0]\n" + b);
  untouched(kHead + network(kLatency, kBandwidth) + "latency_ms: 1\n");  // given twice
  untouched("---\n" + kHead + network(kLatency, kBandwidth));            // marker
  untouched("{nodes: 3,\nlatency_ms:\n  - [0]}\n");
}

// The same problem as the YAML parser reads it, on the shipped examples and
// on a file in the fast form.
TEST(FlowRowMatrix, FastReadingEqualsTheYamlReading) {
  const std::string dir = std::string(PARPLAN_SOURCE_DIR) + "/examples/skip-paths/";
  std::vector<std::string> files = {dir + "geo-20-nodes.yaml", dir + "geo-32-nodes.yaml",
                                    dir + "llama3-8b-cost-model.yaml"};
  files.push_back(test::write_temp("fast_form.yaml", kHead + network(kLatency, kBandwidth)));
  for (const auto& path : files) {
    // The matrices are in the fast form, so the comparison is of the two readings.
    const FlowRowExtraction taken = extract_flow_row_matrices(
        read_yaml_file_text(path), {"latency_ms", "bandwidth_gb_per_s", "bandwidth_gib_per_s", "transfer_s"});
    EXPECT_EQ(taken.matrices.size(), 2u) << path;
    const SkipProblem fast = load_skip_problem(path).problem;
    const SkipProblem plain = parse_skip_problem(load_yaml_file(path), path).problem;
    EXPECT_EQ(fast.network.transfer_s, plain.network.transfer_s) << path;
    EXPECT_EQ(fast.network.forward_s, plain.network.forward_s) << path;
    EXPECT_EQ(fast.stage_sizes, plain.stage_sizes) << path;
  }
}

// Bad matrices in the fast form: the message is the YAML reading's, which
// names the entry as written.
TEST(FlowRowMatrix, BadEntriesAreWordedAsTheYamlReadingWordsThem) {
  const auto message = [](const std::string& name, const std::string& text, bool fast) {
    const std::string path = test::write_temp(name, text);
    try {
      if (fast)
        load_skip_problem(path);
      else
        parse_skip_problem(load_yaml_file(path), path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::vector<std::string> bad = {
      kHead + network("  - [0, 20, 30]\n  - [20, 0, -1]\n  - [30, 1.5, 0]\n", kBandwidth),
      kHead + network(kLatency, "  - [2, 0, 0.03]\n  - [0.02, 2, 1e1]\n  - [0.03, 1e1, 2]\n"),
      kHead + network("  - [0, 20]\n  - [20, 0, 1.5]\n  - [30, 1.5, 0]\n", kBandwidth),
      kHead + network("  - [0, 20, 30]\n  - [20, 0, 1.5]\n", kBandwidth),
      kHead + network("  - [0, 1e300, 30]\n  - [20, 0, 1.5]\n  - [30, 1.5, 0]\n", kBandwidth),
      kHead + network(kLatency, kBandwidth) + "stage_forward_s: 2\n",
      kHead + network(kLatency, kBandwidth) + "memory: [1\n",
  };
  // The block taken from inside a quoted scalar (found by the fuzzer): the
  // placeholder is no top-level key, so the plain reading takes the file.
  bad.push_back(kHead + "'quoted\n" + network(kLatency, kBandwidth) + "'\n");
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const std::string name = "fast_bad_" + std::to_string(i) + ".yaml";
    const std::string plain = message(name, bad[i], false);
    EXPECT_NE(plain, "no error") << bad[i];
    EXPECT_EQ(message(name, bad[i], true), plain) << bad[i];
  }
}

// The fuzzer's find: a quoted key running over the rows left no top-level
// `transfer_s`, and asking for it threw out of the reader.
TEST(FlowRowMatrix, RowsInsideAQuotedScalarAreTheParsersToRefuse) {
  EXPECT_THROW(load_skip_problem(std::string(PARPLAN_SOURCE_DIR) +
                                 "/tests/fuzz/corpus/skip_problem/fast-rows-inside-quoted-scalar.yaml"),
               InputError);
}

}  // namespace skip_fast_reading_test
}  // namespace parplan
