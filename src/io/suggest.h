// "Did you mean ...?" for misspelt names in input files and flags.
#pragma once

#include <string>
#include <vector>

namespace parplan {

/// Levenshtein distance (insertions, deletions, substitutions).
std::size_t edit_distance(const std::string& a, const std::string& b);

/// "did you mean 'x'?" for a near miss (within two edits), else
/// "accepted fields: a, b, c" (`what` replaces "fields").
std::string suggest(const std::string& key, const std::vector<std::string>& known,
                    const std::string& what = "fields");

}  // namespace parplan
