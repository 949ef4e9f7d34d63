// Training logs are read up to their last newline.
#pragma once

#include <string>

namespace parplan {

/// `text` without an unterminated last line: a log still being written (or
/// cut short by a full disk) ends mid-line, and the "29" of
/// "elapsed time per iteration (ms): 2929.4" read as a time would be wrong.
inline std::string complete_lines(const std::string& text) {
  if (text.empty() || text.back() == '\n') return text;
  const std::size_t last = text.find_last_of('\n');
  return last == std::string::npos ? std::string() : text.substr(0, last + 1);
}

}  // namespace parplan
