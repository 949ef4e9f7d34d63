#include "src/report/xml_text.h"

#include <string>

#include "src/io/printable_text.h"

namespace parplan {

std::string xml_escape(const std::string& text) {
  std::string out;
  // A name taken from a file may hold bytes that are not UTF-8, which no XML
  // parser accepts.
  for (char ch : utf8_or_replacement(text)) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\t' || ch == '\n') out += ch;
    }
  }
  return out;
}

std::string svg_open(int width, int height) {
  const std::string w = std::to_string(width), h = std::to_string(height);
  // The viewBox lets the picture scale where a page embeds it smaller.
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " +
         w + " " + h + "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"" + w +
         "\" height=\"" + h + "\" fill=\"white\"/>\n";
}

std::string shortened_text(const std::string& text, std::size_t max_chars) {
  // Characters, not bytes: a UTF-8 continuation byte (10xxxxxx) starts none.
  std::size_t chars = 0, cut = std::string::npos;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars + 1 == max_chars) cut = i;
    if (++chars > max_chars) return text.substr(0, cut) + "\u2026";
  }
  return text;
}

}  // namespace parplan
