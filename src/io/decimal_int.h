// The one reading of an integer given on the command line, shared by every
// subcommand (plan's --gpus, sweep's lists, experts' --gbs, ...), so that
// the same text is accepted or refused the same way everywhere.
#pragma once

#include <cstdint>
#include <string>

namespace parplan {

/// `text` as a plain decimal integer in [min, max]: digits only, with a
/// leading '-' only when min < 0; leading zeros are decimal ("0600" is 600,
/// not octal). A leading '+', spaces, hex, exponents and fractions are
/// refused. Throws InputError: "NAME must be an integer from MIN to MAX
/// (got 'TEXT')", with "; write it without the '+'" for a leading plus.
std::int64_t read_decimal_int(const std::string& text, const std::string& name, std::int64_t min,
                              std::int64_t max);

}  // namespace parplan
