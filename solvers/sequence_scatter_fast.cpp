// The fast path of sequence scattering: greedy packing of sequences into
// groups under a common time cap (bisected), for a few micro-batch counts,
// then each micro-batch tightened on its own.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

// Bisection stops when the cap is known to this relative precision: finer
// than the 1 % gap target (local search polishes the plan after), coarse
// enough to stay at ~10 packings (2e-4 cost 8 % more time, same bench gap).
constexpr double kCapPrecision = 1e-3;
constexpr double kCapGrowth = 1.3;
constexpr int kMaxCapSteps = 80;
// Micro-batch counts tried above the memory minimum.
constexpr int kExtraMicroBatches = 3;

struct Bin {
  int micro_batch = 0;
  int size_index = 0;
  double load_ms = 0;
  double tokens = 0;
};

class Packer {
 public:
  explicit Packer(const Instance& instance) : in_(instance), bin_of_(instance.num_sequences(), -1) {
    const int n = in_.num_sequences();
    const int sizes = in_.num_sizes;
    class_order_.resize(static_cast<size_t>(n) * sizes);
    for (int i = 0; i < n; ++i) {
      int* order = &class_order_[static_cast<size_t>(i) * sizes];
      std::iota(order, order + sizes, 0);
      std::stable_sort(order, order + sizes, [&](int x, int y) {
        return in_.size[x] * in_.work(i, x) < in_.size[y] * in_.work(i, y);
      });
    }
    class_bins_.resize(sizes);
  }

  /// Places `items` (in order) into groups whose load stays <= cap_ms, in at
  /// most `max_micro_batches` micro-batches. `existing_first`: fill open
  /// groups of any size before opening a group of the cheapest size.
  bool pack(const std::vector<int>& items, double cap_ms, int max_micro_batches, bool existing_first) {
    bins_.clear();
    for (auto& c : class_bins_) c.clear();
    free_width_.clear();
    const int sizes = in_.num_sizes;
    for (int i : items) {
      const int* order = &class_order_[static_cast<size_t>(i) * sizes];
      bool placed = false;
      if (existing_first) {
        for (int r = 0; r < sizes && !placed; ++r) placed = place_existing(i, order[r], cap_ms);
        for (int r = 0; r < sizes && !placed; ++r) placed = place_new(i, order[r], cap_ms, max_micro_batches);
      } else {
        for (int r = 0; r < sizes && !placed; ++r) {
          placed = place_existing(i, order[r], cap_ms) || place_new(i, order[r], cap_ms, max_micro_batches);
        }
      }
      if (!placed) return false;
    }
    return true;
  }

  /// The groups of the last successful pack.
  ScatterPlan plan(const std::vector<int>& items) const {
    ScatterPlan plan;
    plan.micro_batches.resize(free_width_.size());
    std::vector<int> group_index(bins_.size());
    for (size_t b = 0; b < bins_.size(); ++b) {
      auto& groups = plan.micro_batches[bins_[b].micro_batch].groups;
      group_index[b] = static_cast<int>(groups.size());
      groups.push_back(ScatterGroup{in_.size[bins_[b].size_index], 0, {}, 0, 0});
    }
    for (int i : items) {
      const int b = bin_of_[i];
      plan.micro_batches[bins_[b].micro_batch].groups[group_index[b]].sequences.push_back(i);
    }
    return plan;
  }

 private:
  bool place_existing(int i, int j, double cap_ms) {
    const double w = in_.work(i, j);
    if (!(w <= cap_ms)) return false;
    const double s = in_.tokens[i];
    int best = -1;
    for (int b : class_bins_[j]) {
      const Bin& bin = bins_[b];
      if (bin.load_ms + w <= cap_ms && bin.tokens + s <= in_.capacity_tokens[j] &&
          (best < 0 || bin.load_ms < bins_[best].load_ms)) {
        best = b;
      }
    }
    if (best < 0) return false;
    put(i, best, w);
    return true;
  }

  bool place_new(int i, int j, double cap_ms, int max_micro_batches) {
    const double w = in_.work(i, j);
    if (!(w <= cap_ms)) return false;
    const int p = in_.size[j];
    int mb = -1;
    for (size_t m = 0; m < free_width_.size(); ++m) {
      if (free_width_[m] >= p) {
        mb = static_cast<int>(m);
        break;
      }
    }
    if (mb < 0) {
      if (static_cast<int>(free_width_.size()) >= max_micro_batches) return false;
      free_width_.push_back(in_.gpus);
      mb = static_cast<int>(free_width_.size()) - 1;
    }
    free_width_[mb] -= p;
    class_bins_[j].push_back(static_cast<int>(bins_.size()));
    bins_.push_back(Bin{mb, j, 0, 0});
    put(i, static_cast<int>(bins_.size()) - 1, w);
    return true;
  }

  void put(int i, int b, double w) {
    bins_[b].load_ms += w;
    bins_[b].tokens += in_.tokens[i];
    bin_of_[i] = b;
  }

  const Instance& in_;
  std::vector<int> class_order_;
  std::vector<Bin> bins_;
  std::vector<std::vector<int>> class_bins_;
  std::vector<int> free_width_;
  std::vector<int> bin_of_;
};

/// Smallest cap (to kCapPrecision) at which pack succeeds, starting from
/// `lower_ms`; returns the plan packed at that cap (empty when none fits).
ScatterPlan bisect(Packer& packer, const std::vector<int>& items, double lower_ms, int max_micro_batches,
                   bool existing_first) {
  double lo = lower_ms;
  double hi = std::max(lower_ms, 1e-9);
  bool ok = packer.pack(items, hi, max_micro_batches, existing_first);
  for (int step = 0; !ok && step < kMaxCapSteps; ++step) {
    lo = hi;
    hi *= kCapGrowth;
    ok = packer.pack(items, hi, max_micro_batches, existing_first);
  }
  if (!ok) return {};
  if (hi > lo) {
    while (hi - lo > kCapPrecision * hi) {
      const double mid = 0.5 * (lo + hi);
      if (packer.pack(items, mid, max_micro_batches, existing_first)) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    packer.pack(items, hi, max_micro_batches, existing_first);
  }
  return packer.plan(items);
}

double items_lower_ms(const Instance& in, const std::vector<int>& items, int micro_batches) {
  double fastest = 0;
  double gpu_ms = 0;
  for (int i : items) {
    fastest = std::max(fastest, in.fastest_ms[i]);
    gpu_ms += in.cheapest_gpu_ms[i];
  }
  return std::max(fastest, gpu_ms / (static_cast<double>(in.gpus) * micro_batches));
}

/// Re-packs each micro-batch alone (one micro-batch, its own cap).
void tighten(const Instance& in, Packer& packer, const std::vector<std::int64_t>& lengths, ScatterPlan& plan,
             bool existing_first) {
  for (ScatterMicroBatch& mb : plan.micro_batches) {
    std::vector<int> items;
    for (const ScatterGroup& g : mb.groups) items.insert(items.end(), g.sequences.begin(), g.sequences.end());
    std::sort(items.begin(), items.end(), [&](int x, int y) {
      return in.cheapest_gpu_ms[x] > in.cheapest_gpu_ms[y] ||
             (in.cheapest_gpu_ms[x] == in.cheapest_gpu_ms[y] && x < y);
    });
    ScatterPlan alone = bisect(packer, items, items_lower_ms(in, items, 1), 1, existing_first);
    if (alone.empty()) continue;
    finalize_scatter_plan(alone, lengths, *in.coefficients);
    if (alone.time_ms < mb.time_ms) mb = alone.micro_batches.front();
  }
  finalize_scatter_plan(plan, lengths, *in.coefficients);
}

}  // namespace

ScatterPlan pack_items(const Instance& in, const std::vector<std::int64_t>& lengths, std::vector<int> items,
                       int micro_batches) {
  std::sort(items.begin(), items.end(), [&](int x, int y) {
    return in.cheapest_gpu_ms[x] > in.cheapest_gpu_ms[y] ||
           (in.cheapest_gpu_ms[x] == in.cheapest_gpu_ms[y] && x < y);
  });
  Packer packer(in);
  ScatterPlan best;
  for (bool existing_first : {false, true}) {
    ScatterPlan plan =
        bisect(packer, items, items_lower_ms(in, items, micro_batches), micro_batches, existing_first);
    if (plan.empty()) continue;
    finalize_scatter_plan(plan, lengths, *in.coefficients);
    if (micro_batches > 1) tighten(in, packer, lengths, plan, existing_first);
    if (plan.time_ms < best.time_ms) best = std::move(plan);
  }
  return best;
}

ScatterPlan fast_path(const Instance& in, const std::vector<std::int64_t>& lengths,
                      Clock::time_point deadline) {
  const int n = in.num_sequences();
  std::vector<int> items(n);
  std::iota(items.begin(), items.end(), 0);
  std::sort(items.begin(), items.end(), [&](int x, int y) {
    return in.cheapest_gpu_ms[x] > in.cheapest_gpu_ms[y] ||
           (in.cheapest_gpu_ms[x] == in.cheapest_gpu_ms[y] && x < y);
  });
  double total_tokens = 0;
  double gpu_ms = 0;
  for (int i = 0; i < n; ++i) {
    total_tokens += in.tokens[i];
    gpu_ms += in.cheapest_gpu_ms[i];
  }
  const double k = in.coefficients->token_capacity_per_gpu;
  const double fixed_ms = in.coefficients->fixed_ms;
  const int fewest = std::max(1, static_cast<int>(std::ceil(total_tokens / (in.gpus * k) - 1e-9)));

  Packer packer(in);
  ScatterPlan best;
  for (int m = fewest; m <= std::min(n, fewest + kExtraMicroBatches); ++m) {
    if (!best.empty() && (m * fixed_ms + gpu_ms / in.gpus >= best.time_ms || Clock::now() >= deadline)) break;
    for (bool existing_first : {false, true}) {
      ScatterPlan plan = bisect(packer, items, items_lower_ms(in, items, m), m, existing_first);
      if (plan.empty()) continue;
      finalize_scatter_plan(plan, lengths, *in.coefficients);
      tighten(in, packer, lengths, plan, existing_first);
      if (plan.time_ms < best.time_ms) best = std::move(plan);
      if (Clock::now() >= deadline) break;
    }
  }
  return best;
}

}  // namespace parplan::scatter_detail
