// Local search on a sequence-scattering plan: moves one sequence to another
// group (of any micro-batch) or into a new group where a micro-batch has GPUs
// free, while the step time falls, or stays and the groups' loads even out;
// and swaps a sequence of a micro-batch's slowest group with a shorter one
// elsewhere while the step time falls.
#include <algorithm>
#include <cmath>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

constexpr double kEps = 1e-9;
// Passes of moves and swaps: on the bench, 60 gained 0.03 % of gap over 20
// for 15 % more CPU time.
constexpr int kMaxPasses = 20;
// A pass that shortens the step by less than this fraction ends the search.
constexpr double kMinPassGain = 1e-5;
// Groups per block of the move scan's room test.
constexpr size_t kBlock = 16;

struct Group {
  int micro_batch = 0;
  int size_index = 0;
  double load_ms = 0;  ///< work, without fixed_ms
  double tokens = 0;
  int count = 0;
};

struct MicroBatch {
  std::vector<int> groups;
  int free_gpus = 0;
  int sequences = 0;
  double top_ms = 0;  ///< largest group load
  int top_group = -1;
  double second_ms = 0;  ///< largest load among the other groups
  int second_group = -1;
  double third_ms = 0;  ///< largest load among groups but those two
};

class Search {
 public:
  Search(const Instance& in, const ScatterPlan& plan)
      : in_(in),
        group_of_(in.num_sequences(), -1),
        lighter_than_(in.num_sizes),
        smallest_size_(*std::min_element(in.size.begin(), in.size.end())) {
    for (const ScatterMicroBatch& mb : plan.micro_batches) {
      MicroBatch m;
      m.free_gpus = in_.gpus;
      for (const ScatterGroup& g : mb.groups) {
        const int j =
            static_cast<int>(std::find(in_.size.begin(), in_.size.end(), g.size) - in_.size.begin());
        const int id = open(static_cast<int>(mbs_.size()), j, m);
        for (int i : g.sequences) add(i, id);
        m.sequences += static_cast<int>(g.sequences.size());
      }
      mbs_.push_back(std::move(m));
    }
    for (size_t m = 0; m < mbs_.size(); ++m) refresh(static_cast<int>(m));
  }

  /// One pass over every sequence; true when some move was made.
  bool pass(Clock::time_point deadline) {
    bool moved = false;
    for (int i = 0; i < in_.num_sequences(); ++i) {
      if ((i & 31) == 0 && Clock::now() >= deadline) return moved;
      moved |= improve(i);
    }
    return moved;
  }

  /// Swaps of two sequences between groups: for each sequence of a group
  /// that sets its micro-batch's time, the best exchange with a sequence of
  /// another group. True when some swap was made.
  bool swap_pass(Clock::time_point deadline) {
    bool moved = false;
    for (int i = 0; i < in_.num_sequences(); ++i) {
      if ((i & 15) == 0 && Clock::now() >= deadline) return moved;
      const int g = group_of_[i];
      if (mbs_[groups_[g].micro_batch].top_group != g) continue;
      moved |= best_swap(i);
    }
    return moved;
  }

  /// Step time of the current plan.
  double time_ms() const {
    double total = 0;
    for (const MicroBatch& m : mbs_) total += time_of_mb(m);
    return total;
  }

  ScatterPlan plan() const {
    ScatterPlan out;
    for (const MicroBatch& m : mbs_) {
      ScatterMicroBatch mb;
      for (int g : m.groups) {
        if (groups_[g].count > 0)
          mb.groups.push_back(ScatterGroup{in_.size[groups_[g].size_index], 0, {}, 0, 0});
        else
          mb.groups.push_back(ScatterGroup{0, 0, {}, 0, 0});
      }
      out.micro_batches.push_back(std::move(mb));
    }
    for (int i = 0; i < in_.num_sequences(); ++i) {
      const Group& g = groups_[group_of_[i]];
      const MicroBatch& m = mbs_[g.micro_batch];
      const int slot =
          static_cast<int>(std::find(m.groups.begin(), m.groups.end(), group_of_[i]) - m.groups.begin());
      out.micro_batches[g.micro_batch].groups[slot].sequences.push_back(i);
    }
    return out;
  }

 private:
  int open(int micro_batch, int j, MicroBatch& m) {
    groups_.push_back(Group{micro_batch, j, 0, 0, 0});
    tokens_of_.push_back(0);
    room_cap_.push_back(-kInfinity);
    load_of_.push_back(0);
    size_of_.push_back(j);
    if ((groups_.size() - 1) % kBlock == 0) block_room_.push_back(-kInfinity);
    m.groups.push_back(static_cast<int>(groups_.size()) - 1);
    m.free_gpus -= in_.size[j];
    return static_cast<int>(groups_.size()) - 1;
  }

  /// The most room (capacity less tokens) of a group in g's block.
  void refresh_block(int g) {
    const size_t first = static_cast<size_t>(g) / kBlock * kBlock;
    const size_t end = std::min(groups_.size(), first + kBlock);
    double room = -kInfinity;
    for (size_t h = first; h < end; ++h) room = std::max(room, room_cap_[h] - tokens_of_[h]);
    block_room_[first / kBlock] = room;
  }

  void add(int i, int g) {
    groups_[g].load_ms += in_.work(i, groups_[g].size_index);
    groups_[g].tokens += in_.tokens[i];
    ++groups_[g].count;
    group_of_[i] = g;
    tokens_of_[g] = groups_[g].tokens;
    load_of_[g] = groups_[g].load_ms;
    room_cap_[g] = in_.capacity_tokens[groups_[g].size_index];
    refresh_block(g);
  }

  void remove(int i, int g) {
    groups_[g].load_ms -= in_.work(i, groups_[g].size_index);
    groups_[g].tokens -= in_.tokens[i];
    if (--groups_[g].count == 0) {
      groups_[g].load_ms = 0;
      groups_[g].tokens = 0;
      room_cap_[g] = -kInfinity;
    }
    tokens_of_[g] = groups_[g].tokens;
    load_of_[g] = groups_[g].load_ms;
    refresh_block(g);
  }

  void refresh(int m) {
    MicroBatch& mb = mbs_[m];
    mb.top_ms = 0;
    mb.second_ms = 0;
    mb.third_ms = 0;
    mb.top_group = -1;
    mb.second_group = -1;
    mb.free_gpus = in_.gpus;
    for (int g : mb.groups) {
      if (groups_[g].count == 0) continue;
      mb.free_gpus -= in_.size[groups_[g].size_index];
      const double load = groups_[g].load_ms;
      if (mb.top_group < 0 || load > mb.top_ms) {
        mb.third_ms = mb.second_group < 0 ? 0 : mb.second_ms;
        mb.second_ms = mb.top_group < 0 ? 0 : mb.top_ms;
        mb.second_group = mb.top_group;
        mb.top_ms = load;
        mb.top_group = g;
      } else if (mb.second_group < 0 || load > mb.second_ms) {
        mb.third_ms = mb.second_group < 0 ? 0 : mb.second_ms;
        mb.second_ms = load;
        mb.second_group = g;
      } else {
        mb.third_ms = std::max(mb.third_ms, load);
      }
    }
  }

  /// Largest load in micro-batch m among non-empty groups other than g and
  /// h (0 when none).
  double top_without(int m, int g, int h) const {
    const MicroBatch& mb = mbs_[m];
    if (mb.top_group != g && mb.top_group != h) return mb.top_ms;
    if (mb.second_group != g && mb.second_group != h) return mb.second_ms;
    return mb.third_ms;
  }

  /// Largest load of micro-batch m once group g carries `load_ms`.
  double top_with(int m, int g, double load_ms) const {
    const MicroBatch& mb = mbs_[m];
    const double others = mb.top_group == g ? mb.second_ms : mb.top_ms;
    return std::max(others, load_ms);
  }

  double time_of(int m, double top_ms) const {
    return mbs_[m].sequences == 0 ? 0 : in_.coefficients->fixed_ms + top_ms;
  }

  bool improve(int i) {
    const int g = group_of_[i];
    const int m = groups_[g].micro_batch;
    const double left_ms = groups_[g].load_ms - in_.work(i, groups_[g].size_index);
    const double before_m = time_of(m, mbs_[m].top_ms);
    const double g_square = sq(groups_[g].load_ms) - sq(groups_[g].count == 1 ? 0 : left_ms);
    int best_target = -1;
    int best_new_size = -1;
    int best_new_mb = -1;
    double best_delta = -kEps;
    double best_square = 0;
    auto consider = [&](double delta, double square, int target, int new_size, int new_mb) {
      if (delta < best_delta - kEps ||
          (delta <= best_delta + kEps && square < best_square - kEps && (delta < -kEps || square < -kEps))) {
        best_delta = std::min(delta, best_delta);
        best_square = square;
        best_target = target;
        best_new_size = new_size;
        best_new_mb = new_mb;
      }
    };
    const bool last_in_mb = mbs_[m].sequences == 1;
    const double tokens_i = in_.tokens[i];
    // Outside its micro-batch's slowest group (and not its last sequence),
    // no move shortens the step: only one that evens the loads is taken,
    // square < 0, i.e. into a group of size j lighter than
    // (g_square - w_j^2) / (2 w_j). Groups clearly heavier are skipped
    // before the rest of the test (the margin keeps rounding on the side of
    // testing).
    const bool evening_only = !last_in_mb && mbs_[m].top_group != g;
    for (int j = 0; j < in_.num_sizes; ++j) {
      const double w = in_.work(i, j);
      const double lighter = (g_square - w * w) / (2 * w);
      lighter_than_[j] = !evening_only      ? kInfinity
                         : std::isfinite(w) ? lighter + 1e-6 * (1 + std::abs(lighter))
                                            : -kInfinity;
    }
    // A block of groups none of which has room is skipped (the margin
    // keeps rounding on the side of testing: the same groups are tested).
    const double least_room = tokens_i - 1e-6 * (1 + tokens_i);
    for (size_t h = 0; h < groups_.size(); ++h) {
      if (h % kBlock == 0 && block_room_[h / kBlock] < least_room) {
        h += kBlock - 1;
        continue;
      }
      // Most groups have no room: their tokens and capacity (-inf when
      // empty) lie in arrays of their own, and this test comes first.
      if (tokens_of_[h] + tokens_i > room_cap_[h] || static_cast<int>(h) == g) continue;
      if (load_of_[h] > lighter_than_[size_of_[h]]) continue;
      const Group& target = groups_[h];
      const double w = in_.work(i, target.size_index);
      if (!std::isfinite(w)) continue;
      const int m2 = target.micro_batch;
      double delta;
      if (m2 == m) {
        const double top = std::max({left_ms, target.load_ms + w, top_without(m, g, static_cast<int>(h))});
        delta = in_.coefficients->fixed_ms + top - before_m;
      } else {
        const double top_m = groups_[g].count == 1 ? top_with(m, g, 0) : top_with(m, g, left_ms);
        const double after_m = last_in_mb ? 0 : in_.coefficients->fixed_ms + top_m;
        delta = after_m - before_m + std::max(0.0, target.load_ms + w - mbs_[m2].top_ms);
      }
      const double square = sq(target.load_ms + w) - sq(target.load_ms) - g_square;
      consider(delta, square, static_cast<int>(h), -1, -1);
    }
    for (size_t m2 = 0; m2 < mbs_.size(); ++m2) {
      // Most micro-batches have no GPU free.
      if (mbs_[m2].sequences == 0 || mbs_[m2].free_gpus < smallest_size_) continue;
      for (int j = 0; j < in_.num_sizes; ++j) {
        const double w = in_.work(i, j);
        if (in_.size[j] > mbs_[m2].free_gpus || !std::isfinite(w)) continue;
        const double top_m = groups_[g].count == 1 ? top_with(m, g, 0) : top_with(m, g, left_ms);
        double delta;
        if (static_cast<int>(m2) == m) {
          // A new group beside the old one in the same micro-batch.
          delta = in_.coefficients->fixed_ms + std::max(top_m, w) - before_m;
        } else {
          const double after_m = last_in_mb ? 0 : in_.coefficients->fixed_ms + top_m;
          delta = after_m - before_m + std::max(0.0, w - mbs_[m2].top_ms);
        }
        consider(delta, sq(w) - g_square, -1, j, static_cast<int>(m2));
      }
    }
    if (best_target < 0 && best_new_size < 0) return false;
    remove(i, g);
    --mbs_[m].sequences;
    int m2;
    if (best_target >= 0) {
      m2 = groups_[best_target].micro_batch;
      add(i, best_target);
    } else {
      m2 = best_new_mb;
      add(i, open(m2, best_new_size, mbs_[m2]));
    }
    ++mbs_[m2].sequences;
    refresh(m);
    refresh(m2);
    return true;
  }

  /// Top load of micro-batch m once groups g and h (h may be -1 or in
  /// another micro-batch) carry the given loads.
  double top_after(int m, int g, double load_g, int h, double load_h) const {
    if (h < 0 || groups_[h].micro_batch != m) return top_with(m, g, load_g);
    return std::max({load_g, load_h, top_without(m, g, h)});
  }

  bool best_swap(int i) {
    const int g = group_of_[i];
    const Group& a = groups_[g];
    const int m = a.micro_batch;
    const double w_ig = in_.work(i, a.size_index);
    int best_k = -1;
    double best_delta = -kEps;
    const double tokens_i = in_.tokens[i];
    for (int k = 0; k < in_.num_sequences(); ++k) {
      // Only a shorter sequence can shorten the top group. A sequence's
      // time on a size never falls as its length grows (non-negative
      // coefficients, each rounding monotone), so the lengths, in an array
      // of their own, rule out the rest before their times are read.
      if (!(in_.tokens[k] < tokens_i)) continue;
      const int h = group_of_[k];
      if (h == g) continue;
      const Group& b = groups_[h];
      const double w_kg = in_.work(k, a.size_index);
      if (!(w_kg < w_ig)) continue;
      const double w_ih = in_.work(i, b.size_index);
      if (!std::isfinite(w_ih)) continue;
      if (a.tokens - in_.tokens[i] + in_.tokens[k] > in_.capacity_tokens[a.size_index] ||
          b.tokens - in_.tokens[k] + in_.tokens[i] > in_.capacity_tokens[b.size_index])
        continue;
      const double load_g = a.load_ms - w_ig + w_kg;
      const double load_h = b.load_ms - in_.work(k, b.size_index) + w_ih;
      const int m2 = b.micro_batch;
      double delta = top_after(m, g, load_g, h, load_h) - mbs_[m].top_ms;
      if (m2 != m) delta += top_with(m2, h, load_h) - mbs_[m2].top_ms;
      if (delta < best_delta) {
        best_delta = delta;
        best_k = k;
      }
    }
    if (best_k < 0) return false;
    const int h = group_of_[best_k];
    remove(i, g);
    remove(best_k, h);
    add(i, h);
    add(best_k, g);
    refresh(m);
    if (groups_[h].micro_batch != m) refresh(groups_[h].micro_batch);
    return true;
  }

  double time_of_mb(const MicroBatch& m) const {
    return m.sequences == 0 ? 0 : in_.coefficients->fixed_ms + m.top_ms;
  }

  static double sq(double x) { return x * x; }

  const Instance& in_;
  std::vector<Group> groups_;
  std::vector<MicroBatch> mbs_;
  std::vector<int> group_of_;
  std::vector<double> tokens_of_;     ///< each group's tokens (as groups_)
  std::vector<double> room_cap_;      ///< each group's token capacity; -inf when it is empty
  std::vector<double> load_of_;       ///< each group's load (as groups_)
  std::vector<int> size_of_;          ///< each group's size index
  std::vector<double> block_room_;    ///< most room of a group in each kBlock groups
  std::vector<double> lighter_than_;  ///< per size: heavier targets cannot even the loads
  int smallest_size_;                 ///< fewest GPUs of a group
};

}  // namespace

ScatterPlan local_search(const Instance& in, const std::vector<std::int64_t>& lengths,
                         const ScatterPlan& plan, Clock::time_point deadline) {
  if (plan.empty()) return plan;
  Search search(in, plan);
  double time_ms = search.time_ms();
  for (int pass = 0; pass < kMaxPasses && Clock::now() < deadline; ++pass) {
    const bool moved = search.pass(deadline);
    if (!search.swap_pass(deadline) && !moved) break;
    const double after_ms = search.time_ms();
    if (time_ms - after_ms < kMinPassGain * time_ms) break;
    time_ms = after_ms;
  }

  ScatterPlan out = search.plan();
  finalize_scatter_plan(out, lengths, *in.coefficients);
  return out.time_ms < plan.time_ms ? out : plan;
}

}  // namespace parplan::scatter_detail
