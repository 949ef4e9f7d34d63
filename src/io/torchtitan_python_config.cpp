#include "src/io/torchtitan_python_config.h"

#include <cctype>
#include <regex>
#include <sstream>
#include <vector>

#include "src/io/input_error.h"

namespace parplan {

namespace {
using Config = std::map<std::string, std::string>;

// A config's statements are short lines; std::regex recurses once per
// character matched, so every pattern runs on one line at a time and a
// longer line is refused (a long enough one would overflow the stack).
constexpr std::size_t kMaxConfigLine = 4096;

// The first match of `pattern` on any line of `lines` (with the line's
// offset into the code); false when none.
struct LineMatch {
  std::smatch match;
  std::size_t offset = 0;
};
bool search_lines(const std::vector<std::pair<std::size_t, std::string>>& lines, const std::regex& pattern,
                  LineMatch& out) {
  for (const auto& [offset, line] : lines) {
    if (std::regex_search(line, out.match, pattern)) {
      out.offset = offset;
      return true;
    }
  }
  return false;
}

std::string trim_line(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// The code without comments: a '#' outside quotes ends the line.
std::string strip_comments(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    char quote = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char ch = line[i];
      if (quote != 0) {
        if (ch == '\\')
          ++i;
        else if (ch == quote)
          quote = 0;
      } else if (ch == '"' || ch == '\'') {
        quote = ch;
      } else if (ch == '#') {
        line.resize(i);
        break;
      }
    }
    out += line + "\n";
  }
  return out;
}

// The text between the parenthesis at `open` and its match.
std::string call_arguments(const std::string& code, std::size_t open, const std::string& origin) {
  int depth = 0;
  char quote = 0;
  for (std::size_t i = open; i < code.size(); ++i) {
    const char ch = code[i];
    if (quote != 0) {
      if (ch == quote) quote = 0;
      continue;
    }
    if (ch == '"' || ch == '\'')
      quote = ch;
    else if (ch == '(' || ch == '[' || ch == '{')
      ++depth;
    else if ((ch == ')' || ch == ']' || ch == '}') && --depth == 0)
      return code.substr(open + 1, i - open - 1);
  }
  throw InputError(origin + ": a call's parentheses do not close (torchtitan Python config)");
}

// Top-level `key=value` pairs of a call's arguments.
std::vector<std::pair<std::string, std::string>> keyword_arguments(const std::string& args,
                                                                   const std::string& origin) {
  std::vector<std::string> parts;
  int depth = 0;
  char quote = 0;
  std::string part;
  for (const char ch : args) {
    if (quote != 0) {
      if (ch == quote) quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '(' || ch == '[' || ch == '{') {
      ++depth;
    } else if (ch == ')' || ch == ']' || ch == '}') {
      --depth;
    } else if (ch == ',' && depth == 0) {
      parts.push_back(part);
      part.clear();
      continue;
    }
    part += ch;
  }
  parts.push_back(part);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : parts) {
    const std::string t = trim_line(p);
    if (t.empty()) continue;
    const auto eq = t.find('=');
    if (eq == std::string::npos)
      throw InputError(origin + ": '" + t + "': a config class takes keyword arguments (name=value)");
    out.emplace_back(trim_line(t.substr(0, eq)), trim_line(t.substr(eq + 1)));
  }
  return out;
}

std::string strip_quotes(const std::string& v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    return v.substr(1, v.size() - 2);
  return v;
}

// A value as the TOML reader takes it.
std::string value_text(std::string v) {
  v = trim_line(v);
  static const std::regex kEnvInt(
      R"(^int\(\s*os\.environ\.get\(\s*["'][^"']*["']\s*,\s*["']?([^"')]*)["']?\s*\)\s*\)$)");
  static const std::regex kEnv(R"(^os\.environ\.get\(\s*["'][^"']*["']\s*,\s*["']([^"']*)["']\s*\)$)");
  std::smatch m;
  if (v.size() <= kMaxConfigLine && (std::regex_match(v, m, kEnvInt) || std::regex_match(v, m, kEnv)))
    return m[1].str();
  if (v == "True") return "true";
  if (v == "False") return "false";
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') {
    std::string items;
    std::istringstream in(v.substr(1, v.size() - 2));
    for (std::string item; std::getline(in, item, ',');)
      if (!trim_line(item).empty()) items += (items.empty() ? "" : ",") + strip_quotes(trim_line(item));
    return items;
  }
  return strip_quotes(v);
}

// llama3_8b -> 8B, qwen3_0_6b -> 0.6B, qwen3_30b_a3b -> 30B-A3B.
std::string flavor_of_recipe(const std::string& recipe) {
  const auto cut = recipe.find('_');
  if (cut == std::string::npos) return "";
  std::string out;
  const std::string suffix = recipe.substr(cut + 1);
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    const char ch = suffix[i];
    if (ch == '_') {
      const bool digits = i > 0 && i + 1 < suffix.size() &&
                          std::isdigit(static_cast<unsigned char>(suffix[i - 1])) &&
                          std::isdigit(static_cast<unsigned char>(suffix[i + 1]));
      out += digits ? '.' : '-';
    } else {
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
  }
  return out;
}

// What the registered recipes set, as read at torchtitan main b5bcd76c
// (torchtitan/models/{llama3,qwen3}/config_registry.py): the fields the
// reader needs, so that a config that starts from a recipe and changes a
// few of them reads as it runs. A recipe not listed sets none of them.
struct RecipeDefaults {
  const char* recipe;
  int max_context_length;
  int tokens_per_microbatch;
  int tensor_parallel;
  const char* checkpoint;  ///< "full" / "selective"
  bool compile;            ///< CompileConfig(enable=True, enable_async_tensor_parallel=True)
  bool float8;             ///< Float8LinearConverter on the recipe's model_spec
};
constexpr RecipeDefaults kRecipes[] = {
    {"llama3_8b", 8192, 8192, 1, "selective", false, false},
    {"llama3_70b", 8192, 8 * 8192, 8, "full", false, false},
    {"llama3_405b", 8192, 2 * 8192, 8, "full", true, true},
    {"qwen3_0_6b", 4096, 4 * 4096, 1, "selective", false, false},
    {"qwen3_1_7b", 4096, 4 * 4096, 1, "selective", false, false},
    {"qwen3_14b", 4096, 4 * 4096, 1, "full", false, false},
    {"qwen3_30b_a3b", 4096, 2 * 4096, 1, "full", false, false},
    {"qwen3_32b", 4096, 2 * 4096, 1, "full", false, false},
};

const RecipeDefaults* recipe_defaults(const std::string& recipe) {
  for (const RecipeDefaults& r : kRecipes)
    if (recipe == r.recipe) return &r;
  return nullptr;
}

void erase_section(Config& c, const std::string& section) {
  for (auto it = c.lower_bound(section + "."); it != c.end() && it->first.rfind(section + ".", 0) == 0;)
    it = c.erase(it);
}

long long whole(const Config& c, const std::string& key, const std::string& origin) {
  const std::string& v = c.at(key);
  try {
    std::size_t used = 0;
    const long long n = std::stoll(v, &used);
    if (used == v.size() && n > 0) return n;
  } catch (const std::exception&) {
  }
  throw InputError(origin + ": config." + key + " must be a positive whole number (got '" + v + "')");
}
}  // namespace

std::map<std::string, std::string> parse_torchtitan_python_config(const std::string& text,
                                                                  const std::string& origin) {
  const std::string code = strip_comments(text);
  // The lines with their offsets (a call's arguments may span lines; they
  // are read from the code itself, without a pattern).
  std::vector<std::pair<std::size_t, std::string>> lines;
  for (std::size_t at = 0, number = 1; at < code.size(); ++number) {
    const std::size_t end = std::min(code.find('\n', at), code.size());
    if (end - at > kMaxConfigLine)
      throw InputError(origin + ":" + std::to_string(number) + ": a line of over " +
                       std::to_string(kMaxConfigLine) + " characters: not a torchtitan Python config");
    lines.emplace_back(at, code.substr(at, end - at));
    at = end + 1;
  }
  Config out;
  LineMatch lm;
  const std::smatch& m = lm.match;
  static const std::regex kRecipe(R"(\bconfig\s*=\s*([A-Za-z_]\w*)\s*\(\s*\))");
  if (!search_lines(lines, kRecipe, lm))
    throw InputError(origin +
                     ": no `config = RECIPE()` statement (a torchtitan config_registry function such as "
                     "llama3_8b); give the module parplan --emit torchtitan wrote, or a run file");
  const std::string recipe = m[1].str();
  out["recipe"] = recipe;
  static const std::regex kFamily(R"(from\s+torchtitan\.models\.(\w+)(?:\.config_registry)?\s+import)");
  out["model.name"] = search_lines(lines, kFamily, lm) ? m[1].str() : recipe.substr(0, recipe.find('_'));
  static const std::regex kFlavor(R"(model_registry\(\s*["']([^"']+)["'])");
  out["model.flavor"] = search_lines(lines, kFlavor, lm) ? m[1].str() : flavor_of_recipe(recipe);
  const RecipeDefaults* defaults = recipe_defaults(recipe);
  if (defaults != nullptr) {
    out["training.max_context_length"] = std::to_string(defaults->max_context_length);
    out["training.num_tokens_per_microbatch_per_dp_rank"] = std::to_string(defaults->tokens_per_microbatch);
    out["parallelism.tensor_parallel_degree"] = std::to_string(defaults->tensor_parallel);
    out["activation_checkpoint.mode"] = defaults->checkpoint;
    if (std::string(defaults->checkpoint) == "selective")
      out["activation_checkpoint.selective_ac_option"] = "op";
    if (defaults->compile) out["compile.enable"] = out["compile.enable_async_tensor_parallel"] = "true";
  }
  // The recipe's own model_spec (its converters) unless the config sets one.
  static const std::regex kModelSpec(R"(\bconfig\.model_spec\s*=)");
  const bool own_model_spec = search_lines(lines, kModelSpec, lm);

  // config.SECTION = SomeConfig(...) / None.
  static const std::regex kSection(R"(\bconfig\.(\w+)\s*=\s*([A-Za-z_][\w.]*)\s*\()");
  bool checkpoint_set = false;
  for (const auto& [offset, line] : lines) {
    std::smatch it;
    if (!std::regex_search(line, it, kSection)) continue;
    const std::string section = it[1].str();
    const std::string cls = it[2].str();
    // Config classes only (ParallelismConfig, FullAC.Config, ...), not
    // model_registry(...) or os.environ.get(...).
    if (cls.size() < 6 || cls.compare(cls.size() - 6, 6, "Config") != 0) continue;
    const std::size_t open = offset + static_cast<std::size_t>(it.position(0) + it.length(0) - 1);
    const auto args = keyword_arguments(call_arguments(code, open, origin), origin);
    // A new object replaces the recipe's whole section.
    erase_section(out, section);
    if (section == "activation_checkpoint") {
      checkpoint_set = true;
      const bool full = cls.find("FullAC") != std::string::npos;
      const bool selective = cls.find("SelectiveAC") != std::string::npos;
      if (!full && !selective)
        throw InputError(origin + ": config.activation_checkpoint = " + cls +
                         "(...) is not read (None, FullAC.Config() or SelectiveAC.Config())");
      out["activation_checkpoint.mode"] = full ? "full" : "selective";
      if (selective) out["activation_checkpoint.selective_ac_option"] = "op";
    }
    for (const auto& [key, value] : args) out[section + "." + key] = value_text(value);
  }
  // config.SECTION.KEY = VALUE (one line) and config.SECTION = None.
  static const std::regex kField(R"(\bconfig\.(\w+)\.(\w+)\s*=\s*(.+))");
  for (const auto& [offset, line] : lines) {
    std::smatch f;
    if (std::regex_search(line, f, kField)) out[f[1].str() + "." + f[2].str()] = value_text(f[3].str());
  }
  static const std::regex kNone(R"(\bconfig\.activation_checkpoint\s*=\s*None\b)");
  if (search_lines(lines, kNone, lm)) {
    checkpoint_set = true;
    erase_section(out, "activation_checkpoint");
    out["activation_checkpoint.mode"] = "none";
  }
  if (!checkpoint_set && defaults == nullptr && !out.count("activation_checkpoint.mode"))
    throw InputError(origin +
                     ": config.activation_checkpoint is not set: the recipe's default is not read; set it "
                     "(None, FullAC.Config() or SelectiveAC.Config())");

  // Tokens per micro-batch and per step (TrainingConfig at torchtitan main)
  // as sequences of max_context_length tokens.
  if (out.count("training.max_context_length")) {
    const long long seq = whole(out, "training.max_context_length", origin);
    out["training.seq_len"] = std::to_string(seq);
    for (const auto& [from, to] :
         {std::pair<const char*, const char*>{"training.num_tokens_per_microbatch_per_dp_rank",
                                              "training.local_batch_size"},
          {"training.num_tokens_per_train_step", "training.global_batch_size"}}) {
      if (!out.count(from)) continue;
      const long long tokens = whole(out, from, origin);
      if (tokens % seq != 0)
        throw InputError(origin + ": config." + from + " (" + std::to_string(tokens) +
                         ") is not a whole number of max_context_length (" + std::to_string(seq) +
                         ") sequences: not expressible as a batch of sequences");
      out[to] = std::to_string(tokens / seq);
    }
    // At main a micro-batch is one model forward, and with a pipeline one
    // pipeline micro-batch (trainer.py runs num_pp_microbatches of them per
    // step): the v0.2 key's value, unless a config sets that key itself.
    if (out.count("training.local_batch_size") && !out.count("parallelism.pipeline_parallel_microbatch_size"))
      out["parallelism.pipeline_parallel_microbatch_size"] = out["training.local_batch_size"];
  }
  if (code.find("float8") != std::string::npos || code.find("Float8") != std::string::npos ||
      (defaults != nullptr && defaults->float8 && !own_model_spec)) {
    out["model.converters"] = "float8";
    // The recipe: as the config names it, else main's default. Main ran
    // tensorwise Float8 by default (recipe_name None, with the
    // enable_fsdp_float8_all_gather field) until pytorch/torchtitan#3127
    // (2026-04-27) left rowwise recipes only (components/quantization/
    // float8.py); a config that sets the dropped field predates it.
    static const std::regex kFloat8Recipe(R"(recipe_name\s*=\s*["']([A-Za-z_]+)["'])");
    static const std::regex kFsdpFloat8(R"(enable_fsdp_float8_all_gather\s*=\s*(True|False))");
    const bool has_fsdp_field = search_lines(lines, kFsdpFloat8, lm);
    if (has_fsdp_field && m[1].str() == "True")
      out["quantize.linear.float8.enable_fsdp_float8_all_gather"] = "true";
    if (search_lines(lines, kFloat8Recipe, lm))
      out["quantize.linear.float8.recipe_name"] = m[1].str();
    else if (!has_fsdp_field)
      out["quantize.linear.float8.recipe_name"] = "rowwise";
  }
  return out;
}

}  // namespace parplan
