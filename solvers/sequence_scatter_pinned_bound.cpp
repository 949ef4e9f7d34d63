// The pinned micro-batch bound of sequence scattering. Proof of validity:
// take any plan and one sequence i in it, at size p_j in micro-batch 1 with
// r other micro-batches (T_m: micro-batch times, d: fixed_ms, e*_s: the
// cheapest GPU-ms of sequence s, E = sum_s e*_s, w_j(s): its time at p_j).
//  - Its group runs i and the set S2 of sequences sharing it one after
//    another: T_1 - d >= w_j(i) + sum_S2 w_j(s).
//  - The other sequences of micro-batch 1 (set S1) run on the G - p_j other
//    GPUs: at most (G - p_j) K tokens, only sequences whose smallest size
//    fits there; sum_S1 e*_s <= X1, the fractional knapsack of the densest
//    (e*_s per token) such sequences.
//  - The other micro-batches hold the rest: sum_{m>1} (T_m - d) >=
//    (E - e*_i - sum_S1 e*_s - sum_S2 e*_s) / G, and at most r G K tokens,
//    so S2 holds at least need2(r) = tokens - s_i - r G K - (G - p_j) K.
//  - For s in S2, w_j(s) - e*_s / G = rho_j(s) s with rho_j(s) >= 0 (as
//    e*_s <= p_j w_j(s)); S2 is a set of other sequences, each within the
//    group's spare room, of at least need2 tokens, so the sum is at least
//    the fractional fill of need2 tokens from the least rho_j(s) up (i
//    itself, long, often has the least).
// Summing: step >= (1 + r) d + w_j(i) + (E - e*_i - X1) / G + fill(need2(r)).
// Also step >= (1 + r) d + (p_j w_j(i) + E - e*_i) / G (all work over G).
// The least over j and r of the larger of the two bounds every plan; any i
// may be pinned, so the largest over the sequences tried is a bound. It sees
// what a fluid bound misses: a long sequence's micro-batch lasts its time,
// and the other GPUs there can hold only K tokens each to fill it.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

// Sequences pinned in turn: the slowest ones (only a sequence whose own time
// is a large share of the step gains; the cost is O(n) per size each).
constexpr int kPinnedSequences = 8;

}  // namespace

std::vector<int> slowest_sequences(const Instance& in, int count) {
  std::vector<int> order(in.num_sequences());
  std::iota(order.begin(), order.end(), 0);
  const int tried = std::min(in.num_sequences(), count);
  std::partial_sort(order.begin(), order.begin() + tried, order.end(),
                    [&](int x, int y) { return in.fastest_ms[x] > in.fastest_ms[y]; });
  order.resize(tried);
  return order;
}

MateRates::MateRates(const Instance& in) : in_(in), by_rate_(in.num_sizes) {
  for (int s = 0; s < in.num_sequences(); ++s) {
    for (int j = 0; j < in.num_sizes; ++j) {
      const double w = in.work(s, j);
      if (std::isfinite(w))
        by_rate_[j].push_back({std::max(0.0, (w - in.cheapest_gpu_ms[s] / in.gpus) / in.tokens[s]), s});
    }
  }
  for (auto& list : by_rate_) std::sort(list.begin(), list.end());
}

double MateRates::fill(int j, double need, double spare, int a, int b) const {
  double cost = 0;
  for (const auto& [rate, s] : by_rate_[j]) {
    if (need <= 0) break;
    if (s == a || s == b || in_.tokens[s] > spare) continue;
    const double take = std::min(need, in_.tokens[s]);
    cost += rate * take;
    need -= take;
  }
  return need > 0 ? kInfinity : cost;
}

double MateRates::fill_two(int ja, double spare_a, int jb, double spare_b, double need, int a, int b) const {
  // Both rooms' lists merged by rate, each list taking at most its room:
  // for the fractional fill with a cap per list, the cheapest first is
  // optimal. A sequence may be taken from both lists (a relaxation).
  const auto& la = by_rate_[ja];
  const auto& lb = by_rate_[jb];
  size_t ia = 0, ib = 0;
  double room_a = spare_a, room_b = spare_b, cost = 0;
  const auto usable = [&](const std::pair<double, int>& e, double spare) {
    return e.second != a && e.second != b && in_.tokens[e.second] <= spare;
  };
  while (need > 0) {
    while (ia < la.size() && (room_a <= 0 || !usable(la[ia], spare_a))) ++ia;
    while (ib < lb.size() && (room_b <= 0 || !usable(lb[ib], spare_b))) ++ib;
    const bool from_a = ia < la.size() && (ib >= lb.size() || la[ia].first <= lb[ib].first);
    if (!from_a && ib >= lb.size()) break;
    const auto& e = from_a ? la[ia++] : lb[ib++];
    double& room = from_a ? room_a : room_b;
    const double take = std::min({need, in_.tokens[e.second], room});
    cost += e.first * take;
    need -= take;
    room -= take;
  }
  return need > 0 ? kInfinity : cost;
}

double pinned_micro_batch_bound_ms(const Instance& in) {
  const int n = in.num_sequences();
  if (n == 0) return 0;
  const ScatterCoefficients& c = *in.coefficients;
  const double g = in.gpus;
  const double k = c.token_capacity_per_gpu;
  const double d = c.fixed_ms;
  const double tokens = std::accumulate(in.tokens.begin(), in.tokens.end(), 0.0);
  const double e_total = std::accumulate(in.cheapest_gpu_ms.begin(), in.cheapest_gpu_ms.end(), 0.0);

  std::vector<int> smallest_size(n, in.gpus + 1);
  for (int s = 0; s < n; ++s) {
    for (int j = in.num_sizes - 1; j >= 0; --j)
      if (std::isfinite(in.work(s, j))) smallest_size[s] = std::min(smallest_size[s], in.size[j]);
  }
  const MateRates mates(in);
  std::vector<int> densest(n);
  std::iota(densest.begin(), densest.end(), 0);
  std::sort(densest.begin(), densest.end(), [&](int x, int y) {
    return in.cheapest_gpu_ms[x] * in.tokens[y] > in.cheapest_gpu_ms[y] * in.tokens[x];
  });
  const std::vector<int> slowest = slowest_sequences(in, kPinnedSequences);
  const int tried = static_cast<int>(slowest.size());

  double best = 0;
  for (int t = 0; t < tried; ++t) {
    const int i = slowest[t];
    const double rest_tokens = tokens - in.tokens[i];
    const double rest_e = e_total - in.cheapest_gpu_ms[i];
    double least = kInfinity;
    for (int j = 0; j < in.num_sizes; ++j) {
      const double w = in.work(i, j);
      if (!std::isfinite(w)) continue;
      const int free_gpus = in.gpus - in.size[j];
      // X1: the densest sequences that fit on the free GPUs, fractionally.
      double room = free_gpus * k;
      double x1 = 0;
      for (int s : densest) {
        if (room <= 0) break;
        if (s == i || smallest_size[s] > free_gpus) continue;
        const double take = std::min(room, in.tokens[s]);
        x1 += in.cheapest_gpu_ms[s] * take / in.tokens[s];
        room -= take;
      }
      const double all_work = (in.size[j] * w + rest_e) / g;
      const double spare = in.capacity_tokens[j] - in.tokens[i];
      const double outside = rest_tokens - free_gpus * k;  // tokens beyond micro-batch 1's free GPUs
      const double r_min = std::max(0.0, std::ceil((outside - spare) / (g * k) - 1e-9));
      const double r_max = std::max(r_min, std::ceil(outside / (g * k) - 1e-9));
      for (double r = r_min; r <= r_max; r += 1) {
        const double need2 = std::max(0.0, outside - r * g * k);
        if (need2 > spare * (1 + 1e-12)) continue;
        const double own = w + (rest_e - x1) / g + mates.fill(j, need2, spare, i);
        least = std::min(least, (1 + r) * d + std::max(own, all_work));
      }
    }
    if (std::isfinite(least)) best = std::max(best, least);
  }
  return best * (1 - 1e-12);
}

}  // namespace parplan::scatter_detail
