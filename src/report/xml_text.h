// Text and attribute values of the SVG pictures (sweep plots, pipeline
// timelines), escaped for XML 1.0.
#pragma once

#include <cstddef>
#include <string>

namespace parplan {

/// The five predefined entities escaped; control characters other than tab
/// and newline, which XML 1.0 does not allow, left out; bytes of invalid
/// UTF-8 written as U+FFFD.
std::string xml_escape(const std::string& text);

/// The opening <svg> tag of a picture `width` x `height` pixels (sans-serif,
/// 11 px text) and its white background.
std::string svg_open(int width, int height);

/// `text` cut to `max_chars` characters, its last one an ellipsis, when it is
/// longer (a model or cluster name a picture or table has no room for).
std::string shortened_text(const std::string& text, std::size_t max_chars);

}  // namespace parplan
