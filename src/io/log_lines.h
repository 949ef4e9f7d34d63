// Training logs are read up to their last newline.
#pragma once

#include <algorithm>
#include <string>

namespace parplan {

/// The engines' argument, iteration and metrics lines are a few hundred
/// characters; a longer line is something else, and std::regex recurses once
/// per character (a long enough line would overflow the stack), so it is
/// never matched.
inline constexpr std::size_t kMaxMatchedLogLine = 4096;

/// `text` without an unterminated last line: a log still being written (or
/// cut short by a full disk) ends mid-line, and the "29" of
/// "elapsed time per iteration (ms): 2929.4" read as a time would be wrong.
inline std::string complete_lines(const std::string& text) {
  if (text.empty() || text.back() == '\n') return text;
  const std::size_t last = text.find_last_of('\n');
  return last == std::string::npos ? std::string() : text.substr(0, last + 1);
}

/// Length of the task label `srun --label` puts before each line ("0: ",
/// right-aligned as " 0: " in jobs of ten tasks or more); 0 when none.
inline std::size_t srun_label_length(const std::string& text, std::size_t at = 0) {
  std::size_t i = at;
  while (i < text.size() && text[i] == ' ') ++i;
  const std::size_t digits = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == digits || i + 1 >= text.size() || text[i] != ':' || text[i + 1] != ' ') return 0;
  return i + 2 - at;
}

/// `text` with srun's task label and torchrun's per-line rank prefix
/// removed (`[default0]:` under --tee / --log-dir, `[rank0]:` under
/// --local-ranks-filter), so a log captured through srun and torchrun reads
/// as the engine printed it.
inline std::string without_rank_prefixes(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    std::size_t start = at + srun_label_length(text.substr(at, std::min<std::size_t>(end - at, 16)));
    at = start;
    for (const char* tag : {"[default", "[rank"}) {
      const std::size_t n = std::char_traits<char>::length(tag);
      if (text.compare(at, n, tag) != 0) continue;
      std::size_t digit = at + n;
      while (digit < end && text[digit] >= '0' && text[digit] <= '9') ++digit;
      if (digit > at + n && digit + 1 < end && text[digit] == ']' && text[digit + 1] == ':')
        start = digit + 2;
    }
    out.append(text, start, end - start);
    at = end;
  }
  return out;
}

}  // namespace parplan
