#include "src/io/megatron_iteration_lines.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <regex>
#include <sstream>

#include "src/io/input_error.h"
#include "src/io/log_lines.h"
#include "src/io/measured_figure.h"

namespace parplan {

namespace {

/// The largest `max reserved: N` of a memory report line
/// ("[Rank R] (after I iterations) memory (MB) | allocated: ... | max
/// reserved: N", megatron/training/utils report_memory; MB there is MiB), or
/// nothing when the line is none.
std::optional<double> max_reserved_mib(const std::string& line, const std::string& origin, int line_number) {
  if (line.find("memory (MB)") == std::string::npos) return std::nullopt;
  static const std::regex kReserved(R"(max reserved:\s*([^\s|]*))");
  std::smatch m;
  if (!std::regex_search(line, m, kReserved)) return std::nullopt;
  const std::optional<double> mib = parse_printed_number(m.str(1));
  if (!mib || *mib < 0)
    throw InputError(origin + ": line " + std::to_string(line_number) + ": max reserved '" + m.str(1) +
                     "' is not a number of MB; give the log as Megatron wrote it");
  return mib;
}

/// The window's skipped and NaN iterations ("number of skipped iterations:
/// N | number of nan iterations: N", training_log), 0 when not printed.
long long skipped_or_nan(const std::string& head) {
  static const std::regex kCount(R"(number of (?:skipped|nan) iterations:\s*(\d+))");
  long long count = 0;
  for (auto it = std::sregex_iterator(head.begin(), head.end(), kCount); it != std::sregex_iterator(); ++it)
    count += std::strtoll((*it).str(1).c_str(), nullptr, 10);
  return count;
}

}  // namespace

MegatronIterationLines read_megatron_iteration_lines(const std::string& text, const std::string& origin,
                                                     int log_interval, long long full_batch,
                                                     const std::vector<int>& blocks) {
  const int interval = std::max(1, log_interval);
  static const std::regex kIteration(R"(iteration\s+(\d+)\s*/\s*\d+\s*\|)");
  // The whole token after the colon: "1500.4abc" is no time to cut short.
  // Megatron-LM prints milliseconds; BigScience's Megatron-DeepSpeed fork
  // (BLOOM's logs) seconds.
  static const std::regex kElapsed(R"(elapsed time per iteration \((ms|s)\):\s*([^\s|]*))");
  // The iteration line's "global batch size: N": under --rampup-batch-size
  // the first iterations run smaller batches, not the run's step.
  static const std::regex kBatch(R"(global batch size:\s*(\d+)\s*\|)");
  MegatronIterationLines out;
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  std::size_t next_block = 0;
  // The iteration the current launch started from (its first logged
  // window's start): the warm-up iterations are counted from there, so a
  // restarted run's warm-up is skipped as the first launch's.
  long long launch_start = 0;
  bool launch_started = false;
  while (std::getline(in, line)) {
    ++line_number;
    if (next_block < blocks.size() && line_number >= blocks[next_block]) {
      ++next_block;
      launch_started = false;
    }
    // Only the start of a long line is matched (the iteration fields come
    // first; std::regex recurses once per character).
    const std::string head = line.size() > kMaxMatchedLogLine ? line.substr(0, kMaxMatchedLogLine) : line;
    if (const auto mib = max_reserved_mib(head, origin, line_number))
      out.peak_reserved_mib = std::max(out.peak_reserved_mib, *mib);
    std::smatch it, el, batch;
    if (!std::regex_search(head, el, kElapsed)) continue;
    // An iteration number beyond long long saturates (it is past the warm-up either way).
    long long iteration = 0;
    if (std::regex_search(head, it, kIteration)) {
      errno = 0;
      iteration = std::strtoll(it.str(1).c_str(), nullptr, 10);
    }
    // Megatron averages over the last `interval` iterations.
    if (!launch_started) launch_start = std::max(0LL, iteration - interval), launch_started = true;
    if (iteration - interval < launch_start + kWarmupIterations) continue;
    if (std::regex_search(head, batch, kBatch) &&
        std::strtoll(batch.str(1).c_str(), nullptr, 10) != full_batch) {
      ++out.ramp_up_windows;
      continue;
    }
    if (skipped_or_nan(head) > 0) {
      ++out.unclean_windows;
      continue;
    }
    const bool seconds = el.str(1) == "s";
    const std::string elapsed = el.str(2);
    std::optional<double> ms = parse_printed_number(elapsed);
    if (!ms || *ms <= 0)
      throw InputError(origin + ": line " + std::to_string(line_number) + ": elapsed time per iteration '" +
                       elapsed + "' is not a positive number of " + (seconds ? "seconds" : "milliseconds"));
    if (seconds) *ms *= 1e3;
    if (*ms < 1e3 * kMinStepSeconds || *ms > 1e3 * kMaxStepSeconds) {
      char range[64];
      std::snprintf(range, sizeof range, "%g ms to %g ms", 1e3 * kMinStepSeconds, 1e3 * kMaxStepSeconds);
      throw InputError(
          origin + ": line " + std::to_string(line_number) + ": elapsed time per iteration " + elapsed +
          (seconds ? " s" : " ms") + " is outside " + range +
          ", no plausible step (docs/calibrate.md, \"Measured figures\"); give the log as Megatron "
          "wrote it");
    }
    out.times_ms.push_back(*ms);
  }
  return out;
}

}  // namespace parplan
