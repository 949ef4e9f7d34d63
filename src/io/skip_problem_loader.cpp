// Reader of skip-paths problems. Limits on sizes keep a typo (nodes: 1e9)
// from becoming an out-of-memory crash.
#include "src/io/skip_problem_loader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "cost/compute_time.h"
#include "cost/memory.h"
#include "cost/parameters.h"
#include "src/io/cluster_loader.h"
#include "src/io/flow_row_matrix.h"
#include "src/io/input_error.h"
#include "src/io/model_loader.h"
#include "src/io/yaml_fields.h"

namespace parplan {
namespace {

constexpr int kMaxSkipPathNodes = 1024;
constexpr int kMaxMicroBatchesPerSource = 4096;
constexpr std::int64_t kMaxStepMicroBatches = 8192;
// A task or a transfer of a billion seconds (31 years) is a typo; the bound
// keeps every sum of the simulation finite (1e308 s doubled was infinite).
constexpr double kMaxSeconds = 1e9;
constexpr double kMaxFactor = 1e6;
const std::vector<std::string> kMatrixKeys = {"transfer_s", "latency_ms", "bandwidth_gb_per_s",
                                              "bandwidth_gib_per_s"};

using FastMatrices = std::map<std::string, std::vector<std::vector<double>>>;

class Reader {
 public:
  Reader(const YAML::Node& root, std::string where, const FastMatrices* fast)
      : root_(root), f_(root, std::move(where)), fast_(fast) {}

  [[noreturn]] void fail(const char* key, const std::string& what) const { f_.fail(key, what); }

  double number(const YAML::Node& node, const char* key, const std::string& at) const {
    double value = 0;
    if (!parse_number(node, value))
      fail(key, (at.empty() ? "" : at + " ") + "must be a number (got " + describe_yaml(node) + ")");
    return value;
  }

  /// A finite number in `node`. The plain form is read without a stream: a
  /// 1024-node problem has two million of them.
  static bool parse_number(const YAML::Node& node, double& value) {
    if (!node.IsScalar()) return false;
    const std::string& text = node.Scalar();
    const char* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    if (error == std::errc() && stop == end) return std::isfinite(value);
    std::istringstream in(text);
    in >> value;
    return in && in.peek() == std::char_traits<char>::eof() && std::isfinite(value);
  }

  double non_negative(const char* key, double fallback) const {
    if (!f_.has(key)) return fallback;
    const double v = number(root_[key], key, "");
    if (v < 0) fail(key, "must not be negative (got " + root_[key].Scalar() + ")");
    return v;
  }

  int bounded_int(const char* key, int low, int high) const {
    if (!f_.has(key)) fail(key, "is missing; add it");
    const double v = number(root_[key], key, "");
    if (v != std::floor(v) || v < low || v > high)
      fail(key, "must be a whole number from " + std::to_string(low) + " to " + std::to_string(high) +
                    " (got " + root_[key].Scalar() + ")");
    return static_cast<int>(v);
  }

  /// n x n matrix of numbers >= 0 (> 0 off the diagonal when `positive`).
  std::vector<double> matrix(const char* key, int n, bool positive) const {
    if (fast_ != nullptr)
      if (const auto found = fast_->find(key); found != fast_->end())
        return fast_matrix(key, found->second, n, positive);
    const YAML::Node m = root_[key];
    if (!m.IsSequence() || static_cast<int>(m.size()) != n)
      fail(key, "must be a list of " + std::to_string(n) + " rows (one per node), " + std::to_string(n) +
                    " numbers each");
    std::vector<double> out(static_cast<std::size_t>(n) * n);
    // Iterated, not indexed: node[i] builds a key node per lookup, and the
    // entry's name only when it is wrong (seconds on 1024 x 1024).
    int i = 0;
    for (const YAML::Node& row : m) {
      if (!row.IsSequence() || static_cast<int>(row.size()) != n)
        fail(key, "row " + std::to_string(i) + " must have " + std::to_string(n) +
                      " numbers (the matrix is N x N)");
      int j = 0;
      for (const YAML::Node& entry : row) {
        const auto at = [&] { return "entry [" + std::to_string(i) + "][" + std::to_string(j) + "]"; };
        double v = 0;
        if (!parse_number(entry, v)) number(entry, key, at());
        if (v < 0) fail(key, at() + " must not be negative (got " + entry.Scalar() + ")");
        if (positive && i != j && v == 0) fail(key, at() + " must be positive");
        out[static_cast<std::size_t>(i) * n + j] = v;
        ++j;
      }
      ++i;
    }
    return out;
  }

  const YAML::Node& root() const { return root_; }
  const YamlFields& fields() const { return f_; }

 private:
  /// The rows the fast path read (src/io/flow_row_matrix.h). Any fault
  /// throws: load_skip_problem then reads the file as YAML alone, whose
  /// message names the entry as written.
  std::vector<double> fast_matrix(const char* key, const std::vector<std::vector<double>>& rows, int n,
                                  bool positive) const {
    if (static_cast<int>(rows.size()) != n) fail(key, "is not N x N");
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(n) * n);
    for (int i = 0; i < n; ++i) {
      if (static_cast<int>(rows[i].size()) != n) fail(key, "is not N x N");
      for (int j = 0; j < n; ++j) {
        const double v = rows[i][j];
        if (v < 0 || (positive && i != j && v == 0)) fail(key, "has an entry out of range");
        out.push_back(v);
      }
    }
    return out;
  }

  YAML::Node root_;
  YamlFields f_;
  const FastMatrices* fast_ = nullptr;
};

void read_stages(const Reader& r, SkipProblemInput& in) {
  SkipProblem& p = in.problem;
  const int n = p.network.nodes;
  const bool has_sizes = r.fields().has("stage_sizes");
  if (has_sizes == r.fields().has("stages"))
    r.fail("stage_sizes", "or 'stages' must be given, exactly one of them");
  if (has_sizes) {
    const YAML::Node sizes = r.root()["stage_sizes"];
    if (!sizes.IsSequence() || sizes.size() < 2)
      r.fail("stage_sizes", "must be a list of at least 2 node counts");
    int total = 0;
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      const double v = r.number(sizes[s], "stage_sizes", "entry " + std::to_string(s));
      if (v != std::floor(v) || v < 1 || v > n)
        r.fail("stage_sizes", "entry " + std::to_string(s) + " must be a whole number from 1 to nodes (got " +
                                  sizes[s].Scalar() + ")");
      p.stage_sizes.push_back(static_cast<int>(v));
      total += static_cast<int>(v);
    }
    if (total != n)
      r.fail("stage_sizes",
             "sums to " + std::to_string(total) + " but nodes is " + std::to_string(n) + "; make them equal");
  } else {
    const int stages = r.bounded_int("stages", 2, n);
    p.stage_sizes = default_stage_sizes(n, stages);
    in.stage_sizes_chosen = true;
  }
  const int s_count = static_cast<int>(p.stage_sizes.size());
  if (r.fields().has("path_length")) {
    const double v = r.number(r.root()["path_length"], "path_length", "");
    if (v != std::floor(v) || v < 2 || v > s_count)
      r.fail("path_length", "must be a whole number from 2 to the number of stages, " +
                                std::to_string(s_count) + " (got " + r.root()["path_length"].Scalar() + ")");
    p.path_length = static_cast<int>(v);
  } else {
    r.fail("path_length", "is missing; add it (stages each micro-batch visits, stage 0 included)");
  }
  if (r.fields().has("stage_capacity")) {
    const YAML::Node cap = r.root()["stage_capacity"];
    if (!cap.IsSequence() || static_cast<int>(cap.size()) != s_count)
      r.fail("stage_capacity",
             "must list one entry per stage (" + std::to_string(s_count) + "), null for no bound");
    for (int s = 0; s < s_count; ++s) {
      if (cap[s].IsNull()) {
        p.stage_capacity.emplace_back();
        continue;
      }
      // Every micro-batch starts on stage 0, so no bound applies there; a
      // number would be silently ignored.
      if (s == 0)
        r.fail("stage_capacity", "entry 0 must be null: stage 0 starts every micro-batch and takes no bound");
      const double v = r.number(cap[s], "stage_capacity", "entry " + std::to_string(s));
      if (v != std::floor(v) || v < 0 || v > 1e9)
        r.fail("stage_capacity", "entry " + std::to_string(s) + " must be null or a whole number >= 0");
      p.stage_capacity.emplace_back(static_cast<int>(v));
    }
  }
}

/// stage_forward_s, backward_factor and loss_factor from parplan's cost model:
/// each node is one device holding layers / stages of the model.
double cost_model_times(const Reader& r, SkipProblem& p, double& activation_bytes, std::string& infeasible) {
  const ModelSpec model = load_model(r.fields().text("model"));
  const ClusterSpec cluster = load_cluster(r.fields().text("cluster"));
  const int mbs = r.bounded_int("micro_batch_size", 1, 1 << 20);
  const int seq = r.bounded_int("seq", 1, 1 << 24);
  const int stages = static_cast<int>(p.stage_sizes.size());
  if (stages > model.layers || model.layers % stages != 0)
    r.fail("stages", "(" + std::to_string(stages) + ") must divide the " + std::to_string(model.layers) +
                         " layers of model " + model.name + ": each node holds layers / stages of them");
  if (model.position == PositionKind::kLearned && model.max_positions > 0 && seq > model.max_positions)
    r.fail("seq", "(" + std::to_string(seq) + ") exceeds the " + std::to_string(model.max_positions) +
                      " learned positions of model " + model.name + "; use a shorter sequence");
  LayerShape shape;
  shape.tokens = static_cast<double>(mbs) * seq;
  shape.seq = seq;
  shape.flash_attention = cluster.default_flash_attention;
  const double peak = cluster.device.peak_bf16_flops_per_s;
  const LayerComputeTimes layer = layer_compute_times(model, cluster.device, peak, shape);
  const EdgeComputeTimes edge = edge_compute_times(model, cluster.device, peak, shape.tokens, 1);
  const double stage_s = layer.forward_s * model.layers / static_cast<double>(p.stage_sizes.size());
  p.network.backward_factor = layer.backward_s / layer.forward_s;
  p.network.loss_factor = (edge.head_forward_s + edge.head_backward_s) / stage_s;
  activation_bytes = shape.tokens * model.hidden * 2;  // bf16 activations between stages
  // A node holds its layers' weights with mixed-precision Adam (16-bit
  // weights and gradients, fp32 master and moments: no data parallelism to
  // shard them over) and `memory` micro-batches' activations of them; the
  // first stage's embedding and the last's head come on top.
  const int stage_layers = model.layers / stages;
  const double layer_params =
      (total_params(model, seq) - embedding_params(model, seq) - untied_head_params(model)) / model.layers;
  ActivationShape a;
  a.seq = seq, a.micro_batch = mbs, a.flash_attention = shape.flash_attention;
  const double need_bytes = model_state_bytes(stage_layers * layer_params, 0, 1, 12.0).total() +
                            p.network.memory * stage_layers * layer_activation_bytes(model, a);
  const double usable_bytes = cluster.device.usable_hbm_bytes();
  if (need_bytes > usable_bytes) {
    char text[400];
    std::snprintf(
        text, sizeof text,
        "memory: a node of %s holds %d layers of %s with %d micro-batches of activations: %.1f GiB, "
        "over the %.1f GiB usable; use more stages, a smaller memory or micro_batch_size",
        cluster.name.c_str(), stage_layers, model.name.c_str(), p.network.memory, need_bytes / (1 << 30),
        usable_bytes / (1 << 30));
    infeasible = text;
  }
  return stage_s;
}

void read_network(const Reader& r, SkipProblem& p, double activation_bytes_from_model) {
  const int n = p.network.nodes;
  const auto& f = r.fields();
  if (f.has("transfer_s")) {
    for (const char* k : {"latency_ms", "bandwidth_gb_per_s", "bandwidth_gib_per_s"})
      if (f.has(k)) r.fail(k, "cannot be given together with transfer_s; keep one of them");
    // Both only enter transfers derived from latency and bandwidth: beside
    // transfer_s they would be ignored, silently.
    for (const char* k : {"activation_bytes", "message_overhead_s"})
      if (f.has(k))
        r.fail(k,
               "has no effect beside transfer_s (it only enters transfers derived from latency_ms and "
               "bandwidth); remove it, or give latency_ms and a bandwidth instead of transfer_s");
    p.network.transfer_s = r.matrix("transfer_s", n, false);
    // A node never sends to itself (consecutive stages lie on different
    // nodes): a diagonal entry would be ignored, so it must say 0.
    for (int i = 0; i < n; ++i)
      if (p.network.transfer_s[static_cast<std::size_t>(i) * n + i] != 0)
        r.fail("transfer_s", "entry [" + std::to_string(i) + "][" + std::to_string(i) + "] is node " +
                                 std::to_string(i) + " to itself and must be 0");
    return;
  }
  if (!f.has("latency_ms"))
    r.fail("transfer_s", "is missing; give transfer_s, or latency_ms with bandwidth_gb_per_s");
  const bool gib = f.has("bandwidth_gib_per_s");
  if (gib == f.has("bandwidth_gb_per_s"))
    r.fail("bandwidth_gb_per_s", "or bandwidth_gib_per_s must be given with latency_ms, exactly one of them");
  const std::vector<double> latency_ms = r.matrix("latency_ms", n, false);
  const std::vector<double> bandwidth = r.matrix(gib ? "bandwidth_gib_per_s" : "bandwidth_gb_per_s", n, true);
  double bytes = activation_bytes_from_model;
  if (f.has("activation_bytes") || bytes <= 0) bytes = f.positive_number("activation_bytes");
  const double overhead_s = r.non_negative("message_overhead_s", 0);
  const double unit_bytes = gib ? 1024.0 * 1024 * 1024 : 1e9;
  p.network.transfer_s.assign(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) {
        const std::size_t k = static_cast<std::size_t>(i) * n + j;
        const double latency_s = latency_ms[k] / 1000;
        const double wire_s = bytes / (bandwidth[k] * unit_bytes);
        p.network.transfer_s[k] = latency_s + wire_s + overhead_s;
        if (p.network.transfer_s[k] <= kMaxSeconds) continue;
        // Name the term that makes the transfer too long: the latency, the
        // overhead, or the activations over the bandwidth.
        const std::string pair = "[" + std::to_string(i) + "][" + std::to_string(j) + "]";
        std::ostringstream text;
        text << "gives a transfer of " << p.network.transfer_s[k] << " s for nodes " << pair
             << "; parplan accepts at most " << kMaxSeconds << " s (check the unit)";
        if (latency_s >= wire_s && latency_s >= overhead_s) r.fail("latency_ms", text.str());
        if (overhead_s >= wire_s) r.fail("message_overhead_s", text.str());
        // The activations when even the fastest link takes too long,
        // else this pair's bandwidth.
        const double fastest = *std::max_element(bandwidth.begin(), bandwidth.end());
        const char* bandwidth_key = gib ? "bandwidth_gib_per_s" : "bandwidth_gb_per_s";
        if (f.has("activation_bytes") && bytes / (fastest * unit_bytes) > kMaxSeconds)
          r.fail("activation_bytes", text.str() + " even over the fastest link");
        text << " for " << bytes << " activation bytes";
        r.fail(bandwidth_key, text.str());
      }
}

void at_most(const Reader& r, const char* key, const std::string& at, double value, double limit) {
  if (value > limit) {
    std::ostringstream text;
    text << at << (at.empty() ? "" : " ") << "is " << value << "; parplan accepts at most " << limit
         << " (check the unit)";
    r.fail(key, text.str());
  }
}

void check_time_bounds(const Reader& r, const SkipProblem& p) {
  const SkipNetwork& net = p.network;
  const bool listed = r.fields().has("stage_forward_s") && r.root()["stage_forward_s"].IsSequence();
  for (std::size_t i = 0; i < net.forward_s.size(); ++i)
    at_most(r, "stage_forward_s", listed ? "entry " + std::to_string(i) : "", net.forward_s[i], kMaxSeconds);
  at_most(r, "backward_factor", "", net.backward_factor, kMaxFactor);
  at_most(r, "loss_factor", "", net.loss_factor, kMaxFactor);
  at_most(r, "task_overhead_s", "", net.task_overhead_s, kMaxSeconds);
  at_most(r, "first_forward_overhead_s", "", net.first_forward_overhead_s, kMaxSeconds);
  // Transfers derived from latency and bandwidth are checked as read_network
  // derives them.
  if (!r.fields().has("transfer_s")) return;
  const int n = net.nodes;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      at_most(r, "transfer_s", "entry [" + std::to_string(i) + "][" + std::to_string(j) + "]",
              net.transfer_s[static_cast<std::size_t>(i) * n + j], kMaxSeconds);
}

}  // namespace

namespace {
SkipProblemInput parse_problem(const YAML::Node& root, const std::string& where, const FastMatrices* fast) {
  if (!root.IsMap()) throw InputError(where + ": expected a mapping of fields (nodes, stage_sizes, ...)");
  Reader r(root, where, fast);
  r.fields().allow_only({"nodes",
                         "stage_sizes",
                         "stages",
                         "path_length",
                         "memory",
                         "micro_batches_per_source",
                         "stage_forward_s",
                         "backward_factor",
                         "loss_factor",
                         "task_overhead_s",
                         "first_forward_overhead_s",
                         "transfer_s",
                         "stage_capacity",
                         "latency_ms",
                         "bandwidth_gb_per_s",
                         "bandwidth_gib_per_s",
                         "activation_bytes",
                         "message_overhead_s",
                         "model",
                         "cluster",
                         "micro_batch_size",
                         "seq"});
  SkipProblemInput in;
  SkipProblem& p = in.problem;
  p.network.nodes = r.bounded_int("nodes", 2, kMaxSkipPathNodes);
  read_stages(r, in);
  p.network.memory = r.bounded_int("memory", 1, 1 << 20);
  p.micro_batches_per_source = r.bounded_int("micro_batches_per_source", 1, kMaxMicroBatchesPerSource);
  // The path search simulates the schedule placed so far for each
  // micro-batch it places: time grows with the square of the step's
  // micro-batches (8192: about 7 s on 2 cores), past any time limit.
  const std::int64_t step_micro_batches =
      static_cast<std::int64_t>(p.stage_sizes.front()) * p.micro_batches_per_source;
  if (step_micro_batches > kMaxStepMicroBatches)
    r.fail("micro_batches_per_source",
           "x the " + std::to_string(p.stage_sizes.front()) + " source nodes of stage 0 is " +
               std::to_string(step_micro_batches) + " micro-batches a step, over " +
               std::to_string(kMaxStepMicroBatches) + " (the path search's limit); give fewer per source");

  const auto& f = r.fields();
  double activation_bytes = 0;
  std::string& infeasible = in.infeasible;
  const bool cost_model = f.has("model") || f.has("cluster");
  if (cost_model) {
    if (!f.has("model") || !f.has("cluster"))
      r.fail(f.has("model") ? "cluster" : "model", "is missing; model and cluster go together");
    if (f.has("stage_forward_s"))
      r.fail("stage_forward_s", "cannot be given together with model and cluster; keep one");
    p.network.forward_s.assign(p.network.nodes, cost_model_times(r, p, activation_bytes, infeasible));
  } else if (const char* k = f.has("micro_batch_size") ? "micro_batch_size"
                             : f.has("seq")            ? "seq"
                                                       : nullptr) {
    // Both only enter the cost model's task times: without it they would be
    // ignored, silently.
    r.fail(k,
           "has no effect without model and cluster (it only enters the cost model's task times); "
           "remove it, or give model and cluster instead of stage_forward_s");
  } else if (!f.has("stage_forward_s")) {
    r.fail("stage_forward_s",
           "is missing; give seconds per stage forward (one number or one per node), or model and cluster");
  } else if (root["stage_forward_s"].IsSequence()) {
    const YAML::Node list = root["stage_forward_s"];
    if (static_cast<int>(list.size()) != p.network.nodes)
      r.fail("stage_forward_s", "lists " + std::to_string(list.size()) + " numbers but nodes is " +
                                    std::to_string(p.network.nodes));
    for (std::size_t i = 0; i < list.size(); ++i) {
      const double v = r.number(list[i], "stage_forward_s", "entry " + std::to_string(i));
      if (v <= 0) r.fail("stage_forward_s", "entry " + std::to_string(i) + " must be positive");
      p.network.forward_s.push_back(v);
    }
  } else {
    p.network.forward_s.assign(p.network.nodes, f.positive_number("stage_forward_s"));
  }
  if (!cost_model || f.has("backward_factor"))
    p.network.backward_factor = f.positive_number("backward_factor", 2.0);
  if (!cost_model || f.has("loss_factor")) p.network.loss_factor = r.non_negative("loss_factor", 0);
  p.network.task_overhead_s = r.non_negative("task_overhead_s", 0);
  p.network.first_forward_overhead_s = r.non_negative("first_forward_overhead_s", p.network.task_overhead_s);
  read_network(r, p, activation_bytes);
  check_time_bounds(r, p);
  return in;
}

}  // namespace

SkipProblemInput parse_skip_problem(const YAML::Node& root, const std::string& where) {
  return parse_problem(root, where, nullptr);
}

SkipProblemInput load_skip_problem(const std::string& path) {
  const std::string text = read_yaml_file_text(path);
  // The matrices in their usual form are read in one pass; the rest of the
  // file, and any file the fast reading does not take whole, as YAML.
  const FlowRowExtraction fast = extract_flow_row_matrices(text, kMatrixKeys);
  if (!fast.matrices.empty()) {
    try {
      const YAML::Node root = load_yaml_text(fast.text, path);
      // Each taken block must have become a top-level `key: []`: a block
      // that lay inside a quoted scalar or a flow collection did not, and
      // the plain reading takes the file.
      bool placeholders = root.IsMap();
      for (const auto& [key, rows] : fast.matrices) {
        const YAML::Node value = placeholders ? root[key] : YAML::Node();
        placeholders = placeholders && value.IsDefined() && value.IsSequence() && value.size() == 0;
      }
      if (placeholders) return parse_problem(root, path, &fast.matrices);
    } catch (const InputError&) {
      // Bad input is worded by the plain reading below, as it always was.
    } catch (const YAML::Exception&) {
    }
  }
  return parse_problem(load_yaml_text(text, path), path, nullptr);
}

}  // namespace parplan
