#include "src/cli/commands.h"

namespace parplan {

void register_commands(CLI::App& app, Commands& c) {
  c.estimate = app.add_subcommand("estimate", "Predict memory and step time of one given config");
  c.estimate->footer(
      "Example:\n  parplan estimate --model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048 \\\n"
      "                   --tp 8 --pp 8 --vp 2 --sp --recompute selective");
  add_job_flags(*c.estimate, c.estimate_flags, true);

  c.plan = app.add_subcommand("plan", "Search the best config for a job (a given size pins that dimension)");
  c.plan->footer(
      "Example:\n  parplan plan --model llama3-70b --cluster dgx-h100 --gpus 64 --gbs 512 --seq 8192 --top 5\n"
      "  parplan plan --job examples/gpt3-175b-a100.yaml --format json");
  add_job_flags(*c.plan, c.plan_flags.job, false);
  c.plan->add_option("--top", c.plan_flags.top, "runners-up to show (default 5)")->check(CLI::Range(1, 1000));
  c.plan->add_option("--solver", c.plan_flags.solver, "cbc | glpk | exhaustive (default cbc)");
  c.plan->add_option("--emit", c.plan_flags.emit, "write launch files: megatron | deepspeed | megatron-deepspeed | torchtitan");
  c.plan->add_option("--out", c.plan_flags.out, "directory for --emit");
  c.plan->add_option("--launcher", c.plan_flags.launcher, "torchrun | slurm (default: the cluster profile's)");

  c.check = app.add_subcommand("check", "Compare a config with the optimum; for CI");
  c.check->footer(
      "Example:\n  parplan check --model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048 \\\n"
      "                --tp 8 --pp 8 --max-gap 5\n  parplan check --job job.yaml --max-gap 3 --format json");
  add_job_flags(*c.check, c.check_flags.job, true);
  c.check->add_option("--max-gap", c.check_flags.max_gap_percent, "exit 1 when the config is slower than the optimum "
                                                                  "by more than PCT percent (or does not fit)")
      ->check(CLI::NonNegativeNumber);
  c.check->add_option("--solver", c.check_flags.solver, "cbc | glpk | exhaustive (default cbc)");
}

int run_selected(CLI::App& /*app*/, Commands& c) {
  if (c.estimate->parsed()) return run_estimate(c.estimate_flags);
  if (c.plan->parsed()) return run_plan(c.plan_flags);
  if (c.check->parsed()) return run_check(c.check_flags);
  return 2;
}

}  // namespace parplan
