#include "src/cli/progress_line.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace parplan {

ProgressLine::ProgressLine(std::string command, std::string unit, std::string done_verb)
    : command_(std::move(command)),
      unit_(std::move(unit)),
      done_verb_(std::move(done_verb)),
      tty_(::isatty(::fileno(stderr)) != 0),
      last_line_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::update(int done, int total) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (done <= shown_) return;
  shown_ = done;
  if (tty_) {
    std::fprintf(stderr, "\r[%d/%d] %s", done, total, unit_.c_str());
  } else {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_line_).count() < kEveryS || done == total) return;
    last_line_ = now;
    std::fprintf(stderr, "parplan: %s: %d of %d %s %s\n", command_.c_str(), done, total, unit_.c_str(),
                 done_verb_.c_str());
  }
  std::fflush(stderr);
}

void ProgressLine::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (cleared_) return;
  cleared_ = true;
  if (tty_ && shown_ > 0) {
    std::fprintf(stderr, "\r%*s\r", 40, "");
    std::fflush(stderr);
  }
}

}  // namespace parplan
