// emit_launch_files: checks the engine's rules, writes the engine's files into
// a temporary sibling of the output directory and renames it into place.
#include "src/emit/emit.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "src/emit/emit_internal.h"
#include "src/io/input_error.h"
#include "src/io/write_error.h"
#include "src/report/json_text.h"

namespace parplan {

namespace fs = std::filesystem;

Engine parse_engine(const std::string& name) {
  if (name == "megatron") return Engine::kMegatron;
  if (name == "deepspeed") return Engine::kDeepSpeed;
  if (name == "megatron-deepspeed") return Engine::kMegatronDeepSpeed;
  if (name == "torchtitan") return Engine::kTorchtitan;
  throw InputError("--emit: unknown engine '" + name +
                   "'; choose one of megatron, deepspeed, megatron-deepspeed, torchtitan.");
}

Launcher parse_launcher(const std::string& name) {
  if (name == "torchrun") return Launcher::kTorchrun;
  if (name == "slurm") return Launcher::kSlurm;
  throw InputError("--launcher: unknown launcher '" + name + "'; choose torchrun or slurm.");
}

TorchtitanVersion parse_engine_version(Engine engine, const std::string& text) {
  if (text.empty()) return TorchtitanVersion::kMain;
  if (engine != Engine::kTorchtitan) {
    throw InputError(std::string("--engine-version: ") + engine_name(engine) + " files target one version (" +
                     engine_capabilities(engine).revision +
                     "); --engine-version chooses torchtitan's config system only, drop it");
  }
  if (text == "main") return TorchtitanVersion::kMain;
  if (text == "0.2" || text == "0.2.x" || text == "0.2.0" || text == "0.2.1" || text == "0.2.2")
    return TorchtitanVersion::kV02;
  throw InputError("--engine-version: unknown torchtitan version '" + text +
                   "'; choose main (Python configs, the default) or 0.2 (the v0.2.x TOML config)");
}

const char* torchtitan_version_problem(TorchtitanVersion version, const JobSpec& job) {
  // torchtitan main: Float8LinearConverter.Config.recipe_name is "rowwise" |
  // "rowwise_with_gw_hp" (torchtitan/components/quantization/float8.py:56
  // @ b5bcd76c6); v0.2.2 also runs tensorwise, its default (recipe_name None,
  // job_config.py:738), which the held-out torchtitan Float8 runs used.
  if (version == TorchtitanVersion::kMain && job.precision == Precision::kFp8)
    return "torchtitan main's Float8 converter runs rowwise scaling only, and parplan prices tensorwise "
           "scaling, which torchtitan v0.2.x runs: emit for it (--engine-version 0.2 with plan --emit "
           "torchtitan or sweep --emit-slurm-array), or plan bf16";
  return nullptr;
}

void cost_as_torchtitan_version(TorchtitanVersion version, JobSpec& job) {
  if (version != TorchtitanVersion::kV02) return;
  // v0.2's Llama runs wq, wk, wv separately (JobSpec::separate_qkv) and
  // attention through SDPA with cuDNN first (sdpa_kernel([CUDNN_ATTENTION,
  // FLASH_ATTENTION, MATH], set_priority=True), torchtitan/models/
  // attention.py:169-190 at v0.2.2).
  job.separate_qkv = true;
  job.attention_kernel = AttentionKernel::kCudnn;
  // Float8 tensor parallelism is applied when "float8" is in
  // model.converters (models/llama3/infra/parallelize.py:77 at v0.2.0 to
  // v0.2.2), but the converter registers as "quantize.linear.float8" since
  // the quantization refactor (pytorch/torchtitan#1763, 2025-09-30;
  // components/quantization/float8.py:238), the name the files must give:
  // the tp all-gathers stay 16 bits.
  job.fp8_tp_all_gather = false;
  // Its hidden states are [b, s, h], sequence-parallel on dim 1
  // (JobSpec::sp_sequence_dim_copies; the batch fold came after v0.2.x).
  job.sp_sequence_dim_copies = true;
  job.mixed_precision_needs_fsdp = true;
  if (job.document_tokens > 0)
    throw InputError(
        "--document-tokens: torchtitan v0.2 attends over the whole sequence (SDPA is_causal, no "
        "per-document mask); drop it or emit for torchtitan main");
}

void check_launcher(const ClusterSpec& cluster, Launcher launcher) {
  if (launcher == Launcher::kTorchrun && cluster.frontier_launch) {
    // OLCF "PyTorch on Frontier" ("Torchrun and Other Distributed PyTorch
    // Launchers"): torchrun puts every rank on the same cores (10 s -> 10 min
    // in OLCF's test) and srun is advised; the modules and RCCL/libfabric
    // settings live in job.sbatch, which launch.sh does not have.
    throw InputError(
        "--launcher torchrun: " + cluster.name +
        " launches with srun, one task per GCD (OLCF advises srun over torchrun on Frontier, and "
        "launch.sh would drop the ROCm/RCCL settings); use --launcher slurm");
  }
}

const char* engine_name(Engine engine) {
  switch (engine) {
    case Engine::kMegatron:
      return "megatron";
    case Engine::kDeepSpeed:
      return "deepspeed";
    case Engine::kMegatronDeepSpeed:
      return "megatron-deepspeed";
    case Engine::kTorchtitan:
      break;
  }
  return "torchtitan";
}

std::vector<std::string> deepspeed_extension_notes(const Plan& plan) {
  return emit_detail::hierarchical_extension_notes(plan);
}

const char* launcher_name(Launcher launcher) { return launcher == Launcher::kSlurm ? "slurm" : "torchrun"; }

namespace emit_detail {

std::string str(long long value) { return std::to_string(value); }

bool megatron_split(const ParallelConfig& c, ParallelConfig& out) {
  out = c;
  if (!c.custom_split()) return true;
  out.stage_split = {};
  if (c.pp > ParallelConfig::kMaxSplitStages) return false;
  for (int s = 2; s + 1 < c.pp; ++s)
    if (c.stage_split[s] != c.stage_split[1]) return false;
  out.first_stage_layers = c.stage_split[0];
  out.last_stage_layers = c.stage_split[c.pp - 1];
  return true;
}

int world_size(const Plan& plan) { return plan.job.gpus > 0 ? plan.job.gpus : plan.config.world(); }

Layout layout_of(const Plan& plan) {
  Layout layout;
  layout.world = world_size(plan);
  const int per_node = plan.cluster.ranks_per_node > 0 ? plan.cluster.ranks_per_node : 8;
  layout.nproc_per_node = std::min(layout.world, per_node);
  if (layout.nproc_per_node < 1 || layout.world % layout.nproc_per_node != 0) {
    throw InputError("--emit: the job's " + str(layout.world) + " ranks do not fill whole nodes of " +
                     str(per_node) + " ranks; choose a multiple of " + str(per_node) + " GPUs.");
  }
  layout.nnodes = layout.world / layout.nproc_per_node;
  return layout;
}

std::string shell_quote(const std::string& word) {
  std::string out = "'";
  for (char ch : word) {
    if (ch == '\'')
      out += "'\\''";
    else
      out += ch;
  }
  return out + "'";
}

std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) ||
           std::string_view("_.,/:=+-@%").find(ch) != std::string_view::npos;
  });
  return plain ? word : shell_quote(word);
}

}  // namespace emit_detail

namespace {

struct TempDir {
  fs::path path;
  ~TempDir() {
    if (!path.empty()) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};

// `shown` is the file's final name: the user never sees the hidden
// temporary directory.
void write_file(const fs::path& path, const fs::path& shown, const std::string& text, bool exec) {
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out)
    throw WriteError("--out: cannot write " + shown.string() + ": " +
                     (errno != 0 ? std::strerror(errno) : "write failed") + ".");
  if (exec) {
    fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add);
  }
}

// The output directory, absolute, checked usable: it must not exist or be an
// empty directory, and its parent must be creatable.
fs::path checked_out_dir(const fs::path& requested) {
  if (requested.empty()) throw InputError("--out: give the directory to write the launch files into.");
  std::error_code ec;
  fs::path out = fs::absolute(requested, ec).lexically_normal();
  if (ec) throw InputError("--out: cannot resolve " + requested.string() + ": " + ec.message() + ".");
  if (out.filename().empty()) out = out.parent_path();
  if (fs::exists(out, ec)) {
    if (!fs::is_directory(out, ec))
      throw InputError("--out: " + out.string() + " exists and is not a directory.");
    if (!fs::is_empty(out, ec)) {
      throw InputError("--out: " + out.string() + " is not empty; choose a new directory or empty it.");
    }
  }
  fs::create_directories(out.parent_path(), ec);
  if (ec) throw WriteError("--out: cannot create " + out.parent_path().string() + ": " + ec.message() + ".");
  return out;
}

}  // namespace

std::vector<fs::path> emit_launch_files(const Plan& plan, const EmitOptions& options,
                                        std::vector<std::string>* notes) {
  check_launcher(plan.cluster, options.launcher);
  // A launch file must not silently change the model.
  // A window that covers the whole sequence is full causal attention.
  ModelSpec as_written = plan.model;
  if (as_written.sliding_window >= plan.job.seq)
    as_written.sliding_window = 0, as_written.full_attention_layers = 0;
  const std::vector<std::string> lost = emit_detail::architecture_problems(as_written, options.engine);
  if (!lost.empty()) {
    std::string message = "--emit " + std::string(engine_name(options.engine)) + ": cannot write " +
                          plan.model.name + " as it is:";
    // One line on stderr, however many the problems (each ends its sentence).
    for (const std::string& what : lost) message += " " + what;
    throw InputError(message);
  }
  const std::vector<std::string> violations = engine_rule_violations(plan, options.engine);
  if (!violations.empty()) {
    std::string message = "--emit " + std::string(engine_name(options.engine)) + ": the plan breaks " +
                          std::to_string(violations.size()) + " rule(s) of the engine:";
    for (std::size_t i = 0; i < violations.size(); ++i) message += (i == 0 ? " " : "; ") + violations[i];
    throw InputError(message);
  }
  if (options.engine == Engine::kTorchtitan) {
    if (const char* problem = torchtitan_version_problem(options.torchtitan_version, plan.job))
      throw InputError(std::string("--emit torchtitan: ") + problem);
  }
  if (options.engine == Engine::kTorchtitan && options.torchtitan_version == TorchtitanVersion::kV02 &&
      emit_detail::torchtitan_llama3_flavor(plan.model).empty())
    throw InputError("--engine-version 0.2: torchtitan v0.2.x's TOML config writes llama3 flavors only; " +
                     (plan.job.precision == Precision::kFp8
                          ? "an fp8 plan of " + plan.model.name +
                                " has no torchtitan parplan writes (main runs rowwise Float8 only): plan "
                                "bf16, or emit megatron"
                          : "emit " + plan.model.name + " for torchtitan main (drop --engine-version)"));
  const fs::path out = checked_out_dir(options.out_dir);

  emit_detail::ScriptFiles files = emit_detail::launch_scripts(plan, options, out.string());
  if (options.engine == Engine::kDeepSpeed || options.engine == Engine::kMegatronDeepSpeed) {
    files.files.push_back(
        {"ds_config.json", json_text(emit_detail::deepspeed_config(plan, options.engine)) + "\n", false});
    files.files.push_back({"hostfile", emit_detail::deepspeed_hostfile(emit_detail::layout_of(plan)), false});
  }
  if (options.engine == Engine::kTorchtitan) {
    const long long steps = files.train_iters;
    if (options.torchtitan_version == TorchtitanVersion::kV02)
      files.files.push_back({emit_detail::kTorchtitanTomlFile,
                             emit_detail::torchtitan_toml(plan, steps, files.checkpoint_interval), false});
    else
      files.files.push_back({std::string(emit_detail::kTorchtitanPythonModule) + ".py",
                             emit_detail::torchtitan_python_config(plan, steps, files.checkpoint_interval),
                             false});
  }
  if (plan.cluster.heterogeneous()) {
    // Rank order and the NCCL settings of each node group.
    const emit_detail::Layout layout = emit_detail::layout_of(plan);
    bool has_hostfile = false;
    for (auto& file : files.files) {
      if (file.name == "hostfile") {
        file.text = emit_detail::rank_order_hostfile(plan, layout);
        has_hostfile = true;
      }
    }
    if (!has_hostfile)
      files.files.push_back({"hostfile", emit_detail::rank_order_hostfile(plan, layout), false});
    files.files.push_back({"nccl_env.sh", emit_detail::nccl_env_script(plan, layout), false});
  }

  // Write everything into a temporary sibling, then rename it into place.
  TempDir temp;
  std::string pattern = (out.parent_path() / ("." + out.filename().string() + ".parplan-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw WriteError("--out: cannot create " + out.string() + ": " + std::strerror(errno) + ".");
  }
  temp.path = pattern;
  fs::permissions(temp.path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec);
  std::vector<fs::path> written;
  for (const auto& file : files.files) {
    write_file(temp.path / file.name, out / file.name, file.text, file.exec);
    written.push_back(out / file.name);
  }
  std::error_code ec;
  fs::rename(temp.path, out, ec);
  if (ec)
    throw WriteError("--out: cannot move the launch files into " + out.string() + ": " + ec.message() + ".");
  temp.path.clear();
  if (notes != nullptr) notes->insert(notes->end(), files.notes.begin(), files.notes.end());
  return written;
}

}  // namespace parplan
