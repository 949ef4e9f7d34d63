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
// A step whose budget is spent before it starts (the run's --time-limit
// reached) still needs a plan: one coarse bisection (about four packings
// instead of ten) and no micro-batch packed again alone.
constexpr double kHurriedCapPrecision = 0.3;
constexpr double kCapGrowth = 1.3;
constexpr int kMaxCapSteps = 80;
// one_micro_batch_caps_ms gives up on a subset whose cap grew this many
// times (1.3^8 = 8.2x its lower bound) without packing: such a subset
// mostly cannot pack at any cap (its sequences' sizes do not fit the GPUs
// together in this packing order), and growing 80 times was most of that
// pricing's work.
constexpr int kMaxPartCapSteps = 5;
// Micro-batch counts tried above the memory minimum.
constexpr int kExtraMicroBatches = 3;
// Open groups of a size per block of the packer's least-load search.
constexpr size_t kBlock = 16;

/// The packer's insertion order: most GPU-ms first (index on ties).
void sort_by_gpu_ms(const Instance& in, std::vector<int>& items) {
  std::sort(items.begin(), items.end(), [&](int x, int y) {
    return in.cheapest_gpu_ms[x] > in.cheapest_gpu_ms[y] ||
           (in.cheapest_gpu_ms[x] == in.cheapest_gpu_ms[y] && x < y);
  });
}

struct Bin {
  int micro_batch = 0;
  int size_index = 0;
  int slot = 0;  ///< position in its size's load and token arrays
};

class Packer {
 public:
  explicit Packer(const Instance& instance)
      : in_(instance),
        bin_of_(instance.num_sequences(), -1),
        class_load_(instance.num_sizes),
        class_tokens_(instance.num_sizes),
        class_bin_(instance.num_sizes),
        block_load_(instance.num_sizes),
        block_tokens_(instance.num_sizes),
        least_load_(instance.num_sizes, kInfinity),
        least_tokens_(instance.num_sizes, kInfinity) {}

  /// Places `items` (in order) into groups whose load stays <= cap_ms, in at
  /// most `max_micro_batches` micro-batches. `existing_first`: fill open
  /// groups of any size before opening a group of the cheapest size.
  bool pack(const std::vector<int>& items, double cap_ms, int max_micro_batches, bool existing_first) {
    bins_.clear();
    for (int j = 0; j < in_.num_sizes; ++j) {
      class_load_[j].clear();
      class_tokens_[j].clear();
      class_bin_[j].clear();
      block_load_[j].clear();
      block_tokens_[j].clear();
      least_load_[j] = kInfinity;
      least_tokens_[j] = kInfinity;
    }
    free_width_.clear();
    widest_free_ = 0;
    const int sizes = in_.num_sizes;
    for (int i : items) {
      const int* order = in_.size_order(i);
      bool placed = false;
      // The quick tests inline: most tries fail them (the cap is being
      // bisected), and a call per try was a third of the packing's time.
      auto existing = [&](int j) { return may_place_existing(i, j, cap_ms) && place_existing(i, j, cap_ms); };
      auto fresh = [&](int j) {
        return may_open(i, j, cap_ms, max_micro_batches) && place_new(i, j, cap_ms, max_micro_batches);
      };
      if (existing_first) {
        for (int r = 0; r < sizes && !placed; ++r) placed = existing(order[r]);
        for (int r = 0; r < sizes && !placed; ++r) placed = fresh(order[r]);
      } else {
        for (int r = 0; r < sizes && !placed; ++r) placed = existing(order[r]) || fresh(order[r]);
      }
      if (!placed) return false;
    }
    return true;
  }

  /// The step time of the last successful pack: each micro-batch its
  /// slowest group's load plus fixed_ms (no plan built).
  double time_ms() const {
    std::vector<double>& slowest = slowest_;
    slowest.assign(free_width_.size(), 0);
    for (const Bin& bin : bins_) {
      double& s = slowest[bin.micro_batch];
      s = std::max(s, class_load_[bin.size_index][bin.slot]);
    }
    double sum = 0;
    for (double s : slowest) sum += s + in_.coefficients->fixed_ms;
    return sum;
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
  /// Necessary for place_existing: the size has a group light and empty
  /// enough.
  bool may_place_existing(int i, int j, double cap_ms) const {
    const double w = in_.work(i, j);
    return w <= cap_ms && !(least_load_[j] > cap_ms - w) &&
           !(least_tokens_[j] > in_.capacity_tokens[j] - in_.tokens[i]);
  }

  /// Necessary for place_new: a micro-batch has p GPUs free or can be added.
  bool may_open(int i, int j, double cap_ms, int max_micro_batches) const {
    return in_.work(i, j) <= cap_ms &&
           (widest_free_ >= in_.size[j] || static_cast<int>(free_width_.size()) < max_micro_batches);
  }

  bool place_existing(int i, int j, double cap_ms) {
    const double w = in_.work(i, j);
    if (!(w <= cap_ms)) return false;
    // The least loaded open group of size j with room for the sequence (the
    // first of equal loads); the loads and tokens of a size lie in their own
    // arrays (this scan is most of the packing's time). Blocks of kBlock
    // groups keep their least load and tokens: a block none of whose groups
    // has room, or could be less loaded than the best so far, is skipped
    // (the same group is found).
    const double load_cap = cap_ms - w;
    const double token_cap = in_.capacity_tokens[j] - in_.tokens[i];
    const std::vector<double>& load = class_load_[j];
    const std::vector<double>& tokens = class_tokens_[j];
    const std::vector<double>& block_load = block_load_[j];
    const std::vector<double>& block_tokens = block_tokens_[j];
    if (least_load_[j] > load_cap || least_tokens_[j] > token_cap) return false;
    int best = -1;
    double best_load = 0;
    for (size_t b = 0; b < block_load.size(); ++b) {
      if (block_load[b] > load_cap || block_tokens[b] > token_cap ||
          (best >= 0 && block_load[b] >= best_load))
        continue;
      const size_t end = std::min(load.size(), (b + 1) * kBlock);
      for (size_t k = b * kBlock; k < end; ++k) {
        if (load[k] <= load_cap && tokens[k] <= token_cap && (best < 0 || load[k] < best_load)) {
          best = static_cast<int>(k);
          best_load = load[k];
        }
      }
    }
    if (best < 0) return false;
    put(i, class_bin_[j][best], j, best, w);
    return true;
  }

  bool place_new(int i, int j, double cap_ms, int max_micro_batches) {
    const double w = in_.work(i, j);
    if (!(w <= cap_ms)) return false;
    const int p = in_.size[j];
    // Most calls find no micro-batch with room (the cap is being bisected):
    // the widest free span answers them without the scan.
    if (widest_free_ < p && static_cast<int>(free_width_.size()) >= max_micro_batches) return false;
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
    const bool was_widest = free_width_[mb] >= widest_free_;
    free_width_[mb] -= p;
    if (was_widest) widest_free_ = *std::max_element(free_width_.begin(), free_width_.end());
    const int slot = static_cast<int>(class_load_[j].size());
    class_load_[j].push_back(0);
    class_tokens_[j].push_back(0);
    class_bin_[j].push_back(static_cast<int>(bins_.size()));
    if (slot % kBlock == 0) {
      block_load_[j].push_back(0);
      block_tokens_[j].push_back(0);
    } else {
      block_load_[j].back() = 0;
      block_tokens_[j].back() = 0;
    }
    least_load_[j] = 0;
    least_tokens_[j] = 0;
    bins_.push_back(Bin{mb, j, slot});
    put(i, static_cast<int>(bins_.size()) - 1, j, slot, w);
    return true;
  }

  void put(int i, int b, int j, int slot, double w) {
    class_load_[j][slot] += w;
    class_tokens_[j][slot] += in_.tokens[i];
    bin_of_[i] = b;
    // Loads and tokens only grow: the block's least ones are found again.
    const size_t first = static_cast<size_t>(slot) / kBlock * kBlock;
    const size_t end = std::min(class_load_[j].size(), first + kBlock);
    double least_load = class_load_[j][first];
    double least_tokens = class_tokens_[j][first];
    for (size_t k = first + 1; k < end; ++k) {
      least_load = std::min(least_load, class_load_[j][k]);
      least_tokens = std::min(least_tokens, class_tokens_[j][k]);
    }
    double& block_least_load = block_load_[j][first / kBlock];
    double& block_least_tokens = block_tokens_[j][first / kBlock];
    // A size's least load (tokens) can only rise when this block held it;
    // otherwise another block keeps it and the scan over the blocks (most
    // of a packing's time with thousands of one-GPU groups) is skipped.
    const bool rescan_load = !(block_least_load > least_load_[j]);
    const bool rescan_tokens = !(block_least_tokens > least_tokens_[j]);
    block_least_load = least_load;
    block_least_tokens = least_tokens;
    if (!rescan_load && !rescan_tokens) return;
    // Both least ones in one pass over the blocks.
    const std::vector<double>& block_load = block_load_[j];
    const std::vector<double>& block_tokens = block_tokens_[j];
    least_load = block_load[0];
    least_tokens = block_tokens[0];
    for (size_t k = 1; k < block_load.size(); ++k) {
      least_load = block_load[k] < least_load ? block_load[k] : least_load;
      least_tokens = block_tokens[k] < least_tokens ? block_tokens[k] : least_tokens;
    }
    if (rescan_load) least_load_[j] = least_load;
    if (rescan_tokens) least_tokens_[j] = least_tokens;
  }

  const Instance& in_;
  std::vector<Bin> bins_;
  std::vector<int> bin_of_;
  std::vector<std::vector<double>> class_load_;
  std::vector<std::vector<double>> class_tokens_;
  std::vector<std::vector<int>> class_bin_;
  std::vector<std::vector<double>> block_load_;    ///< least load of each kBlock groups of a size
  std::vector<std::vector<double>> block_tokens_;  ///< least tokens of each kBlock groups of a size
  std::vector<double> least_load_;                 ///< least load of an open group of each size
  std::vector<double> least_tokens_;               ///< least tokens of an open group of each size
  std::vector<int> free_width_;
  int widest_free_ = 0;                  ///< largest free width of a micro-batch
  mutable std::vector<double> slowest_;  ///< time_ms's scratch
};

/// Smallest cap (to `precision`, relative) at which pack succeeds, starting
/// from `lower_ms`; false when none fits. The packer holds the packing at
/// the cap returned unless `keep_packing` is false (the last try may have
/// failed below it).
/// `hint_ms` > lower_ms: a cap that likely packs and lies near the least one
/// (a micro-batch's own cap when it is packed again alone): tried first, then
/// caps below it, 1/64 lower and twice as far each time, until one fails,
/// which brackets the least cap in a few packings instead of growing from
/// `lower_ms` (the growth steps were a third of the packings).
bool least_cap(Packer& packer, const std::vector<int>& items, double lower_ms, int max_micro_batches,
               bool existing_first, double hint_ms, double precision, bool keep_packing, double& cap_ms,
               int max_cap_steps = kMaxCapSteps) {
  double lo = lower_ms;
  double hi = std::max(lower_ms, 1e-9);
  bool ok = false;
  if (hint_ms > hi && packer.pack(items, hint_ms, max_micro_batches, existing_first)) {
    ok = true;
    hi = hint_ms;
    for (double step = 1.0 / 64; hi > lo;) {
      const double below = std::max(lo, hi / (1 + step));
      if (!packer.pack(items, below, max_micro_batches, existing_first)) {
        lo = below;
        packer.pack(items, hi, max_micro_batches, existing_first);
        break;
      }
      hi = below;
      step *= 2;
    }
  } else {
    if (hint_ms > hi) lo = hi = hint_ms;  // the hint failed: grow from it
    ok = packer.pack(items, hi, max_micro_batches, existing_first);
    for (int step = 0; !ok && step < max_cap_steps; ++step) {
      lo = hi;
      hi *= kCapGrowth;
      ok = packer.pack(items, hi, max_micro_batches, existing_first);
    }
  }
  if (!ok) return false;
  if (hi > lo) {
    // The packer holds the packing at hi unless the last try failed.
    bool holds_hi = true;
    while (hi - lo > precision * hi) {
      const double mid = 0.5 * (lo + hi);
      holds_hi = packer.pack(items, mid, max_micro_batches, existing_first);
      (holds_hi ? hi : lo) = mid;
    }
    if (!holds_hi && keep_packing) packer.pack(items, hi, max_micro_batches, existing_first);
  }
  cap_ms = hi;
  return true;
}

/// The plan packed at the least cap (to kCapPrecision; empty when none
/// fits), and that cap in `cap_ms` when given.
ScatterPlan bisect(Packer& packer, const std::vector<int>& items, double lower_ms, int max_micro_batches,
                   bool existing_first, double hint_ms = 0, double* cap_ms = nullptr,
                   double precision = kCapPrecision) {
  double cap = 0;
  if (!least_cap(packer, items, lower_ms, max_micro_batches, existing_first, hint_ms, precision, true, cap))
    return {};
  if (cap_ms) *cap_ms = cap;
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
    sort_by_gpu_ms(in, items);
    ScatterPlan alone = bisect(packer, items, items_lower_ms(in, items, 1), 1, existing_first,
                               mb.time_ms - in.coefficients->fixed_ms);
    if (alone.empty()) continue;
    finalize_scatter_plan(alone, lengths, *in.coefficients);
    if (alone.time_ms < mb.time_ms) mb = alone.micro_batches.front();
  }
  finalize_scatter_plan(plan, lengths, *in.coefficients);
}

}  // namespace

ScatterPlan pack_items(const Instance& in, const std::vector<std::int64_t>& lengths, std::vector<int> items,
                       int micro_batches, int orders, double cap_hint_ms) {
  sort_by_gpu_ms(in, items);
  Packer packer(in);
  ScatterPlan best;
  for (bool existing_first : {false, true}) {
    if (!(orders & (existing_first ? 2 : 1))) continue;
    ScatterPlan plan = bisect(packer, items, items_lower_ms(in, items, micro_batches), micro_batches,
                              existing_first, cap_hint_ms);
    if (plan.empty()) continue;
    finalize_scatter_plan(plan, lengths, *in.coefficients);
    if (micro_batches > 1) tighten(in, packer, lengths, plan, existing_first);
    if (plan.time_ms < best.time_ms) best = std::move(plan);
  }
  return best;
}

std::vector<double> one_micro_batch_caps_ms(const Instance& in, const std::vector<int>& sequences,
                                            const std::vector<std::uint32_t>& subsets, double precision,
                                            Clock::time_point deadline) {
  Packer packer(in);
  std::vector<double> caps(subsets.size(), kInfinity);
  std::vector<int> items;
  for (size_t s = 0; s < subsets.size(); ++s) {
    if ((s & 63) == 0 && Clock::now() >= deadline) return {};
    items.clear();
    for (size_t k = 0; k < sequences.size(); ++k) {
      if (subsets[s] >> k & 1) items.push_back(sequences[k]);
    }
    // pack_items's order: most GPU-ms first.
    sort_by_gpu_ms(in, items);
    // A subset needs at least the cap of the subset without its lowest
    // sequence (listed before it when `subsets` ascend): the search starts
    // there.
    double lower_ms = items_lower_ms(in, items, 1);
    const std::uint32_t smaller = subsets[s] & (subsets[s] - 1);
    const auto at = std::lower_bound(subsets.begin(), subsets.begin() + s, smaller);
    if (smaller != 0 && at != subsets.begin() + s && *at == smaller)
      lower_ms = std::max(lower_ms, caps[at - subsets.begin()]);
    if (!std::isfinite(lower_ms)) continue;
    double cap = 0;
    if (least_cap(packer, items, lower_ms, 1, true, 0, precision, false, cap, kMaxPartCapSteps))
      caps[s] = cap;
  }
  return caps;
}

bool packs_under(const Instance& in, std::vector<int> items, double load_cap_ms, int micro_batches) {
  if (!(load_cap_ms >= items_lower_ms(in, items, micro_batches))) return false;
  sort_by_gpu_ms(in, items);
  Packer packer(in);
  return packer.pack(items, load_cap_ms, micro_batches, false) ||
         packer.pack(items, load_cap_ms, micro_batches, true);
}

double packed_time_ms(const Instance& in, std::vector<int> items, int micro_batches, double precision) {
  sort_by_gpu_ms(in, items);
  // least_cap's search, the time taken from each packing that holds (no
  // packing again at the cap found, no plan built).
  Packer packer(in);
  double lo = items_lower_ms(in, items, micro_batches);
  double hi = std::max(lo, 1e-9);
  bool ok = packer.pack(items, hi, micro_batches, true);
  for (int step = 0; !ok && step < kMaxCapSteps; ++step) {
    lo = hi;
    hi *= kCapGrowth;
    ok = packer.pack(items, hi, micro_batches, true);
  }
  if (!ok) return kInfinity;
  double time_ms = packer.time_ms();
  while (hi - lo > precision * hi) {
    const double mid = 0.5 * (lo + hi);
    if (packer.pack(items, mid, micro_batches, true)) {
      hi = mid;
      time_ms = packer.time_ms();
    } else {
      lo = mid;
    }
  }
  return time_ms;
}

ScatterPlan fast_path(const Instance& in, const std::vector<std::int64_t>& lengths,
                      Clock::time_point deadline, bool tighten_each) {
  const int n = in.num_sequences();
  std::vector<int> items(n);
  std::iota(items.begin(), items.end(), 0);
  sort_by_gpu_ms(in, items);
  double total_tokens = 0;
  double gpu_ms = 0;
  for (int i = 0; i < n; ++i) {
    total_tokens += in.tokens[i];
    gpu_ms += in.cheapest_gpu_ms[i];
  }
  const double k = in.coefficients->token_capacity_per_gpu;
  const double fixed_ms = in.coefficients->fixed_ms;
  // Micro-batches the step needs at least: its tokens over the cluster's
  // capacity, and one each for the sequences whose narrowest group is wider
  // than half the GPUs (no two of them share a micro-batch). The sequences'
  // narrowest groups over the GPUs count only those that fill more than
  // half of theirs (two of them never share a group of that width): groups
  // hold several sequences, and 8192 one-token sequences on 64 GPUs need
  // one micro-batch, not 128.
  double width_sum = 0;
  int wide = 0;
  for (int i = 0; i < n; ++i) {
    int narrowest = in.gpus;
    double narrowest_capacity = 0;
    for (int j = 0; j < in.num_sizes; ++j)
      if (in.capacity_tokens[j] >= in.tokens[i] && in.size[j] <= narrowest)
        narrowest = in.size[j], narrowest_capacity = in.capacity_tokens[j];
    if (2 * in.tokens[i] > narrowest_capacity) width_sum += narrowest;
    wide += 2 * narrowest > in.gpus ? 1 : 0;
  }
  const int fewest = std::max({1, static_cast<int>(std::ceil(total_tokens / (in.gpus * k) - 1e-9)),
                               static_cast<int>(std::ceil(width_sum / in.gpus - 1e-9)), wide});

  Packer packer(in);
  ScatterPlan best;
  const bool hurried = Clock::now() >= deadline;
  const double precision = hurried ? kHurriedCapPrecision : kCapPrecision;
  // Past kExtraMicroBatches the counts go on only until one packs: a step
  // always has a plan (each sequence alone in a micro-batch at worst).
  for (int m = fewest; m <= n; ++m) {
    if (m > fewest + kExtraMicroBatches && !best.empty()) break;
    if (!best.empty() && (m * fixed_ms + gpu_ms / in.gpus >= best.time_ms || Clock::now() >= deadline)) break;
    // The other insertion order's cap for the same count is near this one's.
    double cap_ms = 0;
    for (bool existing_first : {false, true}) {
      ScatterPlan plan =
          bisect(packer, items, items_lower_ms(in, items, m), m, existing_first, cap_ms, &cap_ms, precision);
      if (plan.empty()) continue;
      finalize_scatter_plan(plan, lengths, *in.coefficients);
      if (tighten_each && !hurried) tighten(in, packer, lengths, plan, existing_first);
      if (plan.time_ms < best.time_ms) best = std::move(plan);
      if (Clock::now() >= deadline) break;
    }
  }
  return best;
}

}  // namespace parplan::scatter_detail
