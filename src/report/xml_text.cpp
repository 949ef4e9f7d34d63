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
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
         std::to_string(height) +
         "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
         "fill=\"white\"/>\n";
}

}  // namespace parplan
