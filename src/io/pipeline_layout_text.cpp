#include "src/io/pipeline_layout_text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

#include "cost/stage_layout.h"
#include "src/io/input_error.h"

namespace parplan {

namespace {

// Layers of one layout, unrolled: bounded so that "t*999999999" is refused
// rather than built.
constexpr std::size_t kMaxUnrolledChars = 1 << 16;

const char* const kGrammar =
    "a layout is E (embedding), t (transformer layer), m (MTP layer) and L (loss), '|' between "
    "virtual stages, '(...)*N' and 'x*N' to repeat, e.g. \"Et|(tt|)*30mL\"";

// The count after a '*' at text[at], or -1 when no digits follow.
long long repeat_count(const std::string& text, std::size_t at, std::size_t& end) {
  if (at >= text.size() || text[at] != '*' || at + 1 >= text.size() ||
      !std::isdigit(static_cast<unsigned char>(text[at + 1])))
    return -1;
  long long n = 0;
  end = at + 1;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) {
    n = n * 10 + (text[end] - '0');
    if (n > static_cast<long long>(kMaxUnrolledChars)) n = kMaxUnrolledChars + 1;
    ++end;
  }
  return n;
}

void append_repeated(std::string& out, const std::string& part, long long n, const std::string& where) {
  if (static_cast<double>(part.size()) * static_cast<double>(n) + static_cast<double>(out.size()) >
      static_cast<double>(kMaxUnrolledChars))
    throw InputError(where + ": unrolls to more than " + std::to_string(kMaxUnrolledChars) +
                     " characters; check the repeat counts");
  for (long long i = 0; i < n; ++i) out += part;
}

// Megatron's two substitutions in its order: r'\(([^)]+)\)\*(\d+)', then
// r'(.)\*(\d+)', each left to right over the whole text.
std::string unroll(const std::string& text, const std::string& where) {
  std::string groups;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = 0;
    const std::size_t close = text[i] == '(' ? text.find(')', i + 1) : std::string::npos;
    const long long n = close != std::string::npos && close > i + 1 ? repeat_count(text, close + 1, end) : -1;
    if (n >= 0) {
      append_repeated(groups, text.substr(i + 1, close - i - 1), n, where);
      i = end;
    } else {
      groups += text[i++];
    }
  }
  std::string out;
  for (std::size_t i = 0; i < groups.size();) {
    std::size_t end = 0;
    const long long n = repeat_count(groups, i + 1, end);
    if (n >= 0) {
      append_repeated(out, std::string(1, groups[i]), n, where);
      i = end;
    } else {
      append_repeated(out, std::string(1, groups[i++]), 1, where);
    }
  }
  return out;
}

}  // namespace

PipelineLayout parse_pipeline_layout(const std::string& text, int pp, const ModelSpec& model,
                                     const std::string& where) {
  if (text.size() > kMaxPipelineLayoutChars)
    throw InputError(where + ": is " + std::to_string(text.size()) + " characters; a layout has at most " +
                     std::to_string(kMaxPipelineLayoutChars));
  std::string plain;
  for (const char ch : text)
    if (ch != ',') plain += ch;
  const std::string layers = unroll(plain, where);
  // One entry per virtual stage: its transformer layers, MTP layers, and
  // whether it holds the embedding or the loss.
  struct Stage {
    long long t = 0, m = 0;
  };
  std::vector<Stage> stages(1);
  long long embeddings = 0, losses = 0, t_total = 0, m_total = 0;
  bool t_after_m = false;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const char ch = layers[i];
    if (ch == '|') {
      stages.emplace_back();
      continue;
    }
    if (ch == 't') {
      ++stages.back().t, ++t_total;
      t_after_m = t_after_m || m_total > 0;
    } else if (ch == 'm') {
      ++stages.back().m, ++m_total;
    } else if (ch == 'E') {
      ++embeddings;
    } else if (ch == 'L') {
      ++losses;
    } else if (ch == '(' || ch == ')') {
      // Left after unrolling: a group nested in another, which Megatron's
      // one-level unrolling (pipeline_parallel_layer_layout.py) does not
      // expand either, or a group without its ')*N'.
      int depth = 0, deepest = 0;
      for (const char c : plain) deepest = std::max(deepest, depth += c == '(' ? 1 : c == ')' ? -1 : 0);
      throw InputError(
          where + (deepest > 1 ? ": groups '(...)*N' do not nest (Megatron-LM unrolls one level); "
                                 "write the inner group out"
                               : std::string(": a '(' or ')' without its group '(...)*N'; ") + kGrammar));
    } else {
      throw InputError(where + ": unknown layer character '" + std::string(1, ch) + "'; " + kGrammar);
    }
  }
  const int count = static_cast<int>(stages.size());
  if (pp < 1 || count % pp != 0)
    throw InputError(where + ": has " + std::to_string(count) + " virtual stages, not a multiple of pp " +
                     std::to_string(pp) + "; give pp * vp stages separated by '|'");
  if (count > PipelineLayout::kMaxStages)
    throw InputError(where + ": has " + std::to_string(count) + " virtual stages; parplan takes at most " +
                     std::to_string(PipelineLayout::kMaxStages));
  if (layers.empty() || layers.front() != 'E' || embeddings != 1)
    throw InputError(where + ": must open with the embedding E, once; " + kGrammar);
  if (layers.back() != 'L' || losses != 1)
    throw InputError(where + ": must close with the loss L, once; " + kGrammar);
  if (t_total != model.layers)
    throw InputError(where + ": has " + std::to_string(t_total) + " transformer layers (t); model " +
                     model.name + " has " + std::to_string(model.layers));
  if (m_total != model.mtp_layers)
    throw InputError(where + ": has " + std::to_string(m_total) + " MTP layers (m); model " + model.name +
                     " has " + std::to_string(model.mtp_layers) + " (Megatron counts them alike)");
  if (t_after_m)
    throw InputError(where + ": places a transformer layer after an MTP layer; put every m after the t's");
  if (m_total > 0 && stages.back().m != m_total)
    throw InputError(where +
                     ": places MTP layers outside the last stage; parplan costs them beside the loss "
                     "on the last pipeline rank");
  PipelineLayout layout;
  layout.stages = count;
  std::vector<long long> rank_layers(static_cast<std::size_t>(pp), 0);
  for (int s = 0; s < count; ++s) {
    if (stages[s].t > UINT8_MAX)
      throw InputError(where + ": virtual stage " + std::to_string(s) + " holds " +
                       std::to_string(stages[s].t) + " transformer layers; parplan takes at most " +
                       std::to_string(UINT8_MAX) + " per stage");
    layout.decoder_layers[s] = static_cast<std::uint8_t>(stages[s].t);
    rank_layers[s % pp] += stages[s].t;
  }
  for (int r = 0; r < pp; ++r)
    if (rank_layers[r] == 0)
      throw InputError(where + ": pipeline rank " + std::to_string(r) +
                       " holds no transformer layer; parplan costs ranks with at least one");
  return layout;
}

void lay_out_config(const PipelineLayout& layout, const std::string& where, bool vp_given,
                    ParallelConfig& config) {
  if (config.pp > ParallelConfig::kMaxSplitStages)
    throw InputError(where + ": parplan lays out at most " + std::to_string(ParallelConfig::kMaxSplitStages) +
                     " pipeline ranks (pp " + std::to_string(config.pp) + ")");
  if (config.first_stage_layers > 0 || config.last_stage_layers > 0)
    throw InputError(where +
                     ": a layout gives every stage's layers; drop the first/last stage layer counts "
                     "(Megatron refuses both together)");
  if (config.pp < 1 || layout.stages % config.pp != 0)
    throw InputError(where + ": has " + std::to_string(layout.stages) +
                     " virtual stages, not a multiple of pp " + std::to_string(config.pp) +
                     "; give pp * vp stages separated by '|'");
  const int vp = layout.stages / config.pp;
  if (vp_given && config.vp != vp)
    throw InputError(where + ": has " + std::to_string(layout.stages) + " virtual stages, vp " +
                     std::to_string(vp) + " over pp " + std::to_string(config.pp) +
                     ", but the config gives vp " + std::to_string(config.vp) +
                     "; drop vp or make them agree");
  apply_pipeline_layout(layout, config);
}

void apply_pipeline_layout_text(const std::string& text, const std::string& where, bool vp_given,
                                const ModelSpec& model, JobSpec& job, ParallelConfig& config) {
  const PipelineLayout layout = parse_pipeline_layout(text, config.pp, model, where);
  lay_out_config(layout, where, vp_given, config);
  job.pipeline_layout = layout;
}

std::string pipeline_layout_text(const PipelineLayout& layout, int mtp_layers) {
  std::vector<std::string> stages;
  for (int s = 0; s < layout.stages; ++s) {
    std::string stage = s == 0 ? "E" : "";
    const int t = layout.decoder_layers[s];
    stage += t >= 3 ? "t*" + std::to_string(t) : std::string(static_cast<std::size_t>(t), 't');
    if (s + 1 == layout.stages) stage += std::string(static_cast<std::size_t>(mtp_layers), 'm') + "L";
    stages.push_back(stage);
  }
  std::string out;
  for (std::size_t s = 0; s < stages.size();) {
    // A run of equal stages, all followed by a '|' (not the last stage).
    std::size_t run = 1;
    while (s + run + 1 < stages.size() && stages[s + run] == stages[s]) ++run;
    if (run >= 2 && !stages[s].empty()) {
      out += "(" + stages[s] + "|)*" + std::to_string(run);
    } else {
      run = 1;
      out += stages[s] + (s + 1 < stages.size() ? "|" : "");
    }
    s += run;
  }
  return out;
}

}  // namespace parplan
