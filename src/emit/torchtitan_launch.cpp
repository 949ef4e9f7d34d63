// How the launch scripts start torchtitan, per config system
// (--engine-version): main's Python configs (`-m torchtitan.train --module M
// --config F`, torchtitan/config/manager.py ConfigManager._load_config: both
// required) or v0.2.x's TOML (`--job.config_file`), with a check that the
// installed torchtitan has that config system.
#include "src/emit/script_parts.h"

namespace parplan::emit_detail {
namespace {

// pytorch/torchtitan main as read (2026-08-21). Its assets/version.txt still
// says 0.2.2, like the v0.2.2 release, so the check looks at the config
// module and the fields parplan sets, not at the version number.
constexpr const char* kMainCommit = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a";

std::string version_check(bool main) {
  const std::string python =
      main ? "import dataclasses as d, torchtitan.config.configs as c; "
             "t = {f.name for f in d.fields(c.TrainingConfig)}; "
             "p = {f.name for f in d.fields(c.ParallelismConfig)}; "
             "assert {\"num_tokens_per_microbatch_per_dp_rank\", \"num_tokens_per_train_step\"} <= t; "
             "assert \"num_pp_microbatches\" in p"
           : "import importlib.util as u, torchtitan.config.job_config; "
             "assert u.find_spec(\"torchtitan.config.configs\") is None";
  const std::string want = main ? "torchtitan main (Python dataclass configs with "
                                  "TrainingConfig.num_tokens_per_microbatch_per_dp_rank"
                                  " and ParallelismConfig.num_pp_microbatches)"
                                : "torchtitan v0.2.x (TOML job config, torchtitan/config/job_config.py)";
  const std::string other =
      main ? "Install torchtitan main, or re-emit with --engine-version 0.2 for a v0.2.x install"
           : "Install torchtitan 0.2.2, or re-emit without --engine-version for torchtitan main";
  return std::string("# The installed torchtitan must have the config system these files target.\n") +
         "if [ \"${PARPLAN_SKIP_VERSION_CHECK:-0}\" != 1 ] && ! python3 -c '" + python +
         "' >/dev/null 2>&1; then\n" + "  echo \"parplan: these files target " + want +
         "; the torchtitan that python3 imports has not. " + other +
         " (PARPLAN_SKIP_VERSION_CHECK=1 skips this check).\" >&2\n  exit 1\nfi";
}

}  // namespace

Program torchtitan_program(const ScriptContext& x) {
  const bool main = x.options.torchtitan_version == TorchtitanVersion::kMain;
  Program p;
  p.user_block = {required("HF_ASSETS_PATH", "the folder holding the model Hugging Face tokenizer files"),
                  defaulted("TRAIN_STEPS", str(x.wall.train_iters))};
  if (main) {
    p.user_block.push_back(std::string("# torchtitan pinned: pip install 'torchtitan @ "
                                       "git+https://github.com/pytorch/torchtitan@") +
                           kMainCommit + "'");
    p.check_lines = {version_check(true)};
    // The Python config reads HF_ASSETS_PATH and TRAIN_STEPS; $DIR holds its module.
    p.program_lines = {"export HF_ASSETS_PATH TRAIN_STEPS",
                       "export PYTHONPATH=\"$DIR${PYTHONPATH:+:$PYTHONPATH}\"",
                       std::string("PROGRAM=(-m torchtitan.train --module ") + kTorchtitanPythonModule +
                           " --config " + kTorchtitanPythonConfig + ")"};
    return p;
  }
  p.user_block.push_back(defaulted("DATASET", "c4"));
  p.user_block.push_back(defaulted("DATASET_PATH", ""));
  p.user_block.push_back("# torchtitan pinned: pip install torchtitan==0.2.2");
  p.check_lines = {version_check(false)};
  p.program_lines = {
      std::string("PROGRAM=(-m torchtitan.train --job.config_file \"$DIR/") + kTorchtitanTomlFile +
          "\"\n"
          "  --model.hf_assets_path \"$HF_ASSETS_PATH\" --training.dataset \"$DATASET\" --training.steps "
          "\"$TRAIN_STEPS\")",
      "if [ -n \"$DATASET_PATH\" ]; then PROGRAM+=(--training.dataset_path \"$DATASET_PATH\"); fi"};
  return p;
}

}  // namespace parplan::emit_detail
