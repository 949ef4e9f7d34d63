// torchtitan main's job config: a Python module whose function returns the
// Trainer.Config (the config system of pytorch/torchtitan#2386). The log
// reader needs the handful of fields that set the run's shape; they are read
// from the statements that set them, in the form `parplan plan --emit
// torchtitan` writes and the registered recipes use.
#pragma once

#include <map>
#include <string>

namespace parplan {

/// "section.key" -> value, the keys the TOML job files of torchtitan v0.2.x
/// give (so one reader costs both):
/// - `config = RECIPE()` (config_registry function, e.g. llama3_8b) and
///   `model_registry("FLAVOR")`: model.name (the family of the
///   `from torchtitan.models.FAMILY import` line, else the recipe's prefix)
///   and model.flavor (else the recipe's suffix: llama3_8b -> 8B);
/// - `config.SECTION.KEY = VALUE` and `config.SECTION = XConfig(KEY=VALUE,
///   ...)` for parallelism, compile, training and the rest;
/// - training.num_tokens_per_microbatch_per_dp_rank and
///   num_tokens_per_train_step over max_context_length: training.seq_len,
///   local_batch_size and global_batch_size;
/// - `config.activation_checkpoint = None | FullAC.Config() |
///   SelectiveAC.Config()`: activation_checkpoint.mode none / full /
///   selective (op-level);
/// - Float8 converters anywhere in the code: model.converters = float8.
/// Values: `int(os.environ.get("NAME", "N"))` and `os.environ.get(..., "V")`
/// read as their defaults, True/False as true/false, quotes removed.
/// A registered llama3/qwen3 recipe supplies what it sets (context length,
/// tokens per micro-batch, tensor parallelism, activation checkpointing,
/// compile and Async TP, llama3_405b's Float8 converters unless the config
/// sets its own model_spec) before the statements apply; `config.SECTION =
/// XConfig(...)` replaces the recipe's whole section.
/// Throws InputError naming `origin` when no `config = RECIPE()` statement
/// is found, or an unknown recipe leaves activation checkpointing unset.
std::map<std::string, std::string> parse_torchtitan_python_config(const std::string& text,
                                                                  const std::string& origin);

}  // namespace parplan
