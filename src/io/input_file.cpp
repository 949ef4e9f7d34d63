#include "src/io/input_file.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/printable_text.h"

namespace parplan {

std::string read_input_file(const std::string& path, const std::string& label, const std::string& expected) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found)
    throw InputError(label + ": no such file; check the path");
  if (!ec && status.type() != std::filesystem::file_type::regular)
    throw InputError(label + ": is not a regular file (a directory, FIFO or device); give " + expected);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) throw InputError(label + ": cannot open the file; check the path and its permissions");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(label + ": cannot read the file");
  return text.str();
}

void refuse_byte_order_mark(const std::string& text, const std::string& label) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0)
    throw InputError(label + ": the file starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM");
}

nlohmann::json parse_json_unique_keys(const std::string& text, const std::string& label) {
  // Per object being read: its keys so far and the latest (the name of a
  // nested object, for the message).
  std::vector<std::pair<std::set<std::string>, std::string>> open;
  const auto on_event = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    // Quoting a value nested thousands deep back would overflow the stack.
    if ((event == nlohmann::json::parse_event_t::object_start ||
         event == nlohmann::json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth)
      throw InputError(label + ": values are nested more than " + std::to_string(kMaxJsonDepth) +
                       " levels deep; no input of parplan's nests so far");
    if (event == nlohmann::json::parse_event_t::object_start) {
      open.emplace_back();
    } else if (event == nlohmann::json::parse_event_t::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (event == nlohmann::json::parse_event_t::key && !open.empty()) {
      const std::string key = parsed.get<std::string>();
      if (!open.back().first.insert(key).second) {
        const std::string within =
            open.size() > 1 ? " in \"" + open[open.size() - 2].second + "\"" : std::string();
        throw InputError(label + ": key \"" + key + "\" appears twice" + within + "; keep one");
      }
      open.back().second = key;
    }
    return true;
  };
  return nlohmann::json::parse(text, on_event);
}

std::string json_error_text(const std::exception& e) {
  std::string what = e.what();
  if (what.rfind("[json.exception.", 0) == 0) {
    const auto close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
  }
  // "...; last read: 'TOKEN'" or "...; last read: 'TOKEN'; expected ...":
  // the token is the input's own bytes.
  const std::string marker = "last read: '";
  const auto start = what.find(marker);
  if (start == std::string::npos) return printable_text(what, std::string::npos);
  const auto from = start + marker.size();
  auto end = what.find("'; expected", from);
  if (end == std::string::npos)
    end = what.size() > from && what.back() == '\'' ? what.size() - 1 : what.size();
  return printable_text(what.substr(0, from), std::string::npos) +
         printable_text(what.substr(from, end - from)) + printable_text(what.substr(end), std::string::npos);
}

}  // namespace parplan
