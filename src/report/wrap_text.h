// Long lines of the readable tables (plan notes, a sweep row's reason)
// wrapped at word boundaries, so a terminal shows them whole.
#pragma once

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>

namespace parplan {

/// Characters of UTF-8 text (continuation bytes, 10xxxxxx, start none).
inline std::size_t utf8_chars(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

/// `text`'s words in lines of at most `width` columns: the first line starts
/// at column `first_column` (what precedes it is already printed), the others
/// after `indent` spaces. A word longer than a line stays whole.
inline std::string wrapped_words(const std::string& text, std::size_t first_column, std::size_t indent,
                                 std::size_t width) {
  std::string out, line;
  std::size_t column = first_column;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (!line.empty() && column + utf8_chars(line) + 1 + utf8_chars(word) > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
      column = indent;
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

}  // namespace parplan
