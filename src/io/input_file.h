// Reads a whole input file named on the command line. A directory, FIFO or
// device is refused before it is opened: a FIFO nobody writes would block
// the command forever, /dev/zero would never end.
#pragma once

#include <exception>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace parplan {

/// The bytes of `path`. `label` starts each error line (e.g. "--loads
/// x.json"); `expected` says what to give instead (e.g. "a JSON or CSV file").
std::string read_input_file(const std::string& path, const std::string& label, const std::string& expected);

/// InputError when `text` starts with a UTF-8 byte-order mark: a reader
/// that took it as part of the first field would misread that field (a CSV
/// row taken for a header, a length that is not a number).
void refuse_byte_order_mark(const std::string& text, const std::string& label);

/// `text` parsed as JSON, an InputError naming a key given twice in one
/// object (the parser alone keeps the last and drops the other silently).
/// Malformed JSON throws nlohmann::json::exception, for the caller to word.
nlohmann::json parse_json_unique_keys(const std::string& text, const std::string& label);

/// A JSON library exception as a message part: without nlohmann's
/// "[json.exception.parse_error.101] " prefix, keeping the line, column and
/// what was expected, with the text it last read escaped and cut
/// (src/io/printable_text.h).
std::string json_error_text(const std::exception& e);

}  // namespace parplan
