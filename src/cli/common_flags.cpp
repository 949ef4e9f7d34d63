#include "src/cli/common_flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "src/io/decimal_int.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/printable_text.h"

namespace parplan {

namespace {

std::string number_text(double x) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15g", x);
  return text;
}

// The value as given, escaped and shortened so that a 5,000-character
// argument does not make a 5,000-character error line.
std::string shown(const std::string& text) { return printable_text(text); }

}  // namespace

std::optional<std::chrono::steady_clock::time_point> CommonFlags::deadline() const {
  if (!time_limit_s) return std::nullopt;
  return start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(*time_limit_s));
}

CLI::Option* add_output_path_option(CLI::App& app, const std::string& flag, std::string& path,
                                    const std::string& help) {
  return app.add_option(flag, path, help)->check([flag](const std::string& value) {
    return value.empty() ? flag + " is empty: give a path" : std::string();
  });
}

void add_common_flags(CLI::App& app, CommonFlags& f) {
  app.add_option("--format", f.format, "table | json (default table)")
      ->check(CLI::IsMember({"table", "json"}));
  add_number_option(app, "--time-limit", f.time_limit_s,
                    "bound the whole command to S seconds: the best answer so far is reported, with a note",
                    kMinTimeLimitS, kMaxTimeLimitS);
  add_number_option(app, "--solver-time-limit", f.solver_time_limit_s,
                    "bound each MILP solve to S seconds (default 10); a solve stopped early reports its gap",
                    kMinTimeLimitS, kMaxTimeLimitS);
  app.add_flag("--no-timings", f.no_timings,
               "omit every wall-clock field, so identical input gives byte-identical output");
}

std::int64_t parse_decimal_int(const std::string& text, const std::string& flag, std::int64_t min,
                               std::int64_t max) {
  // The shared reading (src/io/decimal_int.h), worded as CLI11 expects.
  try {
    return read_decimal_int(text, flag, min, max);
  } catch (const InputError& e) {
    throw CLI::ValidationError(e.what());
  }
}

double parse_decimal_number(const std::string& text, const std::string& flag, double min, double max) {
  const std::string range = " must be a number from " + number_text(min) + " to " + number_text(max);
  // Only [sign] digits [. digits] [e [sign] digits]: strtod alone would also
  // take nan, inf and hexadecimal.
  std::size_t i = 0;
  const auto digits_from = [&](std::size_t at) {
    std::size_t j = at;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
    return j;
  };
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  std::size_t j = digits_from(i);
  bool any = j > i;
  i = j;
  if (i < text.size() && text[i] == '.') {
    j = digits_from(i + 1);
    any = any || j > i + 1;
    i = j;
  }
  if (any && i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t k = i + 1;
    if (k < text.size() && (text[k] == '-' || text[k] == '+')) ++k;
    j = digits_from(k);
    if (j == k) any = false;
    i = j;
  }
  if (!any || i != text.size()) throw CLI::ValidationError(flag + range + " (got '" + shown(text) + "')");
  errno = 0;
  const double value = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(value) || value < min || value > max)
    throw CLI::ValidationError(flag + range + " (got " + shown(text) + ")");
  return value;
}

CLI::Validator decimal_int(const std::string& flag, std::int64_t min, std::int64_t max) {
  return CLI::Validator(
      [flag, min, max](std::string& text) {
        text = std::to_string(parse_decimal_int(text, flag, min, max));
        return std::string();
      },
      "INT", "decimal_int");
}

CLI::Validator decimal_number(const std::string& flag, double min, double max) {
  return CLI::Validator(
      [flag, min, max](std::string& text) {
        (void)parse_decimal_number(text, flag, min, max);
        return std::string();
      },
      "NUMBER", "decimal_number");
}

}  // namespace parplan

namespace parplan {

void check_format(const std::string& format) {
  if (format != "table" && format != "json")
    throw InputError("--format must be table or json (got '" + format + "')");
}

}  // namespace parplan
