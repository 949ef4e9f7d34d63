// SkipPipe's convergence rules for one micro-batch's path (Blagoev et al.
// 2025, and the A* of gensyn-ai/skippipe): which stage orders are allowed.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace parplan {

/// Swaps a path may make (SkipPipe's bound).
inline constexpr int kSkipMaxSwaps = 2;

/// Empty when `stages` (stage of each visited node, forward order) obeys the
/// rules: starts at stage 0, `path_length` distinct stages below `num_stages`,
/// each step either goes above every stage reached so far or, at most
/// kSkipMaxSwaps times, to the one stage just below that furthest stage (a swap
/// of s+1 and s). Otherwise one sentence naming the broken rule.
std::string stage_sequence_violation(std::span<const int> stages, int num_stages, int path_length);

/// Every stage sequence the rules allow, in lexicographic order.
std::vector<std::vector<int>> valid_stage_sequences(int num_stages, int path_length);

}  // namespace parplan
