// Shared pieces of the launch-file writers: the job's process layout, shell
// quoting, and the per-engine builders that emit.cpp assembles into files.
// Internal to src/emit.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/emit/emit.h"

namespace parplan::emit_detail {

/// How the world is spread over nodes.
struct Layout {
  int world = 1;
  int nproc_per_node = 1;
  int nnodes = 1;
};

/// Ranks of the job: job.gpus, or the config's product when the job leaves it 0.
int world_size(const Plan& plan);
/// Throws InputError when the world does not fill whole nodes.
Layout layout_of(const Plan& plan);

/// Single-quoted for POSIX sh.
std::string shell_quote(const std::string& word);
/// The word as is when it has no shell metacharacters, else single-quoted.
std::string shell_word(const std::string& word);

/// The integer as text (no locale).
std::string str(long long value);

// --- Megatron-LM and Megatron-DeepSpeed command lines ----------------------
// Each returns the arguments of pretrain_gpt.py as tokens; the data/tokenizer
// arguments that only the user knows are appended by the launch script.

/// The config with an arbitrary per-stage split (stage_split) rewritten as
/// Megatron's first/last stage layer counts; false when the middle stages
/// differ (Megatron has no per-stage list).
bool megatron_split(const ParallelConfig& config, ParallelConfig& out);

/// Megatron-LM main (megatron/training/arguments.py).
std::vector<std::string> megatron_args(const Plan& plan);
/// Megatron-DeepSpeed (megatron/arguments.py of deepspeedai/Megatron-DeepSpeed),
/// without --deepspeed_config (the script adds it with the file's path).
std::vector<std::string> megatron_deepspeed_args(const Plan& plan);
/// Whether the Megatron run needs CUDA_DEVICE_MAX_CONNECTIONS=1.
bool megatron_needs_single_connection(const Plan& plan);
/// Whether plain Megatron maps the plan's ZeRO stage onto Megatron-FSDP.
bool megatron_uses_fsdp(const Plan& plan);

// --- architecture and optimizer (model_args.cpp) ----------------------------

/// Adam as GPT-3 was trained (Brown et al. 2020, Appendix B: beta1 0.9,
/// beta2 0.95, eps 1e-8, weight decay 0.1; Llama 3 uses the same betas):
/// one set for the Megatron arguments and ds_config.json alike.
inline constexpr double kAdamBeta1 = 0.9;
inline constexpr double kAdamBeta2 = 0.95;
inline constexpr double kAdamEps = 1e-8;
inline constexpr double kWeightDecay = 0.1;

/// RoPE, norm, activation, bias, embedding and dropout flags of Megatron-LM.
std::vector<std::string> megatron_model_args(const ModelSpec& model);
/// The same for Megatron-DeepSpeed (its own spellings).
std::vector<std::string> megatron_deepspeed_model_args(const ModelSpec& model);
/// --optimizer, --weight-decay and the Adam betas/epsilon (both engines).
std::vector<std::string> optimizer_args(const Plan& plan);
/// What of the model `engine`'s files cannot express (the unmodelled
/// features first), one sentence each; empty = the files carry the model.
std::vector<std::string> architecture_problems(const ModelSpec& model, Engine engine);
/// Of those, what only this engine lacks (another engine may write the
/// model): part of the engine's rules, so that a plan is not tagged with an
/// engine that cannot write its model.
std::vector<std::string> engine_architecture_problems(const ModelSpec& model, Engine engine);

/// --overlap-grad-reduce and --overlap-param-gather as the plan is costed.
std::vector<std::string> megatron_overlap_args(const Plan& plan);

// --- DeepSpeed ---------------------------------------------------------------

/// The secondary (hpZ) partition size DeepSpeed gets: hpz_ranks when set;
/// for hierarchical partitioning the ranks of its backward weight partition.
int deepspeed_hpz_ranks(const Plan& plan);
/// What stock DeepSpeed cannot express of a hierarchical placement, one
/// sentence each (empty without hierarchical partitioning).
std::vector<std::string> hierarchical_extension_notes(const Plan& plan);

/// ds_config.json for the DeepSpeed engines.
nlohmann::json deepspeed_config(const Plan& plan, Engine engine);
/// DeepSpeed launcher hostfile: one "host slots=N" line per node.
std::string deepspeed_hostfile(const Layout& layout);

// --- heterogeneous clusters -------------------------------------------------------

/// Hostfile in rank order: node group by node group on a heterogeneous
/// cluster (host names GROUP-node-K, to be renamed), worker-N otherwise.
std::string rank_order_hostfile(const Plan& plan, const Layout& layout);
/// nccl_env.sh: NCCL_NET / NCCL_IB_HCA / NCCL_IB_GID_INDEX per node group,
/// chosen by the node rank; NCCL_SOCKET_IFNAME for the link between groups.
std::string nccl_env_script(const Plan& plan, const Layout& layout);
/// Whether nccl_env.sh sets each node group's own transport (a heterogeneous
/// plan whose tensor, context and data-parallel groups stay inside node
/// groups); false when one transport serves every node.
bool nccl_env_per_group(const Plan& plan);
/// "ib" | "roce" | "ethernet" | "slingshot" | "intra-node".
std::string nic_label(NicKind nic);

// --- torchtitan ----------------------------------------------------------------

/// A model torchtitan main builds (src/emit/torchtitan_models.cpp).
struct TorchtitanFlavor {
  const char* family;  ///< torchtitan.models.<family>: "llama3", "qwen3"
  const char* name;    ///< model_registry flavor: "8B", "30B-A3B", ...
  const char* recipe;  ///< config_registry function the config starts from
  const char* assets;  ///< the flavor's Hugging Face assets folder
  int layers, hidden, heads, kv_heads, head_dim, ffn;
  int experts, top_k, expert_ffn;  ///< 0 for a dense flavor
  bool tied;
  double rope_theta;
  bool qk_norm;
  /// Llama 3.1's RoPE frequency scaling factor the flavor applies
  /// (ComplexRoPE scaling "llama"), 0 for none.
  double rope_scaling = 0.0;
};
/// The registered flavor with the model's shape, or nullptr.
const TorchtitanFlavor* torchtitan_flavor(const ModelSpec& model);
/// What of the model the flavor of its shape does not build (RoPE base,
/// Q/K norms, weight tying, biases, dropout), one phrase each.
std::vector<std::string> torchtitan_flavor_differences(const ModelSpec& model,
                                                       const TorchtitanFlavor& flavor);
/// The flavor name when the model is a llama3 flavor (v0.2.x's TOML writes
/// those only), else "".
std::string torchtitan_llama3_flavor(const ModelSpec& model);
/// torchtitan's data-parallel degrees for the plan: zero 2/3 -> FSDP2
/// (reshard after forward: never = ZeRO-2, always = ZeRO-3); hierarchical
/// partitioning -> HSDP (shard inside the hpZ group, replicate across);
/// zero 0 -> DDP.
struct TorchtitanMesh {
  int replicate = 1;
  int shard = 1;
  const char* reshard = "default";
};
TorchtitanMesh torchtitan_mesh(const Plan& plan);

/// torchtitan's pipeline_parallel_first/last_stage_less_layers for the
/// plan's split: generate_llm_fqn_per_model_part (distributed/
/// pipeline_parallel.py L262-L370 @ 1ce7f76) spreads L + first_less +
/// last_less "effective layers" evenly and takes first_less / last_less
/// from the first / last stage, so a split whose middle stages hold m layers
/// each is first_less = m - first, last_less = m - last. False when the
/// split has no such form (unequal middles, a first/last stage larger than
/// the middle ones, or interleaving: the weights apply to virtual stages).
struct TorchtitanLessLayers {
  int first = 0, last = 0;
};
bool torchtitan_less_layers(const ParallelConfig& config, int layers, TorchtitanLessLayers& out);

/// The TOML job config of torchtitan v0.2.x; `train_steps` is training.steps.
/// `checkpoint_interval` > 0 turns checkpointing on at that interval (a run
/// capped by the site's wall-time limit resumes from it).
std::string torchtitan_toml(const Plan& plan, long long train_steps, long long checkpoint_interval);
/// The Python config module of torchtitan main (--module/--config).
std::string torchtitan_python_config(const Plan& plan, long long train_steps, long long checkpoint_interval);
/// File and module names of the torchtitan config parplan writes.
inline constexpr const char* kTorchtitanTomlFile = "torchtitan.toml";
inline constexpr const char* kTorchtitanPythonModule = "parplan_torchtitan";
inline constexpr const char* kTorchtitanPythonConfig = "parplan_plan";

// --- scripts ---------------------------------------------------------------------

struct ScriptFiles {
  /// File name (in the output directory) and contents; executable when `exec`.
  struct File {
    std::string name;
    std::string text;
    bool exec = false;
  };
  std::vector<File> files;  // entry point first
  /// Sentences for the user (stderr), e.g. a wall time capped at the site's limit.
  std::vector<std::string> notes;
  /// Iterations the scripts default to (what -t was sized for).
  long long train_iters = 0;
  /// Under a site's wall-time cap, the iterations between checkpoints the
  /// engine's config must save (WallTime::checkpoint_interval); 0 otherwise.
  long long checkpoint_interval = 0;
};

/// Every file of the engine/launcher pair except ds_config.json, hostfile and
/// the torchtitan TOML, which emit.cpp adds. `final_dir` is where the files will
/// live once renamed into place.
ScriptFiles launch_scripts(const Plan& plan, const EmitOptions& options, const std::string& final_dir);

}  // namespace parplan::emit_detail
