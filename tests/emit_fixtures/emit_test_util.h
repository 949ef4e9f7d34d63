// Helpers of the emit tests: hand-built plans from published runs, stand-in
// launchers that record their command line and environment, and a small
// re-implementation of the engines' argument checks to judge what they record.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "src/emit/emit.h"

namespace parplan::emit_test {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- plans ----

inline ClusterSpec cluster(const std::string& name, const std::string& device, int ranks_per_node) {
  ClusterSpec c;
  c.name = name;
  c.device.name = device;
  c.ranks_per_node = ranks_per_node;
  return c;
}

inline ModelSpec gpt(const std::string& name, int layers, int hidden, int heads) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = hidden;
  m.ffn_hidden = 4 * hidden;
  m.heads = heads;
  m.kv_groups = heads;
  m.head_dim = hidden / heads;
  m.vocab = 51200;
  m.max_positions = 2048;
  return m;
}

inline void set_mesh(Plan& p, int gpus, int tp, int pp, int cp, int vp) {
  p.job.gpus = gpus;
  p.config.tp = tp;
  p.config.pp = pp;
  p.config.cp = cp;
  p.config.vp = vp;
  p.config.dp = gpus / (tp * pp * cp);
}

inline void set_batch(Plan& p, int gbs, int mbs, int seq) {
  p.job.gbs = gbs;
  p.config.gbs = gbs;
  p.config.mbs = mbs;
  p.job.seq = seq;
}

/// GPT-3 175B (Brown et al. 2020: 96 layers, 12288 hidden, 96 heads, 2048
/// tokens, batch 1536) on 1024 A100 with tp 8, pp 8 and 2 virtual stages
/// (Narayanan et al. 2021 train it with tp 8 and interleaved pipelines).
// The environment a Megatron-LM launch file needs from its user.
inline const std::map<std::string, std::string> kMegatronUser = {
    {"MEGATRON_LM", "/opt/Megatron-LM"}, {"DATA_PATH", "/data/a_text_document"}, {"TOKENIZER_MODEL", "gpt2"}};

inline Plan gpt3_175b_on_1024_a100() {
  Plan p;
  p.model = gpt("gpt3-175b", 96, 12288, 96);
  p.model.vocab = 50257;
  p.cluster = cluster("dgx-a100", "A100-SXM4-80GB", 8);
  set_mesh(p, 1024, 8, 8, 1, 2);
  set_batch(p, 1536, 1, 2048);
  p.config.sp = true;
  p.config.zero = 1;
  p.config.recompute = Recompute::kSelective;
  p.cost.time.step_s = 30.0;
  return p;
}

/// Llama-3-70B (Meta 2024: 80 layers, 8192 hidden, 64 heads in 8 KV groups,
/// SwiGLU FFN 28672, RoPE, RMSNorm, vocab 128256, untied) on 64 H100.
inline Plan llama3_70b_on_64_h100() {
  Plan p;
  p.model.name = "llama3-70b";
  p.model.layers = 80;
  p.model.hidden = 8192;
  p.model.ffn_hidden = 28672;
  p.model.heads = 64;
  p.model.kv_groups = 8;
  p.model.head_dim = 128;
  p.model.vocab = 128256;
  p.model.max_positions = 8192;
  p.model.gated_ffn = true;
  p.model.activation = Activation::kSilu;  // SwiGLU
  p.model.rope_theta = 500000.0;           // Llama 3 config.json rope_theta
  p.model.dropout = 0.0;
  p.model.linear_bias = false;
  p.model.norm = NormKind::kRmsNorm;
  p.model.position = PositionKind::kRope;
  p.model.tied_embeddings = false;
  p.cluster = cluster("dgx-h100", "H100-SXM5-80GB", 8);
  set_mesh(p, 64, 8, 4, 1, 1);
  set_batch(p, 128, 1, 8192);
  p.config.sp = true;
  p.config.zero = 1;
  p.config.recompute = Recompute::kFull;
  p.cost.time.step_s = 12.0;
  return p;
}

// The same shape as Llama 3.1 70B (RoPE scaled by 8), the model torchtitan's
// 70B flavor builds.
inline Plan llama31_70b_on_64_h100() {
  Plan p = llama3_70b_on_64_h100();
  p.model.name = "llama3.1-70b";
  p.model.rope_scaling_factor = 8.0;
  return p;
}

/// The 1T GPT of Narayanan et al. 2021 Table 1 (128 layers, 25600 hidden,
/// 160 heads) on 3072 A100 with tp 8, pp 64, batch 3072.
inline Plan gpt_1t_on_3072_a100() {
  Plan p;
  p.model = gpt("gpt-1t", 128, 25600, 160);
  p.cluster = cluster("dgx-a100", "A100-SXM4-80GB", 8);
  set_mesh(p, 3072, 8, 64, 1, 1);
  set_batch(p, 3072, 1, 2048);
  p.config.sp = false;
  p.config.zero = 1;
  p.config.recompute = Recompute::kFull;
  p.cost.time.step_s = 60.0;
  return p;
}

/// A 22B GPT (Dash et al. 2024 "Optimizing distributed training on Frontier":
/// 48 layers, 6144 hidden, 48 heads) on 16 Frontier nodes (128 GCDs).
inline Plan frontier_22b_on_128_gcds() {
  Plan p;
  p.model = gpt("gpt-22b", 48, 6144, 48);
  p.cluster = cluster("frontier", "MI250X-GCD", 8);
  p.cluster.frontier_launch = true;
  p.cluster.launcher_default = "slurm";
  set_mesh(p, 128, 2, 4, 1, 1);
  set_batch(p, 128, 1, 2048);
  p.config.sp = true;
  p.config.zero = 1;
  p.config.recompute = Recompute::kFull;
  p.cost.time.step_s = 8.0;
  return p;
}

// ------------------------------------------------------- files and running ----

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "parplan-emit-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> read_lines(const fs::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline void write_exec(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
}

/// Stand-in launchers in DIR/bin; each records argv (one per line) and its
/// environment into $PARPLAN_RECORD/<name>.args and <name>.env. srun then runs
/// its command once, as task 0 of the job, so what it starts records too.
inline fs::path make_stubs(const fs::path& dir) {
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  const std::string record =
      "#!/bin/bash\nname=$(basename \"$0\")\nprintf '%s\\n' \"$@\" > \"$PARPLAN_RECORD/$name.args\"\n"
      "env > \"$PARPLAN_RECORD/$name.env\"\n";
  for (const char* name : {"torchrun", "python3", "deepspeed"}) write_exec(bin / name, record);
  write_exec(
      bin / "scontrol",
      "#!/bin/bash\n[ \"$1 $2\" = \"show hostnames\" ] || exit 1\nfor h in $PARPLAN_TEST_NODES; do echo $h; "
      "done\n");
  write_exec(bin / "srun", record +
                               "ntasks=1\nwhile [ $# -gt 0 ]; do\n  case \"$1\" in\n"
                               "    -n) ntasks=$2; shift 2;;\n    -N|-c|-p|-A|-t) shift 2;;\n"
                               "    -*) shift;;\n    *) break;;\n  esac\ndone\n"
                               "export SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_NTASKS=$ntasks\n"
                               "exec \"$@\"\n");
  return bin;
}

struct RunResult {
  int rc = -1;
  std::string output;
};

/// Runs `command` under bash with a clean environment: PATH (stand-ins first),
/// HOME, PARPLAN_RECORD and the given variables only, as node 0 of a
/// multi-node torchrun launch (NODE_RANK 0, MASTER_ADDR localhost) unless
/// `vars` names them (an empty value: unset for the script).
inline RunResult run_clean(const fs::path& stubs, const fs::path& record, const std::string& command,
                           std::map<std::string, std::string> vars) {
  std::string env = "env -i PATH='" + stubs.string() +
                    ":/usr/bin:/bin' HOME=/tmp USER=tester PARPLAN_RECORD='" + record.string() + "'";
  vars.emplace("NODE_RANK", "0");
  vars.emplace("MASTER_ADDR", "localhost");
  for (const auto& [k, v] : vars) env += " " + k + "='" + v + "'";
  const std::string full = env + " bash -c '" + command + "' 2>&1";
  RunResult result;
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline std::map<std::string, std::string> read_env(const fs::path& path) {
  std::map<std::string, std::string> env;
  for (const std::string& line : read_lines(path)) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

// --------------------------------------------------------- command lines ----

/// A recorded command line: flags with their values (a flag may take several,
/// e.g. --data-path), and the positional words before the first flag.
struct ArgMap {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> flags;
  std::vector<std::string> order;
  bool has(const std::string& f) const { return flags.count(f) > 0; }
  std::string value(const std::string& f) const {
    auto it = flags.find(f);
    return it == flags.end() || it->second.empty() ? "" : it->second.front();
  }
  long long num(const std::string& f, long long fallback) const {
    const std::string v = value(f);
    return v.empty() ? fallback : std::stoll(v);
  }
};

inline ArgMap parse_args(const std::vector<std::string>& argv) {
  ArgMap map;
  std::string current;
  for (const std::string& word : argv) {
    if (word.rfind("--", 0) == 0) {
      current = word;
      map.flags[current];
      map.order.push_back(current);
    } else if (current.empty()) {
      map.positional.push_back(word);
    } else {
      map.flags[current].push_back(word);
    }
  }
  return map;
}

/// The words after `marker` (e.g. the script pretrain_gpt.py) in a recorded argv.
inline std::vector<std::string> after(const std::vector<std::string>& argv, const std::string& suffix) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i].size() >= suffix.size() &&
        argv[i].compare(argv[i].size() - suffix.size(), suffix.size(), suffix) == 0) {
      return {argv.begin() + static_cast<long>(i) + 1, argv.end()};
    }
  }
  return {};
}

/// Writes a plan's Megatron-LM torchrun launch files into dir, runs launch.sh
/// with a stand-in torchrun, and returns pretrain_gpt.py's recorded
/// arguments and environment.
inline std::pair<ArgMap, std::map<std::string, std::string>> megatron_torchrun_launch(const Plan& plan,
                                                                                      const TempDir& dir) {
  const std::vector<fs::path> files =
      emit_launch_files(plan, {Engine::kMegatron, Launcher::kTorchrun, dir.path / "out"});
  const fs::path stubs = make_stubs(dir.path);
  const fs::path record = dir.path / "record";
  fs::create_directories(record);
  const std::map<std::string, std::string> vars = {{"MEGATRON_LM", "/opt/Megatron-LM"},
                                                   {"DATA_PATH", "/data/pile_text_document"},
                                                   {"TOKENIZER_MODEL", "gpt2"},
                                                   {"NNODES", std::to_string(plan.job.gpus / 8)}};
  const RunResult run = run_clean(stubs, record, "bash " + files.front().string(), vars);
  EXPECT_EQ(run.rc, 0) << run.output;
  return {parse_args(after(read_lines(record / "torchrun.args"), "pretrain_gpt.py")),
          read_env(record / "torchrun.env")};
}

inline bool contains(const std::vector<std::string>& messages, const std::string& needle) {
  for (const auto& m : messages) {
    if (m.find(needle) != std::string::npos) return true;
  }
  return false;
}

inline std::string joined(const std::vector<std::string>& messages) {
  std::string out;
  for (const auto& m : messages) out += m + "\n";
  return out;
}

inline void expect_flag(const ArgMap& a, const std::string& flag, const std::string& value) {
  ASSERT_TRUE(a.has(flag)) << flag << " missing";
  EXPECT_EQ(a.value(flag), value) << flag;
}

}  // namespace parplan::emit_test

#include "engine_checks.h"
