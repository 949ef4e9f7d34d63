// Convergence rules of SkipPipe paths, checked and enumerated.
#include "solvers/skip_path_rules.h"

#include <functional>

namespace parplan {

std::string stage_sequence_violation(std::span<const int> stages, int num_stages, int path_length) {
  if (static_cast<int>(stages.size()) != path_length) {
    return "the path visits " + std::to_string(stages.size()) + " stages, not path_length " +
           std::to_string(path_length);
  }
  if (stages.empty() || stages[0] != 0) return "the path does not start at stage 0";
  std::vector<bool> seen(num_stages, false);
  seen[0] = true;
  int frontier = 0;
  int swaps = 0;
  for (std::size_t i = 1; i < stages.size(); ++i) {
    const int s = stages[i];
    if (s < 0 || s >= num_stages) return "stage " + std::to_string(s) + " does not exist";
    if (seen[s]) return "the path visits stage " + std::to_string(s) + " twice";
    seen[s] = true;
    if (s > frontier) {
      frontier = s;
      continue;
    }
    if (s != frontier - 1 || stages[i - 1] != frontier) {
      return "stage " + std::to_string(s) + " comes after stage " + std::to_string(frontier) +
             " was reached: only the stage just below the furthest one may follow it (a swap)";
    }
    if (++swaps > kSkipMaxSwaps)
      return "the path makes more than " + std::to_string(kSkipMaxSwaps) + " swaps";
  }
  return {};
}

std::vector<std::vector<int>> valid_stage_sequences(int num_stages, int path_length) {
  std::vector<std::vector<int>> out;
  if (path_length < 1 || path_length > num_stages) return out;
  std::vector<int> seq{0};
  std::vector<bool> seen(num_stages, false);
  seen[0] = true;
  std::function<void(int, int)> extend = [&](int frontier, int swaps) {
    if (static_cast<int>(seq.size()) == path_length) {
      out.push_back(seq);
      return;
    }
    for (int s = 1; s < num_stages; ++s) {
      if (seen[s]) continue;
      const bool advance = s > frontier;
      const bool swap = s == frontier - 1 && seq.back() == frontier && swaps < kSkipMaxSwaps;
      if (!advance && !swap) continue;
      seen[s] = true;
      seq.push_back(s);
      extend(advance ? s : frontier, swaps + (advance ? 0 : 1));
      seq.pop_back();
      seen[s] = false;
    }
  };
  extend(0, 0);
  return out;
}

}  // namespace parplan
