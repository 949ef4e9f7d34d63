// The flag conventions every subcommand shares (docs/cli.md): --format,
// --time-limit, --solver-time-limit, --no-timings, and decimal number flags
// whose range errors say the range in words.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace parplan {

/// What every command accepts besides its own flags.
struct CommonFlags {
  /// table | json.
  std::string format = "table";
  /// Bound on the whole command, in seconds: the best answer found so far
  /// is reported (with a note) when it is reached.
  std::optional<double> time_limit_s;
  /// Bound on each MILP solve, in seconds.
  double solver_time_limit_s = 10;
  /// Omit every wall-clock field so identical input gives identical output.
  bool no_timings = false;
  /// When the command started (the flags are made before parsing begins).
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  bool json() const { return format == "json"; }
  bool timings() const { return !no_timings; }
  /// start + time_limit_s, when a limit was given.
  std::optional<std::chrono::steady_clock::time_point> deadline() const;
};

/// Throws InputError unless `format` is table or json (for commands that
/// take --format without the other common flags).
void check_format(const std::string& format);

/// add_option for a file or directory to write, refusing an empty path (which
/// would otherwise read as the flag not given): "--plot is empty: give a path".
CLI::Option* add_output_path_option(CLI::App& app, const std::string& flag, std::string& path,
                                    const std::string& help);

/// Adds --format, --time-limit, --solver-time-limit and --no-timings.
void add_common_flags(CLI::App& app, CommonFlags& flags);

/// Reads `text` as a plain decimal integer in [min, max] ("0600" is 600, not
/// octal; no '+', no '-' unless min < 0, no hex, no spaces), as every
/// integer flag does (read_decimal_int, src/io/decimal_int.h). Throws
/// CLI::ValidationError: "--gbs must be an integer from 1 to 16777216 (got 0)".
std::int64_t parse_decimal_int(const std::string& text, const std::string& flag, std::int64_t min,
                               std::int64_t max);
/// Reads `text` as a finite decimal number in [min, max] (no nan, inf, hex).
double parse_decimal_number(const std::string& text, const std::string& flag, double min, double max);

/// A CLI11 transform for add_option(...)->transform(...): checks the value as
/// parse_decimal_int does and rewrites it without leading zeros, so CLI11's
/// own conversion (which reads a leading 0 as octal) sees plain decimal.
CLI::Validator decimal_int(const std::string& flag, std::int64_t min, std::int64_t max);
/// The same for numbers (parse_decimal_number).
CLI::Validator decimal_number(const std::string& flag, double min, double max);

/// add_option + decimal_int in one call, for int, std::optional<int> and the
/// like. Example: add_int_option(app, "--gbs", f.gbs, "global batch", 1, kMaxGbs).
template <typename T>
CLI::Option* add_int_option(CLI::App& app, const std::string& flag, T& value, const std::string& help,
                            std::int64_t min, std::int64_t max) {
  return app.add_option(flag, value, help)->transform(decimal_int(flag, min, max));
}
template <typename T>
CLI::Option* add_number_option(CLI::App& app, const std::string& flag, T& value, const std::string& help,
                               double min, double max) {
  return app.add_option(flag, value, help)->transform(decimal_number(flag, min, max));
}

}  // namespace parplan
