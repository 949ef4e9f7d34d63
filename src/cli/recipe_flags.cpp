// The recipe inputs of a job that the engine, not the parallel config,
// decides: the dtype gradients are reduced in and the loss kernel.
#include "src/cli/job_options.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/input_error.h"
#include "src/io/job_loader.h"

namespace parplan {

void apply_recipe_flags(const RecipeChoice& f, JobSpec& job) {
  const EngineSelection engines = parse_engine_selection(f.engine);
  const EngineRecipe defaults = engine_recipe_defaults(engines);
  apply_engine_recipe(defaults, job);
  job.precision_aware_optimizer = f.precision_aware_optimizer;
  if (f.precision_aware_optimizer) {
    if (!engines.any && engines.engines[0] != Engine::kMegatron)
      throw InputError(
          "--precision-aware-optimizer is Megatron-LM's; use it with --engine megatron (or any)");
    if (job.optimizer != Optimizer::kAdam)
      throw InputError("--precision-aware-optimizer needs --optimizer adam (Megatron-LM asserts it)");
    if (job.precision == Precision::kFp16)
      throw InputError(
          "--precision-aware-optimizer keeps 2-byte master remainders only under bf16 or fp8; "
          "drop it or use --precision bf16");
  }
  if (!f.recompute_modules.empty()) {
    if (engines.any || engines.engines[0] != Engine::kMegatron)
      throw InputError(f.recompute_modules_field +
                       " names Megatron-LM's selective recomputation modules; use it with --engine megatron");
    job.recompute_modules = parse_recompute_modules(f.recompute_modules, f.recompute_modules_field);
    // Megatron-LM core_r0.13.0 TransformerConfig (transformer_config.py:844-846).
    if (job.precision == Precision::kFp8 &&
        (job.recompute_modules.moe_act || job.recompute_modules.layernorm))
      throw InputError(f.recompute_modules_field +
                       ": moe_act and layernorm cannot run under fp8 in Megatron-LM (TransformerConfig "
                       "raises); drop them or use --precision bf16");
  }
  job.tp_comm_overlap = f.tp_comm_overlap;
  if (f.tp_comm_overlap && !engines.any && engines.engines[0] != Engine::kMegatron &&
      engines.engines[0] != Engine::kTorchtitan)
    throw InputError(
        "--tp-comm-overlap is Megatron-LM's (Transformer Engine userbuffers) or torchtitan's (Async TP); use "
        "it with --engine megatron, torchtitan (with --torch-compile on) or any");
  if (!f.grad_sync.empty()) {
    if (f.grad_sync == "every-micro-batch")
      job.grad_sync = GradSyncSchedule::kEveryMicroBatch;
    else if (f.grad_sync == "last-micro-batch")
      job.grad_sync = GradSyncSchedule::kLastMicroBatch;
    else if (f.grad_sync == "after-backward")
      job.grad_sync = GradSyncSchedule::kAfterLastBackward;
    else
      throw InputError("--grad-sync must be every-micro-batch, last-micro-batch or after-backward (got '" +
                       f.grad_sync + "')");
  }
  if (!f.grad_reduce_dtype.empty()) {
    if (f.grad_reduce_dtype != "fp32" && f.grad_reduce_dtype != "bf16")
      throw InputError("--grad-reduce-dtype must be fp32 or bf16 (got '" + f.grad_reduce_dtype + "')");
    job.grad_reduce = f.grad_reduce_dtype == "fp32" ? GradReduceDtype::kFp32 : GradReduceDtype::kBf16;
    if (job.grad_reduce == GradReduceDtype::kBf16 && job.precision == Precision::kFp16)
      throw InputError("--grad-reduce-dtype bf16 needs --precision bf16 or fp8 (the job trains in fp16)");
  }
  if (!f.cross_entropy.empty()) {
    if (f.cross_entropy != "fused" && f.cross_entropy != "eager" && f.cross_entropy != "te" &&
        f.cross_entropy != "compiled")
      throw InputError("--cross-entropy must be fused, eager, te or compiled (got '" + f.cross_entropy +
                       "')");
    job.cross_entropy = f.cross_entropy == "eager"      ? CrossEntropy::kEager
                        : f.cross_entropy == "te"       ? CrossEntropy::kTeInPlace
                        : f.cross_entropy == "compiled" ? CrossEntropy::kCompiled
                                                        : CrossEntropy::kFused;
  }
}

}  // namespace parplan
