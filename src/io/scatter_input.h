// Readers for `parplan scatter`: the steps' sequence lengths (text or JSON)
// and a coefficients JSON (FlexSP-style cost model, all times in ms).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/scatter_coefficients.h"

namespace parplan {

/// Longest sequence accepted, in tokens (a larger number is a typo or an
/// overflow, not a sequence).
inline constexpr std::int64_t kMaxSequenceTokens = 1'000'000'000;
/// Most sequences of one step: the plan search packs every sequence into
/// groups many times over, in time that grows with sequences x groups and
/// does not stop at --time-limit (8,192 take up to 4 s on one GPU group,
/// 16,384 took 8 s on 64 GPUs, 100,000 over a minute).
inline constexpr std::size_t kMaxSequencesPerStep = 8192;

/// One step per line, lengths separated by spaces, tabs or commas (blank
/// lines and lines starting with '#' are skipped); or, when the text starts
/// with '{', JSON {"steps": [[len, ...], ...]}. Throws InputError naming the
/// line/step and the field on an empty step, an empty comma-separated field
/// ("1,,2", a leading or trailing comma) or a length that is not a positive
/// decimal integer <= kMaxSequenceTokens.
std::vector<std::vector<std::int64_t>> parse_scatter_lengths(const std::string& text,
                                                             const std::string& origin);
std::vector<std::vector<std::int64_t>> load_scatter_lengths(const std::string& path);

/// {"quadratic_ms": a, "linear_ms": b, "fixed_ms": d,
///  "alltoall_ms_per_token": {"2": c2, ...}, "token_capacity_per_gpu": K,
///  "group_sizes": [1, 2, 4, ...]}; c_1 may be omitted (0). Throws InputError
/// on a missing or unknown field or a bad number. A non-empty
/// `sizes_override` (--group-sizes) replaces group_sizes.
ScatterCoefficients parse_scatter_coefficients(const std::string& text, const std::string& origin,
                                               const std::vector<int>& sizes_override = {});
ScatterCoefficients load_scatter_coefficients(const std::string& path,
                                              const std::vector<int>& sizes_override = {});

/// "2,4,8" -> {2, 4, 8} (ascending, as given); throws InputError naming
/// `flag` on anything but positive decimal integers.
std::vector<int> parse_group_sizes(const std::string& text, const std::string& flag);

}  // namespace parplan
