// "1 run", "2 runs": a count with its noun in the right number.
#pragma once

#include <string>

namespace parplan {

inline std::string counted(long long n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

/// A noun whose plural is not noun + "s" ("1 micro-batch", "2 micro-batches").
inline std::string counted(long long n, const std::string& noun, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? noun : plural);
}

}  // namespace parplan
