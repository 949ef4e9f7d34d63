// Internal to the sequence-scattering solver: one step's sequences with
// their per-size times precomputed, the fast path and the MILP path.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "solvers/lp_session.h"
#include "solvers/milp_model.h"
#include "solvers/sequence_scatter.h"

namespace parplan::scatter_detail {

using Clock = std::chrono::steady_clock;

/// A repacking or swap must shorten the step by more than this fraction of
/// its time to be kept (below it, rounding noise cycles).
constexpr double kMinStepGain = 1e-9;

struct Instance {
  const ScatterCoefficients* coefficients = nullptr;
  int gpus = 0;
  int num_sizes = 0;
  std::vector<int> size;                ///< p per size index
  std::vector<double> capacity_tokens;  ///< p K per size index
  std::vector<double> tokens;           ///< per sequence
  /// Time of sequence i on size j without fixed_ms (n x num_sizes, row-major);
  /// +inf where the sequence exceeds p K.
  std::vector<double> work_ms;
  std::vector<double> cheapest_gpu_ms;  ///< min_j p_j work
  std::vector<double> fastest_ms;       ///< min_j work
  /// Per sequence, the size indices by its GPU-ms there, cheapest first
  /// (n x num_sizes, row-major; stable for ties).
  std::vector<int> cheapest_sizes;

  int num_sequences() const { return static_cast<int>(tokens.size()); }
  double work(int i, int j) const { return work_ms[static_cast<size_t>(i) * num_sizes + j]; }
  const int* size_order(int i) const { return &cheapest_sizes[static_cast<size_t>(i) * num_sizes]; }
};

Instance make_instance(const std::vector<std::int64_t>& lengths, int gpus,
                       const ScatterCoefficients& coefficients);

/// Lower bound of scatter_lower_bound_ms for an instance.
double lower_bound_ms(const Instance& instance);

/// The `count` sequences with the longest fastest time, slowest first
/// (fewer when the step has fewer): the ones the pinned bounds pin.
std::vector<int> slowest_sequences(const Instance& instance, int count);

/// Per group size, the sequences that fit there by their rate (w_j(s) -
/// e*_s / G) / s, least first: the tokens that must share a pinned
/// sequence's group cost at least the fill of that many tokens from the
/// least rates up, each sequence once (the pinned bounds).
class MateRates {
 public:
  explicit MateRates(const Instance& instance);
  /// Least sum of rate x tokens over `need` tokens of sequences other than
  /// a and b, each within `spare` tokens, at size j; +inf when they hold
  /// fewer, 0 when need <= 0.
  double fill(int j, double need, double spare, int a, int b = -1) const;
  /// The same over two groups (sizes ja and jb, spare rooms spare_a and
  /// spare_b), a sequence counted in either (or, relaxed, both), at most
  /// each room's tokens from its list.
  double fill_two(int ja, double spare_a, int jb, double spare_b, double need, int a, int b) const;

 private:
  const Instance& in_;
  std::vector<std::vector<std::pair<double, int>>> by_rate_;
};

/// The pinned micro-batch bound (proof in sequence_scatter_pinned_bound.cpp):
/// a slow sequence's micro-batch lasts its time while the other GPUs there
/// hold at most K tokens each.
double pinned_micro_batch_bound_ms(const Instance& instance);

/// The pinned-pair bound (proof in sequence_scatter_pinned_pair.cpp): two
/// slow sequences pinned at once, in one micro-batch or two. Where the
/// least arrangement of the binding pair puts both in one micro-batch,
/// `suggested_cap_ms` (when given) gets their group time there, without
/// fixed_ms: a plan whose first micro-batch lasts that long may reach the
/// bound (the split path tries it); 0 otherwise.
double pinned_pair_bound_ms(const Instance& instance, double* suggested_cap_ms = nullptr);

/// The constructive path: for a few micro-batch counts, packs sequences into
/// groups under a common time cap found by bisection, then (`tighten_each`)
/// packs each micro-batch again alone under its own cap. Returns a finalized
/// plan (time_ms = +inf when nothing fits). Stops early at `deadline`.
ScatterPlan fast_path(const Instance& instance, const std::vector<std::int64_t>& lengths,
                      Clock::time_point deadline, bool tighten_each = true);

/// The constructive path on `items` alone with at most `micro_batches`
/// micro-batches (finalized; time_ms = +inf when nothing fits). `orders`:
/// bit 1, each sequence into an open or new group of its cheapest size
/// first; bit 2, into any open group before a new one; the better is kept.
/// `cap_hint_ms`: a group load (fixed_ms excluded) at which the items likely
/// pack, near the least one; the cap's search starts there (0: none).
ScatterPlan pack_items(const Instance& instance, const std::vector<std::int64_t>& lengths,
                       std::vector<int> items, int micro_batches, int orders = 3, double cap_hint_ms = 0);

/// The time of `items` packed by pack_items's open-groups-first order into
/// at most `micro_batches` micro-batches at their least common cap (to
/// `precision`, relative), each micro-batch not packed again alone: a
/// cheaper estimate of pack_items's plan, no plan built. +inf when they do
/// not fit.
double packed_time_ms(const Instance& instance, std::vector<int> items, int micro_batches, double precision);

/// Whether `items` pack into at most `micro_batches` micro-batches with no
/// group's load above `load_cap_ms` (fixed_ms excluded) in either of
/// pack_items's insertion orders: its test at one cap, no plan built.
bool packs_under(const Instance& instance, std::vector<int> items, double load_cap_ms, int micro_batches);

/// For each subset (bit k: sequences[k]; at most 32 sequences), the least
/// group load (fixed_ms excluded, to `precision`, relative) at which the
/// subset packs alone into one micro-batch by the constructive path (open
/// groups first); +inf where it does not fit. No plan is built. Empty when
/// the deadline passes first.
std::vector<double> one_micro_batch_caps_ms(const Instance& instance, const std::vector<int>& sequences,
                                            const std::vector<std::uint32_t>& subsets, double precision,
                                            Clock::time_point deadline);

/// The partition of `count` elements (count <= 20) into parts with the
/// least sum of part_ms (indexed by the part's bit mask; +inf: not a part),
/// by a dynamic program over the subsets (3^count steps). Its parts, and
/// the sum in `sum_ms` when given; empty when every partition has an
/// infinite part.
std::vector<std::uint32_t> least_sum_partition(const std::vector<double>& part_ms, int count,
                                               double* sum_ms = nullptr);

/// The dynamic program of least_sum_partition kept for every subset: the
/// least sum over the partitions of each mask (+inf where none is finite)
/// and the part holding the mask's lowest element in it.
struct SubsetPartitions {
  std::vector<double> least_ms;
  std::vector<std::uint32_t> first_part;
  /// The parts of `mask`'s least-sum partition (empty when none is finite).
  std::vector<std::uint32_t> parts_of(std::uint32_t mask) const;
};
SubsetPartitions least_sum_partitions(const std::vector<double>& part_ms, int count);

/// The longest sequence and its longest peers in one micro-batch, the rest
/// packed into the others (sequence_scatter_split.cpp). Finalized; splits
/// that cannot beat `incumbent_ms` (a plan already known) are not packed,
/// so the result may be empty or slower than it.
ScatterPlan split_path(const Instance& instance, const std::vector<std::int64_t>& lengths,
                       Clock::time_point deadline, double incumbent_ms = kInfinity);

/// The slowest sequences packed apart into a few micro-batches, the rest
/// into the others (sequence_scatter_long_split.cpp). Finalized; time_ms =
/// +inf when nothing fits.
ScatterPlan long_split_path(const Instance& instance, const std::vector<std::int64_t>& lengths,
                            Clock::time_point deadline);

/// Ruin and recreate over pairs of micro-batches: their sequences packed
/// again into one or two micro-batches, kept when faster
/// (sequence_scatter_repack.cpp). Returns the better of `plan` and the result.
ScatterPlan repack_search(const Instance& instance, const std::vector<std::int64_t>& lengths,
                          const ScatterPlan& plan, Clock::time_point deadline);

/// One of the longest sequences into a larger group of another micro-batch,
/// short sequences of that group into the place it left, then the local
/// search; kept while the step time falls (sequence_scatter_eject.cpp).
/// At most `searches` local searches.
ScatterPlan eject_search(const Instance& instance, const std::vector<std::int64_t>& lengths,
                         const ScatterPlan& plan, int searches, Clock::time_point deadline);

/// Iterated ruin and recreate until `deadline`: random micro-batches packed
/// again, then the local search and re-batching; kept while the step time
/// falls (sequence_scatter_perturb.cpp). Returns the better of `plan` and
/// the result; the draws follow `seed`.
ScatterPlan perturb_search(const Instance& instance, const std::vector<std::int64_t>& lengths,
                           const ScatterPlan& plan, std::uint64_t seed, Clock::time_point deadline);

/// The plan's groups, unchanged, laid into micro-batches slowest first,
/// first-fit by width (sequence_scatter_rebatch.cpp). Returns the better of
/// `plan` and the result.
ScatterPlan rebatch_by_load(const Instance& instance, const std::vector<std::int64_t>& lengths,
                            const ScatterPlan& plan);

/// Moves single sequences between groups while the step time falls
/// (sequence_scatter_local.cpp). Returns the better of `plan` and the result.
ScatterPlan local_search(const Instance& instance, const std::vector<std::int64_t>& lengths,
                         const ScatterPlan& plan, Clock::time_point deadline);

/// The group-count LP bound (proof in sequence_scatter_group_lp.cpp); -inf
/// when the LP did not finish by `deadline`.
double group_lp_bound_ms(const Instance& instance, SolverBackend backend, Clock::time_point deadline);

/// The same with what a later refinement needs: the pinned sequence (-1:
/// none) and, per size it is pinned at (one entry when none), the LP's value
/// (+inf: infeasible there) and its relaxed number of micro-batches.
class GroupLp;
struct GroupLpBound {
  double bound_ms = -std::numeric_limits<double>::infinity();
  int pinned_sequence = -1;
  std::vector<double> value_ms;
  std::vector<double> micro_batches;
  /// The LP itself, solved again with whole micro-batch counts.
  std::shared_ptr<GroupLp> lp;
};
GroupLpBound group_lp_bound(const Instance& instance, SolverBackend backend, Clock::time_point deadline);

/// The group-count LP with the number of micro-batches fixed at the whole
/// numbers beside each relaxed optimum: at least relaxed.bound_ms.
double whole_micro_batch_bound_ms(const Instance& instance, SolverBackend backend, Clock::time_point deadline,
                                  const GroupLpBound& relaxed);

/// Knobs of the duration-level LP: how many of the slowest sequences are
/// items of their own, the length ratio within a bucket, and the grid of
/// level thresholds (ratio, span below the slowest time, merge tolerance).
struct LevelLpOptions {
  int single_sequences = 16;
  double bucket_ratio = 1.3;
  double grid_ratio = 1.15;
  double grid_span = 8;
  double merge_ratio = 0.01;
  /// Whole numbers of micro-batches per level (a MILP on the Y_k; the bound
  /// is then the solver's proven bound, whatever it stopped at).
  bool whole_counts = false;
  /// Groups held for their level's floor: per level and size, the groups'
  /// GPU-ms held H is at least their work and at least p theta_k per group,
  /// and the sizes' H sum to at most G D_k (a diagnosis: on bench step 17
  /// it raises the LP by 0.6 % of the step, in 20 s).
  bool memory_held = false;
};

/// The duration-level LP bound (proof in sequence_scatter_level_lp.cpp);
/// -inf when the LP did not finish by `deadline`.
double level_lp_bound_ms(const Instance& instance, SolverBackend backend, Clock::time_point deadline,
                         const LevelLpOptions& options = {});

struct MilpOutcome {
  bool ran = false;
  /// Why it did not run (when ran is false).
  std::string skipped;
  ScatterPlan plan;  ///< empty unless the MILP found a solution
  SolverCertificate certificate;
  /// Proven lower bound on every plan (ms), -inf when nothing was proven.
  double bound_ms = -std::numeric_limits<double>::infinity();
};

/// Number of integer variables the MILP of `instance` would have with
/// `micro_batches` micro-batches.
long long milp_integer_count(const Instance& instance, int micro_batches);

/// The FlexSP MILP over equal-length buckets with at most `micro_batches`
/// micro-batches, the incumbent's time as a cutoff; returns by `deadline`
/// (ran = false when no time was left to start it).
MilpOutcome milp_path(const Instance& instance, const std::vector<std::int64_t>& lengths,
                      const ScatterPlan& incumbent, double combinatorial_bound_ms, int micro_batches,
                      SolverBackend backend, Clock::time_point deadline);

/// solve() within what is left before `deadline`, the wait for the backend
/// included (sequence_scatter_solve.cpp); nullopt when nothing was left to
/// start it.
std::optional<SolveResult> solve_until(const MilpModel& model, SolverBackend backend, double relative_gap,
                                       Clock::time_point deadline);
/// The same for an LpSession's next solve (warm-started on CBC).
std::optional<SolveResult> solve_until(LpSession& session, double relative_gap, Clock::time_point deadline);

/// How crowded a sequence of `tokens` makes a group holding `capacity`
/// tokens: the number of t in {2, 3, 4} with tokens > capacity / t (at most
/// t - 1 such sequences share a group), -1 where it does not fit.
inline int crowd_level(double tokens, double capacity) {
  int level = 0;
  for (int t = 4; t >= 2; --t) level += tokens > capacity / t ? 1 : 0;
  return tokens > capacity ? -1 : level;
}

}  // namespace parplan::scatter_detail
