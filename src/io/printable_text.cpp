#include "src/io/printable_text.h"

#include <cstdio>

namespace parplan {

namespace {

// Length of the valid UTF-8 sequence starting at text[i] (2 to 4), or 0;
// C1 control characters count as invalid unless `allow_c1`.
std::size_t utf8_sequence(const std::string& text, std::size_t i, bool allow_c1 = false) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned int code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, code = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, code = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, code = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, UTF-16 surrogates and code points past U+10FFFF.
  if ((length == 3 && code < 0x800) || (length == 4 && (code < 0x10000 || code > 0x10FFFF)) ||
      (code >= 0xD800 && code <= 0xDFFF))
    return 0;
  // C1 control characters (U+0080..U+009F) act on some terminals too.
  if (!allow_c1 && code >= 0x80 && code <= 0x9F) return 0;
  return length;
}

std::string escaped_byte(unsigned char byte) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\x%02x", byte);
  return buffer;
}

}  // namespace

std::string printable_text(const std::string& text, std::size_t max_chars) {
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (shown == max_chars) return out + "...";
    const unsigned char byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += text[i++];
    } else if (const std::size_t length = byte >= 0x80 ? utf8_sequence(text, i) : 0; length > 0) {
      out += text.substr(i, length);
      i += length;
    } else {
      out += escaped_byte(byte);
      ++i;
    }
    ++shown;
  }
  return out;
}

std::string printable_line(const std::string& text) { return printable_text(text, std::string::npos); }

bool is_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
    } else if (const std::size_t length = utf8_sequence(text, i, true); length > 0) {
      i += length;
    } else {
      return false;
    }
  }
  return true;
}

std::string utf8_or_replacement(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      out += text[i++];
    } else if (const std::size_t length = utf8_sequence(text, i, true); length > 0) {
      out += text.substr(i, length);
      i += length;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    }
  }
  return out;
}

}  // namespace parplan
