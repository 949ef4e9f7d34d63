// The solver tests' random generator: a xorshift whose numbers are the same
// on every standard library (std::uniform_int_distribution's are not), so a
// seed names the same random model everywhere.
#pragma once

#include <cstdint>

namespace parplan::test {

class XorshiftRng {
 public:
  explicit XorshiftRng(std::uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  std::uint64_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  /// Uniform integer in [lo, hi].
  int uniform(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  /// In [lo, hi], on a grid of about a million steps.
  double uniform_real(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() % 1000003) / 1000003.0;
  }

 private:
  std::uint64_t state_;
};

}  // namespace parplan::test
