// "1 run", "2 runs": a count with its noun in the right number.
#pragma once

#include <string>

namespace parplan {

inline std::string counted(long long n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace parplan
