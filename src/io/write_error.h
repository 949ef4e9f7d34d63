// WriteError: an output could not be written (disk full, no permission, a
// special file refused). Still exit 2 with one line, but callers that
// tolerate a refused input (a plan an engine rejects) must not swallow it.
#pragma once

#include <string>

#include "src/io/input_error.h"

namespace parplan {

class WriteError : public InputError {
 public:
  explicit WriteError(const std::string& message) : InputError(message) {}
};

}  // namespace parplan
