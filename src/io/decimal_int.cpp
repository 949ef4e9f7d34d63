#include "src/io/decimal_int.h"

#include "src/io/input_error.h"
#include "src/io/printable_text.h"

namespace parplan {

std::int64_t read_decimal_int(const std::string& text, const std::string& name, std::int64_t min,
                              std::int64_t max) {
  const std::string range = " must be an integer from " + std::to_string(min) + " to " + std::to_string(max);
  const std::string shown = printable_text(text);
  if (!text.empty() && text[0] == '+')
    throw InputError(name + range + " (got '" + shown + "'; write it without the '+')");
  const bool negative = min < 0 && !text.empty() && text[0] == '-';
  const std::size_t first = negative ? 1 : 0;
  bool digits = first < text.size();
  for (std::size_t i = first; i < text.size() && digits; ++i) digits = text[i] >= '0' && text[i] <= '9';
  if (!digits) throw InputError(name + range + " (got '" + shown + "')");
  // Leading zeros are decimal digits, not an octal prefix.
  std::size_t nonzero = first;
  while (nonzero + 1 < text.size() && text[nonzero] == '0') ++nonzero;
  // More than 18 digits is beyond every range a flag has (and int64_t).
  if (text.size() - nonzero > 18) throw InputError(name + range + " (got " + shown + ")");
  std::int64_t value = 0;
  for (std::size_t i = nonzero; i < text.size(); ++i) value = value * 10 + (text[i] - '0');
  if (negative) value = -value;
  if (value < min || value > max) throw InputError(name + range + " (got " + shown + ")");
  return value;
}

}  // namespace parplan
