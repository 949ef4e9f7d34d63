// JSON written to stdout or a file. nlohmann::json refuses to serialise a
// string that is not UTF-8 (type_error 316); a run or file name can hold
// such bytes, so they are written as U+FFFD rather than failing the command.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace parplan {

/// `j` serialised (indent < 0: one line), invalid UTF-8 replaced by U+FFFD.
inline std::string json_text(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace parplan
