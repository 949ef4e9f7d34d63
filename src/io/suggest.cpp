#include "src/io/suggest.h"

#include <algorithm>

namespace parplan {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string suggest(const std::string& key, const std::vector<std::string>& known, const std::string& what) {
  std::string best;
  std::size_t best_distance = 3;  // suggest only within two edits
  for (const auto& k : known) {
    const std::size_t d = edit_distance(key, k);
    if (d < best_distance) {
      best_distance = d;
      best = k;
    }
  }
  if (!best.empty()) return "did you mean '" + best + "'?";
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return "accepted " + what + ": " + list;
}

}  // namespace parplan
