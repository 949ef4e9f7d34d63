#include "src/io/flow_row_matrix.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

namespace parplan {
namespace {

struct Line {
  std::size_t begin = 0, end = 0;  // [begin, end) without the newline or a '\r' before it
  std::size_t next = 0;            // where the next line starts
};

Line line_at(const std::string& text, std::size_t pos) {
  Line l;
  l.begin = pos;
  const std::size_t newline = text.find('\n', pos);
  l.next = newline == std::string::npos ? text.size() : newline + 1;
  l.end = newline == std::string::npos ? text.size() : newline;
  if (l.end > l.begin && text[l.end - 1] == '\r') --l.end;
  return l;
}

/// "  - [1, 2.5, 3e-2]" with `indent` leading spaces: the numbers, or
/// nullopt for anything else (another form, a token from_chars does not take
/// whole, a value that is not finite).
std::optional<std::vector<double>> flow_row(std::string_view line, std::size_t indent) {
  if (line.size() < indent + 4 || line.substr(0, indent).find_first_not_of(' ') != std::string_view::npos)
    return std::nullopt;
  std::string_view rest = line.substr(indent);
  if (rest.substr(0, 3) != "- [") return std::nullopt;
  const std::size_t close = rest.rfind(']');
  if (close == std::string_view::npos || rest.find_first_not_of(' ', close + 1) != std::string_view::npos)
    return std::nullopt;
  std::string_view body = rest.substr(3, close - 3);
  std::vector<double> values;
  while (true) {
    const std::size_t comma = body.find(',');
    std::string_view token = body.substr(0, comma);
    const std::size_t first = token.find_first_not_of(' ');
    if (first == std::string_view::npos) return std::nullopt;  // an empty entry
    token = token.substr(first, token.find_last_not_of(' ') - first + 1);
    double v = 0;
    const auto [stop, error] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (error != std::errc() || stop != token.data() + token.size() || !std::isfinite(v)) return std::nullopt;
    values.push_back(v);
    if (comma == std::string_view::npos) break;
    body = body.substr(comma + 1);
  }
  return values;
}

/// Whether the document is a block mapping from its first line of content
/// (no document marker, no flow mapping around everything).
bool block_mapping_document(const std::string& text) {
  for (std::size_t pos = 0; pos < text.size();) {
    const Line l = line_at(text, pos);
    const std::string_view line(text.data() + l.begin, l.end - l.begin);
    const std::size_t first = line.find_first_not_of(' ');
    if (first != std::string_view::npos && line[first] != '#')
      return first == 0 && (std::isalpha(static_cast<unsigned char>(line[0])) || line[0] == '_');
    pos = l.next;
  }
  return false;
}

}  // namespace

FlowRowExtraction extract_flow_row_matrices(const std::string& text, const std::vector<std::string>& keys) {
  FlowRowExtraction out;
  out.text = text;
  if (!block_mapping_document(text)) return out;
  for (const std::string& key : keys) {
    // The key at column 0, once: `key:` alone on its line.
    std::size_t key_line = std::string::npos;
    int at_column_zero = 0;
    for (std::size_t pos = 0; pos < out.text.size();) {
      const Line l = line_at(out.text, pos);
      const std::string_view line(out.text.data() + l.begin, l.end - l.begin);
      if (line.substr(0, key.size()) == key && line.size() > key.size() &&
          (line[key.size()] == ':' || line[key.size()] == ' ')) {
        ++at_column_zero;
        if (line.substr(key.size()).find_first_not_of(' ', 1) == std::string_view::npos &&
            line[key.size()] == ':')
          key_line = l.begin;
      }
      pos = l.next;
    }
    if (at_column_zero != 1 || key_line == std::string::npos) continue;
    const Line head = line_at(out.text, key_line);
    std::vector<std::vector<double>> rows;
    std::size_t pos = head.next, indent = 0;
    bool taken = true;
    while (pos < out.text.size()) {
      const Line l = line_at(out.text, pos);
      const std::string_view line(out.text.data() + l.begin, l.end - l.begin);
      if (!line.empty() && line[0] != ' ') break;  // the next key: the block ends
      if (rows.empty()) indent = line.find_first_not_of(' ');
      const auto row =
          indent == std::string_view::npos || indent == 0 ? std::nullopt : flow_row(line, indent);
      if (!row) {
        taken = false;  // blank, a comment, another form: all of it is the parser's
        break;
      }
      rows.push_back(*row);
      pos = l.next;
    }
    if (!taken || rows.empty()) continue;
    // The block's lines become `key: []` and empty lines, one per row.
    const bool last_line_ended = pos < out.text.size() || out.text.back() == '\n';
    std::string replacement = key + ": []";
    replacement.append(rows.size() + (last_line_ended ? 1 : 0), '\n');
    out.text.replace(key_line, pos - key_line, replacement);
    out.matrices[key] = std::move(rows);
  }
  return out;
}

}  // namespace parplan
