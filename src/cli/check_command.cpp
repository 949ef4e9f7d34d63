// parplan check: a config against the optimum, for CI.
#include <iostream>

#include "src/cli/commands.h"

namespace parplan {

int run_check(const CheckFlags& flags) {
  (void)flags;
  std::cerr << "parplan: check is not implemented yet\n";
  return 2;
}

}  // namespace parplan
