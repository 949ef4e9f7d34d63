// InputError: bad user input (file, name, flag). The CLI prints what() as one
// line on stderr and exits 2. The message names the field and what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace parplan {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace parplan
