// Input text quoted back in an error line: bytes a terminal would act on
// (control characters, escape sequences) or could not show (invalid UTF-8)
// are written as \xNN, and a long excerpt is cut, so that a binary file
// given by mistake yields one short, readable line.
#pragma once

#include <cstddef>
#include <string>

namespace parplan {

/// Excerpts quoted in messages keep at most this many characters.
inline constexpr std::size_t kExcerptChars = 40;

/// `text` with every byte below 0x20, 0x7f and each byte of an invalid
/// UTF-8 sequence written as \xNN; valid UTF-8 (é, ×) is kept. When more
/// than `max_chars` characters would be shown, the first ones are kept and
/// "..." follows.
std::string printable_text(const std::string& text, std::size_t max_chars = kExcerptChars);

/// The same without a length cap (for a whole message line).
std::string printable_line(const std::string& text);

/// Whether `text` is valid UTF-8 (what JSON output and SVG text require).
bool is_utf8(const std::string& text);

/// `text` with each byte of an invalid UTF-8 sequence replaced by U+FFFD,
/// for output that must be valid UTF-8 whatever a file name held.
std::string utf8_or_replacement(const std::string& text);

}  // namespace parplan
