// Progress of a long command on stderr: a counter rewritten in place on a
// terminal, one line every 30 s otherwise (a log, CI), nothing on stdout.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

namespace parplan {

class ProgressLine {
 public:
  /// `command` names the command ("sweep"), `unit` what is counted
  /// ("points"), `done_verb` what was done to them ("planned").
  ProgressLine(std::string command, std::string unit, std::string done_verb);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// `done` of `total` finished; safe to call from several threads, in any
  /// order (a smaller count than one shown is ignored).
  void update(int done, int total);
  /// Clears the terminal's counter line (also done on destruction).
  void finish();

 private:
  static constexpr double kEveryS = 30;
  std::string command_, unit_, done_verb_;
  bool tty_ = false;
  bool cleared_ = false;
  int shown_ = 0;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_line_;
};

}  // namespace parplan
