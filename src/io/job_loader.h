// A job request: from a job.yaml (model, cluster, size, batch, constraints and
// an optional `config:` section) and/or command-line flags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cost/spec/job_spec.h"
#include "cost/spec/parallel_config.h"
#include "src/io/yaml_fields.h"

namespace parplan {

struct JobRequest {
  std::string model;
  std::string cluster;
  int gpus = 0;
  int nodes = 0;
  JobSpec job;
  /// A full config given in the file (`config:`), for estimate and check.
  std::optional<ParallelConfig> config;
  bool config_sp_given = false;
  bool config_attention_given = false;
  /// `config: dp`, when given (it must equal gpus / (tp * pp * cp)).
  std::optional<int> config_dp;
  /// `config: hsdp_shard` (torchtitan's data_parallel_shard_degree under
  /// HSDP), when given; laid on the config by the CLI (apply_hsdp_shard).
  std::optional<int> config_hsdp_shard;
  /// `config: pipeline_layout` (Megatron's layout text) and where it was
  /// read; laid out once the model is known (apply_pipeline_layout_text).
  std::string config_pipeline_layout, config_pipeline_layout_where;
  bool config_vp_given = false;
  /// The `config:` keys that plan leaves free: neither an expert key (ep,
  /// etp, a2a_hierarchical, ep_overlap: pins) nor also under `constraints:`.
  std::vector<std::string> config_keys_unpinned;
  /// Engine and recipe keys, as their flags spell them (flags override them;
  /// empty when the file does not give them).
  std::string engine, grad_reduce_dtype, cross_entropy, grad_sync, recompute_modules;
  bool precision_aware_optimizer = false;
  bool tp_comm_overlap = false;
  std::optional<std::string> memory_headroom;
  /// MoE token dropping and the fp8 scaling recipe (the run files' keys;
  /// flags override them): unset when the file does not give them.
  std::optional<double> moe_capacity_factor;
  std::optional<bool> moe_pad_to_capacity;
  std::optional<Fp8Scaling> fp8_recipe;
  /// torchtitan's torch.compile of the model and loss (`torch_compile`).
  std::optional<bool> torch_compile;
  /// Tokens per document of the packed data (`document_tokens`): torchtitan
  /// main's per-document attention mask (JobSpec::document_tokens).
  std::optional<int> document_tokens;
  /// torchtitan's float8 FSDP all-gather (`fsdp_float8_all_gather`).
  std::optional<bool> fsdp_float8_all_gather;
};

/// Reads job.yaml; every problem is an InputError naming the field.
JobRequest load_job_file(const std::string& path);

Recompute parse_recompute(const std::string& text, const std::string& where);
const char* recompute_name(Recompute recompute);
/// Megatron-LM's --recompute-modules: names separated by commas or spaces
/// (core_attn, layernorm, moe_act; "none" or nothing: an empty list).
RecomputeModules parse_recompute_modules(const std::string& text, const std::string& where);
/// The modules as Megatron's flag lists them, space-separated ("" when none).
std::string recompute_modules_text(const RecomputeModules& modules);
/// A `recompute_modules` field: a YAML list of names or one string of them.
std::string recompute_modules_field(const YamlFields& f);
Precision parse_precision(const std::string& text, const std::string& where);
const char* precision_name(Precision precision);

}  // namespace parplan
