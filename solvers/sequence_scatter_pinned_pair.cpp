// The pinned-pair bound of sequence scattering: the pinned micro-batch bound
// (sequence_scatter_pinned_bound.cpp) with two sequences pinned at once.
// Proof of validity: take any plan and two sequences a, b in it, at sizes
// p_a, p_b (their groups' sizes), with times w_a, w_b there (without d),
// e*_s the cheapest GPU-ms of sequence s, E = sum_s e*_s, K the tokens a
// GPU holds, rest = tokens - s_a - s_b. Every plan is in one of three
// arrangements:
//  - Same micro-batch, separate groups (p_a + p_b <= G). Let x be the one
//    of a, b with the longer time, y the other. x's group runs x and the
//    set S_x sharing it: T_1 - d >= w_x + sum_S_x w_x(s). The rest of
//    micro-batch 1 is S_y (y's group, at most spare_y = p_y K - s_y tokens)
//    and S_1 (the f = G - p_a - p_b other GPUs, at most f K tokens); the r
//    other micro-batches last at least their sequences' e* / G and hold at
//    most r G K tokens. So, as in the one-pin proof,
//      step >= (1 + r) d + w_x + (E - e*_a - e*_b - X) / G + fill_x(need),
//    X the fractional knapsack of the densest f K + spare_y tokens of e*
//    among the sequences whose smallest size is at most max(f, p_y) (a
//    superset of S_1 and S_y), need = rest - f K - spare_y - r G K (S_x
//    holds at least that, at most spare_x), fill_x the least sum of
//    (w_x(s) - e*_s / G) (>= 0) over need tokens of sequences other than a
//    and b, each within spare_x, at x's size: the fractional fill from the
//    least rate per token up (MateRates).
//  - Same group of size p (s_a + s_b <= p K): T_1 - d >= w_a + w_b plus its
//    other sequences' times; as above with f = G - p and spare_y = 0.
//  - Different micro-batches 1 and 2, q others: both last their own time,
//      step >= (2 + q) d + w_a + w_b + (E - e*_a - e*_b - X) / G
//              + fill_a(t_a) + fill_b(t_b),
//    X over (G - p_a + G - p_b) K tokens, t_a + t_b >= rest - (2 G - p_a -
//    p_b) K - q G K, t_a <= spare_a, t_b <= spare_b: at least the fill of
//    t_a + t_b tokens from both lists merged by rate, each list within its
//    room (a sequence allowed in both, a relaxation).
// In every arrangement also step >= (micro-batches) d + (p_a w_a + p_b w_b
// + E - e*_a - e*_b) / G: every group's GPU-ms average to at most its
// micro-batch's time. The least over sizes, arrangements and micro-batch
// counts of the larger of the two bounds every plan; every pair tried is a
// bound, so the largest is stated. It sees what one pin misses: two long
// sequences that both shorten their micro-batches only on large groups,
// where their GPU-ms grow (FlexSP's wikipedia batches with a 70K and a 51K
// sequence: 4 206 -> 4 500 ms against a 4 511 ms plan).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

// Pairs among the slowest sequences (a pair gains only where both are a
// large share of a micro-batch); 15 pairs, each O(sizes^2) lookups.
constexpr int kPairSequences = 6;

/// The densest sequences (e* per token) whose smallest size is at most a
/// given GPU count, as prefix sums: the fractional knapsack of any token
/// room without the two pinned sequences in O(log n).
class DensestPrefix {
 public:
  DensestPrefix(const Instance& in, const std::vector<int>& smallest_size) : in_(in) {
    const int n = in.num_sequences();
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), 0);
    std::sort(order_.begin(), order_.end(), [&](int x, int y) {
      return in.cheapest_gpu_ms[x] * in.tokens[y] > in.cheapest_gpu_ms[y] * in.tokens[x];
    });
    rank_.resize(n);
    for (int r = 0; r < n; ++r) rank_[order_[r]] = r;
    // Class c: smallest size <= size[c - 1] (class 0: none).
    classes_.resize(in.num_sizes + 1);
    for (int c = 1; c <= in.num_sizes; ++c) {
      Prefix& p = classes_[c];
      p.tokens.push_back(0);
      p.gpu_ms.push_back(0);
      p.index.assign(n, -1);
      for (int s : order_) {
        if (smallest_size[s] > in.size[c - 1]) continue;
        p.index[s] = static_cast<int>(p.tokens.size()) - 1;
        p.tokens.push_back(p.tokens.back() + in.tokens[s]);
        p.gpu_ms.push_back(p.gpu_ms.back() + in.cheapest_gpu_ms[s]);
      }
    }
  }

  /// Most e* the sequences fitting on `gpus` GPUs, a and b left out, put
  /// into `room` tokens. Leaving an item out of the densest-first walk is
  /// the walk with its tokens added to the room and its e* taken off, when
  /// the walk reaches it.
  double take(int gpus, double room, int a, int b) const {
    int c = 0;
    while (c < in_.num_sizes && in_.size[c] <= gpus) ++c;
    if (c == 0 || room <= 0) return 0;
    const Prefix& p = classes_[c];
    if (rank_[b] < rank_[a]) std::swap(a, b);
    double minus = 0;
    for (int item : {a, b}) {
      const int at = p.index[item];
      if (at < 0 || p.tokens[at] >= room) continue;
      room += in_.tokens[item];
      minus += in_.cheapest_gpu_ms[item];
    }
    const auto full = std::upper_bound(p.tokens.begin(), p.tokens.end(), room) - p.tokens.begin() - 1;
    if (full + 1 >= static_cast<long>(p.tokens.size())) return p.gpu_ms.back() - minus;
    const double part = (room - p.tokens[full]) / (p.tokens[full + 1] - p.tokens[full]);
    return p.gpu_ms[full] + part * (p.gpu_ms[full + 1] - p.gpu_ms[full]) - minus;
  }

 private:
  struct Prefix {
    std::vector<double> tokens, gpu_ms;
    std::vector<int> index;  ///< per sequence, its place in this class (-1: not in it)
  };
  const Instance& in_;
  std::vector<int> order_, rank_;
  std::vector<Prefix> classes_;
};

/// Per size, the three largest e*_s / (p w(s)) over the sequences that fit
/// there: a GPU-ms of a group of that size holds at most that much cheapest
/// GPU-ms of any sequence but those three (a pinned pair leaves itself out).
struct KappaTop {
  double ratio[3] = {0, 0, 0};
  int sequence[3] = {-1, -1, -1};
  void add(double r, int s) {
    for (int t = 0; t < 3; ++t) {
      if (r <= ratio[t]) continue;
      for (int u = 2; u > t; --u) ratio[u] = ratio[u - 1], sequence[u] = sequence[u - 1];
      ratio[t] = r, sequence[t] = s;
      return;
    }
  }
  double without(int a, int b) const {
    for (int t = 0; t < 3; ++t)
      if (sequence[t] != a && sequence[t] != b) return ratio[t];
    return 0;
  }
};

struct PairContext {
  const Instance& in;
  const DensestPrefix& densest;
  const MateRates& mates;
  const std::vector<KappaTop>& kappa;
  double g, k, d, tokens, e_total;
};

/// One pinned sequence of the pair at size index j.
struct Pin {
  int j;
  double tokens, w, p, e, spare, kappa;
};

/// The least over micro-batch counts (1 + r, r >= 0 others) of the larger of
/// the own-time and all-work bounds, given what the pinned micro-batch(es)
/// leave (see the header). `held` = tokens the pinned micro-batches' free
/// GPUs and the non-binding pin's group may hold; `own` = d-free time of the
/// pinned micro-batches plus the unplaced GPU-ms over G; the need beyond
/// `held` (at most `spare` tokens) shares the pinned groups, at the cost
/// `mates(need)` (MateRates: the other sequences' least rates up).
template <typename Mates>
double least_over_counts(const PairContext& x, int pinned_micro_batches, double held, double own,
                         double all_work, double spare, const Mates& mates) {
  const double rest = x.tokens - held;
  double least = kInfinity;
  const double r_min = std::max(0.0, std::ceil((rest - spare) / (x.g * x.k) - 1e-9));
  const double r_max = std::max(r_min, std::ceil(rest / (x.g * x.k) - 1e-9));
  for (double r = r_min; r <= r_max; r += 1) {
    const double need = std::max(0.0, rest - r * x.g * x.k);
    if (need > spare * (1 + 1e-12)) continue;
    const double filled = own + mates(need);
    least = std::min(least, (pinned_micro_batches + r) * x.d + std::max(filled, all_work));
  }
  return least;
}

/// The pair's bound, and in `cap_ms` the time of the slower pin where the
/// least arrangement puts both in one micro-batch (0 otherwise).
double pair_bound_ms(const PairContext& x, int a, int b, double& cap_ms) {
  cap_ms = 0;
  const Instance& in = x.in;
  const double g = x.g, k = x.k;
  const double pinned_tokens = in.tokens[a] + in.tokens[b];
  const double rest_e = x.e_total - in.cheapest_gpu_ms[a] - in.cheapest_gpu_ms[b];
  const auto pin = [&](int i, int j) {
    return Pin{j,
               in.tokens[i],
               in.work(i, j),
               static_cast<double>(in.size[j]),
               in.cheapest_gpu_ms[i],
               in.capacity_tokens[j] - in.tokens[i],
               x.kappa[j].without(a, b)};
  };
  // Most cheapest GPU-ms f free GPUs hold within tau: their time, and the
  // densest f K tokens of the sequences that fit on them.
  const auto free_gpus_hold = [&](int f, double tau) {
    return std::min(f * tau, x.densest.take(f, f * k, a, b));
  };
  double least = kInfinity;
  for (int ja = 0; ja < in.num_sizes; ++ja) {
    if (!std::isfinite(in.work(a, ja))) continue;
    for (int jb = 0; jb < in.num_sizes; ++jb) {
      if (!std::isfinite(in.work(b, jb))) continue;
      const Pin pa = pin(a, ja), pb = pin(b, jb);
      const double all_work = (pa.p * pa.w + pb.p * pb.w + rest_e) / g;
      // Same micro-batch, separate groups: x the slower, y the other.
      if (pa.p + pb.p <= g) {
        const Pin& px = pa.w >= pb.w ? pa : pb;
        const Pin& py = pa.w >= pb.w ? pb : pa;
        const int f = static_cast<int>(g - pa.p - pb.p);
        const double room = f * k + py.spare;
        const double xe = x.densest.take(std::max(f, static_cast<int>(py.p)), room, a, b);
        const double own = px.w + (rest_e - xe) / g;
        // The micro-batch lasts px.w at least: its free GPUs, and y's group
        // for the time y leaves, hold at most this much of the rest.
        const double y_time = py.kappa * py.p * (px.w - py.w);
        const double held_e =
            std::min(free_gpus_hold(f, px.w) +
                         std::min(y_time, x.densest.take(static_cast<int>(py.p), py.spare, a, b)),
                     xe);
        const double floor = std::max(all_work, px.w + (rest_e - held_e) / g);
        const double same =
            least_over_counts(x, 1, pinned_tokens + room, own, floor, px.spare,
                              [&](double need) { return x.mates.fill(px.j, need, px.spare, a, b); });
        if (same < least) least = same, cap_ms = px.w;
      }
      // One group of both.
      if (ja == jb && pinned_tokens <= in.capacity_tokens[ja]) {
        const int f = static_cast<int>(g - pa.p);
        const double xe = x.densest.take(f, f * k, a, b);
        const double own = pa.w + pb.w + (rest_e - xe) / g;
        const double shared_all = std::max((pa.p * (pa.w + pb.w) + rest_e) / g,
                                           pa.w + pb.w + (rest_e - free_gpus_hold(f, pa.w + pb.w)) / g);
        const double shared_spare = in.capacity_tokens[ja] - pinned_tokens;
        const double shared =
            least_over_counts(x, 1, pinned_tokens + f * k, own, shared_all, shared_spare,
                              [&](double need) { return x.mates.fill(ja, need, shared_spare, a, b); });
        if (shared < least) least = shared, cap_ms = pa.w + pb.w;
      }
      // Different micro-batches.
      {
        const int fa = static_cast<int>(g - pa.p), fb = static_cast<int>(g - pb.p);
        const double room = (fa + fb) * k;
        const double xe = x.densest.take(std::max(fa, fb), room, a, b);
        const double own = pa.w + pb.w + (rest_e - xe) / g;
        const double held_e = std::min(free_gpus_hold(fa, pa.w) + free_gpus_hold(fb, pb.w), xe);
        const double floor = std::max(all_work, pa.w + pb.w + (rest_e - held_e) / g);
        const double apart = least_over_counts(
            x, 2, pinned_tokens + room, own, floor, pa.spare + pb.spare,
            [&](double need) { return x.mates.fill_two(pa.j, pa.spare, pb.j, pb.spare, need, a, b); });
        if (apart < least) least = apart, cap_ms = 0;
      }
    }
  }
  return least;
}

}  // namespace

double pinned_pair_bound_ms(const Instance& in, double* suggested_cap_ms) {
  if (suggested_cap_ms != nullptr) *suggested_cap_ms = 0;
  const int n = in.num_sequences();
  if (n < 2) return 0;
  const ScatterCoefficients& c = *in.coefficients;
  std::vector<int> smallest_size(n, in.gpus + 1);
  const MateRates mates(in);
  std::vector<KappaTop> kappa(in.num_sizes);
  for (int s = 0; s < n; ++s) {
    for (int j = 0; j < in.num_sizes; ++j) {
      const double w = in.work(s, j);
      if (!std::isfinite(w)) continue;
      smallest_size[s] = std::min(smallest_size[s], in.size[j]);
      if (w > 0) kappa[j].add(std::min(1.0, in.cheapest_gpu_ms[s] / (in.size[j] * w)), s);
    }
  }
  const DensestPrefix densest(in, smallest_size);
  const PairContext x{in,
                      densest,
                      mates,
                      kappa,
                      static_cast<double>(in.gpus),
                      c.token_capacity_per_gpu,
                      c.fixed_ms,
                      std::accumulate(in.tokens.begin(), in.tokens.end(), 0.0),
                      std::accumulate(in.cheapest_gpu_ms.begin(), in.cheapest_gpu_ms.end(), 0.0)};
  const std::vector<int> slowest = slowest_sequences(in, kPairSequences);
  const int tried = static_cast<int>(slowest.size());
  double best = 0;
  for (int u = 0; u < tried; ++u)
    for (int v = u + 1; v < tried; ++v) {
      double cap_ms = 0;
      const double bound = pair_bound_ms(x, slowest[u], slowest[v], cap_ms);
      if (!std::isfinite(bound) || bound <= best) continue;
      best = bound;
      if (suggested_cap_ms != nullptr) *suggested_cap_ms = cap_ms;
    }
  return best * (1 - 1e-12);
}

}  // namespace parplan::scatter_detail
